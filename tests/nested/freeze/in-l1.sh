#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The L1 half of the freeze study (run by tests/nested/freeze/run through
# run-l1): boots one L2 that runs user code without pause, then samples it
# in ROUNDS rounds of SECONDS each, one configuration:
#   stock    the distro's KVM; host perf (cpu-clock -F HZ) on the vCPU
#            thread, and HZ NMIs a second injected by KVM into L2 (the
#            guest's self-NMIs: freeze_nmi_sink.c says why not QMP's)
#   loaded   the same, with pvprof's KVM loaded and not enabled
#   enabled  pvprof's KVM sampling at HZ (kvm-pvprof record), with an
#            interrupt due at a pvprof NMI waiting for the interrupt window
#            (kvm.pvprof_irq_waits_for_nmi=1: hunk 15 of the hook patch on,
#            as on hardware; the study's configuration before the default
#            became -1)
#   enabled-immediate  the same, with KVM's own immediate exit instead
#            (kvm.pvprof_irq_waits_for_nmi=0, what the default -1 does in
#            a host under a hypervisor like this one)
# OUT/rounds.txt gets a line when the L2 is launched and when it is ready,
# and a "start" line before and an "end" line after each round (so a round
# that a frozen L1 never finished shows as a start without an end), with
# KVM's per-VM counters of the round.
#
# usage: in-l1.sh OUT INITRD CONFIG HZ ROUNDS SECONDS

PROG=freeze
FREEZE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../common.sh
source "$FREEZE_DIR/../common.sh"
# shellcheck source=../../../demo/l2lib.sh
source "$REPO_DIR/demo/l2lib.sh"
set -uo pipefail

[ $# -eq 6 ] || die "usage: in-l1.sh OUT INITRD CONFIG HZ ROUNDS SECONDS"
out=$1 initrd=$2 config=$3 hz=$4 rounds=$5 seconds=$6
TOOL=$O/bin/kvm-pvprof
COUNTERS="exits nmi_injections nmi_window_exits irq_window_exits irq_exits io_exits"
case "$config" in
stock | loaded) ;;
enabled)
	echo 1 > /sys/module/kvm/parameters/pvprof_irq_waits_for_nmi ||
		die "cannot switch on pvprof_irq_waits_for_nmi"
	;;
enabled-immediate)
	echo 0 > /sys/module/kvm/parameters/pvprof_irq_waits_for_nmi ||
		die "cannot switch off pvprof_irq_waits_for_nmi"
	;;
*) die "unknown configuration '$config'" ;;
esac

{
	echo "l1_kernel $(uname -r)"
	echo "l1_clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "kvm $(if [ -e /sys/module/kvm/parameters/pvprof_expose ]; then echo pvprof; else echo stock; fi)"
} > "$out/l1-facts.txt"

# counters: KVM's per-VM counters on one line, read with shell built-ins.
counters() {
	local c v line=
	for c in $COUNTERS; do
		read -r v < "$vm_debugfs/$c" || v=?
		line+=" $c=$v"
	done
	echo "${line# }"
}

acks=0
# nmi_rate N: the guest's self-NMIs at N a second; NMIS_SENT is how many it
# has sent so far.
nmi_rate() {
	local deadline=$((SECONDS + 60))
	acks=$((acks + 1))
	l2_send "$out/l2" "nmi $1"
	until [ "$(grep -c '^FREEZE-ACK' "$out/l2/console.log")" -ge "$acks" ]; do
		grep -q '^FREEZE-ERROR' "$out/l2/console.log" && die "$(grep '^FREEZE-ERROR' "$out/l2/console.log")"
		[ "$SECONDS" -lt "$deadline" ] || die "the L2 guest did not set its NMI rate to $1 in 60 s"
		sleep 0.2
	done
	NMIS_SENT=$(grep '^FREEZE-ACK' "$out/l2/console.log" | sed -n "${acks}s/.* sent //p")
}

# sample_perf_nmi N: perf on the vCPU thread and the guest's self-NMIs, both
# at HZ for SECONDS.
sample_perf_nmi() {
	local n=$1 perf_samples sent_before
	nmi_rate "$hz"
	sent_before=$NMIS_SENT
	perf record -e cpu-clock -F "$hz" -t "$vcpu_tid" -o /tmp/perf.data -- sleep "$seconds" \
		> "$out/round-$n.perf.log" 2>&1
	nmi_rate 0
	perf_samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$out/round-$n.perf.log")
	sampled="self_nmis=$((NMIS_SENT - sent_before)) perf_samples=${perf_samples:-?}"
}

# Each sample_* function leaves what it counted in $sampled.

# sample_pvprof N: kvm-pvprof record for SECONDS.
sample_pvprof() {
	local n=$1 rec_pid samples
	"$TOOL" -j record -F "$hz" -o /tmp/pvprof.data "$l2_pid" > "$out/round-$n.record.json" \
		2> "$out/round-$n.record.log" &
	rec_pid=$!
	sleep "$seconds"
	kill -INT "$rec_pid"
	wait "$rec_pid" ||
		echo "freeze: round $n: kvm-pvprof record failed: $(tail -n 2 "$out/round-$n.record.log")" >&2
	samples=$(sed -n 's/.*"callchains": *\([0-9]*\).*/\1/p' "$out/round-$n.record.json" | head -n 1)
	rm -f /tmp/pvprof.data
	sampled="pvprof_samples=${samples:-?}"
}

echo "l2 launch t=$(cut -d' ' -f1 /proc/uptime)" >> "$out/rounds.txt"
l2_boot "$out/l2" "$initrd" 1 256 || die "the L2 guest did not reach its init"
l2_wait_line "$out/l2" '^FREEZE-READY' 120 || die "the L2 guest did not get ready"
echo "l2 ready t=$(cut -d' ' -f1 /proc/uptime)" >> "$out/rounds.txt"
l2_pid=$(cat "$out/l2/qemu.pid") || die "no L2 QEMU pid"
vm_debugfs=$(l2_vm_debugfs "$l2_pid") || die "no KVM debugfs directory for the L2 QEMU ($l2_pid)"
vcpu_tid=
for t in /proc/"$l2_pid"/task/*; do
	[ "$(cat "$t/comm" 2>/dev/null)" = "CPU 0/KVM" ] && vcpu_tid=${t##*/}
done
[ -n "$vcpu_tid" ] || die "no 'CPU 0/KVM' thread in the L2 QEMU ($l2_pid)"

for ((n = 1; n <= rounds; n++)); do
	echo "round $n start t=$(cut -d' ' -f1 /proc/uptime) $(counters)" >> "$out/rounds.txt"
	if [[ "$config" = enabled* ]]; then
		sample_pvprof "$n"
	else
		sample_perf_nmi "$n"
	fi
	kill -0 "$L2_QEMU_PID" 2>/dev/null || {
		echo "round $n l2-died t=$(cut -d' ' -f1 /proc/uptime)" >> "$out/rounds.txt"
		die "round $n: the L2 guest died (console: $out/l2/console.log)"
	}
	echo "round $n end t=$(cut -d' ' -f1 /proc/uptime) $(counters) $sampled" >> "$out/rounds.txt"
	echo "freeze: $config $hz Hz round $n of $rounds: $sampled" >&2
done

l2_send "$out/l2" quit
status=$(l2_finish "$out/l2" 60)
grep '^FACT ' "$out/l2/console.log" >> "$out/l1-facts.txt"
[ "$status" = 0 ] || die "the L2 guest ended with status $status"
echo done > "$out/in-l1.done"
