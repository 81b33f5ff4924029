#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# agent-nested: pvprofd for real.  L1 runs the pvprof KVM; an L2 runs
# pvprof_guest.ko, pvprofd and two copies of a test program (one started
# before sampling, one after); L1 records with `kvm-pvprof record`, which
# switches sampling on; sb-check feeds the recording's sideband to the host
# symbolizer and resolves every frame.
#
# Checks: pvprofd starts, learns that sampling switched on and exits
# cleanly; the test program's function and do_syscall_64 resolve by name,
# for the process known from /proc and for the one known only from perf's
# records (so exec_gen agrees with the driver's); the kernel's symbols all
# arrived; no message rejected or lost; at most 2 x 256 KiB of sideband in
# any 2 seconds; pvprofd's peak RSS at most 32 MiB.
#
# usage: agent-nested.sh; writes "<passed> <failed>" to
# $O/results/agent-nested.  "agent-nested.sh --in-l1 OUT IMAGE KERNEL" runs
# in L1 (KERNEL: run-l2's --kernel IMAGE, or - for L1's own).  L2_KVER=R
# boots the L2 with kernel R instead (guest-driver/tests/l2-kernel.sh), the
# outputs and results then named for R's series (agent-nested-6.12).

PROG=agent-nested
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tests/nested/common.sh
source "$TESTS_DIR/../../tests/nested/common.sh"
# shellcheck source=../../guest-driver/tests/l2-kernel.sh
source "$TESTS_DIR/../../guest-driver/tests/l2-kernel.sh"
set -uo pipefail

BUILD=$O/guest-agent/tests
TOOL=$O/bin/kvm-pvprof
BUDGET=262144

