#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: profile a workload in a guest from the host, end to end.
# See usage() and demo/README.md.

PROG=demo
DEMO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tests/nested/common.sh
source "$DEMO_DIR/../tests/nested/common.sh"
set -uo pipefail

usage() {
	cat <<USAGE
usage: demo/run.sh [--workload PROGRAM] [--args "WORDS"] [--seconds N]
                   [--hz HZ] [--call-graph fp|dwarf[,SIZE]] [--guest-perf N]
                   [--out DIR] [--top N] [--host-kernel 6.1|6.12]

Builds the pvprof KVM modules, kvm-pvprof, the guest driver and the guest
agent pvprofd; boots the nested host (L1, QEMU TCG with nested SVM) with the
pvprof KVM; starts an L2 guest that loads the driver and runs pvprofd and the
workload; records it from L1 with 'kvm-pvprof record' and writes, in DIR:

  report.txt      kvm-pvprof report (totals, losses, symbolization, top
                  functions)
  callgraph.txt   kvm-pvprof report --callgraph
  folded.txt      kvm-pvprof report --folded (FlameGraph's folded stacks)
  flamegraph.svg  kvm-pvprof report --flamegraph (open it in a browser:
                  search, click to zoom)
  profile.pb.gz   kvm-pvprof report --pprof (go tool pprof, Parca, Pyroscope)
  pvprof.data     the recording (kvm-pvprof report/script -i read it again)

then prints the top of report.txt.

  --workload BIN  an x86-64 program to profile instead of the demo workload
                  (demo/workload.c), built any way (-O2 without frame
                  pointers is fine with --call-graph dwarf); a dynamically
                  linked one takes its libraries from this machine
  --args "WORDS"  its arguments, split at white space (default for the demo
                  workload: 0, which runs until the recording ends)
  --seconds N     how long to record once the workload runs (default 10);
                  the recording also holds the guest agent's publication
                  just before (a few seconds)
  --hz HZ         samples per second (default 1000)
  --call-graph M  how user stacks are walked (kvm-pvprof record --call-graph):
                  dwarf (default: the guest sends 8 KiB of user stack per
                  sample and its agent the programs' unwind tables, and the
                  host unwinds with them), dwarf,SIZE, or fp (frame pointers
                  only, as the guest walks them)
  --guest-perf N  first profile the workload with the guest's own perf for N
                  seconds (perf record -e cpu-clock -F 250 --call-graph
                  dwarf, before pvprofd starts and before the host samples:
                  the two never overlap) and write its chains to
                  perf-chains.txt: "LEAF CHAIN COUNT", CHAIN being the
                  frames in the workload itself and the vDSO, outermost
                  first (demo/chains.awk); the unwinding suite's second
                  oracle (tests/unwind)
  --out DIR       where the results go (default \$O/demo)
  --top N         lines of the report to print at the end (default 48)
  --host-kernel K the Linux the nested host (L1) and the guest (L2) run:
                  6.1 (default, Debian 12's) or 6.12 (Debian 12's security
                  suite, the series of Debian 13 and RHEL 10; make
                  check-6.12 installs its packages); pvprof's KVM and the
                  guest driver are built for it

make demo WORKLOAD=... ARGS="..." DURATION=... HZ=... CALL_GRAPH=...
GUEST_PERF=... passes these on.
USAGE
}

workload= args= args_given= seconds=10 hz=1000 out=$O/demo top=48 call_graph=dwarf guest_perf=
host_kernel=6.1
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || case "$1" in -h|--help) ;; *) die "$1 needs an argument (see --help)" ;; esac
	case "$1" in
	--workload) workload=$2 ;;
	--args) args=$2; args_given=1 ;;
	--seconds) seconds=$2 ;;
	--hz) hz=$2 ;;
	--call-graph) call_graph=$2 ;;
	--guest-perf) guest_perf=$2 ;;
	--out) out=$2 ;;
	--top) top=$2 ;;
	--host-kernel) host_kernel=$2 ;;
	-h|--help) usage; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
	shift 2
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] && [ "$seconds" -le 3600 ] || die "--seconds must be 1 to 3600, got '$seconds'"
[[ "$hz" =~ ^[1-9][0-9]*$ ]] && [ "$hz" -le 10000 ] || die "--hz must be 1 to 10000, got '$hz'"
[[ "$top" =~ ^[0-9]+$ ]] || die "--top must be a number, got '$top'"
[ -z "$guest_perf" ] || { [[ "$guest_perf" =~ ^[1-9][0-9]*$ ]] && [ "$guest_perf" -le 60 ]; } ||
	die "--guest-perf must be 1 to 60 seconds, got '$guest_perf'"
