#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of make bench (busybox sh, the L2 init hook; the guest driver
# is loaded by then). Says BENCH-READY, then obeys lines from L1 on the serial
# console: "run ROUNDS" runs /bench-work ROUNDS once and prints its BENCH
# line; "quit" ends. Everything else is answered with BENCH-ERROR.

dmesg -c > /dev/null
exec 3< /dev/ttyS0
stty -F /dev/ttyS0 -echo
echo BENCH-READY
while read -r cmd arg <&3; do
	case "$cmd" in
	run)
		if ! /bench-work "$arg"; then
			echo "BENCH-ERROR bench-work $arg failed"
		fi
		;;
	quit)
		echo "FACT unknown_nmi_lines $(dmesg | grep -c 'Dazed and confused')"
		sed 's/^/FACT guest_/' /sys/kernel/debug/pvprof/stats 2>/dev/null
		exit 0
		;;
	'') ;;
	*) echo "BENCH-ERROR unknown command '$cmd'" ;;
	esac
done
echo "BENCH-ERROR console closed"
exit 1
