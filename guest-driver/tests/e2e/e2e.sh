#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# e2e: pvprof end to end in the nested test host, pvprof_guest.ko in Linux
# L2 guests sampled by the pvprof KVM in L1 (issue 6 item 3).  Two L1
# boots: one with the pvprof KVM (known stacks, no frame pointers, two busy
# vCPUs, CPU hotplug, 50 reloads, then snapshot, migration and reset of a
# second L2), one with the distro's KVM (the driver stays inert).  See
# README.md for the cases and what each checks.
#
# usage: e2e.sh; writes "<passed> <failed>" to $O/results/e2e.
# "e2e.sh --in-l1 pvprof|stock OUT L2_KERNEL FACTOR KMSG RELOADS" is the half that
# runs inside L1.
#
# Overrides, for make check-debug (tests/debug/run.sh), which runs the pvprof
# boot once with its debug kernel as L1 and once as the L2s:
#   RUNL1_KERNEL     the L1 kernel (run-l1 --kernel; default the distro's)
#   E2E_MODULES_DIR  the pvprof KVM modules L1 loads, already built against
#                    that kernel (default: make -C host-kvm modules here,
#                    $O/host-kvm, or $O/host-kvm-KVER for L1 on another
#                    KVER, run-l1's)
#   E2E_KDIR         the kernel tree the guest driver is built against (its
#                    KDIR; default the distro's headers)
#   L2_KVER          the L2s boot this kernel release (or 6.12) and load the
#                    driver built for it (../l2-kernel.sh); results in
#                    $O/results/e2e-<series> (e2e-6.12).  E2E_KDIR and E2E_L2_KERNEL
#                    still win.
#   E2E_L2_KERNEL    the kernel image every L2 boots, visible in L1 (default
#                    the distro's vmlinux, $O/nested/vmlinux-<release>)
#   E2E_TIME_FACTOR  integer factor for every wait and timeout, in L1 and in
#                    the L2s (default 1; debug kernels run several times slower)
#   E2E_KMSG=1       the L2s print their kernel log (KMSG lines) and the main
#                    L2 a kmemleak scan before it powers off; they are saved
#                    as pvprof/l2-{main,mig-a,mig-b}/{dmesg,kmemleak}.txt
#                    under $O/nested/e2e for tests/debug/kernel-reports.sh
#   E2E_RELOADS      driver unloads and reloads in the main L2 (default 50;
#                    each takes about half a minute on a debug L2)
#   E2E_COMPLETENESS the share of samples that must come back as callchains
#                    in the known-stacks phase, in percent (default 95; a
#                    debug L2's NMI handler is slower, more answers are stale)
#   E2E_L2_APPEND    extra kernel command line arguments for every L2
#                    (make check-debug's nohz=off: tests/debug/README.md)
#   E2E_LOADVMS      savevm/loadvm rounds of the snapshot case (default 1);
#                    after each, the guest must have registered again
#   E2E_STOCK=0      skip the boot with the distro's KVM (the driver's
#                    inertness, which a debug kernel adds nothing to)
#   E2E_RESULTS      the results name (default e2e: $O/results/e2e)
#   PVPROF_L1_BOOTS  L1s per boot when the emulation kills one (default 2)

PROG=e2e
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../../tests/nested/common.sh
source "$E2E_DIR/../../../tests/nested/common.sh"
# shellcheck source=../l2-kernel.sh
source "$E2E_DIR/../l2-kernel.sh"
set -uo pipefail

L2_IMAGE=$NESTED_OUT/e2e-l2.cpio
BIN=$O/guest-driver-e2e
TOOL=$O/bin/kvm-pvprof
QMP=$NESTED_DIR/qmp
# Each sample costs the L2 1-2 ms of guest time under nested TCG (make
# bench): at 1 kHz sampling saturates the guest, and notices pile up as
# stale, which is the platform's cost, not what these cases check.
E2E_HZ=250
# Waits and timeouts are multiplied by this (E2E_TIME_FACTOR outside, the
# in-L1 half's argument inside).
factor=${E2E_TIME_FACTOR:-1}
# An L2 boot without L2-INIT after this many seconds (times the factor) was
# failed by the emulation and is booted again (run-l2 --help).  The distro
# L2 under a debug L1 took 191-342 s (factor 4) to reach init.
init_timeout=150

# complete_lines FILE: the lines of a console that is still being written
# which end in a newline (a line read half-written reads as something else).
complete_lines() {
	perl -ne 'print if /\n\z/' "$1" 2>/dev/null
}

# poll_until SECONDS CMD...: run CMD every 0.5 s until it succeeds, for at
# most SECONDS times the time factor of wall time (on a busy L1 a poll itself
# takes a while, so counting polls would stretch the wait).
poll_until() {
	local deadline=$((SECONDS + $1 * factor))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.5
	done
}

# has_line FILE PATTERN: FILE has a complete line matching an extended regex.
has_line() {
	complete_lines "$1" | grep -E "$2" > /dev/null
}

# wait_for FILE PATTERN SECONDS: poll FILE for an extended regex.
wait_for() {
	poll_until "$3" has_line "$1" "$2"
}

