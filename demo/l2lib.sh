# SPDX-License-Identifier: GPL-2.0
# Sourced inside L1 by the demo and the benchmark: an L2 guest that runs in
# the background while L1 works on it, with a serial console L1 can both read
# and write (run-l2's console is output only, and both jobs must tell the
# guest when to start or stop its workload).
#
#   l2_start DIR INITRD [SMP] [MEM_MB]   boot L2 under tests/nested/supervisor.py;
#                                        DIR gets console.log, qemu.pid, qemu.log
#                                        (the supervisor's and QEMU's messages;
#                                        the console fifos live in L1's /tmp:
#                                        9p shares cannot hold fifos);
#                                        L2_QEMU_PID is the supervisor's pid
#   l2_boot DIR INITRD [SMP] [MEM_MB]    l2_start, then wait for the guest's init
#                                        (L2-INIT); one that has not reached it
#                                        in L2_INIT_SECONDS (default 120), or
#                                        that the emulation killed before it,
#                                        is booted once more (console.log.died-1)
#   l2_wait_line DIR REGEX SECONDS       wait for a console line matching REGEX
#   l2_send DIR TEXT                     send one line to L2's console
#   l2_finish DIR SECONDS                wait for L2 to power off (killed after
#                                        SECONDS); prints its L2-EXIT status
#   l2_vm_debugfs PID                    KVM's per-VM debugfs directory of PID
#
# The L2 is the same as run-l2 --machine pc's (tests/nested/run-l2): the L1
# kernel's vmlinux, -cpu host, vCPU threads named "CPU <n>/KVM".  pc, not
# microvm: pvprof's guest takes NMIs, and on microvm nothing answers the NMI
# reason port, so Linux reports as a PCI SERR a back-to-back NMI it would
# swallow on a PC (spec pvprof-guest-nmi-handler).
# shellcheck shell=bash

l2_start() {
	local dir=$1 initrd=$2 smp=${3:-1} mem=${4:-256} vmlinux

	vmlinux=$NESTED_OUT/vmlinux-$(uname -r)

	[ -c /dev/kvm ] || die "/dev/kvm missing: run inside run-l1 --kvm pvprof"
	[ -f "$vmlinux" ] || die "$vmlinux missing: run-l1 extracts it"
	[ -f "$initrd" ] || die "L2 initramfs $initrd missing"
	mkdir -p "$dir" || die "cannot create $dir"
	rm -f "$dir/qemu.pid"
	: > "$dir/console.log"
	L2_FIFO_DIR=$(mktemp -d /tmp/l2-serial.XXXXXX) || die "mktemp failed"
	# The supervisor boots the L2 (as run-l2 --machine pc does), copies
	# its console to console.log, and boots it again when the emulation
	# killed it before its init; the callers' own waits bound the run.
	python3 "$NESTED_DIR/supervisor.py" l2 --kernel "$vmlinux" --initrd "$initrd" \
		--machine pc --smp "$smp" --mem "$mem" --console "$dir/console.log" \
		--serial "$L2_FIFO_DIR/serial" --pidfile "$dir/qemu.pid" --timeout 86400 \
		--init-timeout "${L2_INIT_SECONDS:-120}" < /dev/null > /dev/null 2> "$dir/qemu.log" &
	L2_QEMU_PID=$!
	# Read-write, so the open waits neither for the supervisor's fifo nor
	# for QEMU.
	until [ -p "$L2_FIFO_DIR/serial.in" ] || ! kill -0 "$L2_QEMU_PID" 2>/dev/null; do
		sleep 0.1
	done
	exec {L2_SERIAL_FD}<>"$L2_FIFO_DIR/serial.in"
}

# l2_boot: l2_start, then the guest's init. L2_BOOTS says how many boots
# the supervisor needed (a retry is said in DIR/qemu.log).
# shellcheck disable=SC2034 # L2_BOOTS is the callers'
l2_boot() {
	local dir=$1 seconds=${L2_INIT_SECONDS:-120} status

	l2_start "$@"
	l2_wait_line "$dir" '^L2-INIT ' $((seconds * 2 + 30))
	status=$?
	L2_BOOTS=$((1 + $(grep -c '^run-l2: boot [0-9]* of' "$dir/qemu.log")))
	[ "$status" = 0 ] || echo "l2: $(grep -v '^run-l2: boot' "$dir/qemu.log" | tail -n 3 | tr '\n' ' ')" >&2
	return "$status"
}

l2_wait_line() {
	local dir=$1 regex=$2 seconds=$3 deadline
	deadline=$((SECONDS + seconds))
	while ! grep -qE "$regex" "$dir/console.log"; do
		if ! kill -0 "$L2_QEMU_PID" 2>/dev/null; then
			echo "l2: guest stopped before printing /$regex/" >&2
			return 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "l2: no /$regex/ on the guest console within $seconds s" >&2
			return 1
		fi
		sleep 0.2
	done
}

l2_send() {
	printf '%s\n' "$2" >&"$L2_SERIAL_FD"
}

l2_finish() {
	local dir=$1 seconds=$2 deadline status
	deadline=$((SECONDS + seconds))
	while kill -0 "$L2_QEMU_PID" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "l2: guest still running after $seconds s; killing it" >&2
			kill "$L2_QEMU_PID"
			break
		fi
		sleep 0.2
	done
	l2_reap
	status=$(sed -n 's/^L2-EXIT \([0-9]*\)$/\1/p' "$dir/console.log" | tail -n 1)
	echo "${status:-none}"
}

# l2_reap: waits for the L2's supervisor that has exited or been killed (its
# exit status in L2_QEMU_STATUS), and releases the console. Once is enough.
l2_reap() {
	[ -n "${L2_FIFO_DIR:-}" ] || return 0
	wait "$L2_QEMU_PID" 2>/dev/null
	L2_QEMU_STATUS=$?
	exec {L2_SERIAL_FD}>&-
	rm -rf "$L2_FIFO_DIR"
	L2_FIFO_DIR=
}

l2_vm_debugfs() {
	local d
	for d in /sys/kernel/debug/kvm/"$1"-*; do
		[ -d "$d" ] && { echo "$d"; return 0; }
	done
	return 1
}
