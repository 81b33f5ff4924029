#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DWARF unwinder on user stack snapshots from a real guest run, no VM:
# unwind-workload-static.data is a real recording of tests/unwind's
# workload cut down by realrec.py (README.md here): a few samples of each
# hot leaf, kernel-mode ones included, their snapshots trimmed to what the
# unwinder reads plus a margin, and the sideband they need.  The oracle is
# the workload's construction, as in make check-unwind: `kvm-pvprof script`
# folded by demo/chains.awk and judged by tests/unwind/chains.py, every
# sample of each leaf carrying its chain, and report's header counting
# every snapshot unwound to the outermost frame.
#
# Then the same samples made hostile at test time (realrec.py variant):
# the tables gone (the negative control: the guest's frame-pointer chains
# fail every leaf), snapshots of 0, 8 and 64 bytes, the stack pointer
# moved away from the bytes, or to where the window wraps, every stack word
# a return address into the same frame, a signal frame whose saved stack
# pointer leads back down, and the tables zeroed, random, inverted, or
# missing a part.  Each must leave report and script exiting 0 with
# nothing on stderr, the header counting every snapshot (unwound plus
# fallbacks, the reasons adding up), no sample deeper than PVPROF_MAX_DEPTH,
# and what the damage implies (below, per variant).  With valgrind, report
# runs under it on each recording too.
#
# usage: real-test.sh   writes "<passed> <failed>" to $O/results/tool-real
set -u

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

real=$here/real
data=$real/unwind-workload-static.data
manifest=$real/unwind-workload-static.samples
realrec=$real/realrec.py
cc=${CC:-gcc}
max_depth=120	# PVPROF_MAX_DEPTH

check() {
	if [ "$2" = 0 ]; then pass "$1"; else fail "$1" "$3"; fi
}

# The samples the cutter kept: in all, per leaf, and per leaf and mode.
nr=$(grep -vc '^#' "$manifest")
count() {
	awk -v leaf="$1" -v mode="${2:-}" '!/^#/ && $1 == leaf && (mode == "" || $2 == mode)' \
		"$manifest" | wc -l
}
nr_signal=$(count signal_leaf)
nr_vdso=$(count '[vdso]')

# The workload's own functions, whose frames make a chain (as check.sh).
if "$cc" -std=c11 -D_GNU_SOURCE -O2 -fomit-frame-pointer -c -o "$tmp/workload.o" \
	"$repo/tests/unwind/workload.c" 2>"$tmp/cc.err"; then
	{ nm --defined-only "$tmp/workload.o" | awk '$2 ~ /^[Tt]$/ { print $3 }'; echo _start; } \
		>"$tmp/functions.txt"
else
	fail "gcc -c tests/unwind/workload.c" "$(head -c 300 "$tmp/cc.err")"
	finish tool-real
	exit
fi

# user_stacks FILE: report's "# user stacks" header line, with the "#   "
# lines it wraps onto joined.
user_stacks() {
	awk '/^# user stacks: / { line = $0
		while ((getline next_line) > 0 && next_line ~ /^#   /)
			line = line " " substr(next_line, 5)
		print line; exit }' "$1"
}

