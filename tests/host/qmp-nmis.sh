#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs outside L1, beside run-l1 (run-configs.sh starts it for the programs
# in its qmp_nmis list and kills it when run-l1 returns): injects NMIs into
# L1 through the L1 QEMU's QMP socket (tests/nested/qmp inject-nmi) when a
# program inside L1 asks for them through DIR, a directory of the writable
# out share that the program knows as $PVPROF_QMP_NMI_DIR:
#   DIR/request  "COUNT INTERVAL_MS", written by the program (by rename)
#   DIR/done     "sent N" once N of the COUNT NMIs were injected, or
#                "error: ..." (written here, by rename)
# The program removes done before it writes its next request. Serves
# requests until killed; logs to stdout.
#
# usage: qmp-nmis.sh SOCKET DIR
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
qmp=$here/../nested/qmp

[ $# -eq 2 ] || { echo "usage: qmp-nmis.sh SOCKET DIR" >&2; exit 2; }
sock=$1 dir=$2

answer() {
	echo "$1" > "$dir/done.tmp" && mv -f "$dir/done.tmp" "$dir/done"
	echo "qmp-nmis: $1"
}

while :; do
	# A request is a file in the share: nothing to wait on but its arrival.
	if [ ! -e "$dir/request" ]; then
		sleep 0.05
		continue
	fi
	read -r count interval_ms < "$dir/request"
	rm -f "$dir/request"
	if ! [[ "$count" =~ ^[1-9][0-9]{0,4}$ && "$interval_ms" =~ ^[1-9][0-9]{0,3}$ ]]; then
		answer "error: bad request '$count $interval_ms'"
		continue
	fi
	echo "qmp-nmis: $count NMIs, $interval_ms ms apart"
	start=$(date +%s.%N)
	# One JSON line per NMI QEMU accepted.
	sent=$("$qmp" --wait 30 "$sock" inject-nmi --repeat "$count" \
		--interval "$(awk "BEGIN { print $interval_ms / 1000 }")" 2> "$dir/qmp.err" | grep -c .)
	echo "qmp-nmis: sent $sent in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s"
	if [ "$sent" -eq "$count" ]; then
		answer "sent $sent"
	else
		answer "error: sent $sent of $count: $(head -c 200 "$dir/qmp.err")"
	fi
done
