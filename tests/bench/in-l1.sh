#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The L1 half of make bench (run by tests/bench/run.sh through run-l1): boots
# one L2 with the guest driver and runs the fixed-work guest workload under
# three conditions, REPS times each, interleaved (the order rotates every
# repetition):
#   none     no sampling
#   ip_only  host perf on the vCPU thread: perf record -e cpu-clock -F HZ -t TID
#   pvprof   pvprof at the same HZ (kvm-pvprof record, which enables sampling
#            and reads the stream), frame-pointer call graphs
#   pvprof_dwarf  the same with --call-graph dwarf: every sample also carries
#            the user registers and 8 KiB of user stack
# The samplers are started before and stopped after the timed window; the
# guest times the work itself. Around each window the harness reads KVM's
# per-VM exit counters and, for pvprof, kvm-pvprof status -j. A last pvprof
# window, not timed, traces pvprof's hooks in KVM for the host's cost per
# sample. Raw data goes to OUT/runs/ for summarize.py.
#
# usage: in-l1.sh OUT INITRD HZ REPS ROUNDS

PROG=bench
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../nested/common.sh
source "$BENCH_DIR/../nested/common.sh"
# shellcheck source=../../demo/l2lib.sh
source "$REPO_DIR/demo/l2lib.sh"
set -uo pipefail

