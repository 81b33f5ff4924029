#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof report and script on --call-graph dwarf recordings, end to end
# on this machine, no VM: the fixture of unwind-test (tests/unwind/fixture.c,
# gcc -O2 -fomit-frame-pointer, dynamic and -static) snapshots its own
# registers, stack and mappings at a known chain; dwarf-report-gen writes
# them into a recording as the host would, with the sideband the guest agent
# would send (PROCESS, MMAP with the files' build-ids, ELF_SYMS, and UNWIND
# from the agent's own encoder).  The callchain's frame-pointer chain is the
# IP alone, as a frame-pointer walk of the fixture gives.  The oracle is the
# fixture's own construction: main -> fx_a -> fx_b -> fx_c, and
# main -> fx_sort_caller -> qsort -> ... -> fx_cmp.  Also: the fallbacks
# and their counts in the header, --call-graph fp recordings unchanged, a
# republished mapping, and report's speed on a few thousand snapshots (an
# INFO line, not a pass condition).
#
# usage: dwarf-report-test.sh   writes "<passed> <failed>" to $O/results/tool-dwarf
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$O/tool/tests/dwarf-report-gen
cc=${CC:-gcc}
speed_copies=${PVPROF_DWARF_SPEED_COPIES:-3000}
for f in "$gen" "$bin"; do
	[ -x "$f" ] || { echo "${0##*/}: $f is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }
done

# check NAME OK DETAIL: one PASS or FAIL line.
check() {
	if [ "$2" = 0 ]; then pass "$1"; else fail "$1" "$3"; fi
}

# report_of DATA [ARGS...]: folded stacks in $tmp/out, the header in $tmp/hdr.
report_of() {
	local data=$1
	shift
	"$bin" report -i "$data" --folded "$@" >"$tmp/out" 2>"$tmp/hdr"
}

# expect_folded NAME DATA ERE: the recording's only folded stack matches ERE.
expect_folded() {
	local ok=1
	report_of "$2"
	[ "$(wc -l <"$tmp/out")" = 1 ] && grep -qE -- "$3" "$tmp/out" && ok=0
	check "$1" $ok "got: $(head -c 400 "$tmp/out") (exit $(
		"$bin" report -i "$2" --folded >/dev/null 2>&1; echo $?))"
}

# expect_header NAME FIXED: report's header (of the last report_of), its
# wrapped lines joined, holds FIXED.
expect_header() {
	local ok=1 unwrapped
	# Long header lines wrap before 100 columns onto "#   " lines.
	unwrapped=$(sed -e ':a' -e 'N' -e '$!ba' -e 's/\n#   / /g' "$tmp/hdr")
	grep -qF -- "$2" <<<"$unwrapped" && ok=0
	check "$1" $ok "header: $(grep 'user stacks' <<<"$unwrapped" || echo 'no user stacks line')"
}

# expect_json_stacks NAME DATA JSON: report -j of DATA has user_stacks
# members with the values of the JSON object given.
expect_json_stacks() {
	local ok=1
	"$bin" report -j -i "$2" >"$tmp/json" 2>/dev/null &&
		"$python" -c '
import json, sys
got, want = json.load(open(sys.argv[1]))["user_stacks"], json.loads(sys.argv[2])
sys.exit(0 if all(got[k] == v for k, v in want.items()) else "user_stacks %r" % got)
' "$tmp/json" "$3" && ok=0
	check "$1" $ok "$(head -c 300 "$tmp/json")"
}

echo "== fixtures"
for b in dyn static; do
	flags=
	[ "$b" = static ] && flags=-static
	# shellcheck disable=SC2086 # flags is one word or none
	if "$cc" -O2 -fomit-frame-pointer $flags -pthread -o "$tmp/fx-$b" \
		"$here/unwind/fixture.c" 2>"$tmp/cc.err" &&
		"$tmp/fx-$b" chain "$tmp/$b-chain.snap" && "$tmp/fx-$b" qsort "$tmp/$b-qsort.snap"; then
		pass "fixture: $b build ($flags) and snapshots of chain, qsort"
	else
		fail "fixture: $b build ($flags) and snapshots" "$(head -c 300 "$tmp/cc.err")"
		continue
	fi
	for c in chain qsort; do
		if ! "$gen" "$tmp/$b-$c.snap" "$tmp/$b-$c.data" ||
			! "$gen" --no-unwind "$tmp/$b-$c.snap" "$tmp/$b-$c-nounwind.data" ||
			! "$gen" --fp "$tmp/$b-$c.snap" "$tmp/$b-$c-fp.data"; then
			fail "dwarf-report-gen: $b $c" "it failed"
		fi
	done
done

