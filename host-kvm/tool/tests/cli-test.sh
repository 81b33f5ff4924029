#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof's tests that need no pvprof kernel: every usage error exits 2
# with a clear message, every help text prints and agrees with the man page,
# and VM discovery fails clearly against real processes (no such process, a
# non-KVM process, a thread, fds that are not VMs, missing libvirt,
# permission denied). Where /dev/kvm exists (stock KVM, e.g. in L1 through
# 'make check-stock') it also runs kvm-vm-holder, a real KVM process with
# one or two VMs, and a stopped QEMU, and expects "host KVM does not support
# pvprof".
#
# Cases this machine cannot run (no /dev/kvm, not root, no Yama) are listed
# as SKIP and counted apart, never as passed. With PVPROF_TOOL_TEST_SYSCTL=1
# (set by 'make check-stock', in a throw-away L1) the permission cases also
# change kernel.yama.ptrace_scope, ending with 3, which only a reboot undoes.
#
# usage: cli-test.sh [--suite NAME]   writes "<passed> <failed>" to
#                                     $O/results/NAME (default NAME: tool),
#                                     or to $PVPROF_RESULTS_DIR/NAME (in L1,
#                                     where only run-l1's --out is writable)
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

suite=tool
if [ "${1:-}" = --suite ] && [ $# -eq 2 ]; then
	suite=$2
elif [ $# -gt 0 ]; then
	echo "usage: cli-test.sh [--suite NAME]" >&2
	exit 2
fi

# A process that holds no VM, owned by root when we are root.
sleep 3600 &
plain_pid=$!
helper_pids+=("$plain_pid")

echo "== usage errors (exit 2)"
expect_err "usage: unknown command" 2 "unknown command 'frob'" -- frob
expect_err "usage: unknown global option" 2 "unknown option '--frob'" -- --frob
expect_err "usage: unknown short option" 2 "unknown option '-x'" -- -x
for c in enable disable status; do
	expect_err "usage: $c without VM" 2 "$c: expected VM" -- $c
	expect_err "usage: $c with an extra argument" 2 "$c: unexpected argument 'extra'" -- $c 1 extra
	expect_err "usage: $c with an unknown option" 2 "$c: unknown option '--frob'" -- $c 1 --frob
done
expect_err "usage: expose without MODE" 2 "expose: expected VM and MODE" -- expose 1
expect_err "usage: expose with a bad MODE" 2 "expected 'visible', 'hidden' or 'default', got: 'maybe'" -- expose 1 maybe
expect_err "usage: expose with an extra argument" 2 "expose: unexpected argument 'extra'" -- expose 1 hidden extra
expect_err "usage: enable -F 0" 2 "-F: expected a number from 1 to 10000, got: '0'" -- enable 1 -F 0
expect_err "usage: enable -F above the maximum" 2 "-F: expected a number from 1 to 10000, got: '10001'" -- enable 1 -F 10001
expect_err "usage: enable -F not a number" 2 "got: '12x'" -- enable 1 -F 12x
expect_err "usage: enable -F negative" 2 "got: '-5'" -- enable 1 -F -5
expect_err "usage: enable -F without a value" 2 "option '-F' needs an argument" -- enable 1 -F
expect_err "usage: enable -F and -c" 2 "give -F or -c, not both" -- enable 1 -F 100 -c 200000
expect_err "usage: enable cpu-clock period too short" 2 "-c: expected a number of at least 100000, got: '99999'" -- enable 1 -c 99999
expect_err "usage: enable cycles period 0" 2 "-c: expected a number of at least 1, got: '0'" -- enable 1 -e cycles -c 0
expect_err "usage: enable -c above 64 bits" 2 "got: '18446744073709551616'" -- enable 1 -c 18446744073709551616
expect_err "usage: enable unknown event" 2 "-e: expected 'cpu-clock', 'cycles' or 'instructions', got: 'bogus'" -- enable 1 -e bogus
expect_err "usage: enable --max-depth 0" 2 "--max-depth: expected a number from 1 to 120, got: '0'" -- enable 1 --max-depth 0
expect_err "usage: enable --max-depth 121" 2 "--max-depth: expected a number from 1 to 120, got: '121'" -- enable 1 --max-depth 121
expect_err "usage: enable --call-graph dwarf," 2 "--call-graph: SIZE must be a multiple of 8 from 8 to 32768 bytes, got: ''" -- enable 1 --call-graph dwarf,
expect_err "usage: enable --call-graph dwarf,0" 2 "--call-graph: SIZE must be a multiple of 8 from 8 to 32768 bytes, got: '0'" -- enable 1 --call-graph dwarf,0
expect_err "usage: enable --call-graph dwarf,-8" 2 "--call-graph: SIZE must be a multiple of 8 from 8 to 32768 bytes, got: '-8'" -- enable 1 --call-graph dwarf,-8
expect_err "usage: enable --call-graph lbr" 2 "--call-graph: expected 'fp', 'dwarf' or 'dwarf,SIZE', got: 'lbr'" -- enable 1 --call-graph lbr
expect_err "usage: enable --vm-rate 0" 2 "--vm-rate: expected a number from 1 to 4294967295, got: '0'" -- enable 1 --vm-rate 0
expect_err "usage: enable --vm-rate above 32 bits" 2 "got: '4294967296'" -- enable 1 --vm-rate 4294967296
expect_err "usage: VM 0" 2 "expected VM as PID, PID:FD or a libvirt domain name, got: '0'" -- status 0
expect_err "usage: VM PID: without FD" 2 "got: '12:'" -- status 12:
expect_err "usage: VM PID:x" 2 "got: '12:x'" -- status 12:x
expect_err "usage: VM pid above int" 2 "got: '99999999999'" -- status 99999999999
expect_err "usage: VM name with a slash" 2 "got: '../x'" -- status ../x
expect_err "usage: help of an unknown command" 2 "unknown command 'frob'" -- help frob
expect_err "usage: help with two commands" 2 "help: unexpected argument 'status'" -- help enable status
expect_json_err "usage: -j error is a JSON object" 2 "status: expected VM" -j status
expect_json_err "usage: status -j error is a JSON object" 2 "-F: expected" enable 1 -F 0 -j

echo "== help"
expect_help "help: help" "COMMAND := { enable | disable | status | expose | record | report | script | help }" help
expect_help "help: --help" "Exit status: 0 ok, 1 the operation failed, 2 usage error." --help
expect_help "help: -h" "Usage: kvm-pvprof [OPTIONS] COMMAND ARGS..." -h
expect_help "help: help help" "Usage: kvm-pvprof [OPTIONS] COMMAND ARGS..." help help
expect_help "help: --version" "kvm-pvprof 0.1 (pvprof ABI 1, stream version 2)" --version
expect_help "help: -V" "pvprof ABI 1" -V
expect_help "help: -j --version" '{"version":"0.1","abi_version":1,"stream_version":2}' -j --version
for c in enable disable status expose; do
	expect_help "help: $c help" "Usage: kvm-pvprof $c VM" $c help
	expect_help "help: $c --help" "Usage: kvm-pvprof $c VM" $c --help
	expect_help "help: $c -h" "Usage: kvm-pvprof $c VM" $c -h
	expect_help "help: help $c" "Usage: kvm-pvprof $c VM" help $c
done
run -- 
if [ "$rc" = 2 ] && [ -z "$out" ] && grep -qF "Usage: kvm-pvprof" <<<"$err"; then
	pass "help: no command prints the help on stderr"
else
	fail "help: no command prints the help on stderr" "exit $rc, stdout ${#out} bytes"
fi

echo "== man page"
if ! command -v nroff >/dev/null || ! command -v groff >/dev/null; then
	fail "man: renders" "nroff/groff missing (Debian package groff-base)"
else
	warnings=$(groff -man -Tascii -ww -z "$man_page" 2>&1)
	if [ -z "$warnings" ]; then
		pass "man: renders without warnings"
	else
		fail "man: renders without warnings" "${warnings:0:300}"
	fi
	nroff -man -Tascii -rLL=250n "$man_page" 2>/dev/null | col -b |
		tr -s ' \t' ' ' >"$tmp/man.txt"
	for sec in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" EXAMPLES FILES "SEE ALSO"; do
		if grep -qx "$sec" "$tmp/man.txt"; then
			pass "man: section $sec"
		else
			fail "man: section $sec" "missing"
		fi
	done
	# Each help text's grammar lines and options must appear in the man page.
	for args in "help" "enable help" "disable help" "status help" "expose help"; do
		# shellcheck disable=SC2086 # args are words
		"$bin" $args >"$tmp/help.txt"
		missing=
		while read -r line; do
			line=${line#Usage: }
			case "$line" in
			"kvm-pvprof "*" help") continue ;;
			"kvm-pvprof "* | *":= {"*) ;;
			*) continue ;;
			esac
			line=$(tr -s ' ' <<<"$line")
			grep -qF -- "$line" "$tmp/man.txt" || missing="$missing [$line]"
		done <"$tmp/help.txt"
		while read -r opt; do
			grep -qE -- "(^|[ [|])$opt([] ,|]|$)" "$tmp/man.txt" ||
				missing="$missing [$opt]"
		done < <(grep -oE '(^|[ [|(])--?[A-Za-z][a-z-]*' "$tmp/help.txt" |
			 sed 's/^[ [|(]//' | sort -u)
		if [ -z "$missing" ]; then
			pass "man: '$args' agrees with the man page"
		else
			fail "man: '$args' agrees with the man page" "not in the man page:$missing"
		fi
	done