# count_lines FILE PATTERN
count_lines() {
	complete_lines "$1" | grep -cE "$2"
}

# has_count FILE PATTERN N: FILE has N complete lines matching.
has_count() {
	[ "$(count_lines "$1" "$2")" -ge "$3" ]
}

# wait_count FILE PATTERN N SECONDS: until FILE has N lines matching.
wait_count() {
	poll_until "$4" has_count "$1" "$2" "$3"
}

# books_closed PID FILE: the host's counters, kept in FILE, account for
# every notice as answered or lost.
books_closed() {
	"$TOOL" status -j "$1" > "$2" 2>> "$out/tool.log"
	jq -e '.totals.notices == .totals.records + .losses.stale +
	       .losses.invalid + .losses.unanswered' "$2" > /dev/null 2>&1
}

# host_status PID NAME: disable sampling, then keep the host's counters in
# $out/NAME.json once every notice is answered or counted lost.
host_status() {
	"$TOOL" disable "$1" >> "$out/tool.log" 2>&1
	# Notices outstanding at DISABLE are answered (or counted lost) when the
	# guest next takes its NMI: wait for the books to close, at most
	# 10 s per time factor; the checks outside judge the last reading.
	poll_until 10 books_closed "$1" "$out/$2.json"
}

# progress_lines: how many E2E-PROGRESS and E2E-WORK-DONE lines the L2
# has printed.
progress_lines() {
	count_lines "$out/l2.console" '^E2E-(PROGRESS|WORK-DONE)'
}

progress_after() {
	[ "$(progress_lines)" -gt "$1" ]
}

# wait_work_done: until E2E-WORK-DONE, as long as the L2 keeps printing its
# progress: at most 150 s (times the factor) from one line to the next, so
# that a stuck hotplug or reload is read within minutes, not at the end of
# the whole phase's bound.
wait_work_done() {
	local seen
	until has_line "$out/l2.console" '^E2E-WORK-DONE'; do
		seen=$(progress_lines)
		poll_until 150 progress_after "$seen" || return 1
	done
}

in_l1_main() {
	local pid capture
	"$NESTED_DIR/run-l2" --initrd "$L2_IMAGE" --smp 2 --mem 512 --machine pc \
		--timeout $((900 * factor)) --init-timeout $((init_timeout * factor)) --kernel "$l2_kernel" --qmp /tmp/e2e-main.qmp \
		--append "e2e_mode=main $l2_args" --pidfile "$out/l2.pid" --console "$out/l2.console" \
		2> "$out/l2.stderr" &
	# Room for a second boot after one the emulation failed before init.
	if ! wait_for "$out/l2.console" '^E2E-READY' $((300 + init_timeout)); then
		echo "no E2E-READY" >> "$out/tool.log"
		# A slow L2 (the distro's under a debug L1 prints its symbols
		# for longer than this) goes on; one that never reached init
		# will not, and its timeout is an hour away.
		if ! grep -q '^L2-INIT' "$out/l2.console"; then
			vm_state /tmp/e2e-main.qmp > "$out/l2-stuck.txt" 2>&1
			qmp /tmp/e2e-main.qmp quit > /dev/null 2>&1
			wait %1
			echo $? > "$out/l2.status"
			return
		fi
	fi
	pid=$(cat "$out/l2.pid")
	"$TOOL" enable -F "$E2E_HZ" "$pid" >> "$out/tool.log" 2>&1
	echo "enable_status $?" >> "$out/tool.log"
	"$BIN/e2e-stream" capture "$pid" "$out/main.stream" 2> "$out/capture.log" &
	capture=$!
	if wait_for "$out/l2.console" '^E2E-KNOWN-DONE' 400; then
		"$TOOL" status -j "$pid" > "$out/known.json" 2>> "$out/tool.log"
	fi
	if wait_work_done; then
		host_status "$pid" main
	else
		vm_state /tmp/e2e-main.qmp > "$out/l2-stuck.txt" 2>&1
	fi
	wait %1
	echo $? > "$out/l2.status"
	wait "$capture"
	echo "capture_status $?" >> "$out/capture.log"
}

# The migration L2 runs under a QEMU started here rather than by run-l2:
# the incoming side needs the same command line, and a reset must reboot
# (--reboot: run-l2 passes -no-reboot).  The command line is the
# supervisor's L2, with a qcow2 drive without a device that holds the savevm
# snapshot.  QMP sockets live in L1's /tmp (no sockets on 9p).
# '-M pc' as in run-l2 --machine pc: on microvm nothing answers the NMI
# reason port, so Linux reports a back-to-back NMI it would swallow on a PC.
mig_qemu() {
	local name=$1 cmd
	shift
	# Through a file: L1's /dev has no /dev/fd for a process substitution.
	python3 "$NESTED_DIR/supervisor.py" l2-command \
		--kernel "$l2_kernel" --initrd "$L2_IMAGE" --machine pc --mem 256 --reboot \
		--append "e2e_mode=mig $l2_args" --console "$out/$name.console" \
		--qmp "/tmp/e2e-$name.qmp" --pidfile "$out/$name.pid" -- \
		-drive "if=none,id=snap,format=qcow2,file=$out/snap.qcow2" "$@" > "/tmp/e2e-$name.cmd"
	mapfile -d '' -t cmd < "/tmp/e2e-$name.cmd"
	"${cmd[@]}" < /dev/null > "$out/$name.qemu.log" 2>&1 &
}

