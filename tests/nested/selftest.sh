#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the nested test host: seven L1 runs through run-l1, each
# checking several properties, asserted here on the outer machine from
# run-l1's exit status, its stdout and the files L1 left in the out share.
# Writes "<passed> <failed>" to $O/results/nested-selftest.
#
# "selftest.sh --in-l1 OUT" is the part that runs inside L1 (boot A).

PROG=nested-selftest
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -uo pipefail

L2_EXIT=5	# the L2 hook's exit status, to see it propagated through run-l2

# Inside L1: note what the outer side asserts. Exits 3 on purpose.
in_l1() {
	local out=$1
	echo "selftest-stdout $PVPROF_SELFTEST_TOKEN"
	echo "$PVPROF_SELFTEST_TOKEN" > "$out/token"
	pwd > "$out/cwd"
	nproc > "$out/nproc"
	[ -c /dev/kvm ] && echo present > "$out/dev-kvm"
	find /lib/modules -mindepth 1 | wc -l > "$out/lib-modules-entries"
	if touch "$NESTED_DIR/.selftest-write-probe" 2>/dev/null; then
		rm -f "$NESTED_DIR/.selftest-write-probe"
		echo writable > "$out/host-root"
	fi
	"$NESTED_DIR/run-l2" --initrd "$O/nested/selftest-l2.cpio" --timeout 120 \
		> "$out/l2.stdout" 2> "$out/l2.stderr"
	echo $? > "$out/l2.status"
	# The supervisor's deaths of an L2, injected (RUNL2_INJECT) or made
	# by the L2's hook (selftest_vanish, selftest_panic on its command
	# line): the emulation's are booted again, the others fail at once.
	RUNL2_INJECT=stop@1+0 "$NESTED_DIR/run-l2" --initrd "$O/nested/selftest-l2.cpio" \
		--timeout 120 --init-timeout 30 --console "$out/l2-again.console" 2> "$out/l2-again.stderr"
	echo $? > "$out/l2-again.status"
	"$NESTED_DIR/run-l2" --initrd "$O/nested/selftest-l2.cpio" --timeout 120 \
		--append selftest_vanish=1 --console "$out/l2-vanish.console" 2> "$out/l2-vanish.stderr"
	echo $? > "$out/l2-vanish.status"
	"$NESTED_DIR/run-l2" --initrd "$O/nested/selftest-l2.cpio" --timeout 120 \
		--append selftest_panic=1 --console "$out/l2-panic.console" 2> "$out/l2-panic.stderr"
	echo $? > "$out/l2-panic.status"
	RUNL2_INJECT=kill@1+2 "$NESTED_DIR/run-l2" --initrd "$O/nested/selftest-l2.cpio" \
		--timeout 120 --console "$out/l2-kill.console" 2> "$out/l2-kill.stderr"
	echo $? > "$out/l2-kill.status"
	# An L2 without an init panics before init; panic=-1 and -no-reboot
	# end its QEMU with status 0, as a reset by the emulation does.
	"$NESTED_DIR/run-l2" --initrd "$O/nested/selftest-l2.cpio" --timeout 120 \
		--append rdinit=/no-such-init --console "$out/l2-reset.console" \
		2> "$out/l2-reset.stderr"
	echo $? > "$out/l2-reset.status"
	# shellcheck source=../../demo/l2lib.sh
	source "$NESTED_DIR/../../demo/l2lib.sh"
	RUNL2_INJECT=stop@1+0 L2_INIT_SECONDS=30 l2_boot "$out/l2lib" "$O/nested/selftest-l2.cpio" 1 256
	echo "$? $L2_BOOTS" > "$out/l2lib.boot"
	l2_finish "$out/l2lib" 60 > "$out/l2lib.status"
	exit 3
}

if [ "${1:-}" = --in-l1 ]; then
	in_l1 "$2"
fi

file_is() {
	[ "$(cat "$1" 2>/dev/null)" = "$2" ]
}

