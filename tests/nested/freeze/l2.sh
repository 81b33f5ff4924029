#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of the freeze study (busybox sh, the L2 init hook; pvprof_guest.ko
# and freeze_nmi_sink.ko are loaded by then). Runs the fixed-work program in a
# loop, so that the vCPU spends its time in user code as the frozen demos'
# L2s did, says FREEZE-READY, and obeys lines from L1 on the serial console:
# "nmi N" sets the sink's self-NMI rate (answered FREEZE-ACK N), "quit"
# prints what the guest counted and ends.

exec 3< /dev/ttyS0
stty -F /dev/ttyS0 -echo
dmesg -c > /dev/null
sink=/sys/module/freeze_nmi_sink/parameters
(while :; do /bench-work 200 > /dev/null || exit 1; done) &
work_pid=$!
echo "FREEZE-READY work pid $work_pid"
while read -r cmd arg <&3; do
	case "$cmd" in
	nmi)
		if echo "$arg" > "$sink/rate"; then
			echo "FREEZE-ACK $arg sent $(cat "$sink/sent")"
		else
			echo "FREEZE-ERROR cannot set the NMI rate to '$arg'"
		fi
		;;
	quit)
		kill "$work_pid"
		echo "FACT sink_sent $(cat "$sink/sent")"
		echo "FACT sink_claimed $(cat "$sink/claimed")"
		echo "FACT unknown_nmi_lines $(dmesg | grep -c 'Dazed and confused')"
		sed 's/^/FACT guest_/' /sys/kernel/debug/pvprof/stats 2>/dev/null
		exit 0
		;;
	'') ;;
	*) echo "FREEZE-ERROR unknown command '$cmd'" ;;
	esac
done
echo "FREEZE-ERROR console closed"
exit 1
