#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of guest-sampling.sh (busybox sh, the L2 init hook): loads
# pvprof_guest.ko, says READY, runs a busy loop for 30 s of guest time
# while L1 enables sampling, says LOOP-DONE, then prints the driver's
# counters, an NMI backtrace's aftermath and the unload as FACT lines.

# Boot messages are not the driver's (nested TCG boots warn in xstate init).
dmesg -c > /dev/null
insmod /pvprof_guest.ko
echo "FACT insmod_status $?"
echo READY
end=$(($(cut -d. -f1 /proc/uptime) + 30))
while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do :; done
echo LOOP-DONE
sed 's/^/FACT /' /sys/kernel/debug/pvprof/stats
echo l > /proc/sysrq-trigger
polls=0
backtrace_cpus() {
	dmesg | sed -n 's/.*NMI backtrace for cpu \([01]\).*/\1/p' | sort -u | wc -l
}
until [ "$(backtrace_cpus)" -ge 2 ] || [ $polls -ge 100 ]; do
	sleep 0.1
	polls=$((polls + 1))
done
echo "FACT nmi_backtrace_cpus $(backtrace_cpus)"
echo "FACT nmi_backtraces $(dmesg | grep -c 'NMI backtrace for cpu')"
echo "FACT unknown_nmi_lines $(dmesg | grep -c 'Dazed and confused')"
splats='WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking'
echo "FACT kernel_warning_lines $(dmesg | grep -c -E "$splats")"
dmesg | grep -E -A 3 "$splats|NMI backtrace for cpu" | head -n 40 | sed 's/^/FACT kernel_line /'
rmmod pvprof_guest
echo "FACT rmmod_status $?"
exit 0
