#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of guest-sampling.sh (busybox sh, the L2 init hook, booted with
# unknown_nmi_panic=1): loads pvprof_guest.ko, says READY, runs a busy loop
# for 20 s of guest time while L1 enables sampling, says LOOP-DONE, prints
# the driver's counters, then, with a busy loop on the other CPU so both
# vCPUs keep being sampled: NMI backtraces of both CPUs in a loop; then with
# unknown_nmi_panic off, says QMP-READY and counts the unknown-NMI reports
# the NMIs L1 injects through QMP cause (QEMU delivers them through LINT1,
# which Linux enables on the boot CPU only). Everything else is FACT lines.

BACKTRACE_ROUNDS=20
QMP_NMIS=10	# must match guest-sampling.sh

# Boot messages are not the driver's (nested TCG boots warn in xstate init).
dmesg -c > /dev/null
insmod /pvprof_guest.ko
echo "FACT insmod_status $?"
echo READY
end=$(($(cut -d. -f1 /proc/uptime) + 20))
while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do :; done
echo LOOP-DONE
sed 's/^/FACT /' /sys/kernel/debug/pvprof/stats

busy() { while :; do :; done; }
busy &
busy_pid=$!

count() { dmesg | grep -c "$1"; }
# "Uhhuh. NMI received for unknown reason 3d on CPU 0.", or the SERR/IOCHK
# variants: every unclaimed NMI the kernel does not swallow.
UNKNOWN_ON_CPU0='NMI.* on CPU 0\.'
UNKNOWN_ON_CPU1='NMI.* on CPU 1\.'
# Waits for a dmesg line count to reach $2, up to $3 tenths of a second.
wait_count() {
	polls=0
	until [ "$(count "$1")" -ge "$2" ] || [ $polls -ge "$3" ]; do
		sleep 0.1
		polls=$((polls + 1))
	done
}

round=0
while [ $round -lt $BACKTRACE_ROUNDS ]; do
	round=$((round + 1))
	echo l > /proc/sysrq-trigger
	# Each round prints both CPUs (the triggering one possibly twice).
	wait_count 'NMI backtrace for cpu 1' $round 100
done
echo "FACT backtrace_rounds $round"
echo "FACT nmi_backtraces_cpu0 $(count 'NMI backtrace for cpu 0')"
echo "FACT nmi_backtraces_cpu1 $(count 'NMI backtrace for cpu 1')"
echo "FACT unknown_nmi_lines $(count 'Dazed and confused')"
dmesg | grep -B 1 'Dazed and confused' | head -n 10 | sed 's/^/FACT unknown_line /'
echo "FACT still_alive_after_backtraces 1"

# An NMI the VMM injects has no owner: each must be reported exactly once.
echo 0 > /proc/sys/kernel/unknown_nmi_panic
before0=$(count "$UNKNOWN_ON_CPU0")
before1=$(count "$UNKNOWN_ON_CPU1")
echo QMP-READY
wait_count "$UNKNOWN_ON_CPU0" $((before0 + QMP_NMIS)) 1200
sleep 2	# reports beyond the expected count would show up here
echo "FACT qmp_unknown_cpu0 $(($(count "$UNKNOWN_ON_CPU0") - before0))"
echo "FACT qmp_unknown_cpu1 $(($(count "$UNKNOWN_ON_CPU1") - before1))"
kill $busy_pid

splats='WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking'
echo "FACT kernel_warning_lines $(dmesg | grep -c -E "$splats")"
dmesg | grep -E -A 3 "$splats" | head -n 40 | sed 's/^/FACT kernel_line /'
sed 's/^/FACT after_/' /sys/kernel/debug/pvprof/stats
rmmod pvprof_guest
echo "FACT rmmod_status $?"
exit 0