token=$RANDOM$RANDOM$$
runl1=$NESTED_DIR/run-l1
outdir=$NESTED_OUT/selftest
rm -rf "$outdir"
mkdir -p "$outdir/a" "$outdir/b" "$outdir/c" "$outdir/d" "$outdir/e" "$outdir/f" "$outdir/k" "$O/results" || die "cannot create $outdir"
start=$SECONDS

# The L2 image: its hook prints a marker and exits with $L2_EXIT. On its
# first boot, selftest_vanish=1 on the kernel command line makes the L2 reset
# itself after init, as the emulation does now and then; selftest_panic=1
# panics it on every boot that reaches the hook, as a bug in the L2 would
# (a first boot the emulation kills before init is retried, as it must be).
hook=$outdir/l2-hook.sh
cat > "$hook" <<HOOK
#!/bin/sh
[ "\$RUNL2_BOOT" = 1 ] && [ "\$selftest_vanish" = 1 ] && reboot -f
[ "\$selftest_panic" = 1 ] && echo c > /proc/sysrq-trigger
echo "l2-marker $token"
exit $L2_EXIT
HOOK
"$NESTED_DIR/l2-initramfs" --run "$hook" -o "$NESTED_OUT/selftest-l2.cpio" > /dev/null ||
	die "l2-initramfs failed"

# A failure to find the pvprof modules is reported before any boot.
"$runl1" --kvm pvprof --modules-dir "$outdir/no-such-dir" -- true \
	> /dev/null 2> "$outdir/missing-modules.stderr"
status=$?
check missing-modules-exit-125 "exit status $status" [ "$status" -eq 125 ]
check missing-modules-message "no clear message: $(head -c 200 "$outdir/missing-modules.stderr")" \
	grep -q 'run-l1: --modules-dir .* does not exist' "$outdir/missing-modules.stderr"

# Boot A: stock KVM, 2 vCPUs, EPYC; runs L2s; exits 3.
PVPROF_SELFTEST_TOKEN=$token "$runl1" --kvm stock --smp 2 --cpu epyc --timeout 300 \
	--out "$outdir/a" -- "$NESTED_DIR/selftest.sh" --in-l1 "$outdir/a" \
	> "$outdir/a.stdout" 2> "$outdir/a.stderr"
status=$?
a=$outdir/a
check exit-status-nonzero "run-l1 exited $status, the command 3" [ "$status" -eq 3 ]
check stdout-streams-command-output "stdout lacks the command's line" \
	grep -qx "selftest-stdout $token" "$outdir/a.stdout"
check stdout-free-of-kernel-log "kernel messages on stdout: $(grep -m1 '^\[ *[0-9]' "$outdir/a.stdout")" \
	bash -c "! grep -q '^\[ *[0-9]*\.[0-9]*\]' '$outdir/a.stdout'"
check out-share-file-appears "token file differs" file_is "$a/token" "$token"
check cwd-is-outer-cwd "cwd $(cat "$a/cwd" 2>/dev/null)" file_is "$a/cwd" "$(pwd -P)"
check host-root-read-only "a file could be created in the host root" [ ! -e "$a/host-root" ]
check lib-modules-empty "/lib/modules has $(cat "$a/lib-modules-entries" 2>/dev/null) entries" \
	file_is "$a/lib-modules-entries" 0
check stock-kvm-dev-kvm "/dev/kvm missing in L1" file_is "$a/dev-kvm" present
check stock-kvm-nested-enabled "no 'Nested Virtualization enabled' in dmesg.txt" \
	grep -q 'Nested Virtualization enabled' "$a/dmesg.txt"
check smp-2 "L1 has $(cat "$a/nproc" 2>/dev/null) CPUs" file_is "$a/nproc" 2
check l2-boots-and-prints-marker "no marker in L2 output" grep -qx "l2-marker $token" "$a/l2.stdout"
check l2-exit-status "run-l2 exited $(cat "$a/l2.status" 2>/dev/null), the L2 hook $L2_EXIT" \
	file_is "$a/l2.status" "$L2_EXIT"
