#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The L1 half of make demo (run by demo/run.sh through run-l1): boots the L2
# guest (driver, agent, workload) and records it with kvm-pvprof record:
# from the start of sampling (the agent publishes then) until SECONDS after
# the workload started, then stops the guest. Leaves OUT/pvprof.data, OUT/record.log,
# OUT/status.txt and the guest's console in OUT/l2/console.log.
#
# usage: in-l1.sh OUT INITRD SECONDS HZ CALL_GRAPH

PROG=demo
DEMO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tests/nested/common.sh
source "$DEMO_DIR/../tests/nested/common.sh"
# shellcheck source=l2lib.sh
source "$DEMO_DIR/l2lib.sh"
set -uo pipefail

[ $# -eq 5 ] || die "usage: in-l1.sh OUT INITRD SECONDS HZ CALL_GRAPH"
out=$1 initrd=$2 seconds=$3 hz=$4 call_graph=$5
TOOL=$O/bin/kvm-pvprof

l2_boot "$out/l2" "$initrd" 1 512 || die "the L2 guest did not reach its init (console: $out/l2/console.log)"
# console_error: the guest's DEMO-ERROR line, if it printed one.
console_error() {
	grep '^DEMO-ERROR' "$out/l2/console.log" | head -n 1
}
if ! l2_wait_line "$out/l2" '^DEMO-(READY|ERROR)' 300 || [ -n "$(console_error)" ]; then
	die "the L2 guest did not get ready: $(console_error) (console: $out/l2/console.log)"
fi
l2_pid=$(cat "$out/l2/qemu.pid") || die "no L2 QEMU pid"

# Recording starts sampling; the guest's agent then publishes, and only
# when it is done does the guest start the workload. From then on, the
# demo's duration.
"$TOOL" record -F "$hz" --call-graph "$call_graph" -o "$out/pvprof.data" "$l2_pid" \
	2> "$out/record.log" &
record_pid=$!
# The guest allows pvprofd 300 s to publish and 120 s to send it.
if ! l2_wait_line "$out/l2" '^DEMO-(WORKLOAD-STARTED|ERROR)' 480 || [ -n "$(console_error)" ]; then
	kill -INT "$record_pid"
	wait "$record_pid"
	die "the guest did not start the workload: $(console_error) (console: $out/l2/console.log)"
fi
echo "demo: guest: $(sed -n 's/^DEMO-WORKLOAD-STARTED //p' "$out/l2/console.log"); recording $seconds s more at $hz Hz" >&2
sleep "$seconds"
kill -INT "$record_pid"
wait "$record_pid"
record_status=$?
"$TOOL" status "$l2_pid" > "$out/status.txt" 2>&1
l2_send "$out/l2" stop
status=$(l2_finish "$out/l2" 120)
cat "$out/record.log" >&2
[ "$record_status" = 0 ] || die "kvm-pvprof record failed (exit $record_status)"
[ "$status" = 0 ] || die "the L2 guest ended with status $status (console: $out/l2/console.log)"