for b in dyn static; do
	[ -s "$tmp/$b-chain.data" ] || continue
	echo "== $b: the chain main -> fx_a -> fx_b -> fx_c"
	# libc's start frames above main: _start, __libc_start_main and
	# __libc_start_call_main (a local symbol, unnamed in the stripped libc).
	expect_folded "$b chain: report --folded walks to _start" "$tmp/$b-chain.data" \
		'^fixture;_start;__libc_start_main;([^;]+;)?main;fx_a;fx_b;fx_c 1$'
	expect_header "$b chain: header counts the unwound stack" \
		"# user stacks: 1 unwound with DWARF CFI (1 to the outermost frame), 0 by frame pointers (no tables 0, tables incomplete 0, memory 0, error 0, no caller 0)"
	expect_json_stacks "$b chain: report -j counts the unwound stack" "$tmp/$b-chain.data" \
		'{"snapshots": 1, "unwound": 1, "outermost": 1, "frame_pointers": 0}'
	"$bin" script -i "$tmp/$b-chain.data" >"$tmp/script" 2>&1
	syms=$(awk 'NR > 1 && NF { sub(/\+0x[0-9a-f]+$/, "", $2); print $2 }' "$tmp/script" |
	       paste -sd' ')
	ip=$(awk '/^regs/ { print $2 }' "$tmp/$b-chain.snap")
	first=$(awk 'NR == 2 { print $1 }' "$tmp/script")
	ok=1
	[[ "$syms" == "fx_c fx_b fx_a main "*"_start" ]] && [ "$first" = "$ip" ] && ok=0
	check "$b chain: script prints fx_c fx_b fx_a main ... _start, innermost first at the IP" \
		$ok "frames: $syms; first $first, IP $ip"

	echo "== $b: qsort's caller above the callback"
	expect_folded "$b qsort: fx_sort_caller above qsort above fx_cmp" "$tmp/$b-qsort.data" \
		'^fixture;_start;__libc_start_main;([^;]+;)?main;fx_sort_caller;[^;]*qsort[^;]*;([^;]+;)*fx_cmp 1$'
	expect_header "$b qsort: unwound to the outermost frame" \
		"1 unwound with DWARF CFI (1 to the outermost frame)"

	echo "== $b: fallbacks to the frame-pointer chain"
	for c in chain qsort; do
		leaf=fx_c
		[ "$c" = qsort ] && leaf=fx_cmp
		expect_folded "$b $c without UNWIND messages: the callchain's fp chain" \
			"$tmp/$b-$c-nounwind.data" "^fixture;$leaf 1\$"
		cp "$tmp/out" "$tmp/nounwind.folded"
		expect_header "$b $c without UNWIND messages: counted as no tables" \
			"# user stacks: 0 unwound with DWARF CFI (0 to the outermost frame), 1 by frame pointers (no tables 1, tables incomplete 0, memory 0, error 0, no caller 0)"
		expect_json_stacks "$b $c without UNWIND messages: report -j counts no tables" \
			"$tmp/$b-$c-nounwind.data" '{"unwound": 0, "frame_pointers": 1,
			"frame_pointers_by_reason": {"no_tables": 1, "tables_incomplete": 0,
			"memory": 0, "error": 0, "no_caller": 0}}'
		report_of "$tmp/$b-$c-fp.data"
		ok=1
		cmp -s "$tmp/out" "$tmp/nounwind.folded" && ! grep -q 'user stacks' "$tmp/hdr" && ok=0
		check "$b $c --call-graph fp recording: the same stacks, no user stacks line" $ok \
			"$(head -c 200 "$tmp/out") / $(grep 'user stacks' "$tmp/hdr")"
	done
	# The callchain's frame-pointer chain read a word of text after the IP:
	# a DWARF-unwound stack takes its frames from the CFI and is never cut;
	# the fp chain a sample falls back to is cut at that word.
	"$gen" --fp-garbage "$tmp/$b-chain.snap" "$tmp/garbage.data"
	expect_folded "$b chain, garbage in the callchain's fp chain: the unwound stack stays whole" \
		"$tmp/garbage.data" '^fixture;_start;__libc_start_main;([^;]+;)?main;fx_a;fx_b;fx_c 1$'
	expect_header "$b chain, garbage in the callchain's fp chain: no DWARF-unwound chain cut" \
		"# frame-pointer chains cut at a return address outside the image's code: 0 (0 frames)"
	for mode in --no-unwind --fp; do
		"$gen" $mode --fp-garbage "$tmp/$b-chain.snap" "$tmp/garbage.data"
		expect_folded "$b chain $mode, garbage in the fp chain: cut after the IP" \
			"$tmp/garbage.data" '^fixture;fx_c 1$'
		expect_header "$b chain $mode, garbage in the fp chain: 1 chain, 2 frames cut" \
			"# frame-pointer chains cut at a return address outside the image's code: 1 (2 frames)"
	done
	# Each file's .eh_frame loses its second part: the static fixture's
	# (the only file) is then unusable; the dynamic one's is one part, so
	# only libc's goes and the walk stops at the first libc frame.
	"$gen" --drop-part "$tmp/$b-chain.snap" "$tmp/drop.data"
	if [ "$b" = static ]; then
		expect_folded "$b chain, an .eh_frame part never arrived: fp chain" "$tmp/drop.data" \
			'^fixture;fx_c 1$'
		expect_header "$b chain, an .eh_frame part never arrived: counted as incomplete" \
			"0 unwound with DWARF CFI (0 to the outermost frame), 1 by frame pointers (no tables 0, tables incomplete 1,"
	else
		expect_folded "$b chain, libc's .eh_frame incomplete: the walk stops in libc" \
			"$tmp/drop.data" '^fixture;[^;]*libc[^;]*;main;fx_a;fx_b;fx_c 1$'
		expect_header "$b chain, libc's .eh_frame incomplete: unwound, not to the outermost frame" \
			"1 unwound with DWARF CFI (0 to the outermost frame), 0 by frame pointers"
	fi
	"$gen" --size 8 "$tmp/$b-chain.snap" "$tmp/small.data"
	expect_folded "$b chain, 8 stack bytes: fp chain" "$tmp/small.data" '^fixture;fx_c 1$'
	expect_header "$b chain, 8 stack bytes: counted as memory" \
		"1 by frame pointers (no tables 0, tables incomplete 0, memory 1, error 0"

	echo "== $b: kernel frames, republished mappings, flame graph"
	"$gen" --kernel "$tmp/$b-chain.snap" "$tmp/kernel.data"
	expect_folded "$b chain under two kernel frames: the kernel part stays" "$tmp/kernel.data" \
		';main;fx_a;fx_b;fx_c;0xffffffff81000200;0xffffffff81000100 1$'
	"$gen" --copies 3 --republish "$tmp/$b-chain.snap" "$tmp/repub.data"
	expect_folded "$b chain, mappings sent again between samples: every sample unwound" \
		"$tmp/repub.data" ';main;fx_a;fx_b;fx_c 3$'
	expect_header "$b chain, mappings sent again: 3 unwound" "3 unwound with DWARF CFI"
	# The first sample's image was built from mappings 1 MiB off: unless
	# it is dropped when the right ones come, the next samples hit the
	# stale modules (unwind.c refuses them) and fall back.
	"$gen" --copies 3 --remap "$tmp/$b-chain.snap" "$tmp/remap.data"
	report_of "$tmp/remap.data"
	ok=1
	# (the first sample's one fp frame is named with the wrong addresses)
	grep -qE '^fixture;[^;]+ 1$' "$tmp/out" && grep -qE ';main;fx_a;fx_b;fx_c 2$' "$tmp/out" &&
		[ "$(wc -l <"$tmp/out")" = 2 ] && ok=0
	check "$b chain, mappings corrected after a sample: the image is rebuilt, later samples unwound" \
		$ok "$(paste -sd'|' "$tmp/out" | head -c 400)"
	expect_header "$b chain, mappings corrected: 2 unwound, the wrong one an error" \
		"2 unwound with DWARF CFI (2 to the outermost frame), 1 by frame pointers (no tables 0, tables incomplete 0, memory 0, error 1,"
	ok=1
	"$bin" report -i "$tmp/$b-qsort.data" --flamegraph "$tmp/fg.svg" >/dev/null 2>&1 &&
		grep -q '>fx_sort_caller' "$tmp/fg.svg" && grep -q '>fx_cmp' "$tmp/fg.svg" && ok=0
	check "$b qsort: the flame graph has fx_sort_caller and fx_cmp" $ok "$(head -c 200 "$tmp/fg.svg" 2>&1)"