# unwind NAME DATA: report and script of DATA into $tmp/NAME.*, chains.awk
# and chains.py over script; one PASS or FAIL for what holds of every
# recording, hostile or not.  Sets uw (unwound outermost fallbacks
# no-tables incomplete memory error no-caller) from report's header.
unwind() {
	local name=$1 file=$2 rc_report rc_script why='' shape
	"$bin" report -i "$file" >"$tmp/$name.report" 2>"$tmp/$name.report.err"
	rc_report=$?
	"$bin" script -i "$file" >"$tmp/$name.script" 2>"$tmp/$name.script.err"
	rc_script=$?
	awk -v dso=/demo/unwind-workload -v comm=unwind-workload -v functions="$tmp/functions.txt" \
		-f "$repo/demo/chains.awk" "$tmp/$name.script" >"$tmp/$name.folded"
	"$python" "$repo/tests/unwind/chains.py" --pvprof "$tmp/$name.folded" >"$tmp/$name.chains"
	# The user stacks line's eight numbers, in their order.
	read -r -a uw < <(user_stacks "$tmp/$name.report" | grep '^# user stacks: [0-9]* unwound with DWARF CFI' |
		tr -c '0-9\n' ' ')
	# Samples, and the most frames one has.
	shape=$(awk '/^[^ \t]/ { n++ } /^[ \t]+[0-9a-f]+ / { f[n]++; if (f[n] > m) m = f[n] }
		END { print n + 0, m + 0 }' "$tmp/$name.script")
	if [ "$rc_report" != 0 ] || [ "$rc_script" != 0 ]; then
		why="exit status: report $rc_report, script $rc_script"
	elif [ -s "$tmp/$name.report.err" ] || [ -s "$tmp/$name.script.err" ]; then
		why="stderr: $(cat "$tmp/$name.report.err" "$tmp/$name.script.err" | head -c 300)"
	elif [ "${#uw[@]}" != 8 ]; then
		why="no user stacks line: $(user_stacks "$tmp/$name.report")"
	elif [ $((uw[0] + uw[2])) != "$nr" ] || [ "${uw[1]}" -gt "${uw[0]}" ] ||
		[ $((uw[3] + uw[4] + uw[5] + uw[6] + uw[7])) != "${uw[2]}" ]; then
		why="the header does not count $nr snapshots: $(user_stacks "$tmp/$name.report")"
	elif [ "${shape% *}" != "$nr" ] || [ "${shape#* }" -gt "$max_depth" ]; then
		why="script: $shape (samples, most frames), expected $nr samples of at most $max_depth frames"
	fi
	check "$name: report and script exit 0, the header counts all $nr snapshots, at most $max_depth frames a sample" \
		"$([ -z "$why" ]; echo $?)" "$why"
}

# header_is NAME TEXT: report's user stacks line, from "N unwound" on.
header_is() {
	local line
	line=$(user_stacks "$tmp/$1.report")
	check "$1: # user stacks: $2" "$([ "$line" = "# user stacks: $2" ]; echo $?)" "got: $line"
}

# leaf_ok NAME LEAF WANT: WANT of the leaf's samples carry its chain (and
# all of them are in that leaf: chains.py's total).
leaf_ok() {
	local ok total
	read -r ok total < <(awk -v leaf="$2" '$1 == leaf { print $3, $4 }' "$tmp/$1.chains")
	check "$1: $3 of $(count "$2") $2 samples carry $(awk -v leaf="$2" '$1 == leaf { print $2 }' \
		"$tmp/$1.chains")" "$([ "${ok:-x}" = "$3" ] && [ "${total:-x}" = "$(count "$2")" ]; echo $?)" \
		"$ok of $total"
}

leaves=$(awk '!/^#/ { print $1 }' "$manifest" | sort -u)

echo "== the real recording: $nr samples ($(stat -c %s "$data") bytes)"
unwind real "$data"
header_is real "$nr unwound with DWARF CFI ($nr to the outermost frame), 0 by frame pointers (no tables 0, tables incomplete 0, memory 0, error 0, no caller 0)"
for leaf in $leaves; do
	leaf_ok real "$leaf" "$(count "$leaf")"
done
samples=$(awk '$1 == "SAMPLES" { print $2 }' "$tmp/real.folded")
check "real: chains.awk folds $nr samples" "$([ "$samples" = "$nr" ]; echo $?)" "got $samples"

echo "== hostile variants of the same samples"
variants=$("$python" "$realrec" variants)
for v in $variants; do
	if ! "$python" "$realrec" variant "$v" "$data" "$tmp/$v.data" 2>"$tmp/$v.gen.err"; then
		fail "$v: realrec.py variant" "$(head -c 300 "$tmp/$v.gen.err")"
		continue
	fi
	unwind "$v" "$tmp/$v.data"
	[ "${#uw[@]}" = 8 ] || continue
	case $v in
	tables-none)
		# What the unwinder adds: without tables the guest's frame-pointer
		# chains stay, and no leaf has its chain.
		header_is "$v" "0 unwound with DWARF CFI (0 to the outermost frame), $nr by frame pointers (no tables $nr, tables incomplete 0, memory 0, error 0, no caller 0)"
		for leaf in $leaves; do
			leaf_ok "$v" "$leaf" 0
		done
		;;
	size-0)
		# Every first step reads a return address from the stack.
		header_is "$v" "0 unwound with DWARF CFI (0 to the outermost frame), $nr by frame pointers (no tables 0, tables incomplete 0, memory $nr, error 0, no caller 0)"
		;;
	size-8 | size-64)
		# Every chain needs more (the manifest's "needed" column): the
		# walks end where the bytes end, and say so.
		check "$v: no walk reaches the outermost frame, every fallback for memory" \
			"$([ "${uw[1]}" = 0 ] && [ "${uw[5]}" = "${uw[2]}" ]; echo $?)" \
			"$(user_stacks "$tmp/$v.report")"
		;;
	sp-up-1m | sp-0)
		# A signal frame holds the interrupted stack pointer as an
		# address, which is no longer inside the snapshot.
		leaf_ok "$v" signal_leaf 0
		;;
	sp-wrap)
		# Every address above the stack pointer wraps past 2^64.
		check "$v: no walk gets past the first frame" "$([ "${uw[0]}" = 0 ]; echo $?)" \
			"$(user_stacks "$tmp/$v.report")"
		;;
	self-return)
		# The stack climbs a word or more a frame and never ends: in the
		# program's code the depth cap ends every walk, kernel frames
		# included.  The vDSO's code finds its caller's frame from rbp, a
		# register, not the stack, and its samples stop early.
		header_is "$v" "$nr unwound with DWARF CFI (0 to the outermost frame), 0 by frame pointers (no tables 0, tables incomplete 0, memory 0, error 0, no caller 0)"
		read -r capped least < <(awk '/^[^ \t]/ { n++; user[n] = ""; next }
			/^[ \t]+[0-9a-f]+ / { f[n]++; if ($NF != "([kernel.kallsyms])" && user[n] == "") user[n] = $NF }
			END { for (i = 1; i <= n; i++) if (user[i] != "([vdso])") {
				k++; if (m == "" || f[i] < m) m = f[i] }
			print k + 0, m + 0 }' "$tmp/$v.script")
		check "$v: the $((nr - nr_vdso)) samples in the program's code have $max_depth frames" \
			"$([ "$capped" = $((nr - nr_vdso)) ] && [ "$least" = "$max_depth" ]; echo $?)" \
			"$capped samples outside the vDSO, the fewest frames $least"
		;;
	sigframe-loop)
		# The walk stops at the signal frame (the handler, its caller
		# and the restorer), the other samples are untouched.
		check "$v: $((nr - nr_signal)) walks reach the outermost frame" \
			"$([ "${uw[1]}" = $((nr - nr_signal)) ]; echo $?)" "$(user_stacks "$tmp/$v.report")"
		deepest=$(awk '/^[^ \t]/ { if (sig && u > m) m = u; sig = 0; u = 0; first = 1; next }
			/^[ \t]+[0-9a-f]+ / { if ($NF == "([kernel.kallsyms])") next
				if (first && $2 ~ /^signal_leaf\+/) sig = 1; first = 0; u++ }
			END { if (sig && u > m) m = u; print m + 0 }' "$tmp/$v.script")
		check "$v: the signal samples stop after 3 user frames" "$([ "$deepest" = 3 ]; echo $?)" \
			"the most: $deepest"
		for leaf in $leaves; do
			[ "$leaf" = signal_leaf ] && want=0 || want=$(count "$leaf")
			leaf_ok "$v" "$leaf" "$want"
		done
		;;
	tables-zero | tables-random | tables-flip)
		check "$v: no CFI, no walk gets past the first frame" "$([ "${uw[0]}" = 0 ]; echo $?)" \
			"$(user_stacks "$tmp/$v.report")"
		;;
	tables-lost-part)
		# The program's .eh_frame is incomplete, the vDSO's is whole:
		# the samples in the vDSO unwind into the program and stop.
		header_is "$v" "$nr_vdso unwound with DWARF CFI (0 to the outermost frame), $((nr - nr_vdso)) by frame pointers (no tables 0, tables incomplete $((nr - nr_vdso)), memory 0, error 0, no caller 0)"
		;;
	*)
		fail "$v" "no expectation for this variant"
		;;
	esac
done

echo "== memory"
if command -v valgrind >/dev/null; then
	bad=
	for f in "$data" $(for v in $variants; do echo "$tmp/$v.data"; done); do
		[ -s "$f" ] || continue
		valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--error-exitcode=9 "$bin" report -i "$f" >/dev/null 2>"$tmp/vg.err" ||
			bad="$bad ${f##*/}: $(head -c 300 "$tmp/vg.err")"
	done
	check "valgrind: report of the real recording and of each variant, no error, nothing leaked" \
		"$([ -z "$bad" ]; echo $?)" "$bad"
else
	skip "valgrind" "not installed"
fi

finish tool-real