[ $# -eq 5 ] || die "usage: in-l1.sh OUT INITRD HZ REPS ROUNDS"
out=$1 initrd=$2 hz=$3 reps=$4 rounds=$5
TOOL=$O/bin/kvm-pvprof
runs=$out/runs
mkdir -p "$runs" || die "cannot create $runs"
COUNTERS="exits irq_exits nmi_window_exits io_exits halt_exits nmi_injections irq_window_exits"

bench_runs=0

# read_counters FILE: KVM's per-VM exit counters, one "name value" a line,
# read with shell built-ins so the reading adds no exits of its own work.
read_counters() {
	local c v
	for c in $COUNTERS; do
		read -r v < "$vm_debugfs/$c" || die "cannot read $vm_debugfs/$c"
		echo "$c $v"
	done > "$1"
}

# timed_window NAME: counters, one workload run, counters; the guest's BENCH
# line goes to NAME.bench.
timed_window() {
	local name=$1
	read_counters "$runs/$name.exits-before"
	bench_runs=$((bench_runs + 1))
	l2_send "$out/l2" "run $rounds"
	wait_bench_lines "$bench_runs" ||
		die "run $name: no BENCH line from the guest; console: $(grep '^BENCH-ERROR' "$out/l2/console.log" | head -n 1)"
	read_counters "$runs/$name.exits-after"
	grep '^BENCH elapsed_ns' "$out/l2/console.log" | sed -n "${bench_runs}p" > "$runs/$name.bench"
}

wait_bench_lines() {
	local want=$1 deadline=$((SECONDS + 600))
	while [ "$(grep -c '^BENCH elapsed_ns' "$out/l2/console.log")" -lt "$want" ]; do
		grep -q '^BENCH-ERROR' "$out/l2/console.log" && return 1
		kill -0 "$L2_QEMU_PID" 2>/dev/null || return 1
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}

run_none() {
	timed_window "$1"
}

run_ip_only() {
	local name=$1 ctl=/tmp/perf-ctl ack=/tmp/perf-ack perf_pid reply
	rm -f "$ctl" "$ack" /tmp/perf.data
	mkfifo "$ctl" "$ack" || die "mkfifo failed"
	# Started disabled (-D -1) and enabled through the control fifo with an
	# ack, so perf's own start-up stays out of the timed window.
	perf record -e cpu-clock -F "$hz" -t "$vcpu_tid" -D -1 --control "fifo:$ctl,$ack" \
		-N -q -o /tmp/perf.data > "$runs/$name.perf.log" 2>&1 &
	perf_pid=$!
	exec {ctl_fd}>"$ctl" {ack_fd}<"$ack"
	echo enable >&"$ctl_fd"
	read -r -t 60 reply <&"$ack_fd" || die "perf did not acknowledge 'enable' (see $runs/$name.perf.log)"
	timed_window "$name"
	echo disable >&"$ctl_fd"
	read -r -t 60 reply <&"$ack_fd"
	kill -INT "$perf_pid"
	wait "$perf_pid"
	exec {ctl_fd}>&- {ack_fd}<&-
	perf report -i /tmp/perf.data --stats > "$runs/$name.perf-stats" 2>&1 ||
		die "perf report --stats failed (see $runs/$name.perf-stats)"
	# The samples by cpumode (the record's misc field): only those that
	# interrupted guest code (guest kernel or guest user) are samples in
	# pvprof's sense, the ones that can cost a VM exit.
	perf report -D -i /tmp/perf.data 2> "$runs/$name.perf-dump.log" |
		sed -n 's/.*PERF_RECORD_SAMPLE(IP, \(0x[0-9a-f]*\)).*/\1/p' | sort | uniq -c \
		> "$runs/$name.perf-cpumode" ||
		die "perf report -D failed (see $runs/$name.perf-dump.log)"
	rm -f "$ctl" "$ack" /tmp/perf.data
}

# pvprof's hooks in KVM, traced whole (with what they call) by the
# function_graph tracer in the host-cost window.
# The hot hooks are inline wrappers (behind a static key) around these.
HOST_HOOKS="pvprof_overflow kvm_pvprof_handle_request __kvm_pvprof_vcpu_exited
	__kvm_pvprof_nmi_delivery __kvm_pvprof_vcpu_run_enter __kvm_pvprof_vcpu_run_exit"
TRACEFS=/sys/kernel/tracing
# Set for the host-cost window only: run_pvprof traces the hooks then.
trace_hooks=

# trace_setup: function_graph on the hooks alone; tracing stays off until
# run_pvprof's window opens.
trace_setup() {
	local hook
	[ -e "$TRACEFS/trace" ] || mount -t tracefs tracefs "$TRACEFS" ||
		die "cannot mount tracefs on $TRACEFS"
	echo 0 > "$TRACEFS/tracing_on"
	echo nop > "$TRACEFS/current_tracer"
	echo > "$TRACEFS/set_ftrace_filter"
	for hook in $HOST_HOOKS; do
		echo "$hook" >> "$TRACEFS/set_ftrace_filter" ||
			die "cannot trace $hook: not in $TRACEFS/available_filter_functions"
	done
	echo 32768 > "$TRACEFS/buffer_size_kb" || die "cannot size the trace buffer"
	echo function_graph > "$TRACEFS/current_tracer" || die "no function_graph tracer"
	# "} /* name */" on a return that is not on its call's line.
	echo 1 > "$TRACEFS/options/funcgraph-tail"
	echo > "$TRACEFS/trace"
}

# trace_collect NAME: the trace to NAME.trace, the buffer's overruns (events
# lost to a full buffer, which would make the sum short) to NAME.overrun.
trace_collect() {
	cat "$TRACEFS/trace" > "$runs/$1.trace"
	cat "$TRACEFS"/per_cpu/cpu*/stats | awk '$1 == "overrun:" { n += $2 } END { print n + 0 }' \
		> "$runs/$1.overrun"
	echo nop > "$TRACEFS/current_tracer"
	echo > "$TRACEFS/set_ftrace_filter"
}

pvprof_enabled() {
	grep -q '"enabled": *true' <<< "$("$TOOL" status -j "$l2_pid" 2>/dev/null)"
}

# run_pvprof NAME [RECORD_ARGS...]: also leaves the recording's size in
# NAME.data-bytes and report's time on it in NAME.report-ns.
run_pvprof() {
	local name=$1 rec_pid polls t0
	shift
	"$TOOL" record -F "$hz" "$@" -o /tmp/pvprof.data "$l2_pid" > "$runs/$name.record.log" 2>&1 &
	rec_pid=$!
	for ((polls = 0; polls < 300; polls++)); do
		pvprof_enabled && break
		kill -0 "$rec_pid" 2>/dev/null || die "kvm-pvprof record exited: $(tail -n 3 "$runs/$name.record.log")"
		sleep 0.1
	done
	pvprof_enabled || die "kvm-pvprof record did not enable sampling within 30 s"
	"$TOOL" status -j "$l2_pid" > "$runs/$name.status-before.json" || die "kvm-pvprof status failed"
	[ -n "$trace_hooks" ] && echo 1 > "$TRACEFS/tracing_on"
	timed_window "$name"
	[ -n "$trace_hooks" ] && echo 0 > "$TRACEFS/tracing_on"
	"$TOOL" status -j "$l2_pid" > "$runs/$name.status-after.json" || die "kvm-pvprof status failed"
	kill -INT "$rec_pid"
	wait "$rec_pid" || die "kvm-pvprof record failed: $(tail -n 3 "$runs/$name.record.log")"
	stat -c %s /tmp/pvprof.data > "$runs/$name.data-bytes"
	t0=$(date +%s%N)
	"$TOOL" report -i /tmp/pvprof.data > "$runs/$name.report.txt" 2> "$runs/$name.report.log" ||
		die "kvm-pvprof report failed: $(tail -n 3 "$runs/$name.report.log")"
	echo $(($(date +%s%N) - t0)) > "$runs/$name.report-ns"
	rm -f /tmp/pvprof.data
}

run_pvprof_dwarf() {
	run_pvprof "$1" --call-graph dwarf
}

l2_boot "$out/l2" "$initrd" 1 256 || die "the L2 guest did not reach its init"
l2_wait_line "$out/l2" '^BENCH-READY' 300 || die "the L2 guest did not get ready"
l2_pid=$(cat "$out/l2/qemu.pid") || die "no L2 QEMU pid"
vm_debugfs=$(l2_vm_debugfs "$l2_pid") || die "no KVM debugfs directory for the L2 QEMU ($l2_pid)"
vcpu_tid=
for t in /proc/"$l2_pid"/task/*; do
	[ "$(cat "$t/comm" 2>/dev/null)" = "CPU 0/KVM" ] && vcpu_tid=${t##*/}