check boot-time-reported "no boot time line" grep -q 'run-l1: L1 booted in [0-9.]* s' "$outdir/a.stderr"
# retried_once RUN DEATH: run-l2 said once that RUN's first boot died of
# DEATH and was booted again, and kept its console.
retried_once() {
	[ "$(grep -c "^run-l2: boot 1 of at most 2 died: $2: .*booting again; the dead boot kept in $1.console.died-1\$" "$1.stderr" 2>/dev/null)" = 1 ] &&
		[ "$(grep -c '^run-l2: boot' "$1.stderr")" = 1 ] && [ -f "$1.console.died-1" ]
}
l2_said() {
	grep -v warning "$1.stderr" 2>/dev/null | head -n 4 | tr '\n' '|'
}
check l2-hung-boots-again "run-l2 said: $(l2_said "$a/l2-again")" \
	retried_once "$a/l2-again" l2-hung-before-init
check l2-hung-state-kept "no registers in $a/l2-again.console.died-1.state" \
	grep -q 'IP=' "$a/l2-again.console.died-1.state"
check l2-hung-second-boot-runs "run-l2 exited $(cat "$a/l2-again.status" 2>/dev/null), the L2 hook $L2_EXIT" \
	file_is "$a/l2-again.status" "$L2_EXIT"
check l2-vanished-boots-again "run-l2 said: $(l2_said "$a/l2-vanish")" \
	retried_once "$a/l2-vanish" l2-vanished
check l2-vanished-second-boot-runs "run-l2 exited $(cat "$a/l2-vanish.status" 2>/dev/null)" \
	file_is "$a/l2-vanish.status" "$L2_EXIT"
# The panic is never booted again; a boot the emulation killed before init
# (seen once: l2-reset-before-init, its console empty) is, before it.
check l2-panic-fails-at-once "run-l2 exited $(cat "$a/l2-panic.status" 2>/dev/null) and said: $(l2_said "$a/l2-panic")" \
	bash -c "[ \"\$(cat '$a/l2-panic.status')\" = 125 ] &&
		! grep '^run-l2: boot' '$a/l2-panic.stderr' | grep -q -v -E ' died: l2-(reset|hung)-before-init: ' &&
		grep -q '^run-l2: l2-no-status: ' '$a/l2-panic.stderr' && grep -q 'Kernel panic' '$a/l2-panic.console'"
check l2-killed-fails-at-once "run-l2 exited $(cat "$a/l2-kill.status" 2>/dev/null) and said: $(l2_said "$a/l2-kill")" \
	bash -c "[ \"\$(cat '$a/l2-kill.status')\" = 125 ] && ! grep -q '^run-l2: boot' '$a/l2-kill.stderr' &&
		grep -q '^run-l2: killed: QEMU ended by signal SIGKILL' '$a/l2-kill.stderr'"
check l2-reset-before-init-boots-again "run-l2 said: $(l2_said "$a/l2-reset")" \
	retried_once "$a/l2-reset" l2-reset-before-init
check l2-reset-twice-exit-125 "run-l2 exited $(cat "$a/l2-reset.status" 2>/dev/null); stderr: $(tail -n 2 "$a/l2-reset.stderr" | tr '\n' '|')" \
	file_is "$a/l2-reset.status" 125
check l2-reset-keeps-first-console "no panic in $a/l2-reset.console.died-1" \
	grep -q 'Kernel panic' "$a/l2-reset.console.died-1"
check l2lib-boots-again "l2_boot, its first boot stopped: status and boots '$(cat "$a/l2lib.boot" 2>/dev/null)'" \
	file_is "$a/l2lib.boot" "0 2"
check l2lib-second-boot-runs "l2_finish: L2-EXIT '$(cat "$a/l2lib.status" 2>/dev/null)'; console: $(head -c 200 "$a/l2lib/console.log" 2>/dev/null)" \
	file_is "$a/l2lib.status" "$L2_EXIT"
check l2lib-keeps-first-console "no $a/l2lib/console.log.died-1" [ -f "$a/l2lib/console.log.died-1" ]