# step NAME CMD...: log CMD's outcome as "step NAME STATUS" for the checks.
step() {
	local name=$1
	shift
	"$@" >> "$out/mig.log" 2>&1
	echo "step $name $?" >> "$out/mig.log"
}

qmp() {
	"$QMP" --wait $((30 * factor)) "$@"
}

# attach NAME PID: enable sampling and attach a stream reader to the VM
# while it does not run yet (QEMU -S, or -incoming defer), so that the
# stream holds every answer and loss of every notice the host counts.
attach() {
	step "enable-$1" "$TOOL" enable -F "$E2E_HZ" "$2"
	"$BIN/e2e-stream" capture "$2" "$out/$1.stream" 2> "$out/capture-$1.log" &
	capture_pid=$!
	step "attached-$1" wait_for "$out/capture-$1.log" '^e2e-stream: attached' 60
}

migrated() {
	grep -q '"status": *"completed"' <<< "$(qmp /tmp/e2e-a.qmp query-migrate)"
}

# checks_ran_since CONSOLE N K: the QUERY count of the driver's periodic
# check has grown by K over the MIG-STATE lines after the first N.  The
# check re-registers a dropped CPU right after its QUERY, so once the count
# has grown by 2 after a loadvm, a whole check has run since the restore.
checks_ran_since() {
	complete_lines "$1" | grep MIG-STATE | awk -v n="$2" -v k="$3" '
		NR > n { for (i = 1; i < NF; i++) if ($i == "queries") q = $(i + 1)
			 if (first == "") first = q }
		END { exit !(first != "" && q - first >= k) }'
}

# init_or_reset NAME INITS: waits until the console of the mig L2 NAME
# has more than INITS L2-INIT lines. A boot without one $init_timeout s
# (times the factor) after it started was failed by the emulation before
# init: the supervisor resets it once more, its registers kept
# (supervisor.py l2-wait-init).
init_or_reset() {
	local name=$1 inits=$2
	step "init-$name" python3 "$NESTED_DIR/supervisor.py" l2-wait-init \
		--console "$out/$name.console" --qmp "/tmp/e2e-$name.qmp" --inits "$inits" \
		--init-timeout $((init_timeout * factor)) --state "$out/$name-hung-state.txt"
}

wait_migrated() {
	poll_until 300 migrated
}

in_l1_mig() {
	local pid_a pid_b cap_a cap_b lines round loadvms=${PVPROF_E2E_LOADVMS:-1}
	qemu-img create -q -f qcow2 "$out/snap.qcow2" 512M || { echo "step qemu-img 1" >> "$out/mig.log"; return; }
	mig_qemu a -S
	step started-a wait_for "$out/a.pid" . 60
	pid_a=$(cat "$out/a.pid")
	attach a "$pid_a"
	cap_a=$capture_pid
	step cont-a qmp /tmp/e2e-a.qmp cont
	init_or_reset a 0
	step boot-a wait_for "$out/a.console" '^E2E-MIG-READY' 300
	step sampling-a wait_for "$out/a.console" 'MIG-STATE .*notices [1-9]' 120

	# savevm, a little more work, loadvm: the guest goes back in time.
	# Each round's host status and last guest state line are kept.
	for ((round = 1; round <= loadvms; round++)); do
		step savevm qmp /tmp/e2e-a.qmp human-monitor-command '{"command-line": "savevm e2e"}'
		lines=$(count_lines "$out/a.console" MIG-STATE)
		step after-savevm wait_count "$out/a.console" MIG-STATE $((lines + 3)) 120
		step loadvm qmp /tmp/e2e-a.qmp human-monitor-command '{"command-line": "loadvm e2e"}'
		lines=$(count_lines "$out/a.console" MIG-STATE)
		step after-loadvm poll_until 120 checks_ran_since "$out/a.console" "$lines" 2
		"$TOOL" status -j "$pid_a" > "$out/a-loadvm-$round.json" 2>> "$out/tool.log"
		complete_lines "$out/a.console" | grep MIG-STATE | tail -n 1 > "$out/a-loadvm-state-$round"
		echo "loadvm-state-lines $round $(( $(count_lines "$out/a.console" MIG-STATE) - lines ))" >> "$out/mig.log"
	done

	# Migration to a file, then the incoming QEMU from it.  The guest
	# rewrites 32 MiB (e2e-csum) faster than L1 writes the file through
	# 9p, so with QEMU's 300 ms downtime limit the precopy rounds need not
	# converge (one 6.12 run sent 1.4 GB for a 256 MiB guest in 300 s and
	# was cut off); 10 s lets QEMU stop the guest for the rest.
	step downtime-limit qmp /tmp/e2e-a.qmp migrate-set-parameters '{"downtime-limit": 10000}'
	step migrate qmp /tmp/e2e-a.qmp migrate "{\"uri\": \"exec:cat > $out/mig.bin\"}"
	step migrated wait_migrated
	host_status "$pid_a" a
	step quit-a qmp /tmp/e2e-a.qmp quit
	wait "$cap_a"
	echo "capture_a_status $?" >> "$out/capture.log"
	mig_qemu b -incoming defer
	step started-b wait_for "$out/b.pid" . 60
	pid_b=$(cat "$out/b.pid")
	attach b "$pid_b"
	cap_b=$capture_pid
	step migrate-incoming qmp /tmp/e2e-b.qmp migrate-incoming "{\"uri\": \"exec:cat $out/mig.bin\"}"
	step incoming wait_for "$out/b.console" 'MIG-STATE' 300
	step b-reregistered wait_for "$out/b.console" 'MIG-STATE registered 1 .*reregistrations [1-9]' 120
	lines=$(count_lines "$out/b.console" MIG-STATE)
	step b-runs wait_count "$out/b.console" MIG-STATE $((lines + 3)) 120
	"$TOOL" status -j "$pid_b" > "$out/b-migrated.json" 2>> "$out/tool.log"

	# A reset reboots the L2: the host drops the registration, the new
	# boot's driver registers again.
	lines=$(count_lines "$out/b.console" '^L2-INIT')
	step reset qmp /tmp/e2e-b.qmp system_reset
	init_or_reset b "$lines"
	step reboot wait_for "$out/b.console" '^E2E-MIG-READY' 300
	lines=$(count_lines "$out/b.console" MIG-STATE)
	step b-after-reset wait_count "$out/b.console" MIG-STATE $((lines + 3)) 120
	host_status "$pid_b" b
	complete_lines "$out/b.console" | grep MIG-STATE | tail -n 1 > "$out/b-last-state"
	step quit-b qmp /tmp/e2e-b.qmp quit
	wait "$cap_b"
	echo "capture_b_status $?" >> "$out/capture.log"
}

