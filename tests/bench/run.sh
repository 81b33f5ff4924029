#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: pvprof's overhead against host perf's IP-only sampling, in one
# boot of the nested host (README.md here says how to read the results).
#
# usage: tests/bench/run.sh [--hz HZ] [--reps N] [--rounds N]
# Writes $O/bench/result.json and $O/bench/table.txt and prints the table.

PROG=bench
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../nested/common.sh
source "$BENCH_DIR/../nested/common.sh"
set -uo pipefail

usage() {
	cat <<USAGE
usage: tests/bench/run.sh [--hz HZ] [--reps N] [--rounds N]

Boots the nested host once (pvprof KVM), starts one L2 guest with the guest
driver, and times a fixed guest workload (bench-work ROUNDS, timed inside the
guest) under no sampling, host perf IP-only sampling of the vCPU thread,
pvprof with frame-pointer call graphs and pvprof with --call-graph dwarf,
each REPS times, interleaved. Writes \$O/bench/result.json and
\$O/bench/table.txt.

  --hz HZ       sampling frequency of both samplers (default 1000)
  --reps N      repetitions per condition, at least 3 (default 5)
  --rounds N    workload size (default 3000: 5-10 s unsampled here)
USAGE
}

hz=1000 reps=5 rounds=3000
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || case "$1" in -h|--help) ;; *) die "$1 needs an argument (see --help)" ;; esac
	case "$1" in
	--hz) hz=$2 ;;
	--reps) reps=$2 ;;
	--rounds) rounds=$2 ;;
	-h|--help) usage; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
	shift 2
done
[[ "$hz" =~ ^[1-9][0-9]*$ ]] && [ "$hz" -le 10000 ] || die "--hz must be 1 to 10000, got '$hz'"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] && [ "$reps" -ge 3 ] || die "--reps must be at least 3, got '$reps'"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive number, got '$rounds'"

out=$O/bench
rm -rf "$out"
mkdir -p "$out" || die "cannot create $out"
start=$SECONDS

build() {
	local what=$1
	shift
	"$@" > "$out/build-$what.log" 2>&1 || die "building $what failed (see $out/build-$what.log)"
}
build host-kvm make -s -C "$REPO_DIR/host-kvm" modules
build tool make -s -C "$REPO_DIR/host-kvm/tool"
build guest-driver make -s -C "$REPO_DIR/guest-driver" modules
# clang: GCC 12 gives leaf functions no frame pointer whatever the flags.
build bench-work clang -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls \
	-static -o "$out/bench-work" "$BENCH_DIR/fixed-work.c"
initrd=$NESTED_OUT/bench-l2.cpio
build initramfs "$NESTED_DIR/l2-initramfs" -o "$initrd" --run "$BENCH_DIR/l2-bench.sh" \
	--insmod "$O/guest-driver/pvprof_guest.ko" --file "$out/bench-work:/bench-work"

echo "bench: $reps reps x 4 conditions at $hz Hz, bench-work $rounds (one L1 boot)" >&2
# tsc=reliable: L1 keeps the TSC clocksource and its high-resolution timers
# (tests/bench/README.md, "L1's clock decides what 1000 Hz means").
"$NESTED_DIR/run-l1" --kvm pvprof --timeout 1800 --out "$out" --append tsc=reliable -- \
	"$BENCH_DIR/in-l1.sh" "$out" "$initrd" "$hz" "$reps" "$rounds" > "$out/l1.log" 2>&1
l1_status=$?
grep '^bench:' "$out/l1.log" >&2
[ -f "$out/in-l1.done" ] ||
	die "the run in L1 failed (run-l1 exit $l1_status); last lines of $out/l1.log:$(echo; tail -n 15 "$out/l1.log")"

outer_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
python3 "$BENCH_DIR/summarize.py" --out "$out" --hz "$hz" --reps "$reps" \
	--outer-cpu "$outer_cpu" --outer-cpus "$(nproc)" || die "summarize.py failed"
cat "$out/table.txt"
echo "bench: $out/result.json, $out/table.txt; took $((SECONDS - start)) s" >&2