[[ "$call_graph" =~ ^(fp|dwarf(,[1-9][0-9]*)?)$ ]] || die "--call-graph must be fp, dwarf or dwarf,SIZE, got '$call_graph'"
case "$host_kernel" in
6.1 | 6.12) ;;
*) die "--host-kernel must be 6.1 or 6.12, got '$host_kernel'" ;;
esac
# run-l1 boots KVER; the guest boots the nested host's kernel (l2lib.sh).
KVER=$(kernel_release "$host_kernel") || die "no release for Linux $host_kernel"
export KVER
[ -r "/boot/vmlinuz-$KVER" ] ||
	die "--host-kernel $host_kernel: /boot/vmlinuz-$KVER is missing (make check-6.12, or scripts/install-deps.sh linux-image-$KVER, installs it)"
if [ -n "$workload" ]; then
	[ -f "$workload" ] && [ -r "$workload" ] || die "--workload $workload: no such readable file"
	[ "$(head -c 4 "$workload" | od -An -c | tr -d ' ')" = '177ELF' ] ||
		die "--workload $workload is not an ELF executable"
fi
# The L2 guest is a busybox initramfs: a dynamically linked program brings
# its loader and libraries from this machine, at the same paths.
lib_files=()
add_libraries() {
	local prog=$1 libs lib
	grep -q 'Requesting program interpreter' <<< "$(readelf -l "$prog" 2>/dev/null)" || return 0
	libs=$(ldd "$prog" 2>&1) || die "$prog: ldd failed: $libs"
	grep -q 'not found' <<< "$libs" && die "$prog: libraries missing here: $(grep 'not found' <<< "$libs" | tr '\n' ' ')"
	for lib in $(sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' <<< "$libs"); do
		lib_files+=(--file "$lib:$lib")
	done
}
[ -n "$workload" ] && add_libraries "$workload"

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -f "$out"/{report.txt,callgraph.txt,folded.txt,flamegraph.svg,profile.pb.gz,pvprof.data,record.log,status.txt,command,perf-seconds,perf-chains.txt}
rm -rf "$out/l2" "$out"/died-*
start=$SECONDS
TOOL=$O/bin/kvm-pvprof

# progress MESSAGE: one line per phase, with the seconds since the start.
progress() {
	printf 'demo: [%4d s] %s\n' $((SECONDS - start)) "$*" >&2
}

# fail WHAT LOG HINT: what failed, the end of the log that says why, and
# what to try.
fail() {
	progress "FAILED: $1"
	[ -s "$2" ] && { echo "demo: last lines of $2:"; tail -n 15 "$2" | sed 's/^/  | /'; } >&2
	echo "demo: $3" >&2
	exit 1
}

step() {
	local what=$1
	shift
	progress "$what"
	"$@" > "$out/build.log" 2>&1 ||
		fail "$what" "$out/build.log" "a build failed: scripts/install-deps.sh installs what the build needs; the whole log is $out/build.log"
}
# Another kernel than the default: its headers come from Debian's packages,
# unpacked under $O/kernels (guest-driver/scripts/unpack-kernel.sh).
kver_args=()
if [ "$KVER" != "$(default_kver)" ]; then
	kver_args=(KVER="$KVER")
	step "unpacking Linux $KVER's headers" make -s -C "$REPO_DIR/guest-driver" kernel "${kver_args[@]}"
fi
step "building the pvprof KVM modules for $KVER" make -s -C "$REPO_DIR/host-kvm" modules "${kver_args[@]}"
step "building the guest driver for $KVER" make -s -C "$REPO_DIR/guest-driver" modules "${kver_args[@]}"
guest_driver=$(make -s --no-print-directory -C "$REPO_DIR/guest-driver" where "${kver_args[@]}" |
	       sed -n 's/^module //p')
step "building kvm-pvprof" make -s -C "$REPO_DIR/host-kvm/tool"
step "building the guest agent" make -s -C "$REPO_DIR/guest-agent"
agent_files=$(make -s --no-print-directory -C "$REPO_DIR/guest-agent" l2-files) || die "make -C guest-agent l2-files failed"
if [ -z "$workload" ]; then
	workload=$out/pvprof-demo
	# clang: GCC 12 gives leaf functions no frame pointer whatever the flags.
	step "building the demo workload" clang -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls \
		-static -o "$workload" "$DEMO_DIR/workload.c"
	[ -n "$args_given" ] || args=0
fi
# In the guest the program keeps its name (it is the command name the
# report shows), reduced to characters that need no quoting.
name=$(basename "$workload" | tr -c 'A-Za-z0-9._+\n-' '_')
printf '%s\n' "/demo/$name $args" > "$out/command"

initrd=$NESTED_OUT/demo-l2.cpio
file_args=(--file "$workload:/demo/$name" --file "$out/command:/demo/command" "${lib_files[@]}")
for f in $agent_files; do
	file_args+=(--file "$f")
done
if [ -n "$guest_perf" ]; then
	perf=$(command -v perf) || die "--guest-perf: no perf here (apt-get install linux-perf)"
	perf=$(readlink -f "$perf")
	# Debian's /usr/bin/perf may be a wrapper that picks perf_<version>.
	[ "$(head -c 4 "$perf" | od -An -c | tr -d ' ')" = '177ELF' ] ||
		die "--guest-perf: $perf is not an ELF program (a wrapper script?)"
	echo "$guest_perf" > "$out/perf-seconds"
	file_args+=(--file "$perf:/usr/bin/perf" --file "$DEMO_DIR/chains.awk:/demo/chains.awk"
		--file "$out/perf-seconds:/demo/perf-seconds")
	lib_files=()
	add_libraries "$perf"
	file_args+=("${lib_files[@]}")
fi
step "building the guest's initramfs" "$NESTED_DIR/l2-initramfs" -o "$initrd" \
	--run "$DEMO_DIR/l2-demo.sh" --insmod "$guest_driver" "${file_args[@]}"

progress "booting the nested host (L1) and the guest (L2)"
# The nested host's own lines, as they come: its boot, the guest's phases
# and every boot the emulation killed and the supervisor booted again.
# The log exists before the run, so that a retry does not move it with the
# dead boot's files (run-l1 --help).
: > "$out/l1.log"
"$NESTED_DIR/run-l1" --kvm pvprof --timeout $((seconds + ${guest_perf:-0} * 20 + 900)) --out "$out" -- \
	"$DEMO_DIR/in-l1.sh" "$out" "$initrd" "$seconds" "$hz" "$call_graph" 2>&1 |
	tee "$out/l1.log" |
	while IFS= read -r line; do
		case $line in
		"run-l1: L1 booted in "*) progress "${line#run-l1: }" ;;
		"run-l1: boot "*) progress "the emulation killed the nested host: ${line#run-l1: }" ;;
		demo:*) progress "${line#demo: }" ;;
		recorded*) progress "$line" ;;
		esac
	done
