#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-unwind: guest user stacks of code without frame pointers,
# end to end.  Builds tests/unwind/workload.c the way distributions build
# code (gcc -O2 -fomit-frame-pointer), linked statically and dynamically
# (the guest then runs this machine's ld.so and libc.so.6, whose code has no
# frame pointers either), profiles each with the demo's pipeline (nested
# host, guest driver, pvprofd sending the unwind tables, kvm-pvprof record
# --call-graph dwarf) and checks the chains under each of the workload's
# seven hot leaves (a leaf under a frameless chain, a callback run by qsort,
# recursion, a tail call, a signal handler, a thread, the vDSO) against two
# oracles:
#
#   - the program's construction (tests/unwind/chains.py): at least 99% of
#     pvprof's samples in each leaf carry the expected chain of workload
#     frames, from _start (the walk crossed glibc's start-up frames) down;
#   - for the dynamic build, the guest's own perf (perf record --call-graph
#     dwarf in the same guest, before pvprof samples it): its commonest
#     chain in each leaf is that same chain.
#
# Both profilers' samples are folded into chains by the same demo/chains.awk
# (kvm-pvprof script and perf script print the same format).
# With --call-graph fp the same workload gives one-frame user stacks; set
# UNWIND_CALL_GRAPH=fp to see this suite fail that way.  UNWIND_PERF_SECONDS
# (default 6; 0: no perf) is how long the guest's perf records.
# Results in $O/results/unwind; the run's files stay in $O/unwind-check.
# UNWIND_HOST_KERNEL=6.12 runs it with the nested host and the guest on
# Linux 6.12 (demo/run.sh --host-kernel), into $O/unwind-check-6.12 and
# $O/results/unwind-6.12.

PROG=check-unwind
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../nested/common.sh
source "$HERE/../nested/common.sh"
set -uo pipefail

host_kernel=${UNWIND_HOST_KERNEL:-6.1}
suffix=
[ "$host_kernel" = 6.1 ] || suffix=-$host_kernel
top=$O/unwind-check$suffix
TOOL=$O/bin/kvm-pvprof
seconds=${UNWIND_CHECK_SECONDS:-12}
mode=${UNWIND_CALL_GRAPH:-dwarf}
links=${UNWIND_LINKS:-static dynamic}

# at_least_99 "OK TOTAL": at least 20 samples, and 99% of them match.
at_least_99() {
	local ok=${1% *} total=${1#* }
	[ "$total" -ge 20 ] && [ $((ok * 100)) -ge $((total * 99)) ]
}


# perf_agrees TOTAL COMMONEST: perf is a witness, not the judge: its
# commonest chain must be one of the construction's (chains.py marks others
# with "!"), over enough samples to say.
perf_agrees() {
	[ "$1" -ge 5 ] && [ "${2#!}" = "$2" ]
}

perf_seconds=${UNWIND_PERF_SECONDS:-6}
mkdir -p "$top" || die "cannot create $top"
gcc -std=c11 -D_GNU_SOURCE -O2 -fomit-frame-pointer -Wall -Wextra -Werror -c \
	-o "$top/workload.o" "$HERE/workload.c" 2> "$top/cc.err" ||
	die "gcc -c workload.c failed: $(head -c 300 "$top/cc.err")"
# The workload's own functions, whose frames make a chain (chains.py).
{ nm --defined-only "$top/workload.o" | awk '$2 ~ /^[Tt]$/ { print $3 }'; echo _start; } > "$top/functions.txt"

for link in $links; do
	out=$top/$link
	mkdir -p "$out" || die "cannot create $out"
	workload=$out/unwind-workload
	case $link in
	static) ldflags=-static ;;
	dynamic) ldflags= ;;
	*) die "UNWIND_LINKS: static or dynamic, got $link" ;;
	esac
	gcc -std=c11 -D_GNU_SOURCE -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra -Werror $ldflags \
		-o "$workload" "$HERE/workload.c" 2> "$out/cc.err" ||
		die "gcc -O2 -fomit-frame-pointer $ldflags failed: $(head -c 300 "$out/cc.err")"
	# The construction the tail call case relies on.
	objdump -d --no-show-raw-insn "$workload" | awk '/<tail_from>:/, /^$/' | grep -q 'jmp .*<tail_to>' ||
		die "$link: gcc did not compile tail_from's call as a jump; the tail call case means nothing"

	# Debian's perf 6.1 unwinds no frame of a static non-PIE program (one
	# frame per sample, on this machine as in the guest): it is the second
	# oracle for the dynamic build only.
	perf_args=() perf_chains=
	if [ "$link" = dynamic ] && [ "$perf_seconds" != 0 ]; then
		perf_args=(--guest-perf "$perf_seconds")
		perf_chains=$out/perf-chains.txt
	fi
	"$REPO_DIR/demo/run.sh" --workload "$workload" --args 0 --seconds "$seconds" \
		--call-graph "$mode" "${perf_args[@]}" --host-kernel "$host_kernel" --out "$out" --top 0 > "$out/run.stdout" 2> "$out/run.stderr"
	run_status=$?
	check "$link: pipeline-runs" "demo/run.sh exited $run_status: $(tail -n 3 "$out/run.stderr" | tr '\n' ' ')" \
		[ "$run_status" = 0 ]

	# pvprof's chains, folded exactly as the guest folded perf's.
	"$TOOL" script -i "$out/pvprof.data" 2> "$out/script.err" |
		awk -v dso=/demo/unwind-workload -v comm=unwind-workload -v functions="$top/functions.txt" \
			-f "$REPO_DIR/demo/chains.awk" > "$out/pvprof-chains.txt" ||
		die "kvm-pvprof script | chains.awk failed: $(head -c 300 "$out/script.err")"
	"$HERE/chains.py" --pvprof "$out/pvprof-chains.txt" ${perf_chains:+--perf "$perf_chains"} \
		> "$out/chains.txt" 2> "$out/chains.err" ||
		die "chains.py failed: $(head -c 300 "$out/chains.err")"
	measured=
	while read -r leaf expected ok total perf_ok perf_total perf_commonest; do
		check "$link: $leaf" "$ok of $total samples in $leaf carry $expected" at_least_99 "$ok $total"
		measured+=" $leaf $ok/$total"
		[ -n "$perf_chains" ] || continue
		check "$link: $leaf-perf-agrees" "the guest's perf: $perf_ok of $perf_total samples in $leaf carry $expected, the commonest chain being $perf_commonest" \
			perf_agrees "$perf_total" "$perf_commonest"
		measured+=" (perf $perf_ok/$perf_total)"
	done < "$out/chains.txt"
	# The header line, with the "#   " lines it wraps onto joined.
	awk '/^# user stacks/ { line = $0; while ((getline next_line) > 0 && next_line ~ /^#   /)
		line = line " " substr(next_line, 5); print line; exit }' \
		"$out/report.txt" > "$out/user-stacks.txt" 2>/dev/null
	echo "  measured: $link:$measured; $(cat "$out/user-stacks.txt" 2>/dev/null)"
done

results_write "unwind$suffix"