in_l1_stock() {
	"$NESTED_DIR/run-l2" --initrd "$L2_IMAGE" --smp 2 --timeout $((300 * factor)) \
		--init-timeout $((init_timeout * factor)) --kernel "$l2_kernel" --append "e2e_mode=stock $l2_args" --console "$out/l2.console" 2> "$out/l2.stderr"
	echo $? > "$out/l2.status"
}

if [ "${1:-}" = --in-l1 ]; then
	out=$3 l2_kernel=$4 factor=$5
	# The L2 half scales its own waits, reloads the driver RELOADS
	# times, and prints its kernel log with e2e_kmsg=1.
	l2_args="e2e_factor=$factor e2e_kmsg=$6 e2e_reloads=$7 ${PVPROF_E2E_L2_APPEND:-}"
	case "$2" in
	pvprof) in_l1_main; in_l1_mig ;;
	stock) in_l1_stock ;;
	esac
	exit 0
fi

# ------------------------------------------------------------------ outside L1

fact() {
	sed -n "s/^FACT $2 //p" "$1" | head -n 1 | tr -d '\r'
}

# is_y: true when a compound condition, run as "$(A && B && echo y)", held.
is_y() {
	[ "$1" = y ]
}

jq_num() {
	jq -r "$2" "$1" 2>/dev/null
}

# balance NAME JSON: notices == callchains + stale + invalid + unanswered, with
# sampling disabled (nothing outstanding).
balance() {
	local json=$2 n r l
	n=$(jq_num "$json" .totals.notices) r=$(jq_num "$json" .totals.records)
	l=$(jq_num "$json" '.losses.stale + .losses.invalid + .losses.unanswered')
	check "$1" "host '$json': notices '$n', callchains '$r', stale+invalid+unanswered '$l'" \
		is_y "$([ -n "$n" ] && [ "$n" != null ] && [ "$n" -gt 0 ] && [ "$n" = $((r + l)) ] && echo y)"
}

