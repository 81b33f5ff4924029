#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The unwind-table store's test (unwind-tables-test.c, built by the tool's
# Makefile under ASan and UBSan) as a suite of make check: its output, also
# kept in $O/tool/tests/unwind-tables.log, and its counts in
# $O/results/tool-unwind-tables.
#
# usage: unwind-tables-test.sh     exits 0 only when the test passed
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${O:-$(cd "$here/../../.." && pwd)/out}
test=$O/tool/tests/unwind-tables-test
log=$O/tool/tests/unwind-tables.log
results=${PVPROF_RESULTS_DIR:-$O/results}

[ -x "$test" ] || { echo "${0##*/}: $test is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }
mkdir -p "$results"
"$test" | tee "$log"
status=${PIPESTATUS[0]}
# Its last line is "N passed, N failed".
tail -1 "$log" | awk '{ print $1, $3 }' >"$results/tool-unwind-tables"
exit "$status"