# Boot B: no KVM, -cpu max, 1 vCPU, a QMP socket; exits 0. The command waits
# until this side has injected an NMI into L1 through QMP, then counts the NMI
# reports in L1's kernel log.
b=$outdir/b
qmp_socket=$outdir/l1.qmp
# shellcheck disable=SC2016 # expanded by the sh inside L1
"$runl1" --kvm none --cpu max --qmp "$qmp_socket" --timeout 300 --out "$b" -- sh -c '
	nproc > "$1/nproc"
	[ -c /dev/kvm ] && echo present > "$1/dev-kvm"
	polls=0
	while [ ! -e "$1/nmi-sent" ] && [ $polls -lt 1200 ]; do
		sleep 0.1
		polls=$((polls + 1))
	done
	dmesg | grep -c "NMI.* for reason" > "$1/nmi-reports"
	exit 0' sh "$b" > "$outdir/b.stdout" 2> "$outdir/b.stderr" &
runl1_pid=$!
for ((polls = 0; polls < 1200; polls++)); do
	[ -e "$b/nproc" ] || ! kill -0 "$runl1_pid" 2>/dev/null && break
	sleep 0.1
done
qmp_status=$("$NESTED_DIR/qmp" "$qmp_socket" query-status 2>&1)
"$NESTED_DIR/qmp" "$qmp_socket" inject-nmi > /dev/null 2>&1
touch "$b/nmi-sent"
wait "$runl1_pid"
status=$?
check exit-status-zero "run-l1 exited $status" [ "$status" -eq 0 ]
check kvm-none-no-dev-kvm "/dev/kvm present with --kvm none" [ ! -e "$b/dev-kvm" ]
check smp-1 "L1 has $(cat "$b/nproc" 2>/dev/null) CPUs" file_is "$b/nproc" 1
check qmp-query-status "qmp said: $qmp_status" grep -q '"status": "running"' <<< "$qmp_status"
check qmp-inject-nmi-reaches-l1 "L1 logged $(cat "$b/nmi-reports" 2>/dev/null) NMI reports" \
	file_is "$b/nmi-reports" 1

# Boot C: the whole-run timeout kills L1 and exits 124.  L1 keeps its
# divide error handler's address first: kallsyms lines read as a System.map
# of the running kernel, so stuck-symbols must find a KASLR offset of 0x0.
c_start=$SECONDS
# shellcheck disable=SC2016 # expanded by the sh inside L1
"$runl1" --kvm none --timeout 15 --out "$outdir/c" -- sh -c \
	'grep -w asm_exc_divide_error /proc/kallsyms > "$0/running.map"; exec sleep 600' "$outdir/c" \
	> "$outdir/c.stdout" 2> "$outdir/c.stderr"
status=$?
c_time=$((SECONDS - c_start))
check timeout-exit-124 "exit status $status" [ "$status" -eq 124 ]
check timeout-bounded "took $c_time s for --timeout 15" [ "$c_time" -le 20 ]
check timeout-saves-l1-state "$(grep -c 'RIP=' "$outdir/c/l1-stuck.txt" 2>/dev/null) RIP readings in $outdir/c/l1-stuck.txt" \
	[ "$(grep -c 'RIP=' "$outdir/c/l1-stuck.txt" 2>/dev/null)" = 2 ]
c_symbols=$("$NESTED_DIR/stuck-symbols" "$outdir/c/l1-stuck.txt" "$outdir/c/running.map" 2>&1 | head -n 1)
check timeout-reads-idt-gate-0 "stuck-symbols said: $c_symbols" [ "$c_symbols" = "(KASLR offset 0x0)" ]
check timeout-prints-console-tail "no console tail on stderr" \
	grep -q 'run-l1: last 40 lines of' "$outdir/c.stderr"

# Boot D: a boot that never reaches init (no init, and panic=0 waits forever)
# is the emulation's boot-hung death: booted again, twice, then it fails.
RUNL1_BOOT_BOUND=10 "$runl1" --kvm none --timeout 120 --out "$outdir/d" \
	--append "rdinit=/nonexistent panic=0" -- true \
	> "$outdir/d.stdout" 2> "$outdir/d.stderr"
