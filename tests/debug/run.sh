#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the host suite and the guest driver's end-to-end suite on
# a debug kernel (lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, KASAN, UBSAN,
# DEBUG_OBJECTS, kmemleak).
#   1. builds the debug kernel, or reuses the cached build (build-kernel.sh)
#   2. builds the pvprof KVM modules against it into $O/debug/host-kvm
#   3. runs tests/host (every configuration) with that kernel as L1
#   4. runs the e2e suite's pvprof boot twice (guest-driver/tests/e2e/e2e.sh,
#      README.md there): e2e-l1 with the debug kernel as L1 and the distro's
#      in the L2s (the host side under the checkers), e2e-l2 with the
#      distro's kernel as L1 and the debug kernel in every L2, the driver
#      built against it (the guest side under the checkers)
#   5. fails any debug kernel (each L1 run, each e2e L2) whose dmesg has a
#      report, or whose kmemleak scan before power-off found a leak,
#      printing each report with its stack
# Prints one line per case, ends with "N passed, N failed" and writes
# "<passed> <failed>" to $O/results/debug.
#
# usage: run.sh [--if-cached]
#   --if-cached  run only when the debug kernel is already built (make check:
#                a clean build takes 30-40 min on 2 cores); otherwise print
#                that the suite was skipped and write no result. Runs the
#                host suite only, not the e2e runs (about 20 and 30
#                minutes), unless DEBUG_E2E=1
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
O=${O:-$repo/out}
debug_out=$O/debug
cache=${PVPROF_CACHE:-/var/cache/pvprof}
# Seconds for one L1 configuration (boot and every program): the debug
# kernel runs several times slower than the distro's under TCG.
suite_timeout=${DEBUG_SUITE_TIMEOUT:-1800}
# The e2e suite's factor for its waits and timeouts (E2E_TIME_FACTOR), and
# its driver reloads (E2E_RELOADS): one takes 30-100 s on a debug L2 that is
# being sampled, where the distro kernel's 50 take 2-3 minutes.
e2e_factor=${DEBUG_E2E_TIME_FACTOR:-4}
e2e_reloads=${DEBUG_E2E_RELOADS:-5}
# The share of samples the known-stacks phase must get back as callchains
# (E2E_COMPLETENESS, 95 on the distro kernel): a debug L2's NMI handler takes
# 0.1-0.3 ms of guest time, up to 190 ms under load, and more notices go
# stale (81% and 95% measured). What a debug run checks is the reports.
e2e_complete=${DEBUG_E2E_COMPLETENESS:-50}

if_cached=
if [ "${1:-}" = --if-cached ]; then
	if_cached=1
	# The cache key as build-kernel.sh computes it (should the two ever
	# disagree, the suite is skipped, never passed).
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || srcver=
	key=$(printf '%s\n' "$srcver" | cat - "$here/debug.config" "$here/build-kernel.sh" |
	      sha256sum | cut -c1-16)
	if [ -z "$srcver" ] || [ ! -f "$cache/debug-kernel-$key/done" ]; then
		echo "check-debug: SKIPPED (no cached debug kernel; run make check-debug)"
		exit 0
	fi
elif [ $# -gt 0 ]; then
	echo "usage: run.sh [--if-cached]" >&2
	exit 2
fi

passed=0 failed=0
start=$(date +%s)

count_line() {
	echo "$1"
	case "$1" in
	PASS\ *) passed=$((passed + 1)) ;;
	FAIL\ *) failed=$((failed + 1)) ;;
	esac
}

finish() {
	echo "check-debug wall time: $(( $(date +%s) - start )) s"
	echo "$passed passed, $failed failed"
	mkdir -p "$O/results"
	echo "$passed $failed" > "$O/results/debug"
	[ "$failed" -eq 0 ]
	exit
}

mkdir -p "$debug_out"
if ! tree=$("$here/build-kernel.sh" "$cache" | tail -n 1) || [ ! -f "$tree/vmlinux" ]; then
	count_line "FAIL debug/kernel_build: tests/debug/build-kernel.sh failed"
	finish
fi
count_line "PASS debug/kernel_build"
if ! image=$("$here/boot-image.sh" "$tree"); then
	count_line "FAIL debug/boot_image: cannot make the bzImage in $tree"
	finish
fi

t=$(date +%s)
if ! make -C "$repo/host-kvm" KDIR="$tree" O="$debug_out" > "$debug_out/host-kvm.log" 2>&1; then
	count_line "FAIL debug/modules: host-kvm build against $tree failed (log: $debug_out/host-kvm.log)"
	tail -n 20 "$debug_out/host-kvm.log" | sed 's/^/  | /'
	finish
fi
count_line "PASS debug/modules"
echo "  timing: pvprof KVM modules against the debug kernel in $(( $(date +%s) - t )) s"

# The host suite, every configuration, on the debug kernel. Its results and
# L1 runs stay under $O/debug, apart from make check-host's.
runs=$debug_out/tests/host/runs
rm -rf "$runs" "$debug_out/results/host"
RUNL1_KERNEL=$image HOST_SUITE_TIMEOUT=$suite_timeout \
	make -s -C "$repo/tests/host" run O="$debug_out" > "$debug_out/host-suite.log" 2>&1
while IFS= read -r line; do
	case "$line" in
	PASS\ *|FAIL\ *|SKIP\ *) count_line "${line%% *} debug/${line#* }" ;;
	*" passed, "*" failed") echo "  host suite on the debug kernel: $line" ;;
	*) echo "$line" ;;
	esac
done < "$debug_out/host-suite.log"
if [ ! -s "$debug_out/results/host" ]; then
	count_line "FAIL debug/host_suite: tests/host did not finish (log: $debug_out/host-suite.log)"
	tail -n 20 "$debug_out/host-suite.log" | sed 's/^/  | /'