done
[ -n "$vcpu_tid" ] || die "no 'CPU 0/KVM' thread in the L2 QEMU ($l2_pid)"

# One unmeasured run first: the workload's first run pays for page faults
# and cold caches that the others do not.
timed_window warmup
echo "bench: warm-up run $(cut -d' ' -f3 "$runs/warmup.bench") ns" >&2

conditions=(none ip_only pvprof pvprof_dwarf)
for ((rep = 1; rep <= reps; rep++)); do
	for ((i = 0; i < ${#conditions[@]}; i++)); do
		cond=${conditions[(rep - 1 + i) % ${#conditions[@]}]}
		"run_$cond" "$cond-$rep"
		echo "bench: rep $rep $cond $(cut -d' ' -f3 "$runs/$cond-$rep.bench") ns" >&2
	done
done

# The host's cost per sample: one more pvprof window, after the timed ones
# and left out of their figures, with the hooks traced.
trace_setup
trace_hooks=1
run_pvprof host-cost
trace_hooks=
trace_collect host-cost
echo "bench: host-cost window $(cut -d' ' -f3 "$runs/host-cost.bench") ns, trace overruns $(cat "$runs/host-cost.overrun")" >&2

l2_send "$out/l2" quit
status=$(l2_finish "$out/l2" 120)
[ "$status" = 0 ] || die "the L2 guest ended with status $status"
{
	echo "l1_kernel $(uname -r)"
	echo "l1_cpu $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "l1_cpus $(nproc)"
	grep -o -w -E 'vnmi|svm' /proc/cpuinfo | sort -u | sed 's/^/l1_flag /'
} > "$out/l1-facts.txt"
echo done > "$out/in-l1.done"
