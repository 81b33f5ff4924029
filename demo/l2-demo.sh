#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The L2 half of make demo (busybox sh, the L2 init hook; pvprof_guest.ko is
# loaded by then). Console protocol with demo/in-l1.sh:
#   DEMO-READY            pvprofd runs; L1 starts kvm-pvprof record
#   DEMO-WORKLOAD-STARTED pvprofd saw sampling start and has sent what it
#                         publishes then (kernel symbols, processes, their
#                         ELF symbols): the workload runs now, so its samples
#                         are symbolized from the first; L1 records for the
#                         demo's duration from here
#   stop (from L1)        the recording is over: stop the workload and pvprofd
#   FACT ...              what happened; DEMO-ERROR ... on failure
# The workload is /demo/<name>, its command line /demo/command.

exec 3< /dev/ttyS0
stty -F /dev/ttyS0 -echo

fail() {
	echo "DEMO-ERROR $*"
	[ -f /tmp/pvprofd.log ] && tail -n 20 /tmp/pvprofd.log | sed 's/^/FACT pvprofd: /'
	exit 1
}

# --guest-perf: the guest's own perf profiles the workload first, before
# pvprofd starts and before the host samples, so that the two never overlap.
# perf script runs here, where the program's files are; only the folded
# chains go to the console (PERF-CHAIN lines, then PERF-CHAIN-SAMPLES).
if [ -f /demo/perf-seconds ]; then
	# shellcheck disable=SC2046 # the command line is words
	set -- $(cat /demo/command)
	"$@" > /tmp/perf-workload.log 2>&1 &
	perf_workload_pid=$!
	perf record -e cpu-clock -F 250 --call-graph dwarf -p "$perf_workload_pid" -o /tmp/perf.data \
		-- sleep "$(cat /demo/perf-seconds)" > /tmp/perf-record.log 2>&1 ||
		fail "perf record failed: $(tail -n 3 /tmp/perf-record.log)"
	kill "$perf_workload_pid"
	wait "$perf_workload_pid"
	perf script --no-inline -F comm,ip,sym,dso -i /tmp/perf.data > /tmp/perf.script 2> /tmp/perf-script.log ||
		fail "perf script failed: $(tail -n 3 /tmp/perf-script.log)"
	awk -v dso="$1" -v comm="$(basename "$1" | cut -c1-15)" -v prefix=PERF-CHAIN \
		-f /demo/chains.awk /tmp/perf.script ||
		fail "folding perf script's output failed"
fi

[ -c /dev/pvprof ] || fail "/dev/pvprof missing: the host offers no sideband (is this the pvprof KVM?)"
/bin/pvprofd > /tmp/pvprofd.log 2>&1 &
agent_pid=$!
polls=0
until grep -q 'started:' /tmp/pvprofd.log; do
	kill -0 "$agent_pid" 2>/dev/null || fail "pvprofd exited: $(tail -n 3 /tmp/pvprofd.log)"
	polls=$((polls + 1))
	[ "$polls" -le 300 ] || fail "pvprofd did not start within 60 s"
	sleep 0.2
done
echo "DEMO-READY pvprofd pid $agent_pid"

polls=0
until grep -q 'published [0-9]* processes' /tmp/pvprofd.log; do
	kill -0 "$agent_pid" 2>/dev/null || fail "pvprofd exited: $(tail -n 3 /tmp/pvprofd.log)"
	polls=$((polls + 1))
	[ "$polls" -le 1500 ] || fail "pvprofd did not publish within 300 s of DEMO-READY"
	sleep 0.2
done
# pvprofd has queued what it publishes at start; it paces the queue (at
# most 256 KiB/s) and has sent it all once the driver's sideband byte count
# stops moving for a second. The wait starts no process: pvprofd publishes
# every new process, so a sleep or a sed per poll would keep it busy.
read_sideband_bytes() {
	sideband=
	while read -r key value; do
		[ "$key" = sideband_bytes ] && sideband=$value
	done < /sys/kernel/debug/pvprof/stats
}
read_sideband_bytes
last=$sideband
quiet=0 polls=0
while [ "$quiet" -lt 2 ]; do
	read -t 0.5 -r _ <&3	# half a second; L1 sends nothing before DEMO-WORKLOAD-STARTED
	read_sideband_bytes
	if [ "$sideband" = "$last" ] && [ "$sideband" != 0 ]; then
		quiet=$((quiet + 1))
	else
		quiet=0
	fi
	last=$sideband
	polls=$((polls + 1))
	[ "$polls" -le 240 ] || fail "pvprofd still sending after 120 s ($sideband bytes)"
done

# shellcheck disable=SC2046 # the command line is words, as make demo documents
set -- $(cat /demo/command)
"$@" > /tmp/workload.log 2>&1 &
workload_pid=$!
echo "DEMO-WORKLOAD-STARTED pid $workload_pid: $*, after $last sideband bytes"

while read -r cmd <&3; do
	[ "$cmd" = stop ] && break
done

if kill -0 "$workload_pid" 2>/dev/null; then
	kill "$workload_pid"
	wait "$workload_pid"
	echo "FACT workload stopped by the demo (exit status $?)"
else
	wait "$workload_pid"
	echo "FACT workload exited by itself with status $?"
fi
tail -n 5 /tmp/workload.log | sed 's/^/FACT workload: /'
kill -TERM "$agent_pid" 2>/dev/null
wait "$agent_pid"
echo "FACT pvprofd exit status $?"
tail -n 20 /tmp/pvprofd.log | sed 's/^/FACT pvprofd: /'
sed 's/^/FACT driver: /' /sys/kernel/debug/pvprof/stats
exit 0