status=$?
check hung-boot-exit-125 "exit status $status" [ "$status" -eq 125 ]
for boot in 1 2; do
	check "hung-boot-retry-$boot-reported" "no retry line for boot $boot" \
		grep -q "^run-l1: boot $boot of at most 3 died: boot-hung: at \".\+\"; .*the dead boot kept in $outdir/d/died-$boot\$" \
		"$outdir/d.stderr"
	check "hung-boot-$boot-console-kept" "no console in $outdir/d/died-$boot" \
		[ -s "$outdir/d/died-$boot/console.log" ]
done
check hung-boot-gives-up "no final message" grep -q '^run-l1: L1 boot hung: at ".*" (3 boots)$' \
	"$outdir/d.stderr"

# Boot E: a CPU held with preemption off (watchdog_thresh=2 reports it after
# 4 s) stops the run once the watchdog has seen it stuck for the bound, well
# before --timeout, and the report names the spinning function.
lockup_build=$O/nested/lockup-module
mkdir -p "$lockup_build" &&
	ln -sfn "$NESTED_DIR/lockup-module/Kbuild" "$lockup_build/Kbuild" &&
	ln -sfn "$NESTED_DIR/lockup-module/runl1_lockup_test.c" "$lockup_build/runl1_lockup_test.c" &&
	make -s -C "/lib/modules/$(default_kver)/build" M="$lockup_build" modules \
		> "$outdir/lockup-build.log" 2>&1
check lockup-module-builds "$(tail -n 5 "$outdir/lockup-build.log")" [ -f "$lockup_build/runl1_lockup_test.ko" ]
# held_cpu_run BOOT VAR=VALUE RUN-L1-ARGS...: run-l1 with VAR set and
# --timeout 300 into $outdir/BOOT; its exit status in $status, its wall time
# in $run_time.
held_cpu_run() {
	local boot=$1 bound=$2 start=$SECONDS
	shift 2
	env "$bound" "$runl1" --kvm none --timeout 300 --out "$outdir/$boot" "$@" \
		> "$outdir/$boot.stdout" 2> "$outdir/$boot.stderr"
	status=$?
	run_time=$((SECONDS - start))
}

held_cpu_run e RUNL1_LOCKUP_BOUND=10 --append watchdog_thresh=2 \
	-- insmod "$lockup_build/runl1_lockup_test.ko" seconds=240
check lockup-exit-124 "exit status $status" [ "$status" -eq 124 ]
check lockup-stops-early "took $run_time s for a 240 s lockup and --timeout 300" [ "$run_time" -le 90 ]
check lockup-names-cpu "$(run_l1_said "$outdir/e.stderr" | tail -n 1)" \
	grep -q '^run-l1: L1 locked up: CPU#0 stuck for [0-9]*s! \[insmod:[0-9]*\] and a CPU stayed stuck for [0-9]* s$' \
	"$outdir/e.stderr"
check lockup-report-kept "no runl1_lockup_spin in $outdir/e/lockup.txt" \
	grep -q 'runl1_lockup_spin' "$outdir/e/lockup.txt"
check lockup-report-summarised "no stack summary on stderr" \
	grep -q '^  lockup| .*runl1_lockup' "$outdir/e.stderr"
check lockup-not-booted-again "a lockup is L1's own code, not the emulation's: $(grep -m1 '^run-l1: boot' "$outdir/e.stderr")" \
	bash -c "! grep -q '^run-l1: boot' '$outdir/e.stderr'"

# Boot F: the supervisor's retry policy on real deaths of L1. Its first
# boot holds its second CPU with interrupts off: that CPU takes no timer
# interrupt (and no watchdog inside L1 can say so); the supervisor sees the
# timer interrupt pending in the LAPIC through QMP, stops L1 within 20 s and
# boots it again. The second boot triple-faults, and is booted again too.
# The third runs COMMAND to its end.
# shellcheck disable=SC2016 # expanded by the sh inside L1
held_cpu_run f RUNL1_BOOTS=3 --smp 2 -- sh -c '
	echo "$RUNL1_BOOT" > "$0/boot-$RUNL1_BOOT"
	case $RUNL1_BOOT in
	1) read -r up _ < /proc/uptime; echo "$up" > "$0/held-at"
	   taskset -c 1 insmod "$1" seconds=240 irqs_off=1 ;;
	2) insmod "$1" triple_fault=1 ;;
	esac
	exit 0' "$outdir/f" "$lockup_build/runl1_lockup_test.ko"