l1_status=${PIPESTATUS[0]}
if [ "$l1_status" != 0 ] || [ ! -s "$out/pvprof.data" ]; then
	fail "the run in the nested host (run-l1 exited $l1_status)" "$out/l1.log" \
		"the guest's console is $out/l2/console.log, the nested host's $out/console.log; a death of the emulation that outlived its retries (run-l1: lines above) usually passes when run again: make demo"
fi

report() {
	local file=$1
	shift
	"$TOOL" report -i "$out/pvprof.data" "$@" > "$file" 2> "$out/report.log" ||
		fail "kvm-pvprof report $*" "$out/report.log" "the recording is $out/pvprof.data"
}
if [ -n "$guest_perf" ]; then
	grep -q '^PERF-CHAIN-SAMPLES ' "$out/l2/console.log" ||
		die "the guest's perf gave no result (console: $out/l2/console.log)"
	sed -n 's/^PERF-CHAIN //p' "$out/l2/console.log" | sort -k3,3nr > "$out/perf-chains.txt"
	echo "demo: the guest's perf: $(sed -n 's/^PERF-CHAIN-SAMPLES //p' "$out/l2/console.log") samples, chains in $out/perf-chains.txt" >&2
fi
report "$out/report.txt"
report "$out/callgraph.txt" --callgraph
report "$out/folded.txt" --folded
"$TOOL" report -i "$out/pvprof.data" --flamegraph "$out/flamegraph.svg" --pprof "$out/profile.pb.gz" \
	> /dev/null 2> "$out/report.log" ||
	fail "kvm-pvprof report --flamegraph --pprof" "$out/report.log" "the recording is $out/pvprof.data"
progress "done"

head -n "$top" "$out/report.txt"
cat >&2 <<DONE
demo: the profile, in $out:
  report.txt      the report (more: kvm-pvprof report -i $out/pvprof.data --help)
  callgraph.txt   the call graph
  folded.txt      folded stacks, for FlameGraph and speedscope
  flamegraph.svg  open it in a browser: search, click to zoom
  profile.pb.gz   pprof: go tool pprof -top $out/profile.pb.gz
  pvprof.data     the recording
DONE
