#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-sampling: pvprof_guest.ko in a 2-vCPU L2 (unknown_nmi_panic=1) while
# the pvprof KVM in L1 samples it (kvm-pvprof enable, cpu-clock at 1000 Hz,
# 20 s of a busy loop, then busy loops on one CPU during the NMI phases).
# Needs a host that offers PVPROF_FEAT_CPU_CLOCK and NMI_DELIVERED (the host
# data path); on a host without them the registration checks fail and say so.
#
# Checks: both vCPUs registered; the host accepted callchains and rejected
# none (loss reason "invalid" 0); the guest's books balance (notices ==
# callchains + stale + dropped, no garbage, no errors); 20 rounds
# of NMI backtraces of all CPUs while sampling with neither a panic nor an
# unknown-NMI report; 10 NMIs injected through QMP reported as unknown
# exactly once (pvprof hides none and adds none); unload is
# clean; no kernel splat in L2 or L1.
#
# usage: guest-sampling.sh; writes "<passed> <failed>" to
# $O/results/guest-sampling.  "guest-sampling.sh --in-l1 OUT IMAGE KERNEL"
# runs in L1 (KERNEL: run-l2's --kernel IMAGE, or - for L1's own).
# L2_KVER=R boots the L2 with kernel R instead (tests/l2-kernel.sh), the
# outputs and results then named guest-sampling-R.

PROG=guest-sampling
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tests/nested/common.sh
source "$TESTS_DIR/../../tests/nested/common.sh"
# shellcheck source=l2-kernel.sh
source "$TESTS_DIR/l2-kernel.sh"
set -uo pipefail

TOOL=$O/bin/kvm-pvprof