# balance_final NAME JSON CHECK_OUT: for a VM that has ended.  JSON's
# notices were taken with sampling disabled (no notice came after); the
# captured stream to the end of the VM holds every answer and every loss,
# including notices a loadvm or migration left unanswered until the end.
balance_final() {
	local n a
	n=$(jq_num "$2" .totals.notices)
	a=$(awk '/^FACT (callchains|stream_loss_(stale|invalid|unanswered|stream_overflow)) / { s += $3 }
		END { print s + 0 }' "$3" 2>/dev/null)
	check "$1" "host '$2': notices '$n'; stream to the end: callchains + stale + invalid + unanswered + overflow '$a'" \
		is_y "$([ -n "$n" ] && [ "$n" != null ] && [ "$n" -gt 0 ] && [ "$n" = "$a" ] && echo y)"
}

no_l1_warning() {
	local bad="no dmesg.txt from L1"
	[ -f "$1/dmesg.txt" ] &&
		bad=$(grep -E 'WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking|Dazed and confused|Uhhuh' \
			"$1/dmesg.txt" | head -n 1)
	check "$2" "L1 logged: $bad" [ -z "$bad" ]
}

losses_line() {
	jq -r '.losses | to_entries | map(select(.value > 0) | "\(.key) \(.value)") | join(", ")' "$1" 2>/dev/null
}

# save_kmsg CONSOLE DIR: an L2's kernel log (KMSG lines) and, when it
# scanned, its kmemleak report (KMEMLEAK lines up to KMEMLEAK-DONE) into
# DIR/dmesg.txt and DIR/kmemleak.txt, the files kernel-reports.sh checks.
save_kmsg() {
	mkdir -p "$2"
	tr -d '\r' < "$1" 2>/dev/null | sed -n 's/^KMSG //p' > "$2/dmesg.txt"
	rm -f "$2/kmemleak.txt"
	grep -q '^KMEMLEAK-DONE' "$1" 2>/dev/null &&
		tr -d '\r' < "$1" | sed -n 's/^KMEMLEAK //p' > "$2/kmemleak.txt"
	[ -s "$2/dmesg.txt" ] || rm -f "$2/dmesg.txt"
}

[[ "$factor" =~ ^[1-9][0-9]*$ ]] || die "E2E_TIME_FACTOR must be a positive integer"
kmsg=${E2E_KMSG:-0}
reloads=${E2E_RELOADS:-50}
min_complete=${E2E_COMPLETENESS:-95}
[[ "$min_complete" =~ ^[1-9][0-9]?$ ]] || die "E2E_COMPLETENESS must be a percentage (1-99)"
[[ "$reloads" =~ ^[1-9][0-9]*$ ]] || die "E2E_RELOADS must be a positive integer"
modules_dir=${E2E_MODULES_DIR:-$(pvprof_modules_dir "${KVER:-$(default_kver)}")}
# run-l1 passes PVPROF_* variables on to the half inside L1.
export PVPROF_E2E_L2_APPEND=${E2E_L2_APPEND:-}
loadvms=${E2E_LOADVMS:-1}
[[ "$loadvms" =~ ^[1-9][0-9]*$ ]] || die "E2E_LOADVMS must be a positive integer"
export PVPROF_E2E_LOADVMS=$loadvms
start=$SECONDS
# The driver: built against E2E_KDIR, or for the L2 kernel L2_KVER names.
if [ -n "${E2E_KDIR:-}" ]; then
	L2_SUFFIX=
	driver_make() { make -s -C "$REPO_DIR/guest-driver" O="$O" KDIR="$E2E_KDIR" "$@"; }
else
	l2_kernel_select
	driver_make() { l2_make "$@"; }
	if [ -n "$L2_REL" ] && [ -z "${E2E_L2_KERNEL:-}" ]; then
		E2E_L2_KERNEL=${L2_IMAGE_ARGS[1]}
		echo "NOTE the L2 guests boot $L2_REL ($E2E_L2_KERNEL)"
	fi
fi
base=$NESTED_OUT/e2e$L2_SUFFIX
rm -rf "$base"
mkdir -p "$base/pvprof" "$base/stock" || die "cannot create $base"
driver_make modules > "$base/build.log" 2>&1 ||
	die "make -C guest-driver failed (see $base/build.log)"
driver_ko=$(driver_make where | sed -n 's/^module //p')
# Modules built elsewhere (against another kernel) are the caller's.
if [ -z "${E2E_MODULES_DIR:-}" ]; then
	make -s -C "$REPO_DIR/host-kvm" modules >> "$base/build.log" 2>&1 ||
		die "make -C host-kvm modules failed (see $base/build.log)"
fi
make -s -C "$REPO_DIR/host-kvm/tool" >> "$base/build.log" 2>&1 ||
	die "make -C host-kvm/tool failed (see $base/build.log)"
make -s -C "$E2E_DIR" >> "$base/build.log" 2>&1 ||
	die "make -C $E2E_DIR failed (see $base/build.log)"
command -v qemu-img > /dev/null || die "qemu-img missing: install qemu-utils (scripts/install-deps.sh)"
command -v jq > /dev/null || die "jq missing: install jq (scripts/install-deps.sh)"
"$NESTED_DIR/l2-initramfs" --run "$E2E_DIR/e2e-l2.sh" \
	--file "$driver_ko:/pvprof_guest.ko" \
	--file "$BIN/e2e-fp:/e2e-fp" --file "$BIN/e2e-sys:/e2e-sys" \
	--file "$BIN/e2e-nofp:/e2e-nofp" --file "$BIN/e2e-csum:/e2e-csum" \
	-o "$L2_IMAGE" > /dev/null || die "l2-initramfs failed"
for b in e2e-fp e2e-sys e2e-nofp; do
	nm -n "$BIN/$b" > "$base/$b.nm" || die "nm $BIN/$b failed"
done
# The L2 kernel: by default the distro's vmlinux, which run-l1 extracts only
# when it boots the distro's kernel itself.
if [ -n "${E2E_L2_KERNEL:-}" ]; then
	l2_kernel=$(realpath "$E2E_L2_KERNEL") || die "E2E_L2_KERNEL $E2E_L2_KERNEL missing"
	l2_system_map=$(kernel_system_map "$l2_kernel" "")
else
	lock_build_dir
	l2_kernel=$(ensure_vmlinux "${KVER:-$(default_kver)}") || exit 125
	unlock_build_dir
	l2_system_map=$(kernel_system_map "" "${KVER:-$(default_kver)}")
fi

# boot_l1 KVM TIMEOUT RUN-L1-OPTION...: one L1 boot's half in $out; run-l1
# boots L1 again when the emulation killed it, and says so
# (tests/nested/README.md). Sets l1_status.
boot_l1() {
	local kvm=$1 timeout=$2
	shift 2
	"$NESTED_DIR/run-l1" --kvm "$kvm" "$@" --timeout "$timeout" --out "$out" -- \
		"$E2E_DIR/e2e.sh" --in-l1 "$kvm" "$out" "$l2_kernel" "$factor" "$kmsg" "$reloads" \
		> "$out.l1.stdout" 2> "$out.l1.stderr"
	l1_status=$?
	grep '^run-l1: boot [0-9]* of' "$out.l1.stderr" | sed "s/^/  note: l1-$kvm: /"
}

# note_l2_booted_again: says so when run-l2 booted the L2 of $out once more
# after its first boot did not reach init.
note_l2_booted_again() {
	grep '^run-l2: boot [0-9]* of' "$out/l2.stderr" 2>/dev/null | sed "s|^|  note: $out: |"
}

# ---- boot 1: the pvprof KVM
out=$base/pvprof
boot_l1 pvprof $((1800 * factor)) --modules-dir "$modules_dir"
note_l2_booted_again
if [ "$kmsg" = 1 ]; then
	save_kmsg "$out/l2.console" "$out/l2-main"
	save_kmsg "$out/a.console" "$out/l2-mig-a"
	save_kmsg "$out/b.console" "$out/l2-mig-b"
fi
con=$out/l2.console
tr -d '\r' < "$con" 2>/dev/null | grep -E '^(KSYM|KTEXT|KMOD) ' > "$out/ksyms"
"$BIN/e2e-stream" check --ksyms "$out/ksyms" \
	--fp "$(fact "$con" pid_fp):$base/e2e-fp.nm" \
	--sys "$(fact "$con" pid_sys):$base/e2e-sys.nm" \
	--nofp "$(fact "$con" pid_nofp):$base/e2e-nofp.nm" \
	"$out/main.stream" > "$out/check.out" 2> "$out/check.err"
check l1-runs "run-l1 exited $l1_status: $(run_l1_said "$out.l1.stderr")" [ -f "$out/l2.status" ]
check l2-reached-init "no L2-INIT on its console; its state: $out/l2-stuck.txt (RIPs: $(stuck_rips "$out/l2-stuck.txt" "$l2_system_map"))" \
	grep -q '^L2-INIT' "$con"
check l2-runs "run-l2 exited '$(cat "$out/l2.status" 2>/dev/null)'" [ "$(cat "$out/l2.status" 2>/dev/null)" = 0 ]
check l2-work-done "no E2E-WORK-DONE; its last progress: '$(complete_lines "$con" | grep '^E2E-PROGRESS' | tail -n 1 | tr -d '\r')'; its state: $out/l2-stuck.txt (RIPs: $(stuck_rips "$out/l2-stuck.txt" "$l2_system_map"))" \
	grep -q '^E2E-WORK-DONE' "$con"
check insmod "insmod exited '$(fact "$con" insmod_status)'" [ "$(fact "$con" insmod_status)" = 0 ]
check stream-captured "$(tr '\n' ' ' < "$out/capture.log" 2>/dev/null)" grep -qx 'capture_status 0' "$out/capture.log"
check workloads-run "fp '$(fact "$con" fp_status)', sys '$(fact "$con" sys_status)', nofp '$(fact "$con" nofp_status)'" \
	is_y "$([ "$(fact "$con" fp_status)" = 0 ] && [ "$(fact "$con" nofp_status)" = 0 ] && [[ "$(fact "$con" sys_status)" = "0 e2e-sys: "* ]] && echo y)"
while read -r _ name ok detail; do
	check "$name" "$detail" [ "$ok" = 1 ]
done < <(grep '^RESULT ' "$out/check.out")
[ -s "$out/check.err" ] && check checker-errors "$(head -n 3 "$out/check.err" | tr '\n' ' ')" false

# Case 1: completeness over the known-stacks phase.
k=$out/known.json
# status -j's "records" are the callchains the host accepted (the key keeps its name).
samples=$(jq_num "$k" .totals.samples) callchains=$(jq_num "$k" .totals.records)
check "completeness-$min_complete" "host: $callchains callchains of $samples guest-mode samples ($(losses_line "$k"))" \
	is_y "$([ "${samples:-0}" != null ] && [ "${samples:-0}" -gt 0 ] && [ $((callchains * 100)) -ge $((samples * min_complete)) ] && echo y)"
# Case 5: both vCPUs busy, both sampled.
v0=$(fact "$out/check.out" fp_vcpu0) v1=$(fact "$out/check.out" sys_vcpu1)
check both-vcpus "fp on vCPU 0: $v0 callchains, sys on vCPU 1: $v1" is_y "$([ "${v0:-0}" -ge 20 ] && [ "${v1:-0}" -ge 20 ] && echo y)"
# Case 6: CPU offline/online.
check hotplug-guest "failures '$(fact "$con" hotplug_failures)', CPUs active after '$(fact "$con" hotplug_cpus)'" \
	is_y "$([ "$(fact "$con" hotplug_failures)" = 0 ] && [ "$(fact "$con" hotplug_cpus)" = 2 ] && echo y)"
u1=$(fact "$out/check.out" vcpu1_unregistered) r1=$(fact "$out/check.out" vcpu1_registered)
check hotplug-host-events "vCPU 1: $u1 UNREGISTERED, $r1 REGISTERED stream events (want >= 3 + $reloads, >= 4 + $reloads)" \
	is_y "$([ "${u1:-0}" -ge $((3 + reloads)) ] && [ "${r1:-0}" -ge $((4 + reloads)) ] && echo y)"
# Case 4: 50 reloads.
check "reload-$reloads" "failures '$(fact "$con" reload_failures)', loads with unbalanced books '$(fact "$con" reload_books_unbalanced)' (most in flight '$(fact "$con" reload_max_in_flight)'), notices over the loads '$(fact "$con" reload_notices)'" \
	is_y "$([ "$(fact "$con" reload_failures)" = 0 ] && [ "$(fact "$con" reload_books_unbalanced)" = 0 ] && [ "$(fact "$con" reload_notices)" -gt 0 ] && echo y)"
u0=$(fact "$out/check.out" vcpu0_unregistered)
check reload-host-events "vCPU 0: $u0 UNREGISTERED stream events (want >= $reloads)" [ "${u0:-0}" -ge "$reloads" ]
n=$(fact "$con" notices) r=$(fact "$con" records) s=$(fact "$con" stale) d=$(fact "$con" dropped)
check guest-books-balance "notices '$n', callchains '$r', stale '$s', dropped '$d'" \
	is_y "$([ -n "$n" ] && [ "$n" = $((${r:-0} + ${s:-0} + ${d:-0})) ] && echo y)"
balance host-books-balance "$out/main.json"
check no-l2-warning "$(fact "$con" final_kernel_warning_lines) splat lines: $(sed -n 's/^FACT final_kernel_line //p' "$con" | head -n 6 | tr '\n' '|')" \
	[ "$(fact "$con" final_kernel_warning_lines)" = 0 ]

# Case 7: snapshot, migration, reset.
ml=$out/mig.log
stepok() { grep -qx "step $1 0" "$ml" 2>/dev/null; }
check mig-l2-boots "$(grep -m1 -v ' 0$' "$ml" 2>/dev/null)" \
	is_y "$(stepok started-a && stepok enable-a && stepok attached-a && stepok cont-a && stepok boot-a && stepok sampling-a && echo y)"
# stepok_all NAME: step NAME passed in each of the $loadvms rounds.
stepok_all() { [ "$(grep -cx "step $1 0" "$ml" 2>/dev/null)" = "$loadvms" ]; }
check savevm-loadvm "$loadvms savevm/loadvm rounds, steps: $(grep -E 'step (savevm|after-savevm|loadvm|after-loadvm) ' "$ml" | sort | uniq -c | tr -s '\n ' ' ')" \
	is_y "$(stepok_all savevm && stepok_all after-savevm && stepok_all loadvm && stepok_all after-loadvm && echo y)"
unregistered_rounds=()
for ((round = 1; round <= loadvms; round++)); do
	[ "$(jq_num "$out/a-loadvm-$round.json" .registered_vcpus)" = 1 ] ||
		unregistered_rounds+=("round $round: host $(jq_num "$out/a-loadvm-$round.json" .registered_vcpus) of 1 vCPU registered, guest $(cat "$out/a-loadvm-state-$round" 2>/dev/null);")
done
check loadvm-registered "after loadvm, of $loadvms rounds: ${unregistered_rounds[*]} state lines until the driver's check had run: $(awk '$1 == "loadvm-state-lines" { printf "%s ", $3 }' "$ml")" \
	[ ${#unregistered_rounds[@]} = 0 ]
check migrate-to-file "steps: $(grep -E 'step (downtime-limit|migrate|migrated|quit-a|started-b|enable-b|attached-b|migrate-incoming|incoming) ' "$ml" | tr '\n' ' ')" \
	is_y "$(stepok downtime-limit && stepok migrate && stepok migrated && stepok started-b && stepok enable-b && stepok attached-b && stepok migrate-incoming && stepok incoming && echo y)"
check migrated-reregisters "$(grep -E 'step (b-reregistered|b-runs) ' "$ml" | tr '\n' ' '); host: $(jq_num "$out/b-migrated.json" .registered_vcpus) registered" \
	is_y "$(stepok b-reregistered && stepok b-runs && [ "$(jq_num "$out/b-migrated.json" .registered_vcpus)" = 1 ] && echo y)"
grep '^run-l2: ' "$ml" | sed 's/^/  note: mig L2: /'
check reset-reregisters "$(grep -E 'step (reset|init-b|reboot|b-after-reset) |^run-l2: ' "$ml" | tr '\n' ' '); last: $(cat "$out/b-last-state" 2>/dev/null)" \
	is_y "$(stepok reset && stepok reboot && stepok b-after-reset && grep -q 'MIG-STATE registered 1 ' "$out/b-last-state" && echo y)"
"$BIN/e2e-stream" check "$out/b.stream" > "$out/check-b.out" 2>&1
check reset-host-events "B stream: vCPU 0 $(fact "$out/check-b.out" vcpu0_dropped) DROPPED, $(fact "$out/check-b.out" vcpu0_registered) REGISTERED" \
	is_y "$([ "$(fact "$out/check-b.out" vcpu0_dropped)" -ge 1 ] && [ "$(fact "$out/check-b.out" vcpu0_registered)" -ge 2 ] && echo y)"
bad=$(cat "$out/a.console" "$out/b.console" 2>/dev/null | tr -d '\r' | grep -m1 'CSUM BAD')
good=$(cat "$out/a.console" "$out/b.console" 2>/dev/null | grep -c 'CSUM ok')
check memory-intact "'$bad' ($good checksum passes)" is_y "$([ -z "$bad" ] && [ "$good" -gt 0 ] && echo y)"
warn=$(cat "$out/a.console" "$out/b.console" 2>/dev/null | grep -o 'warnings [1-9][0-9]*' | head -n 1)
check mig-no-l2-warning "L2 logged: '$warn'" [ -z "$warn" ]
"$BIN/e2e-stream" check "$out/a.stream" > "$out/check-a.out" 2>&1
balance_final mig-a-books-balance "$out/a.json" "$out/check-a.out"
balance_final mig-b-books-balance "$out/b.json" "$out/check-b.out"
no_l1_warning "$out" l1-no-warning

# ---- boot 2: the distro's KVM
if [ "${E2E_STOCK:-1}" != 0 ]; then
	out=$base/stock
	con=$out/l2.console
	boot_l1 stock $((600 * factor))
	note_l2_booted_again
	check stock-l2-runs "run-l2 exited '$(cat "$out/l2.status" 2>/dev/null)'" [ "$(cat "$out/l2.status" 2>/dev/null)" = 0 ]
	check stock-inert "insmod '$(fact "$con" insmod_status)', mode '$(fact "$con" driver_mode)', $(fact "$con" driver_lines) driver lines: $(fact "$con" driver_line)" \
		is_y "$([ "$(fact "$con" insmod_status)" = 0 ] && [ "$(fact "$con" driver_mode)" = inert ] && [ "$(fact "$con" driver_lines)" = 1 ] && echo y)"
	check stock-workload "fp '$(fact "$con" fp_status)', sys '$(fact "$con" sys_status)', rmmod '$(fact "$con" rmmod_status)'" \
		is_y "$([ "$(fact "$con" fp_status)" = 0 ] && [ "$(fact "$con" sys_status)" = 0 ] && [ "$(fact "$con" rmmod_status)" = 0 ] && echo y)"
	check stock-no-l2-warning "$(fact "$con" kernel_warning_lines) splat lines: $(sed -n 's/^FACT kernel_line //p' "$con" | head -n 6 | tr '\n' '|')" \
		[ "$(fact "$con" kernel_warning_lines)" = 0 ]
	no_l1_warning "$out" stock-l1-no-warning
else
	echo "  note: the boot with the distro's KVM (the driver's inertness) skipped (E2E_STOCK=0)"
fi

# The numbers the issue's closing note asks for.
{
	echo "run time $((SECONDS - start)) s"
	echo "completeness (known stacks): $callchains of $samples samples"
	echo "skew: $(fact "$base/pvprof/check.out" skewed) of $(fact "$base/pvprof/check.out" callchains) callchains ($(fact "$base/pvprof/check.out" skewed_pct)%)"
	echo "host losses (known stacks): $(losses_line "$k")"
	echo "host losses (whole main L2): $(losses_line "$base/pvprof/main.json")"
	echo "guest: notices $(fact "$base/pvprof/l2.console" notices) callchains $(fact "$base/pvprof/l2.console" records) stale $(fact "$base/pvprof/l2.console" stale) (last load)"
	echo "guest NMIs (known stacks): $(fact "$base/pvprof/l2.console" known_nmis_claimed) claimed, $(fact "$base/pvprof/l2.console" known_nmis_merged) of them for two deliveries"
	echo "handler_ns histogram (from_ns to_ns count, known stacks phase):"
	sed -n 's/^FACT known_handler_ns //p' "$base/pvprof/l2.console" | tr -d '\r' | awk '$3 > 0'
} > "$base/numbers.txt"
sed 's/^/# /' "$base/numbers.txt"
results_write "${E2E_RESULTS:-e2e$L2_SUFFIX}"
