#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of guest-inert.sh (busybox sh, run as the L2 init hook).
# Loads and unloads pvprof_guest.ko around perf and an NMI backtrace, runs
# the NMI-path self-test (pvprof_selftest.ko, stack_user), and prints what
# it saw as "FACT <name> <value>" lines; guest-inert.sh on the outer machine
# decides what passes.  Exits 0 when it ran to the end.

# The busy loops perf runs are single-quoted on purpose.
# shellcheck disable=SC2016

# Facts are printed at the end in one piece: the kernel's console messages
# (unknown-NMI reports on purpose below) would otherwise split lines.
fact() {
	echo "FACT $*" >> /tmp/facts
}

# Where the script is, on the console as it goes: an L2 that the emulation
# resets dies without a word, and these lines say in which step.
step() {
	echo "L2-STEP $*"
}

# The case comes from the L2 command line: "pvprof_case=registered" loads
# the driver with register_featureless=1 (the host offers no feature yet).
insmod_args=
grep -q 'pvprof_case=registered' /proc/cmdline && insmod_args=register_featureless=1

# Kernel log lines the driver printed (its pr_fmt prefix is "pvprof: ").
driver_lines() {
	dmesg | sed -n 's/^\[ *[0-9.]*\] pvprof: //p'
}

dmesg -c > /dev/null

step insmod

# shellcheck disable=SC2086 # no argument or one
insmod /pvprof_guest.ko $insmod_args
fact insmod_status $?
fact driver_line_count "$(driver_lines | wc -l)"
driver_lines | while read -r line; do fact driver_line "$line"; done
fact module_listed "$(grep -c '^pvprof_guest ' /proc/modules)"
fact debugfs_mode "$(sed -n 's/^mode //p' /sys/kernel/debug/pvprof/status 2>/dev/null)"
fact debugfs_registrations "$(sed -n 's/^registrations //p' /sys/kernel/debug/pvprof/stats 2>/dev/null)"
fact dev_pvprof "$([ -e /dev/pvprof ] && echo present || echo absent)"

step cpu-hotplug
# CPU 1 offline and online again: unregistered, then registered anew.
cpu1_state() {
	awk '$1 == 1 { print $2 }' /sys/kernel/debug/pvprof/cpus 2>/dev/null
}
status=0
echo 0 > /sys/devices/system/cpu/cpu1/online || status=1
fact cpu1_offline_status "$status"
fact cpu1_state_offline "$(cpu1_state)"
status=0
echo 1 > /sys/devices/system/cpu/cpu1/online || status=1
fact cpu1_online_status "$status"
fact cpu1_state_online "$(cpu1_state)"
fact registrations_after_hotplug "$(sed -n 's/^registrations //p' /sys/kernel/debug/pvprof/stats 2>/dev/null)"

step perf
# perf keeps working with the driver loaded.
perf stat -e task-clock,cpu-clock,context-switches -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done' \
	> /tmp/perf-stat.out 2>&1
fact perf_stat_status $?
fact perf_stat_task_clock "$(grep -c 'task-clock' /tmp/perf-stat.out)"
perf record -q -e cpu-clock -g -o /tmp/perf.data -- sh -c 'i=0; while [ $i -lt 50000 ]; do i=$((i + 1)); done' \
	> /tmp/perf-record.out 2>&1
fact perf_record_status $?
fact perf_record_samples "$(perf script -i /tmp/perf.data 2>/dev/null | grep -c 'cpu-clock')"

# An NMI backtrace of all CPUs: the CPU that handles the write prints its
# own, the other one gets a real NMI IPI.
nmi_count() {
	awk '$1 == "NMI:" { print $2 + $3 }' /proc/interrupts
}
nmi_before=$(nmi_count)
step nmi-backtrace
echo l > /proc/sysrq-trigger
polls=0
until [ "$(dmesg | grep -c 'NMI backtrace for cpu [01]')" -ge 2 ] || [ $polls -ge 100 ]; do
	sleep 0.1
	polls=$((polls + 1))
done
fact nmi_backtraces "$(dmesg | grep -c 'NMI backtrace for cpu [01]')"
fact nmis_during_sysrq "$(($(nmi_count) - nmi_before))"

rmmod pvprof_guest
fact rmmod_status $?
fact debugfs_gone_after_rmmod "$([ -e /sys/kernel/debug/pvprof ] && echo no || echo yes)"

step reload
# Reload: every load prints its line again, every unload succeeds.
reload_failures=0
for _ in 1 2 3; do
	# shellcheck disable=SC2086
	insmod /pvprof_guest.ko $insmod_args || reload_failures=$((reload_failures + 1))
	rmmod pvprof_guest || reload_failures=$((reload_failures + 1))
done
fact reload_failures "$reload_failures"
fact driver_line_count_total "$(driver_lines | wc -l)"

# The NMI path against the local fake host of pvprof_selftest.ko: one
# notice, then three (two answered stale).
step selftest
insmod /pvprof_selftest.ko
fact selftest_insmod_status $?
for n in 1 3; do
	/stack_user "$n" > "/tmp/selftest-$n.out" 2>&1
	fact "selftest_${n}_status" $?
	while read -r line; do
		fact "selftest_${n}_line" "$line"
	done < "/tmp/selftest-$n.out"
done
# Everything so far must have left no unknown-NMI report.
# One "Dazed and confused" per unknown NMI, whichever reason line precedes it
# ("Uhhuh. NMI received for unknown reason" on the -M pc L2).
unknown_nmis() {
	dmesg | grep -c 'Dazed and confused'
}
fact unknown_nmi_lines "$(unknown_nmis)"

# An NMI that finds no notice, and one that finds a garbage notice_head,
# must not be claimed: the kernel reports each as an unknown NMI.
unknown_before=$(unknown_nmis)
for n in 0 garbage; do
	/stack_user "$n" > "/tmp/selftest-$n.out" 2>&1
	fact "selftest_${n}_status" $?
	fact "selftest_${n}_line" "$(grep '^cpu' "/tmp/selftest-$n.out")"
done
fact selftest_unclaimed_unknown "$(($(unknown_nmis) - unknown_before))"
rmmod pvprof_selftest
fact selftest_rmmod_status $?

# Kernel splats, as tests/host/run-suite.sh matches them.
splats='WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking'
fact kernel_warning_lines "$(dmesg | grep -c -E "$splats")"
dmesg | grep -E "$splats" | head -n 5 | while read -r line; do
	fact kernel_bad_line "$line"
done
cat /tmp/facts
exit 0
