#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of nested-cli-l2.sh (busybox sh, the L2 init hook; the init
# has loaded pvprof_guest.ko by then). On L1's word it keeps every CPU busy in
# user space, so that each vCPU runs guest code the host can sample, or lets
# them idle, so that L1's own commands get its CPU.
# Console protocol with nested-cli-l2.sh (demo/l2lib.sh on the L1 side):
#   CLI-L2-READY <cpus> <driver mode>   booted, CPUs idle
#   busy / idle (from L1)               answered CLI-L2-BUSY N / CLI-L2-IDLE N,
#                                       N counting the commands
#   stop (from L1)                      print FACT lines and exit
#   CLI-L2-ERROR <what>                 on failure

exec 3< /dev/ttyS0
stty -F /dev/ttyS0 -echo

mode=$(sed -n 's/^mode //p' /sys/kernel/debug/pvprof/status 2>/dev/null)
if [ -z "$mode" ]; then
	echo "CLI-L2-ERROR no /sys/kernel/debug/pvprof/status: pvprof_guest.ko is not loaded"
	exit 1
fi
cpus=$(nproc)
pids=
n=0

idle() {
	if [ -n "$pids" ]; then
		# shellcheck disable=SC2086 # a list of pids
		kill $pids
		wait
	fi
	pids=
}

echo "CLI-L2-READY $cpus $mode"
while read -r cmd <&3; do
	case "$cmd" in
	busy)
		idle
		cpu=0
		while [ "$cpu" -lt "$cpus" ]; do
			taskset -c "$cpu" sh -c 'while :; do :; done' &
			pids="$pids $!"
			cpu=$((cpu + 1))
		done
		n=$((n + 1))
		echo "CLI-L2-BUSY $n"
		;;
	idle)
		idle
		n=$((n + 1))
		echo "CLI-L2-IDLE $n"
		;;
	stop)
		break
		;;
	esac
done
idle
sed 's/^/FACT driver: /' /sys/kernel/debug/pvprof/stats
exit 0
