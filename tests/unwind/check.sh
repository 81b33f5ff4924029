#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-unwind: guest user stacks of code without frame pointers,
# end to end.  Builds tests/unwind/workload.c the way distributions build
# code (gcc -O2 -fomit-frame-pointer), linked statically and dynamically
# (the guest then runs this machine's ld.so and libc.so.6, whose code has no
# frame pointers either), profiles each with the
# demo's pipeline (nested host, guest driver, pvprofd sending the unwind
# tables, kvm-pvprof record --call-graph dwarf) and checks the folded
# stacks against the program's own construction:
#
#   - of the samples whose innermost frame is chain_leaf, at least 99% read
#     main;chain_a;chain_b;chain_leaf, with glibc's start-up frames above
#     main up to _start (the chain reaches the outermost frame; static:
#     exactly _start;__libc_start_main;__libc_start_call_main);
#   - of the samples in the qsort callback by_key, at least 99% have
#     main;sort_phase above glibc's sorting frames.
#
# With --call-graph fp the same workload gives one-frame user stacks; set
# UNWIND_CALL_GRAPH=fp to see this suite fail that way.
# Results in $O/results/unwind; the run's files stay in $O/unwind-check.

PROG=check-unwind
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../nested/common.sh
source "$HERE/../nested/common.sh"
set -uo pipefail

top=$O/unwind-check
seconds=${UNWIND_CHECK_SECONDS:-12}
mode=${UNWIND_CALL_GRAPH:-dwarf}
links=${UNWIND_LINKS:-static dynamic}

# share FILE LEAF_RE CHAIN_RE: "matching total" over the folded stacks whose
# innermost frame matches LEAF_RE, weighted by their counts.
share() {
	awk -v leaf="$2" -v chain="$3" '
		{ n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack)
		  k = split(stack, f, ";")
		  if (f[k] !~ ("^" leaf "$")) next
		  total += n
		  if (stack ~ chain) ok += n }
		END { printf "%d %d\n", ok, total }' "$1"
}

# at_least_99 "OK TOTAL": at least 20 samples, and 99% of them match.
at_least_99() {
	local ok=${1% *} total=${1#* }
	[ "$total" -ge 20 ] && [ $((ok * 100)) -ge $((total * 99)) ]
}


for link in $links; do
	out=$top/$link
	mkdir -p "$out" || die "cannot create $out"
	workload=$out/unwind-workload
	case $link in
	static)
		ldflags=-static
		# Above main, static glibc's start-up: _start, __libc_start_main
		# (any alias) and __libc_start_call_main.
		start='^[^;]*;_start;__libc_start_main[A-Za-z0-9_]*;__libc_start_call_main;'
		;;
	dynamic)
		ldflags=
		# libc.so.6 has no .symtab: its local start-up function is named
		# by the nearest exported symbol, whatever that is.
		start='^[^;]*;_start;([^;]*;)+'
		;;
	*) die "UNWIND_LINKS: static or dynamic, got $link" ;;
	esac
	gcc -std=c11 -D_GNU_SOURCE -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror $ldflags \
		-o "$workload" "$HERE/workload.c" 2> "$out/cc.err" ||
		die "gcc -O2 -fomit-frame-pointer $ldflags failed: $(head -c 300 "$out/cc.err")"

	"$REPO_DIR/demo/run.sh" --workload "$workload" --args 0 --seconds "$seconds" \
		--call-graph "$mode" --out "$out" --top 0 > "$out/run.stdout" 2> "$out/run.stderr"
	run_status=$?
	check "$link: pipeline-runs" "demo/run.sh exited $run_status: $(tail -n 3 "$out/run.stderr" | tr '\n' ' ')" \
		[ "$run_status" = 0 ]

	folded=$out/folded.txt
	leaf=$(share "$folded" chain_leaf "${start}main;chain_a;chain_b;chain_leaf\$")
	check "$link: leaf-chain-complete" "${leaf% *} of ${leaf#* } samples in chain_leaf read ${start}main;chain_a;chain_b;chain_leaf" \
		at_least_99 "$leaf"
	cb=$(share "$folded" by_key "${start}main;sort_phase;([^;]*;)+by_key\$")
	check "$link: callback-caller-kept" "${cb% *} of ${cb#* } samples in by_key read ${start}main;sort_phase;<glibc's qsort frames>;by_key" \
		at_least_99 "$cb"
	# The header line, with the "#   " lines it wraps onto joined.
	awk '/^# user stacks/ { line = $0; while ((getline next_line) > 0 && next_line ~ /^#   /)
		line = line " " substr(next_line, 5); print line; exit }' \
		"$out/report.txt" > "$out/user-stacks.txt" 2>/dev/null
	echo "  measured: $link: chain_leaf ${leaf% *}/${leaf#* }, by_key ${cb% *}/${cb#* }; $(cat "$out/user-stacks.txt" 2>/dev/null)"
done

results_write unwind
