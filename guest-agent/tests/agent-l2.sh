#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The agent test's L2 side (/hook/run, busybox sh): start pvprofd while
# sampling is off, start agent-pre (known to the agent only from /proc),
# wait until pvprofd says sampling is on and its first publication
# went out, run agent-test (known only from perf's records), wait until
# pvprofd's queue drained again, stop pvprofd and report.  Console lines: AGENT-STARTED (L1 starts
# recording then), FACT name value, AGENTLOG <pvprofd's log>, AGENT-DONE.

fact() { echo "FACT $*"; }

/bin/pvprofd > /tmp/pvprofd.log 2>&1 &
agent=$!
/bin/agent-pre 3600 > /dev/null &
pre=$!
sleep 1
if ! kill -0 "$agent" 2>/dev/null; then
	fact agent_alive 0
	sed 's/^/AGENTLOG /' /tmp/pvprofd.log
	exit 1
fi
fact agent_alive 1
echo AGENT-STARTED

# wait_log PATTERN COUNT: until PATTERN is in the log more than COUNT times.
wait_log() {
	polls=0
	while [ "$(grep -c "$1" /tmp/pvprofd.log)" -le "$2" ]; do
		polls=$((polls + 1))
		[ "$polls" -gt 1500 ] && return 1
		sleep 0.2
	done
}

# Whether sampling was on at start or switched on later, the agent says so.
wait_log "sampling is on" 0
fact agent_saw_sampling "$(grep -c 'sampling is on' /tmp/pvprofd.log)"
wait_log "queue drained" 0
drained=$(grep -c "queue drained" /tmp/pvprofd.log)

/bin/agent-test 6 > /dev/null
fact test_status $?
# Its mapping's symbols are read and sent at the agent's pace.
wait_log "queue drained" "$drained"
fact agent_drained $?
fact agent_rss_kib "$(awk "/^VmHWM:/ {print \$2}" /proc/$agent/status)"
kill "$pre" 2>/dev/null
kill -TERM "$agent"
wait "$agent"
fact agent_exit $?
sed 's/^/AGENTLOG /' /tmp/pvprofd.log
echo AGENT-DONE
exit 0
