#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Sum the per-suite result files ("<passed> <failed>") into one closing line.
# Exit 1 when any suite failed or no suite ran.
set -eu
dir=${1:?usage: summarize-results.sh RESULTS_DIR}
passed=0
failed=0
suites=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	read -r p f_ < "$f"
	printf '  %-24s %4d passed, %d failed\n' "$(basename "$f")" "$p" "$f_"
	passed=$((passed + p))
	failed=$((failed + f_))
	suites=$((suites + 1))
done
if [ "$suites" -eq 0 ]; then
	echo "no suite ran"
	exit 1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
