# SPDX-License-Identifier: GPL-2.0
# Sourced inside L1 by the demo and the benchmark: an L2 guest that runs in
# the background while L1 works on it, with a serial console L1 can both read
# and write (run-l2's console is output only, and both jobs must tell the
# guest when to start or stop its workload).
#
#   l2_start DIR INITRD [SMP] [MEM_MB]   boot L2; DIR gets console.log, qemu.pid,
#                                        qemu.log (the console fifos live in
#                                        L1's /tmp: 9p shares cannot hold fifos)
#   l2_boot DIR INITRD [SMP] [MEM_MB]    l2_start, then wait for the guest's init
#                                        (L2-INIT); one that has not reached it
#                                        in L2_INIT_SECONDS (default 120) is
#                                        booted once more, and the caller's
#                                        own waits bound the second boot
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
# swallow on a PC (spec section 10.3).
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
	mkfifo "$L2_FIFO_DIR/serial.in" "$L2_FIFO_DIR/serial.out" || die "mkfifo in $L2_FIFO_DIR failed"
	# QEMU opens both fifos read-write, so neither open waits for a peer.
	qemu-system-x86_64 -accel kvm -M pc \
		-cpu host -smp "$smp" -m "$mem" -name "l2,debug-threads=on" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$vmlinux" -initrd "$initrd" \
		-append "console=ttyS0 quiet reboot=t panic=-1 initcall_blacklist=cmos_init,pci_arch_init" \
		-chardev "pipe,id=console,path=$L2_FIFO_DIR/serial" -serial chardev:console \
		-pidfile "$dir/qemu.pid" < /dev/null > "$dir/qemu.log" 2>&1 &
	L2_QEMU_PID=$!
	# Unbuffered: callers poll the log for lines as they arrive.
	stdbuf -o0 tr -d '\r' < "$L2_FIFO_DIR/serial.out" >> "$dir/console.log" &
	L2_READER_PID=$!
	# Read-write, so the open never waits for QEMU (which may have failed).
	exec {L2_SERIAL_FD}<>"$L2_FIFO_DIR/serial.in"
}

# The nested emulation sometimes fails an L2 kernel while it boots: it
# loses a wakeup and the vCPUs halt with work pending, never reaching init
# (with the distro's KVM in L1 as well as pvprof's; tests/debug/README.md),
# or the guest resets itself. Nothing of pvprof runs before init, so such
# a boot is retried rather than failed, as run-l2 does; the retry is said
# on stderr and in L2_BOOTS, and the failed boot's console is kept as
# DIR/console-hung.log.
# shellcheck disable=SC2034 # L2_BOOTS is the callers'
l2_boot() {
	local dir=$1 seconds=${L2_INIT_SECONDS:-120} what

	L2_BOOTS=1
	l2_start "$@"
	l2_wait_line "$dir" '^L2-INIT ' "$seconds" 2>/dev/null && return 0
	if kill -0 "$L2_QEMU_PID" 2>/dev/null; then
		what="no L2-INIT within $seconds s of the launch"
		kill "$L2_QEMU_PID"
		l2_reap
	else
		l2_reap
		# The console may have been drained only now.
		grep -q '^L2-INIT ' "$dir/console.log" && return 0
		if [ "$L2_QEMU_STATUS" != 0 ]; then
			echo "l2: QEMU failed (status $L2_QEMU_STATUS) before the guest's init: $(head -c 300 "$dir/qemu.log")" >&2
			return 1
		fi
		# With -no-reboot, a reset of the guest ends QEMU with status 0.
		what="it reset itself"
	fi
	echo "NOTE: l2: the guest did not reach init ($what), an emulation failure; booting it once more" >&2
	mv "$dir/console.log" "$dir/console-hung.log"
	L2_BOOTS=2
	l2_start "$@"
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

# l2_reap: waits for the L2 QEMU that has exited or been killed (its exit
# status in L2_QEMU_STATUS), and releases its console. Once is enough.
l2_reap() {
	local fd

	[ -n "${L2_FIFO_DIR:-}" ] || return 0
	wait "$L2_QEMU_PID" 2>/dev/null
	L2_QEMU_STATUS=$?
	exec {L2_SERIAL_FD}>&-
	# The reader ends when serial.out has no writer left. Opening it here
	# too releases a reader still waiting in open() for a QEMU killed
	# before it opened the fifo.
	exec {fd}<>"$L2_FIFO_DIR/serial.out"
	exec {fd}>&-
	wait "$L2_READER_PID" 2>/dev/null
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