wait_for() {
	local polls
	for ((polls = 0; polls < $3; polls++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	return 1
}

in_l1() {
	local out=$1 image=$2 kernel=() l2 rec
	[ "$3" = - ] || kernel=(--kernel "$3")
	"$NESTED_DIR/run-l2" --initrd "$image" "${kernel[@]}" --timeout 700 \
		--pidfile "$out/l2.pid" --console "$out/l2.console" 2> "$out/l2.stderr" &
	l2=$!
	if wait_for "$out/l2.console" AGENT-STARTED 600; then
		# Switches sampling on (250 Hz: the test is about the agent, and the
		# emulated L2 is slow); stopped with SIGINT once the L2 is gone.
		"$TOOL" record -d 900 -F 250 -o "$out/agent.data" "$(cat "$out/l2.pid")" \
			> "$out/record.out" 2>&1 &
		rec=$!
	else
		echo "L2 never said AGENT-STARTED" > "$out/record.out"
	fi
	wait "$l2"
	echo $? > "$out/l2.status"
	if [ -n "${rec:-}" ]; then
		kill -INT "$rec"
		wait "$rec"
		echo "record_status $?" >> "$out/record.out"
	fi
	exit 0
}

if [ "${1:-}" = --in-l1 ]; then
	in_l1 "$2" "$3" "$4"
fi

fact() {
	sed -n "s/^FACT $1 //p" "$outdir/l2.console" "$outdir/check-"*.txt 2>/dev/null |
		head -n 1 | tr -d '\r'
}

cfact() {
	sed -n "s/^FACT $2 //p" "$outdir/check-$1.txt" 2>/dev/null | head -n 1
}

l2_kernel_select
L2_IMAGE=$NESTED_OUT/agent-l2$L2_SUFFIX.cpio
outdir=$NESTED_OUT/agent-nested$L2_SUFFIX
rm -rf "$outdir"
mkdir -p "$outdir" "$BUILD" || die "cannot create $outdir"
[ -n "$L2_REL" ] && echo "NOTE the L2 guest boots $L2_REL (${L2_IMAGE_ARGS[1]})"
l2_make modules > "$outdir/build.log" 2>&1 ||
	die "make -C guest-driver failed (see $outdir/build.log)"
make -s -C "$REPO_DIR/host-kvm" modules > "$outdir/host-kvm-build.log" 2>&1 ||
	die "'make -C host-kvm modules' failed (see $outdir/host-kvm-build.log)"
make -s -C "$REPO_DIR/host-kvm/tool" > "$outdir/tool-build.log" 2>&1 ||
	die "'make -C host-kvm/tool' failed (see $outdir/tool-build.log)"
make -s -C "$REPO_DIR/guest-agent" > "$outdir/agent-build.log" 2>&1 ||
	die "'make -C guest-agent' failed (see $outdir/agent-build.log)"
cc -std=c11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls -static -o "$BUILD/agent-test" "$TESTS_DIR/agent-test.c" ||
	die "cannot build agent-test"
# sb-check links the tool's library (host-kvm/tool/libkvmpvprof.mk), which
# the make of host-kvm/tool above built.
tool_libs=$(make -s --no-print-directory -C "$REPO_DIR/host-kvm/tool" print-libs) ||
	die "'make -C host-kvm/tool print-libs' failed"
# shellcheck disable=SC2086 # $tool_libs: one word per library
cc -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$REPO_DIR" -o "$BUILD/sb-check" \
	"$TESTS_DIR/sb-check.c" "$O/tool/libkvmpvprof.a" $tool_libs || die "cannot build sb-check"
"$NESTED_DIR/l2-initramfs" --run "$TESTS_DIR/agent-l2.sh" \
	--insmod "$L2_MODULE" \
	--file "$O/guest-agent/pvprofd:/bin/pvprofd" \
	--file "$BUILD/agent-test:/bin/agent-test" \
	--file "$BUILD/agent-test:/bin/agent-pre" -o "$L2_IMAGE" > /dev/null ||
	die "l2-initramfs failed"

"$NESTED_DIR/run-l1" --kvm pvprof --timeout 1200 --out "$outdir" -- \
	"$TESTS_DIR/agent-nested.sh" --in-l1 "$outdir" "$L2_IMAGE" "${L2_IMAGE_ARGS[1]:--}" \
	> "$outdir/l1.stdout" 2> "$outdir/l1.stderr"
check l1-runs "run-l1 exited $?: $(run_l1_said "$outdir/l1.stderr")" [ -f "$outdir/l2.status" ]
check l2-runs "run-l2 exited '$(cat "$outdir/l2.status" 2>/dev/null)'" \
	[ "$(cat "$outdir/l2.status" 2>/dev/null)" = 0 ]
check agent-starts "agent_alive '$(fact agent_alive)'; $(grep -m1 AGENTLOG "$outdir/l2.console")" \
	[ "$(fact agent_alive)" = 1 ]
check record "$(tr '\n' ' ' < "$outdir/record.out" 2>/dev/null)" \
	grep -qx 'record_status 0' "$outdir/record.out"
check agent-sees-sampling "'$(fact agent_saw_sampling)' switches seen" [ "$(fact agent_saw_sampling)" = 1 ]
check agent-drains "pvprofd's queue drained after agent-test: '$(fact agent_drained)'" \
	[ "$(fact agent_drained)" = 0 ]
check agent-exits-cleanly "exit status '$(fact agent_exit)'" [ "$(fact agent_exit)" = 0 ]
rss=$(fact agent_rss_kib)
check agent-rss "peak RSS '${rss}' KiB (limit 32768)" [ "${rss:-99999999}" -le 32768 ]

for comm in agent-test agent-pre; do
	"$BUILD/sb-check" "$outdir/agent.data" agent_test_spin do_syscall_64 "$comm" \
		> "$outdir/check-$comm.txt" 2> "$outdir/check-$comm.err"
done
named=$(cfact agent-test user_named_of_comm) frames=$(cfact agent-test user_frames_of_comm)
check user-symbol-live "agent-test (exec'd after publication): $named of $frames user frames named" \
	[ "$((${named:-0} > 0 && ${named:-0} * 10 >= ${frames:-1} * 9))" = 1 ]
named=$(cfact agent-pre user_named_of_comm) frames=$(cfact agent-pre user_frames_of_comm)
check user-symbol-snapshot "agent-pre (running before): $named of $frames user frames named" \
	[ "$((${named:-0} > 0 && ${named:-0} * 10 >= ${frames:-1} * 9))" = 1 ]
hits=$(cfact agent-test user_hits)
check user-function-by-name "${hits:-no} samples through agent_test_spin" [ "${hits:-0}" -gt 0 ]
hits=$(cfact agent-test kernel_hits)
check kernel-function-by-name "${hits:-no} frames named do_syscall_64, $(cfact agent-test kernel_named) of $(cfact agent-test kernel_frames) kernel frames named" \
	[ "${hits:-0}" -gt 0 ]
ks=$(cfact agent-test kernel_syms) kx=$(cfact agent-test kernel_syms_expected)
check kernel-symbols-complete "$ks kernel symbols received, $kx announced for the image" \
	[ "$((${kx:-0} > 10000 && ${ks:-0} >= ${kx:-1}))" = 1 ]
check no-rejected-sideband "'$(cfact agent-test rejected)' messages rejected" \
	[ "$(cfact agent-test rejected)" = 0 ]
check no-lost-sideband "the agent lost '$(cfact agent-test agent_lost_messages)' messages" \
	[ "$(cfact agent-test agent_lost_messages)" = 0 ]
peak=$(cfact agent-test sideband_max_bytes_2s)
check sideband-rate "$peak bytes in the busiest 2 s (budget $((2 * BUDGET))), $(cfact agent-test sideband_bytes) bytes in all" \
	[ "$((${peak:-0} > 0 && ${peak:-0} <= 2 * BUDGET))" = 1 ]
bad="no dmesg.txt from L1"
[ -f "$outdir/dmesg.txt" ] &&
	bad=$(grep -E 'WARNING: CPU|BUG:|Oops|general protection fault|Dazed and confused' \
		"$outdir/dmesg.txt" | head -n 1)
check l1-no-warning "L1 logged: $bad" [ -z "$bad" ]

results_write "agent-nested$L2_SUFFIX"