fi

echo "== VM discovery"
pid_max=$(cat /proc/sys/kernel/pid_max)
expect_err "discovery: no such process" 1 "no such process: $pid_max" -- status "$pid_max"
expect_json_err "discovery: no such process, as JSON" 1 "no such process: $pid_max" status "$pid_max" -j
expect_err "discovery: not a KVM process" 1 "process $plain_pid (sleep) is not a KVM process: it holds no KVM VM fd (anon_inode:kvm-vm)" -- status "$plain_pid"
expect_err "discovery: enable on a non-KVM process" 1 "is not a KVM process" -- enable "$plain_pid" -F 100
expect_err "discovery: PID:FD not a VM" 1 "fd 0 of process $plain_pid (sleep) is not a KVM VM: it is /dev/null" -- status "$plain_pid:0"
expect_err "discovery: PID:FD not open" 1 "process $plain_pid (sleep) has no fd 999" -- status "$plain_pid:999"
mkfifo "$tmp/thread.in" "$tmp/thread.out"
"$python" -c 'import sys, threading
t = threading.Thread(target=sys.stdin.read)
t.start()
print("started", flush=True)
t.join()' <"$tmp/thread.in" >"$tmp/thread.out" &
thread_owner=$!
exec {thread_in}>"$tmp/thread.in"
holder_stdin+=("$thread_in")
read -r -t 30 started <"$tmp/thread.out"
thread_tid=
for task in "/proc/$thread_owner/task/"*; do
	[ "${task##*/}" = "$thread_owner" ] || thread_tid=${task##*/}
done
if [ "${started:-}" = started ] && [ -n "$thread_tid" ]; then
	expect_err "discovery: a thread id" 1 "$thread_tid is a thread of process $thread_owner, not a process: name the VM by $thread_owner" -- status "$thread_tid"
else
	fail "discovery: a thread id" "could not start a two-thread process"
fi
if [ -d /run/libvirt/qemu ]; then
	expect_err "discovery: unknown libvirt domain" 1 "no running libvirt domain 'pvprof-no-such-domain'" -- status pvprof-no-such-domain
else
	expect_err "discovery: libvirt absent" 1 "'pvprof-no-such-domain' is not a process id, and libvirt is not running on this host (no /run/libvirt/qemu)" -- status pvprof-no-such-domain
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	expect_err "permission: /proc/PID/fd of another user's VMM" 1 "cannot list the file descriptors of process $plain_pid (sleep): Permission denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups -- status "$plain_pid"
	expect_in_err "permission: /proc/PID/fd hint says what to do" "Hint: reading /proc/$plain_pid/fd needs ptrace read access to the VMM: run kvm-pvprof as root"
else
	skip "permission: /proc/PID/fd of another user's VMM" "needs root and setpriv to act as nobody"
fi

echo "== a real KVM process (stock KVM)"
if [ ! -c /dev/kvm ]; then
	skip "kvm: every KVM-process case" "no /dev/kvm on this machine (run 'make -C host-kvm/tool check-stock' to run them in L1)"
elif ! start_holder -- 1; then
	fail "kvm: one VM" "kvm-vm-holder did not start: $holder_error"
else
	one=$holder_pid
	for c in "status VM" "enable VM" "enable VM -F 500 -e cpu-clock" "disable VM" "expose VM hidden"; do
		# shellcheck disable=SC2086 # c holds words
		expect_err "kvm: $c on stock KVM" 1 "$no_pvprof" -- ${c/VM/$one}
	done
	expect_json_err "kvm: status -j on stock KVM" 1 "$no_pvprof" status "$one" -j
	if start_holder -- 2; then
		two=$holder_pid
		expect_err "kvm: several VMs in one process" 1 "process $two (kvm-vm-holder) holds 2 KVM VMs, at fds ${holder_fds[0]}, ${holder_fds[1]}" -- status "$two"
		expect_in_err "kvm: several VMs hint names PID:FD" "Hint: name one VM as PID:FD, for example $two:${holder_fds[0]}"
		expect_err "kvm: PID:FD picks one of several VMs" 1 "$no_pvprof" -- status "$two:${holder_fds[1]}"
		expect_err "kvm: PID:FD of a non-VM fd in a KVM process" 1 "fd 2 of process $two (kvm-vm-holder) is not a KVM VM" -- status "$two:2"
	else
		fail "kvm: two VMs" "kvm-vm-holder did not start: $holder_error"
	fi
	# A real VMM: -daemonize returns once the VM exists, -S never runs it.
	# qemu64, not host: on some of these machines the outer KVM refuses
	# the ARCH_CAPABILITIES value that -cpu host and -cpu max set (QEMU
	# aborts, "failed to set MSR 0x10a to 0x69"); the case needs a VM,
	# not a CPU model.
	if qemu-system-x86_64 -accel kvm -M microvm,x-option-roms=off -cpu qemu64 -m 64 \
		-S -nodefaults -display none -daemonize -pidfile "$tmp/qemu.pid" \
		</dev/null >"$tmp/qemu.log" 2>&1; then
		qemu=$(<"$tmp/qemu.pid")
		helper_pids+=("$qemu")
		expect_err "kvm: a QEMU process on stock KVM" 1 "$no_pvprof" -- status "$qemu"
	else
		fail "kvm: a QEMU process on stock KVM" "QEMU did not start: $(head -c 300 "$tmp/qemu.log")"
	fi
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		expect_err "kvm: root without CAP_SYS_ADMIN/CAP_PERFMON on stock KVM" 1 "$no_pvprof" \
			setpriv --bounding-set=-sys_admin,-perfmon -- status "$one"
	else
		skip "kvm: root without CAP_SYS_ADMIN/CAP_PERFMON" "needs root and setpriv"
	fi
fi

echo "== permission: pidfd_getfd refused"
if [ "${PVPROF_TOOL_TEST_SYSCTL:-0}" != 1 ]; then
	skip "permission: pidfd_getfd refused" "changes kernel.yama.ptrace_scope; runs in L1 ('make -C host-kvm/tool check-stock')"
elif [ ! -w "$yama" ] || [ ! -c /dev/kvm ]; then
	fail "permission: pidfd_getfd refused" "needs a writable $yama and /dev/kvm"
elif ! start_holder -- --uid 65534 1; then
	fail "permission: pidfd_getfd refused" "kvm-vm-holder did not start: $holder_error"
else
	nobody_vm=$holder_pid
	as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	echo 0 >"$yama"
	expect_err "permission: same user, ptrace_scope 0, /dev/kvm closed to nobody" 1 "cannot open /dev/kvm: Permission denied" \
		"${as_nobody[@]}" -- status "$nobody_vm"
	echo 1 >"$yama"
	expect_err "permission: same user, ptrace_scope 1 (not a descendant)" 1 "cannot take fd ${holder_fds[0]} from process $nobody_vm (kvm-vm-holder): Operation not permitted" \
		"${as_nobody[@]}" -- status "$nobody_vm"
	expect_in_err "permission: ptrace_scope 1 hint says what to do" "(CAP_SYS_PTRACE over it; Yama's $yama is 1): run kvm-pvprof as root"
	echo 3 >"$yama"
	expect_err "permission: root refused by Yama ptrace_scope 3" 1 "cannot take fd ${holder_fds[0]} from process $nobody_vm (kvm-vm-holder): Operation not permitted" \
		-- status "$nobody_vm"
	expect_in_err "permission: ptrace_scope 3 hint says why" "Yama forbids every ptrace attach, even for root ($yama is 3, and stays 3 until reboot)"
fi

finish "$suite"