# wait_for FILE PATTERN POLLS: poll FILE for PATTERN every 0.5 s.
# Gives up at once when the L2 (run-l2, pid $l2_pid once started) is gone.
wait_for() {
	local polls
	for ((polls = 0; polls < $3; polls++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		[ -n "${l2_pid:-}" ] && ! kill -0 "$l2_pid" 2>/dev/null && return 1
		sleep 0.5
	done
	return 1
}

QMP_NMIS=10	# must match guest-sampling-l2.sh

in_l1() {
	local out=$1 image=$2 kernel=() pid i
	[ "$3" = - ] || kernel=(--kernel "$3")
	"$NESTED_DIR/run-l2" --initrd "$image" "${kernel[@]}" --smp 2 --mem 512 --machine pc --timeout 1400 \
		--append unknown_nmi_panic=1 --qmp /tmp/l2.qmp \
		--pidfile "$out/l2.pid" --console "$out/l2.console" 2> "$out/l2.stderr" &
	l2_pid=$!
	wait_for "$out/l2.console" READY 600 || echo "L2 never said READY" > "$out/enable.out"
	pid=$(cat "$out/l2.pid")
	"$TOOL" enable "$pid" >> "$out/enable.out" 2>&1
	echo "enable_status $?" >> "$out/enable.out"
	wait_for "$out/l2.console" LOOP-DONE 600
	"$TOOL" status "$pid" > "$out/status.out" 2>&1
	if wait_for "$out/l2.console" QMP-READY 1200; then
		# Paced: NMIs sent back to back would be merged by KVM itself.
		for ((i = 0; i < QMP_NMIS; i++)); do
			"$NESTED_DIR/qmp" /tmp/l2.qmp inject-nmi > /dev/null 2>> "$out/qmp.err" &&
				echo sent >> "$out/qmp.sent"
			sleep 0.3
		done
	fi
	wait
	echo $? > "$out/l2.status"
	exit 0
}

if [ "${1:-}" = --in-l1 ]; then
	in_l1 "$2" "$3" "$4"
fi

fact() {
	sed -n "s/^FACT $1 //p" "$outdir/l2.console" | head -n 1 | tr -d '\r'
}

l2_kernel_select
L2_IMAGE=$NESTED_OUT/guest-sampling-l2$L2_SUFFIX.cpio
outdir=$NESTED_OUT/guest-sampling$L2_SUFFIX
rm -rf "$outdir"
mkdir -p "$outdir" || die "cannot create $outdir"
[ -n "$L2_REL" ] && echo "NOTE the L2 guest boots $L2_REL (${L2_IMAGE_ARGS[1]})"
l2_make modules > "$outdir/build.log" 2>&1 ||
	die "make -C guest-driver failed (see $outdir/build.log)"
make -s -C "$REPO_DIR/host-kvm" modules > "$outdir/host-kvm-build.log" 2>&1 ||
	die "'make -C host-kvm modules' failed (see $outdir/host-kvm-build.log)"
make -s -C "$REPO_DIR/host-kvm/tool" > "$outdir/tool-build.log" 2>&1 ||
	die "'make -C host-kvm/tool' failed (see $outdir/tool-build.log)"
"$NESTED_DIR/l2-initramfs" --run "$TESTS_DIR/guest-sampling-l2.sh" \
	--file "$L2_MODULE:/pvprof_guest.ko" -o "$L2_IMAGE" > /dev/null ||
	die "l2-initramfs failed"

"$NESTED_DIR/run-l1" --kvm pvprof --smp 2 --timeout 1500 --out "$outdir" -- \
	"$TESTS_DIR/guest-sampling.sh" --in-l1 "$outdir" "$L2_IMAGE" "${L2_IMAGE_ARGS[1]:--}" \
	> "$outdir/l1.stdout" 2> "$outdir/l1.stderr"
check l1-runs "run-l1 exited $?: $(run_l1_said "$outdir/l1.stderr")" [ -f "$outdir/l2.status" ]
check l2-runs "run-l2 exited '$(cat "$outdir/l2.status" 2>/dev/null)'" \
	[ "$(cat "$outdir/l2.status" 2>/dev/null)" = 0 ]
check insmod "insmod exited '$(fact insmod_status)'" [ "$(fact insmod_status)" = 0 ]
check enable "$(tr '\n' ' ' < "$outdir/enable.out" 2>/dev/null)" grep -qx 'enable_status 0' "$outdir/enable.out"
check both-vcpus-registered "$(grep 'vCPUs:' "$outdir/status.out" 2>/dev/null)" \
	grep -qE '^ *vCPUs: *2, 2 registered$' "$outdir/status.out"
host_callchains=$(sed -n 's/^ *totals:.* callchains \([0-9]*\).*/\1/p' "$outdir/status.out")
check host-accepts-callchains "host totals: $(grep 'totals:' "$outdir/status.out")" [ "${host_callchains:-0}" -gt 0 ]
check host-rejects-none "$(grep -E '^ *invalid ' "$outdir/status.out")" \
	grep -qE '^ *invalid +0$' "$outdir/status.out"
# The driver's debugfs key "records" counts the callchains it posted.
notices=$(fact notices) callchains=$(fact records) stale=$(fact stale) dropped=$(fact dropped)
check guest-books-balance "notices '$notices', callchains '$callchains', stale '$stale', dropped '$dropped'" \
	[ "${notices:-x}" = "$((${callchains:-0} + ${stale:-0} + ${dropped:-0}))" ]
check guest-answers "callchains '$callchains'" [ "${callchains:-0}" -gt 0 ]
check guest-no-errors "errors '$(fact errors)', garbage '$(fact garbage)'" \
	[ "$(fact errors)$(fact garbage)" = 00 ]
# Every round made CPU 1 print its backtrace (the NMI IPI reached it).
backtraces_complete() {
	[ "$(fact backtrace_rounds)" = 20 ] && [ "$(fact nmi_backtraces_cpu1)" -ge 20 ] 2> /dev/null
}
check nmi-backtraces-while-sampling "$(fact backtrace_rounds) rounds: cpu0 '$(fact nmi_backtraces_cpu0)', cpu1 '$(fact nmi_backtraces_cpu1)' backtraces" \
	backtraces_complete
check no-panic-with-unknown-nmi-panic "the L2 did not get past the backtrace loop" \
	[ "$(fact still_alive_after_backtraces)" = 1 ]
check no-unknown-nmi "'$(fact unknown_nmi_lines)' unknown NMIs during $(fact backtrace_rounds) backtrace rounds: $(sed -n 's/^FACT unknown_line //p' "$outdir/l2.console" | head -n 2 | tr -d '\r' | tr '\n' '|')" \
	[ "$(fact unknown_nmi_lines)" = 0 ]
# An ownerless NMI (QEMU's inject-nmi reaches the boot CPU through LINT1) is
# reported exactly once: pvprof neither hid one nor added one.
sent=$(wc -l < "$outdir/qmp.sent" 2>/dev/null)
qmp_nmis_reported_once() {
	[ "${sent:-0}" = "$QMP_NMIS" ] && [ "$(fact qmp_unknown_cpu0)" = "$QMP_NMIS" ] &&
		[ "$(fact qmp_unknown_cpu1)" = 0 ]
}
check qmp-nmis-each-reported-once "$sent of $QMP_NMIS inject-nmi sent; unknown-NMI reports: CPU 0 '$(fact qmp_unknown_cpu0)', CPU 1 '$(fact qmp_unknown_cpu1)' ($(head -c 200 "$outdir/qmp.err" 2>/dev/null))" \
	qmp_nmis_reported_once
check rmmod "rmmod exited '$(fact rmmod_status)'" [ "$(fact rmmod_status)" = 0 ]
check no-l2-warning "'$(fact kernel_warning_lines)' splat lines: $(sed -n 's/^FACT kernel_line //p' "$outdir/l2.console" | head -n 8 | tr '\n' '|')" \
	[ "$(fact kernel_warning_lines)" = 0 ]
bad="no dmesg.txt from L1"
[ -f "$outdir/dmesg.txt" ] &&
	bad=$(grep -E 'WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking|Dazed and confused' \
		"$outdir/dmesg.txt" | head -n 1)
check l1-no-warning "L1 logged: $bad" [ -z "$bad" ]

results_write "guest-sampling$L2_SUFFIX"
