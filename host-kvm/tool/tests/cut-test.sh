#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof report, report --folded and script on damaged and long
# recordings, on this machine (no VM).
#
# Cuts: dwarf-report-gen writes a --call-graph dwarf recording of the
# fixture of tests/unwind (kernel and user frames, the agent's symbol and
# unwind tables in the sideband, a few dozen STREAM sections) and, with
# --layout, where it put each section and each callchain entry.  The file
# is cut at 50 random offsets (the seed is printed; PVPROF_CUT_SEED picks
# another) and at one offset in each kind of place: the file header, HOST,
# VM, the start STATUS, a section header, an entry header, an entry body,
# an entry boundary, a section boundary, the end STATUS, END.  Past the file
# header, each cut must give exit status 0, one warning line that names
# the offset, and exactly the samples whose entries end at or before the
# cut, counted from the generator's layout (not from kvm-pvprof): in
# report's header, in --folded's counts and in script's samples.  A cut
# file header gives one error line and exit status 1.  When the fuzz build
# exists (make -C tests/fuzz build), every cut also goes through its
# recording target, under ASan and UBSan.
#
# Memory: a recording of about 200 MB from the same generator is reported,
# folded and scripted; the peak RSS of each must stay below a quarter of
# the file's size, as the profile it holds is small.  Nothing is timed.
#
# usage: cut-test.sh   writes "<passed> <failed>" to $O/results/tool-cut
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$O/tool/tests/dwarf-report-gen
fuzz=$O/fuzz/fuzz_recording
cc=${CC:-gcc}
seed=${PVPROF_CUT_SEED:-2405}
nr_random=50
big_bytes=$((200 * 1000 * 1000))
[ -x "$gen" ] || { echo "${0##*/}: $gen is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

echo "== the recording and its layout"
if ! "$cc" -O2 -fomit-frame-pointer -pthread -o "$tmp/fx" "$here/unwind/fixture.c" \
	2>"$tmp/cc.err" || ! "$tmp/fx" chain "$tmp/chain.snap"; then
	fail "fixture: build and snapshot" "$(head -c 300 "$tmp/cc.err")"
	finish tool-cut
	exit
fi
if ! "$gen" --copies 1000 --size 1024 --kernel --layout "$tmp/layout" \
	"$tmp/chain.snap" "$tmp/src.data" 2>"$tmp/gen.err"; then
	fail "dwarf-report-gen --layout" "$(head -c 300 "$tmp/gen.err")"
	finish tool-cut
	exit
fi
size=$(stat -c %s "$tmp/src.data")
# The layout's sections, in file order: TYPE OFFSET SIZE.
mapfile -t sections < <(awk '$1 == "section" { print $2, $3, $4 }' "$tmp/layout")
mapfile -t sample_ends < <(awk '$1 == "sample" { print $2 }' "$tmp/layout")
last=${sections[${#sections[@]} - 1]}
read -r last_type last_off last_size <<<"$last"
if [ "${#sample_ends[@]}" = 1000 ] && [ "$last_type" = 5 ] &&
   [ $((last_off + 16 + last_size)) = "$size" ]; then
	pass "layout: 1000 samples in ${#sections[@]} sections, END ends the $size-byte file"
else
	fail "layout" "${#sample_ends[@]} samples, last section '$last', file $size bytes"
fi

# section_at TYPE N: the offset of the Nth (from 0) section of TYPE.
section_at() {
	local s t o n=0
	for s in "${sections[@]}"; do
		read -r t o _ <<<"$s"
		if [ "$t" = "$1" ]; then
			[ "$n" = "$2" ] && { echo "$o"; return; }
			n=$((n + 1))
		fi
	done
}

# A sample that ends inside a STREAM section, away from both of its ends.
mid_end=${sample_ends[500]}
stream2=$(section_at 4 2)
# label OFFSET: the targeted cuts, then the random ones.
cuts=(
	"10 file header"
	"$(($(section_at 1 0) + 16 + 50)) HOST payload"
	"$(($(section_at 2 0) + 16 + 100)) VM payload"
	"$(($(section_at 3 0) + 16 + 20)) start STATUS payload"
	"$((stream2 + 7)) STREAM section header"
	"$stream2 section boundary"
	"$((mid_end + 5)) stream entry header"
	"$((mid_end - 100)) stream entry body"
	"$mid_end entry boundary inside a section"
	"$(($(section_at 3 1) + 16 + 30)) end STATUS payload"
	"$((last_off + 4)) END section header"
	"$((last_off + 16 + 8)) END payload"
)
echo "random cuts: seed $seed (PVPROF_CUT_SEED=$seed to repeat)"
mapfile -t random_cuts < <("$python" -c '
import random, sys
rng = random.Random(int(sys.argv[1]))
for off in sorted(rng.randrange(1, int(sys.argv[2])) for _ in range(int(sys.argv[3]))):
    print(off)
' "$seed" "$size" "$nr_random")
for off in "${random_cuts[@]}"; do
	cuts+=("$off random")
done

# expected OFFSET: samples whose entries end at or before OFFSET.
expected() {
	local e n=0
	for e in "${sample_ends[@]}"; do
		[ "$e" -le "$1" ] && n=$((n + 1))
	done
	echo "$n"
}

# one_warning NAME OFFSET ERRFILE: why ERRFILE is not one warning naming OFFSET.
one_warning() {
	local lines
	lines=$(wc -l <"$3")
	if [ "$lines" != 1 ]; then
		echo "$1: $lines lines on stderr: $(head -c 300 "$3")"
	elif ! grep -q "^Warning: cut.data: .*offset $2[ ,)]" "$3" || ! grep -q 'lost' "$3"; then
		echo "$1: stderr is not a warning that names offset $2 and what was lost: $(head -c 300 "$3")"
	fi
}

echo "== ${#cuts[@]} cuts"
cd "$tmp" || exit 2
for c in "${cuts[@]}"; do
	read -r off label <<<"$c"
	head -c "$off" src.data >cut.data
	cp cut.data "$tmp/cut-$off.data"
	if [ "$off" -lt 24 ]; then
		expect_err "cut at $off ($label): an error, exit 1" 1 \
			"cut.data: offset 0 (0x0): $off bytes: too short for a pvprof recording header" \
			-- report -i cut.data
		continue
	fi
	want=$(expected "$off")
	why=
	"$bin" report -i cut.data >report.out 2>report.err
	rc=$?
	got=$(sed -n 's/^# samples shown: \([0-9]*\),.*/\1/p' report.out)
	[ "$rc" = 0 ] || why="$why report: exit status $rc;"
	[ "$got" = "$want" ] || why="$why report: '$got' samples;"
	why="$why$(one_warning report "$off" report.err)"
	"$bin" report --folded -i cut.data >folded.out 2>folded.err
	rc=$?
	got=$(awk '{ n += $NF } END { print n + 0 }' folded.out)
	[ "$rc" = 0 ] || why="$why --folded: exit status $rc;"
	[ "$got" = "$want" ] || why="$why --folded: counts sum to $got;"
	# The header goes to stderr with --folded: the warning comes first.
	head -1 folded.err >folded.warn
	why="$why$(one_warning --folded "$off" folded.warn)"
	grep -q '^Warning: ' <(tail -n +2 folded.err) && why="$why --folded: a second warning;"
	"$bin" script -i cut.data >script.out 2>script.err
	rc=$?
	got=$(grep -c '^[^[:space:]]' script.out)
	[ "$rc" = 0 ] || why="$why script: exit status $rc;"
	[ "$got" = "$want" ] || why="$why script: $got samples;"
	why="$why$(one_warning script "$off" script.err)"
	if [ -z "$why" ]; then
		pass "cut at $off ($label): $want samples in report, --folded and script, one warning"
	else
		fail "cut at $off ($label), $want samples expected" "$why"
	fi
done

if [ -x "$fuzz" ]; then
	if "$fuzz" "$tmp"/cut-*.data >fuzz.log 2>&1; then
		pass "every cut through the fuzz target (ASan, UBSan)"
	else
		fail "cuts through the fuzz target" "$(grep -m3 -E 'ERROR|SUMMARY|runtime error' fuzz.log)"
	fi
else
	skip "cuts through the fuzz target" "no $fuzz (make -C tests/fuzz build)"
fi
rm -f "$tmp"/cut-*.data

echo "== memory on a long recording"
# rss_of OUT ARGS...: kvm-pvprof ARGS with stdout in OUT; prints its exit
# status and its peak RSS in KiB.
rss_of() {
	local out=$1
	shift
	"$python" -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    rc = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$out" "$bin" "$@"
}

# The samples' share of the file, from two small ones: the sideband stays.
"$gen" --copies 100 --size 32768 "$tmp/chain.snap" "$tmp/big.data"
small=$(stat -c %s "$tmp/big.data")
"$gen" --copies 1000 --size 32768 "$tmp/chain.snap" "$tmp/big.data"
per_sample=$((($(stat -c %s "$tmp/big.data") - small) / 900))
copies=$(((big_bytes - small) / per_sample + 101))
if ! "$gen" --copies "$copies" --size 32768 "$tmp/chain.snap" "$tmp/big.data" 2>"$tmp/gen.err"; then
	fail "dwarf-report-gen: a long recording" "$(head -c 300 "$tmp/gen.err")"
	finish tool-cut
	exit
fi
big=$(stat -c %s "$tmp/big.data")
echo "a recording of $big bytes, $copies samples"
for args in "report" "report --folded" "script"; do
	# shellcheck disable=SC2086 # args is words
	read -r rc rss < <(rss_of "$tmp/big.out" $args -i "$tmp/big.data")
	case $args in
	report) got=$(sed -n 's/^# samples shown: \([0-9]*\),.*/\1/p' "$tmp/big.out");;
	"report --folded") got=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/big.out");;
	script) got=$(grep -c '^[^[:space:]]' "$tmp/big.out");;
	esac
	if [ "$rc" = 0 ] && [ "$got" = "$copies" ] && [ $((rss * 1024)) -lt $((big / 4)) ]; then
		pass "$args: all $copies samples, peak RSS $((rss / 1024)) MiB of a $((big / 1048576)) MiB file (< 1/4)"
	else
		fail "$args on $big bytes" "exit status $rc, $got samples, peak RSS $rss KiB (limit $((big / 4096)) KiB)"
	fi
done
rm -f "$tmp/big.data" "$tmp/big.out"

finish tool-cut