f=$outdir/f
check frozen-then-triple-fault-then-exit-0 "exit status $status" [ "$status" -eq 0 ]
check frozen-booted-again "$(grep -m1 '^run-l1: boot 1' "$outdir/f.stderr")" \
	grep -q "^run-l1: boot 1 of at most 3 died: frozen: its CPU 1 has had its timer interrupt pending for [0-9]* s, taking no interrupt; .*kept in $f/died-1\$" "$outdir/f.stderr"
# facts.json's seconds run from QEMU's launch, held-at from L1's kernel start.
frozen_after=$(python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["seconds"] - float(open(sys.argv[2]).read())))' \
	"$f/died-1/facts.json" "$f/died-1/held-at" 2>/dev/null)
check frozen-stopped-within-20s "stopped ${frozen_after:-?} s after the CPU was held" [ "${frozen_after:-99}" -le 20 ]
check frozen-state-kept "no pending IRR line in $f/died-1/l1-stuck.txt" \
	grep -Eq '^IRR[[:space:]].*\<236\>' "$f/died-1/l1-stuck.txt"
pending_readings=$(awk '/^== / { cpu = $4 } cpu == 1 && /^IRR/ && / 236( |$)/ { n++ } END { print n + 0 }' \
	"$f/died-1/lapic.log")
check frozen-readings-kept "$pending_readings readings of CPU 1 with the timer pending in $f/died-1/lapic.log" \
	[ "$pending_readings" -ge 5 ]
check frozen-commands-files-kept "COMMAND's file of boot 1 not in $f/died-1" file_is "$f/died-1/boot-1" 1
check frozen-classified-again "supervisor.py classify $f/died-1: $("$NESTED_DIR/supervisor.py" classify "$f/died-1")" \
	bash -c "'$NESTED_DIR/supervisor.py' classify '$f/died-1' | grep -q '^frozen: its CPU 1 '"
check triple-fault-booted-again "$(grep -m1 '^run-l1: boot 2' "$outdir/f.stderr")" \
	grep -q "^run-l1: boot 2 of at most 3 died: triple-fault: QEMU logged a triple fault of L1; .*kept in $f/died-2\$" "$outdir/f.stderr"
check triple-fault-log-kept "no triple fault in $f/died-2/qemu-debug.log" grep -q 'Triple fault' "$f/died-2/qemu-debug.log"
check third-boot-runs "files of boots: $(cd "$f" && echo boot-*)" \
	bash -c "[ -f '$f/boot-3' ] && [ ! -e '$f/boot-1' ] && [ ! -e '$f/boot-2' ]"

# Boot K: QEMU killed from outside is no death of the emulation's: it fails
# at once, and says how QEMU ended.
RUNL1_INJECT=kill@1+1 "$runl1" --kvm none --timeout 120 --out "$outdir/k" -- true \
	> "$outdir/k.stdout" 2> "$outdir/k.stderr"
status=$?
check killed-exit-125 "exit status $status" [ "$status" -eq 125 ]
check killed-not-booted-again "$(run_l1_said "$outdir/k.stderr" | grep -v '^run-l1: last' | tail -n 1)" \
	bash -c "grep -q '^run-l1: L1 died: killed: QEMU ended by signal SIGKILL' '$outdir/k.stderr' &&
		! grep -q '^run-l1: boot' '$outdir/k.stderr'"

for f in a b c e f k; do
	grep -h '^run-l1: boot [0-9]* of' "$outdir/$f.stderr"
	grep -h 'run-l1: L1 booted in' "$outdir/$f.stderr"
done | sed 's/^/  /'
grep -h 'run-l2: L2 reached init' "$a/l2.stderr" | sed 's/^/  /'
echo "  suite time $((SECONDS - start)) s"
results_write nested-selftest