done

echo "== memory"
if command -v valgrind >/dev/null && [ -s "$tmp/dyn-chain.data" ]; then
	"$gen" --copies 3 --republish "$tmp/dyn-chain.snap" "$tmp/vg.data"
	for cmd in report script; do
		valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--error-exitcode=9 "$bin" "$cmd" -i "$tmp/vg.data" >/dev/null 2>"$tmp/vg.err"
		check "valgrind: $cmd of a dwarf recording, no error, nothing leaked" $? \
			"$(head -c 600 "$tmp/vg.err")"
	done
else
	skip "valgrind" "not installed"
fi

echo "== speed"
if [ -s "$tmp/dyn-chain.snap" ]; then
	"$gen" --copies "$speed_copies" "$tmp/dyn-chain.snap" "$tmp/speed.data"
	t0=$(date +%s%N)
	report_of "$tmp/speed.data"
	t1=$(date +%s%N)
	expect_folded "$speed_copies snapshots: all unwound the same" "$tmp/speed.data" \
		";main;fx_a;fx_b;fx_c $speed_copies\$"
	ns=$((t1 - t0))
	# The same bytes without UNWIND messages: reading them, no unwinding.
	"$gen" --no-unwind --copies "$speed_copies" "$tmp/dyn-chain.snap" "$tmp/speed-nu.data"
	t0=$(date +%s%N)
	report_of "$tmp/speed-nu.data"
	t1=$(date +%s%N)
	nu_ns=$((t1 - t0))
	echo "INFO report --folded: $speed_copies snapshots of $(awk '/^stack/ { print ($2 < 8192 ? $2 : 8192) }' \
		"$tmp/dyn-chain.snap") bytes in $((ns / 1000000)) ms, $((speed_copies * 1000000000 / (ns ? ns : 1))) samples/s" \
		"(the same recording without tables, not unwound: $((nu_ns / 1000000)) ms)"
fi

finish tool-dwarf
