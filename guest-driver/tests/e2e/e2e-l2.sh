#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of e2e.sh (busybox sh, the L2 init hook).  The mode comes
# from the kernel command line (e2e_mode=main|stock|mig), as do the factor
# for its waits (e2e_factor=N, default 1), the number of driver reloads
# (e2e_reloads=N, default 50) and e2e_kmsg=1 (make check-debug:
# print the kernel log as "KMSG <line>" lines, and in main mode a kmemleak
# scan before power-off as "KMEMLEAK <line>" lines and KMEMLEAK-DONE, for
# tests/debug/kernel-reports.sh).  Lines on the
# console: "E2E-<STEP>" markers the L1 half waits for, "FACT key value",
# "KSYM/KTEXT/KMOD start end [name]" (the kernel symbols the checker needs,
# from /proc/kallsyms and /proc/modules).
#
# L1 cannot write to the L2; the L2 sees L1's enable through its own
# driver (notices arrive), and L1 reads what it needs within the idle
# windows the L2 leaves after each step's marker.

mode=$(sed -n 's/.*e2e_mode=\([a-z]*\).*/\1/p' /proc/cmdline)
f=$(sed -n 's/.*e2e_factor=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$f" ] && [ "$f" -ge 1 ] 2>/dev/null || f=1
kmsg=$(sed -n 's/.*e2e_kmsg=\([0-9]*\).*/\1/p' /proc/cmdline)
reloads=$(sed -n 's/.*e2e_reloads=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$reloads" ] || reloads=50
kmemleak=/sys/kernel/debug/kmemleak
# Kernel reports: WARN and BUG, lockdep, RCU lockdep, KASAN (BUG: KASAN),
# UBSAN, debug objects, might-sleep (BUG: sleeping function ...), unclaimed
# NMIs.
splats='WARNING: CPU|WARNING: (possible|inconsistent|suspicious|bad unlock|held lock|lock held|nested lock)|BUG:|kernel BUG at|Oops|general protection fault|possible .*locking|UBSAN:|ODEBUG:|Dazed and confused|Uhhuh'

stat() {
	sed -n "s/^$1 //p" /sys/kernel/debug/pvprof/stats 2>/dev/null
}

# wait_notices N TIMEOUT: until the driver has seen more than N notices.
wait_notices() {
	t=0
	while [ "$(stat notices)" -le "$1" ] 2>/dev/null && [ $t -lt "$2" ]; do
		sleep 0.2
		t=$((t + 1))
	done
}

# progress WHAT: a step of a phase that prints nothing else until its end,
# with the L2's uptime and notice count, so that a slow phase can be told
# from a stuck one on the console.
progress() {
	echo "E2E-PROGRESS $1 uptime $(cut -d ' ' -f 1 /proc/uptime) notices $(stat notices)"
}

kernel_facts() {
	echo "FACT kernel_warning_lines $(dmesg | grep -c -E "$splats")"
	dmesg | grep -E -B 4 -A 8 "$splats" | head -n 60 | sed 's/^/FACT kernel_line /'
}

# The symbols the checker names, with their ends (kallsyms lists vmlinux
# symbols by address: a symbol ends where the next address starts).
print_ksyms() {
	awk '
	BEGIN {
		n = split("asm_exc_nmi exc_nmi default_do_nmi nmi_handle repeat_nmi end_repeat_nmi " \
			"nested_nmi nested_nmi_out first_nmi unwind_next_frame __unwind_start " \
			"unwind_get_return_address copy_from_user_nmi do_syscall_64 __x64_sys_read " \
			"ksys_read vfs_read read_iter_zero", w, " ")
		for (i = 1; i <= n; i++) want[w[i]] = 1
	}
	/\[/ { next }
	$1 != cur { for (i = 0; i < np; i++) print "KSYM", pa[i], $1, pn[i]; np = 0; cur = $1 }
	# Init text is freed after boot, but the idle task of CPU 0 still
	# returns through start_kernel.
	$3 == "_text" { ts = $1 } $3 == "_etext" { print "KTEXT", ts, $1 }
	$3 == "_sinittext" { is = $1 } $3 == "_einittext" { print "KTEXT", is, $1 }
	$3 == "entry_SYSCALL_64" { in_entry = 1 }
	want[$3] || in_entry || $3 ~ /^asm_(sysvec|common_interrupt|exc_)/ ||
	$3 ~ /^(error_entry|error_return|paranoid_entry|paranoid_exit)$/ ||
	$3 ~ /thunk|untrain_ret|^srso_/ {
		# Everything between them is syscall entry code.
		pa[np] = $1; pn[np] = (in_entry && $3 !~ /^entry_S/) ? "entry_SYSCALL_64." $3 : $3; np++
	}
	$3 == "entry_SYSRETQ_end" { in_entry = 0 }' /proc/kallsyms
	print_module_syms
}

# The driver's functions; printed again when a reload moves the module.
print_module_syms() {
	while read -r name size _ _ _ base _; do
		end=$(printf '%x' $((base + size)))
		echo "KMOD ${base#0x} $end [$name]"
		grep "\[$name\]" /proc/kallsyms | grep ' [tT] ' | sort | awk -v end="$end" '
		$1 != cur { for (i = 0; i < np; i++) print "KSYM", pa[i], $1, pn[i]; np = 0; cur = $1 }
		$2 ~ /^[tT]$/ && $3 ~ /^pvprof_/ { pa[np] = $1; pn[np] = $3; np++ }
		END { for (i = 0; i < np; i++) print "KSYM", pa[i], end, pn[i] }'
	done < /proc/modules
	module_base=$(awk '$1 == "pvprof_guest" { print $6 }' /proc/modules)
}

driver_facts() {
	sed 's/^/FACT /' /sys/kernel/debug/pvprof/stats
	sed 's/^/FACT handler_ns /' /sys/kernel/debug/pvprof/handler_ns | grep -v '#'
}

main_mode() {
	insmod /pvprof_guest.ko
	echo "FACT insmod_status $?"
	print_ksyms
	echo E2E-READY
	wait_notices 0 $((600 * f))
	echo "FACT sampling_seen $(stat notices)"

	# Cases 1, 2 and 5: known stacks on both vCPUs, then no frame pointers.
	/e2e-fp 15 0 > /tmp/fp.out 2>&1 &
	fp=$!
	/e2e-sys 15 1 > /tmp/sys.out 2>&1 &
	sys=$!
	echo "FACT pid_fp $fp"
	echo "FACT pid_sys $sys"
	wait $fp
	echo "FACT fp_status $?"
	wait $sys
	echo "FACT sys_status $? $(cat /tmp/sys.out)"
	/e2e-nofp 8 0 &
	nofp=$!
	echo "FACT pid_nofp $nofp"
	wait $nofp
	echo "FACT nofp_status $?"
	driver_facts | sed 's/^FACT /FACT known_/'
	# L1 takes the host's counters for this phase while the L2 idles.
	echo E2E-KNOWN-DONE
	sleep $((6 * f))

	# Case 6: CPU offline/online while both vCPUs are busy.
	# Unpinned: a task pinned to CPU 1 could not follow it offline.
	/e2e-fp 40 & b0=$!
	/e2e-fp 40 & b1=$!
	hp_fail=0
	for i in 1 2 3; do
		echo 0 > /sys/devices/system/cpu/cpu1/online || hp_fail=$((hp_fail + 1))
		progress "hotplug $i offline"
		before=$(stat notices)
		wait_notices "$before" $((25 * f))
		echo 1 > /sys/devices/system/cpu/cpu1/online || hp_fail=$((hp_fail + 1))
		progress "hotplug $i online"
		before=$(stat notices)
		wait_notices "$before" $((25 * f))
	done
	echo "FACT hotplug_failures $hp_fail"
	echo "FACT hotplug_cpus $(grep -c '^[0-9]* active ' /sys/kernel/debug/pvprof/cpus)"
	sed 's/^/FACT hotplug_cpuline /' /sys/kernel/debug/pvprof/cpus
	kill $b0 $b1 2>/dev/null
	wait
	/e2e-fp 600 & b0=$!
	/e2e-fp 600 & b1=$!

	# Case 4: unload and reload 50 times while sampling; the guest's books
	# must balance in every load (the counters go with the module).
	# One read of the stats file sums the per-CPU counters while NMIs keep
	# coming: a handler running on each CPU may have counted its notice
	# and not yet its answer, so up to 2 (the CPUs) may be in flight.
	reload_fail=0 books_bad=0 reload_notices=0 max_in_flight=0
	for i in $(seq "$reloads"); do
		before=$(stat notices)
		wait_notices "$before" $((10 * f))
		set -- $(awk '{ v[$1] = $2 } END { print v["notices"], v["records"] + v["stale"] + v["dropped"] }' \
			/sys/kernel/debug/pvprof/stats)
		in_flight=$(($1 - $2))
		[ $in_flight -ge 0 ] && [ $in_flight -le 2 ] || books_bad=$((books_bad + 1))
		[ $in_flight -gt $max_in_flight ] && max_in_flight=$in_flight
		reload_notices=$((reload_notices + $1))
		rmmod pvprof_guest || reload_fail=$((reload_fail + 1))
		insmod /pvprof_guest.ko || reload_fail=$((reload_fail + 1))
		progress "reload $i"
		[ "$(awk '$1 == "pvprof_guest" { print $6 }' /proc/modules)" = "$module_base" ] ||
			print_module_syms
	done
	echo "FACT reload_failures $reload_fail"
	echo "FACT reload_books_unbalanced $books_bad"
	echo "FACT reload_max_in_flight $max_in_flight"
	echo "FACT reload_notices $reload_notices"
	kill $b0 $b1 2>/dev/null
	wait
	before=$(stat notices)
	/e2e-fp 3 0 & /e2e-fp 3 1
	wait
	echo "FACT after_reload_notices $(stat notices) (from $before)"
	driver_facts
	kernel_facts
	echo E2E-WORK-DONE
	# L1 disables sampling and reads the host's counters now.
	sleep $((12 * f))
	rmmod pvprof_guest
	echo "FACT rmmod_status $?"
	kernel_facts | sed 's/^FACT /FACT final_/'
	[ "$kmsg" = 1 ] && print_kmsg_final
}

# e2e_kmsg=1: kmemleak's scan (objects older than its minimum age of 5 s,
# the boot's own suspects cleared at start), then the whole kernel log.
print_kmsg_final() {
	if [ -w "$kmemleak" ]; then
		t0=$(cut -d' ' -f1 /proc/uptime)
		sleep 5
		echo scan > "$kmemleak"
		sed 's/^/KMEMLEAK /' "$kmemleak"
		echo "KMEMLEAK-DONE"
		echo "FACT kmemleak_scan_from_uptime $t0 to $(cut -d' ' -f1 /proc/uptime)"
	fi
	sed 's/^/KMSG /' /tmp/boot.kmsg
	dmesg | sed 's/^/KMSG /'
}

stock_mode() {
	insmod /pvprof_guest.ko
	echo "FACT insmod_status $?"
	echo "FACT driver_mode $(sed -n 's/^mode //p' /sys/kernel/debug/pvprof/status)"
	# The driver's own lines carry its pr_fmt prefix "pvprof: ".
	echo "FACT driver_lines $(dmesg | grep -c '^\[ *[0-9.]*\] pvprof: ')"
	dmesg | grep '^\[ *[0-9.]*\] pvprof: ' | sed 's/^/FACT driver_line /'
	/e2e-fp 5 0 &
	fp=$!
	/e2e-sys 5 1 > /dev/null
	echo "FACT sys_status $?"
	wait $fp
	echo "FACT fp_status $?"
	rmmod pvprof_guest
	echo "FACT rmmod_status $?"
	kernel_facts
}

# Case 7: a checksummed region kept busy while L1 snapshots, migrates and
# resets this VM; the state line every second shows the registration, the
# driver's periodic check (its QUERY count) and the guest's two clocks
# (jiffies, which kernel timers such as the check's run on, and uptime).
mig_mode() {
	local registered queries
	insmod /pvprof_guest.ko
	echo "FACT insmod_status $?"
	/e2e-csum 32 &
	stall_trace_start
	echo E2E-MIG-READY
	[ "$kmsg" = 1 ] && sed 's/^/KMSG /' /tmp/boot.kmsg
	warnings=0
	last_queries=
	unchanged=0
	stall=none
	while :; do
		if [ "$kmsg" = 1 ]; then
			# The log since the last line, printed and cleared.
			dmesg -c > /tmp/new.kmsg
			sed 's/^/KMSG /' /tmp/new.kmsg
			warnings=$((warnings + $(grep -c -E "$splats" /tmp/new.kmsg)))
		else
			warnings=$(dmesg | grep -c -E "$splats")
		fi
		registered=$(grep -c '^[0-9]* active ' /sys/kernel/debug/pvprof/cpus)
		queries=$(stat queries)
		echo "MIG-STATE registered $registered" \
			"registrations $(stat registrations) reregistrations $(stat reregistrations)" \
			"notices $(stat notices) warnings $warnings queries $queries" \
			"jiffies $(sed -n 's/^jiffies: //p' /proc/timer_list | head -n 1)" \
			"uptime $(cut -d ' ' -f 1 /proc/uptime)"
		stall_watch "$registered" "$queries"
		sleep 1
	done
}

# Around a snapshot (savevm stops and resumes the VM) the driver's
# one-second check has been seen not to run for 25-35 s
# (tests/debug/README.md).  To see what it waits behind, the mig L2
# traces the kernel's timer and workqueue events from the start, and the
# first time the QUERY count stays the same over three state lines while a
# CPU is registered, it prints every kworker's state, wait channel and
# stack and the trace so far as MIG-STALL lines, then the trace of the
# stall as MIG-RECOVER lines once the count moves again.  All of it comes
# from /proc and tracefs, not the kernel log, which the report checkers
# read.
tracing=/sys/kernel/debug/tracing
stall_trace_events='timer/timer_start timer/timer_expire_entry
	workqueue/workqueue_queue_work workqueue/workqueue_execute_start'

stall_trace_start() {
	local e
	[ -d "$tracing/events/timer" ] || return
	echo 4096 > "$tracing/buffer_size_kb"
	# Jiffies, which a restore leaves consistent with the trace buffer's
	# own stamps: with the default sched_clock stamps the buffer took no
	# event after a restore once (tests/debug/README.md).
	echo uptime > "$tracing/trace_clock"
	for e in $stall_trace_events; do
		echo 1 > "$tracing/events/$e/enable"
	done
}

# stall_trace TAG LINES: the last LINES events of the trace, then clear
# it.  Left out: the TCP timer that rearms itself every 100 ms (ten lines a
# second that would push the stall's start out of reach).
stall_trace() {
	[ -r "$tracing/trace" ] || return
	grep -v -e '^#' -e 'function=tcp_orphan_update' "$tracing/trace" |
		tail -n "$2" | sed "s/^/$1 trace /"
	echo > "$tracing/trace"
}

# stall_watch REGISTERED QUERIES
stall_watch() {
	local p
	if [ "$2" != "$last_queries" ] || [ "$1" = 0 ]; then
		last_queries=$2
		unchanged=0
		if [ "$stall" = reported ]; then
			stall_trace MIG-RECOVER 400
			stall=over
		fi
		return
	fi
	unchanged=$((unchanged + 1))
	[ "$unchanged" = 3 ] && [ "$stall" = none ] || return
	stall=reported
	echo "MIG-STALL queries $2 for 3 lines"
	# The trace and the ticks first: in the debug L2 the kworker loop
	# below takes half a minute, long enough for a stall to end.
	stall_trace MIG-STALL 400
	grep -E '^(now at|cpu:|jiffies:|.*expires_next:|.*next_event:|.*tick_stopped|.*nohz_mode)' /proc/timer_list |
		sed 's/^/MIG-STALL timer_list /'
	for p in $(grep -l '^kworker' /proc/[0-9]*/comm 2>/dev/null); do
		p=${p%/comm}
		echo "MIG-STALL ${p#/proc/} $(cat "$p/comm") state $(cut -d ' ' -f 3 "$p/stat") wchan $(cat "$p/wchan")"
		sed 's/^/MIG-STALL   /' "$p/stack" 2>/dev/null
	done
}

# Boot messages are not the driver's (nested TCG boots warn in xstate init).
# With e2e_kmsg=1 they are kept for the final log, and kmemleak's suspects
# from the boot are cleared (not the driver's either).
if [ "$kmsg" = 1 ]; then
	dmesg -c > /tmp/boot.kmsg
	if [ "$mode" = main ] && [ -w "$kmemleak" ]; then
		echo scan > "$kmemleak"
		echo "FACT kmemleak_boot_suspects $(grep -c '^unreferenced object' "$kmemleak")"
		echo clear > "$kmemleak"
	fi
else
	dmesg -c > /dev/null
fi
case "$mode" in
main) main_mode ;;
stock) stock_mode ;;
mig) mig_mode ;;
*) echo "e2e-l2: no e2e_mode= on the kernel command line"; exit 2 ;;
esac
exit 0