fi

for dir in "$runs"/*/; do
	[ -d "$dir" ] || continue
	while IFS= read -r line; do
		count_line "$line"
	done < <("$here/kernel-reports.sh" "debug/$(basename "$dir")" "${dir%/}")
done

if [ -n "$if_cached" ] && [ "${DEBUG_E2E:-0}" != 1 ]; then
	echo "  note: the e2e suite on the debug kernel is not run by make check (over an hour); make check-debug runs it"
	finish
fi

# run_e2e NAME VAR=VALUE...: e2e.sh's pvprof boot with the overrides given,
# built and run in $O/debug/NAME; its cases counted as debug/NAME/<case>.
# The boot with the distro's KVM is skipped: it checks that the driver stays
# inert, where a debug kernel has nothing to find.
run_e2e() {
	local name=$1 eo=$debug_out/$1 t line
	shift
	t=$(date +%s)
	mkdir -p "$eo"
	rm -f "$eo/results/e2e-debug"
	env O="$eo" E2E_TIME_FACTOR="$e2e_factor" E2E_RELOADS="$e2e_reloads" E2E_STOCK=0 \
		E2E_COMPLETENESS="$e2e_complete" E2E_RESULTS=e2e-debug "$@" \
		"$repo/guest-driver/tests/e2e/e2e.sh" > "$debug_out/$name.log" 2>&1
	while IFS= read -r line; do
		case "$line" in
		PASS\ *|FAIL\ *) count_line "${line%% *} debug/$name/${line#* }" ;;
		*" passed, "*" failed") echo "  $name: $line" ;;
		*) echo "$line" ;;
		esac
	done < "$debug_out/$name.log"
	if [ ! -s "$eo/results/e2e-debug" ]; then
		count_line "FAIL debug/$name: e2e.sh did not finish (log: $debug_out/$name.log)"
		tail -n 20 "$debug_out/$name.log" | sed 's/^/  | /'
	fi
	echo "  timing: $name in $(( $(date +%s) - t )) s"
}

# reports [--no-kmemleak] [--known REGEX] NAME DIR: kernel-reports.sh's
# cases, counted.
reports() {
	local line
	while IFS= read -r line; do
		count_line "$line"
	done < <("$here/kernel-reports.sh" "$@")
}

# Every L2 of both runs boots with its stall detectors' thresholds at their
# maxima (RCU's 300 s, the soft-lockup watchdog's 120 s): a debug kernel
# under the nested emulation, or any L2 under the debug L1's KVM, runs
# several times slower than these detectors assume, and an L2 vCPU that L1
# leaves waiting for 20-30 s trips them (a 2-vCPU distro L2 under the debug
# L1 locked up softly for 22 s in smp_call_function_many_cond(); a debug
# L2's RCU grace-period kthread waited 26 s to run: tests/debug/README.md).
# A hang still fails the run's progress checks, and the checkers this suite
# is for (lockdep, KASAN, UBSAN, might-sleep, kmemleak) are not affected.
stall_args="rcupdate.rcu_cpu_stall_timeout=300 watchdog_thresh=60"

# e2e-l2 first: the shorter run (about 20 minutes against over 60), and
# the one that checks the guest driver. The distro's kernel as L1 with the
# pvprof KVM built for it (the usual $O/host-kvm), the debug bzImage as
# every L2 and the driver built against its tree. The L2s print their
# kernel logs on their consoles (and the main L2 its kmemleak scan before
# power-off), which e2e.sh saves for
# kernel-reports.sh; the migration L2s are killed, not powered off, so they
# have no final scan. nohz=off: a debug L2 under nested SVM on TCG loses a
# wakeup now and then (a task runnable on a CPU idling in HLT with no timer
# armed), which a periodic tick turns into a delay instead of a hang
# (tests/debug/README.md). Every '-M pc' L2 boot under nested SVM on TCG warns in
# fpu__init_system_xstate (the CPUID xstate sizes L1 passes on disagree),
# before the driver is loaded: known, not counted.
xstate='WARNING: CPU: [0-9]+ PID: [0-9]+ at arch/x86/kernel/fpu/xstate.c:[0-9]+ fpu__init_system_xstate'
if ! make -C "$repo/host-kvm" modules O="$O" > "$debug_out/host-kvm-distro.log" 2>&1; then
	count_line "FAIL debug/e2e-l2/modules: host-kvm build for the distro kernel failed (log: $debug_out/host-kvm-distro.log)"
	tail -n 20 "$debug_out/host-kvm-distro.log" | sed 's/^/  | /'
else
	run_e2e e2e-l2 E2E_MODULES_DIR="$O/host-kvm" E2E_KDIR="$tree" E2E_L2_KERNEL="$image" E2E_KMSG=1 \
		E2E_L2_APPEND="nohz=off $stall_args"
	l2s=$debug_out/e2e-l2/nested/e2e/pvprof
	reports --known "$xstate" debug/e2e-l2/l2-main "$l2s/l2-main"
	reports --no-kmemleak --known "$xstate" debug/e2e-l2/l2-mig-a "$l2s/l2-mig-a"
	reports --no-kmemleak --known "$xstate" debug/e2e-l2/l2-mig-b "$l2s/l2-mig-b"
fi

# e2e-l1: the debug kernel as L1 with the pvprof KVM built against it above;
# the L2s run the distro's kernel and driver.
run_e2e e2e-l1 RUNL1_KERNEL="$image" E2E_MODULES_DIR="$debug_out/host-kvm" E2E_L2_APPEND="$stall_args"
reports debug/e2e-l1/l1 "$debug_out/e2e-l1/nested/e2e/pvprof"
finish
