#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-demo: the demo as a smoke test. Runs demo/run.sh with the demo
# workload for a short recording into $O/demo-check and checks that the
# report names the workload's hot functions, that the report by total
# samples names a guest kernel system-call function, that the call graph names all of the workload's functions, that
# the folded stacks hold the workload's chains in order with the kernel's
# syscall path under the user frames that made the call, and that the flame
# graph is well-formed SVG with those names in it.
# Results in $O/results/demo. DEMO_CHECK_HOST_KERNEL=6.12 runs it with the
# nested host and the guest on Linux 6.12 (demo/run.sh --host-kernel), into
# $O/demo-check-6.12 and $O/results/demo-6.12.

PROG=check-demo
DEMO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tests/nested/common.sh
source "$DEMO_DIR/../tests/nested/common.sh"
set -uo pipefail

host_kernel=${DEMO_CHECK_HOST_KERNEL:-6.1}
suffix=
[ "$host_kernel" = 6.1 ] || suffix=-$host_kernel
out=$O/demo-check$suffix
seconds=${DEMO_CHECK_SECONDS:-8}
mkdir -p "$out" || die "cannot create $out"

"$DEMO_DIR/run.sh" --out "$out" --seconds "$seconds" --top 0 --host-kernel "$host_kernel" > "$out/run.stdout" 2> "$out/run.stderr"
run_status=$?
check demo-runs "demo/run.sh exited $run_status: $(tail -n 3 "$out/run.stderr" | tr '\n' ' ')" \
	[ "$run_status" = 0 ]
# What a newcomer sees: a line per phase with the time so far, the nested
# host's boot and the guest's phases as they come, then where the outputs are.
phases=$(grep -cE '^demo: \[ *[0-9]+ s\] ' "$out/run.stderr")
check demo-says-each-phase "$phases progress lines: $(grep -E '^demo: \[' "$out/run.stderr" | tr '\n' '|')" \
	bash -c "[ $phases -ge 10 ] && grep -qE '^demo: \[ *[0-9]+ s\] L1 booted in ' '$out/run.stderr' &&
		grep -qE '^demo: \[ *[0-9]+ s\] guest: ' '$out/run.stderr' && grep -qE '^demo: \[ *[0-9]+ s\] done$' '$out/run.stderr'"
check demo-names-its-outputs "no output list on stderr" \
	bash -c "grep -q '^  flamegraph.svg  open it in a browser' '$out/run.stderr' &&
		grep -q '^  profile.pb.gz   pprof: go tool pprof -top $out/profile.pb.gz' '$out/run.stderr'"

report=$out/report.txt folded=$out/folded.txt svg=$out/flamegraph.svg
# Kernel functions every x86-64 system call of 6.1 and 6.12 passes through.
SYSCALL_RE='(entry_SYSCALL_64[A-Za-z_]*|do_syscall_64|__x64_sys_[a-z_0-9]+|ksys_(write|read))'

has_words() {
	local file=$1 w
	shift
	[ -s "$file" ] || return 1
	for w in "$@"; do
		grep -qw -- "$w" "$file" || { echo "  $file lacks '$w'"; return 1; }
	done
}

check report-names-hot-functions "report.txt's top functions lack crc_byte or crc_block" \
	has_words "$report" crc_byte crc_block
check callgraph-names-workload "callgraph.txt lacks a workload function" \
	has_words "$out/callgraph.txt" main demo_run compute_checksums crc_block crc_byte \
	talk_to_kernel raw_syscall
# By total samples: the syscall path's own self share is small and varies
# from run to run, so it need not make report.txt's top by self samples.
"$O/bin/kvm-pvprof" report -i "$out/pvprof.data" --sort total --limit 40 \
	> "$out/report-total.txt" 2> "$out/report-total.err"
check report-total-names-syscall "kvm-pvprof report --sort total names no kernel system-call function in its top 40 ($(head -c 200 "$out/report-total.err"))" \
	grep -qsE "$SYSCALL_RE" "$out/report-total.txt"
check report-shows-losses "report.txt has no '# losses:' line" grep -qs '^# losses:' "$report"
check folded-compute-chain "no folded line with main;demo_run;compute_checksums;crc_block;crc_byte" \
	grep -qs 'main;demo_run;compute_checksums;crc_block;crc_byte' "$folded"
check folded-syscall-under-user \
	"no folded line with the kernel's syscall path under main;demo_run;talk_to_kernel;...;raw_syscall" \
	grep -qsE "main;demo_run;talk_to_kernel;(write_log_line|ask_pid|read_proc_status);raw_syscall;(.*;)?$SYSCALL_RE" "$folded"
check folded-counts "a folded line does not end in ' <count>'" \
	awk 'NF < 2 || $NF !~ /^[1-9][0-9]*$/ { bad = 1 } END { exit bad || NR == 0 }' "$folded" 2>/dev/null
svg_status=$(python3 - "$svg" 2>&1 <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError) as e:
    sys.exit(str(e))
if root.tag != "{http://www.w3.org/2000/svg}svg":
    sys.exit("the root element is " + root.tag)
print("ok")
PY
)
check svg-well-formed "flamegraph.svg is not a well-formed SVG document: $svg_status" [ "$svg_status" = ok ]
check svg-names "flamegraph.svg lacks crc_block or a kernel system-call function" \
	eval 'grep -qs crc_block "$svg" && grep -qE "$SYSCALL_RE" "$svg"'
# Go's own reader of the pprof profile: it must name the hot functions.
pprof_top() {
	local tmp status
	tmp=$(mktemp -d) || return 1
	HOME=$tmp GOCACHE=$tmp/cache GOFLAGS= go tool pprof -top -nodecount=1000 -symbolize=none \
		"$out/profile.pb.gz" > "$out/pprof-top.txt" 2>&1
	status=$?
	rm -rf "$tmp"
	[ "$status" = 0 ] && has_words "$out/pprof-top.txt" crc_byte crc_block
}
pprof_top
pprof_status=$?
check pprof-read-by-go "go tool pprof -top on profile.pb.gz failed or lacks crc_byte/crc_block ($(tail -n 2 "$out/pprof-top.txt" 2>/dev/null | tr '\n' ' '))" \
	[ "$pprof_status" = 0 ]

results_write "demo$suffix"
