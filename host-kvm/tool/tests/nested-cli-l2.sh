#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof enable, status and disable against a booted Linux L2: QEMU with
# 2 vCPUs running the distro kernel with pvprof_guest.ko loaded
# (nested-cli-l2-guest.sh), so both vCPUs register their buffers; its CPUs
# are kept busy in user space while sampling is checked. Runs inside L1 with the pvprof modules loaded, in
# the same boot as nested-cli.sh and before it (that one ends with Yama
# scope 3, after which no VM fd can be taken):
#
#   make -C host-kvm/tool check-nested
#   (tests/nested/run-l1 --kvm pvprof -- host-kvm/tool/tests/nested-cli-l2.sh INITRD)
#
# INITRD is the L2 initramfs the Makefile builds outside L1 (default
# $O/nested/tool-l2.cpio). Checks: both vCPUs registered before enable;
# enable; notices and callchains increase on each vCPU between two status
# reads; status text and status -j (read with jq: per-vCPU registration,
# losses by every reason, totals that add up); enabling again reconfigures;
# the errors an operator meets with a real QEMU (disable when not enabled,
# an unprivileged user, root without the capabilities, a vCPU thread or fd
# named instead of the VM, a usage error), each with its message and exit
# status; disable stops sampling and keeps registrations and counters; the
# guest ends cleanly, and afterwards the VM's process is gone. An L2 that
# hangs before its init is booted once more (l2_boot), and the boot's PASS
# line says so.
# Writes "<passed> <failed>" to $PVPROF_RESULTS_DIR/tool-l2 (else
# $O/results/tool-l2).
# shellcheck disable=SC2016 # jq programs, with jq's $variables, in single quotes
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck disable=SC2034 # common.sh's die() names it
PROG=tool-l2
# shellcheck source=../../../tests/nested/common.sh
source "$repo/tests/nested/common.sh"
# shellcheck source=../../../demo/l2lib.sh
source "$repo/demo/l2lib.sh"

suite=tool-l2
initrd=${1:-$O/nested/tool-l2.cpio}
l2dir=${PVPROF_RESULTS_DIR:-$tmp}/cli-l2
buf_size=65536		# pvprof_guest.ko's default buf_size on a host with user stack snapshots
loss_names='["notice_ring_full","throttled","unregistered","protected","nested","smm",
"stale","invalid","buffer_gone","unanswered","stream_overflow","slot_busy"]'
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# status_doc VM: status -j of VM in $doc; fails (with $err) when it does.
status_doc() {
	run -- status "$1" -j
	doc=$out
	[ "$rc" = 0 ]
}

# jq_holds EXPR [JQ-ARGS...]: EXPR is true of $doc ($names: the loss names).
jq_holds() {
	local expr=$1
	shift
	jq -e --argjson names "$loss_names" "$@" "$expr" <<<"$doc" >/dev/null 2>&1
}

# expect_jq NAME VM EXPR [JQ-ARGS...]: status VM -j succeeds and jq EXPR holds.
expect_jq() {
	local name=$1 vm=$2 expr=$3
	shift 3
	if ! status_doc "$vm"; then
		fail "$name" "status -j exit status $rc: ${err:0:300}"
	elif jq_holds "$expr" "$@"; then
		pass "$name"
	else
		fail "$name" "does not hold: $expr; status: ${doc:0:700}"
	fi
}

# wait_jq VM SECONDS EXPR [JQ-ARGS...]: polls status VM -j every 0.2 s until
# jq EXPR holds (true) or SECONDS pass (false); $doc is the last status.
wait_jq() {
	local vm=$1 deadline=$((SECONDS + $2)) expr=$3
	shift 3
	while :; do
		status_doc "$vm" && jq_holds "$expr" "$@" && return 0
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}

# l2_do busy|idle: tells the guest to keep its CPUs busy or let them idle,
# and waits for its answer.
l2_cmds=0
l2_do() {
	l2_cmds=$((l2_cmds + 1))
	l2_send "$l2dir" "$1"
	l2_wait_line "$l2dir" "^CLI-L2-${1^^} $l2_cmds\$" 60 ||
		fail "l2: $1" "the guest did not answer '$1' (console: $(tail -n 3 "$l2dir/console.log" | tr '\n' '|'))"
}

echo "== a Linux L2 with pvprof_guest.ko"
require_dev_kvm
if [ ! -f "$initrd" ] || [ ! -f "$NESTED_OUT/vmlinux-$(uname -r)" ]; then
	fail "preflight: L2 files" "needs $initrd (made by make -C host-kvm/tool check-nested) and run-l1's vmlinux in $NESTED_OUT"
	finish "$suite"
	exit
fi
boot_start=$SECONDS
l2_boot "$l2dir" "$initrd" 2 256
booted=$?
helper_pids+=("$L2_QEMU_PID")
if [ "$booted" = 0 ] && l2_wait_line "$l2dir" '^CLI-L2-(READY|ERROR)' 300 &&
   ready=$(grep -m 1 '^CLI-L2-READY ' "$l2dir/console.log") &&
   [ "$ready" = "CLI-L2-READY 2 sampling" ] && [ -s "$l2dir/qemu.pid" ]; then
	boots=
	[ "$L2_BOOTS" = 1 ] || boots=", boot $L2_BOOTS: the first hung before init"
	pass "l2: the guest booted with the driver sampling and 2 CPUs ($((SECONDS - boot_start)) s$boots)"
else
	fail "l2: the guest booted with the driver sampling and 2 CPUs" \
		"console: $(grep -E '^(CLI-L2|L2-)' "$l2dir/console.log" | tr '\n' '|'); qemu: $(head -c 300 "$l2dir/qemu.log")"
	kill "$L2_QEMU_PID" 2>/dev/null
	finish "$suite"
	exit
fi
vm=$(cat "$l2dir/qemu.pid")
comm=$(cat "/proc/$vm/comm")
# What the tool must find by itself: the VM fd, a vCPU fd and vCPU 0's thread.
vm_fd='' vcpu_fd='' vcpu_tid=''
for f in /proc/"$vm"/fd/*; do
	case "$(readlink "$f")" in
	anon_inode:kvm-vm) vm_fd=${f##*/} ;;
	anon_inode:kvm-vcpu:0) vcpu_fd=${f##*/} ;;
	esac
done
for t in /proc/"$vm"/task/*; do
	[ "$(cat "$t/comm")" = "CPU 0/KVM" ] && vcpu_tid=${t##*/}
done
label="$vm:$vm_fd ($comm)"
echo "L2 QEMU: pid $vm, VM fd $vm_fd, vCPU 0 fd $vcpu_fd, thread $vcpu_tid"

echo "== before enable"
# The driver registers each CPU as it comes up; sampling is off.
if wait_jq "$vm" 30 '.registered_vcpus == 2'; then
	pass "status: both vCPUs registered before enable"
else
	fail "status: both vCPUs registered before enable" "${err:0:200} ${doc:0:500}"
fi
expect_jq "status -j: registrations of a $buf_size-byte buffer per vCPU, sampling off" "$vm" \
	'.vm.pid == $pid and .vm.fd == $fd and .vm.comm == $comm and .enabled == false and
	 .hidden == false and .nr_vcpus == 2 and ([.vcpus[].vcpu_id] == [0, 1]) and
	 all(.vcpus[]; .registered and .gpa > 0 and .size == $size and .samples == 0)' \
	--arg comm "$comm" --argjson pid "$vm" --argjson fd "$vm_fd" --argjson size "$buf_size"
expect_err "disable: not enabled yet" 1 "disable VM $label: pvprof is not enabled for it" -- disable "$vm"

echo "== enable"
expect_ok "enable PID" -- enable "$vm"
expect_no_stdout "enable: prints nothing"
expect_jq "status -j: enabled, cpu-clock at 1000 Hz, 2 of 2 registered" "$vm" \
	'.enabled and .event == "cpu-clock" and .sample_freq == 1000 and .nr_vcpus == 2 and
	 .registered_vcpus == 2'
# Counters move: between two status reads, every vCPU was sampled, got
# notices and answered with callchains (status -j's key: records).
l2_do busy
if status_doc "$vm"; then
	first=$doc
	if wait_jq "$vm" 60 '[.vcpus[] | .notices] as $n | [$a.vcpus[] | .notices] as $m |
			($n | length) == 2 and ([range(2) | $n[.] > $m[.]] | all)' --argjson a "$first"; then
		pass "status: notices increase on each vCPU between two reads"
	else
		fail "status: notices increase on each vCPU between two reads" \
			"first: $(jq -c '[.vcpus[] | {samples, notices, records}]' <<<"$first"), last: $(jq -c '[.vcpus[] | {samples, notices, records}]' <<<"$doc" 2>/dev/null)"
	fi
	if wait_jq "$vm" 60 '[.vcpus[] | .records] as $n | [$a.vcpus[] | .records] as $m |
			([range(2) | $n[.] > $m[.]] | all) and .losses.invalid == 0' --argjson a "$first"; then
		pass "status: callchains accepted from each vCPU, none invalid"
	else
		fail "status: callchains accepted from each vCPU, none invalid" \
			"first: $(jq -c '[.vcpus[] | {notices, records}]' <<<"$first"), last: $(jq -c '[.vcpus[] | {notices, records}], .losses' <<<"$doc" 2>/dev/null)"
	fi
else
	fail "status: counters move" "status -j exit status $rc: ${err:0:300}"
fi
expect_jq "status -j: losses by every reason, per VM and per vCPU" "$vm" \
	'(.losses | keys_unsorted) == $names and all(.losses[]; type == "number" and . >= 0) and
	 all(.vcpus[]; (.losses | keys_unsorted) == $names)'
expect_jq "status -j: totals add up" "$vm" \
	'.totals.lost == (.losses | add) and .totals.samples == ([.vcpus[].samples] | add) and
	 .totals.notices == ([.vcpus[].notices] | add) and .totals.records == ([.vcpus[].records] | add) and
	 .totals.nmis == ([.vcpus[].nmis] | add) and .totals.records > 0'
expect_text "status text: enabled, both vCPUs registered, losses by reason" "$vm" -E \
	"^VM $vm:$vm_fd \\($comm\\)\$" \
	'^  pvprof:    enabled, visible to the guest$' \
	'^  sampling:  cpu-clock at 1000 Hz per vCPU$' \
	'^  vCPUs:     2, 2 registered$' \
	"^ +0 +0x[0-9a-f]+/$buf_size +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]* " \
	"^ +1 +0x[0-9a-f]+/$buf_size +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]* " \
	'^  losses by reason \(VM totals\):$' '^    notice_ring_full +[0-9]+$' '^    slot_busy +[0-9]+$' \
	'^  totals: samples [1-9][0-9]*, notices [1-9][0-9]*, callchains [1-9][0-9]*, nmis [0-9]+, lost [0-9]+$'
# The guest's loops would only slow L1's commands down from here.
l2_do idle

echo "== enable again"
# Documented: enable on an enabled VM changes its configuration.
expect_ok "enable twice: reconfigures (-F 500)" -- enable "$vm" -F 500
expect_jq "status: 500 Hz, still enabled, registrations kept" "$vm" \
	'.enabled and .sample_freq == 500 and .registered_vcpus == 2'
expect_err "enable: -F out of range is a usage error" 2 "-F: expected a number from 1 to 10000, got: '20000'" \
	-- enable "$vm" -F 20000
expect_jq "status: the usage error changed nothing" "$vm" '.enabled and .sample_freq == 500'

echo "== errors an operator meets with this VM"
expect_err "vCPU thread named instead of the process" 1 \
	"$vcpu_tid is a thread of process $vm, not a process: name the VM by $vm" -- status "$vcpu_tid"
expect_err "PID:FD naming a vCPU fd" 1 \
	"fd $vcpu_fd of process $vm ($comm) is not a KVM VM: it is anon_inode:kvm-vcpu:0" -- status "$vm:$vcpu_fd"
expect_jq "PID:FD naming the VM fd" "$vm:$vm_fd" '.vm.fd == $fd and .enabled' --argjson fd "$vm_fd"
# QEMU runs as root: another user may not even list its fds.
expect_err "unprivileged: status refused" 1 \
	"cannot list the file descriptors of process $vm ($comm): Permission denied" \
	"${as_nobody[@]}" -- status "$vm"
expect_in_err "unprivileged: the hint says what to do" \
	"Hint: reading /proc/$vm/fd needs ptrace read access to the VMM: run kvm-pvprof as root"
expect_err "unprivileged: disable refused" 1 \
	"cannot list the file descriptors of process $vm ($comm): Permission denied" \
	"${as_nobody[@]}" -- disable "$vm"
expect_err "unprivileged with CAP_PERFMON: still refused (ptrace access to the VMM is needed too)" 1 \
	"cannot list the file descriptors of process $vm ($comm): Permission denied" \
	"${as_nobody[@]}" --inh-caps=+perfmon --ambient-caps=+perfmon -- enable "$vm"
run "${as_nobody[@]}" -- status "$vm" -j
if [ "$rc" = 1 ] && [ -z "$err" ] &&
   jq -e --arg e "cannot list the file descriptors of process $vm ($comm): Permission denied" \
	--arg h "reading /proc/$vm/fd needs ptrace read access to the VMM: run kvm-pvprof as root" \
	'.error == $e and .hint == $h' <<<"$out" >/dev/null 2>&1; then
	pass "unprivileged: status -j prints the error and hint as JSON"
else
	fail "unprivileged: status -j prints the error and hint as JSON" "exit $rc, stdout ${out:0:300}, stderr ${err:0:200}"
fi
expect_err "root without CAP_SYS_ADMIN and CAP_PERFMON: disable refused" 1 \
	"disable VM $label: Operation not permitted" \
	setpriv --bounding-set=-sys_admin,-perfmon -- disable "$vm"
expect_in_err "root without the capabilities: the hint says what to do" \
	"Hint: the pvprof ioctls need CAP_SYS_ADMIN or CAP_PERFMON: run as root"
expect_jq "status: the refused calls changed nothing" "$vm" '.enabled and .sample_freq == 500 and .registered_vcpus == 2'

echo "== disable"
# While sampling runs: samples must be seen moving right before.
l2_do busy
if status_doc "$vm" && wait_jq "$vm" 60 '.totals.samples > $a.totals.samples' --argjson a "$doc"; then
	pass "status: samples increase while the guest is busy"
else
	fail "status: samples increase while the guest is busy" "${err:0:200} ${doc:0:300}"
fi
expect_ok "disable PID" -- disable "$vm"
if [ -z "$out" ]; then
	pass "disable: prints nothing"
else
	fail "disable: prints nothing" "stdout: ${out:0:200}"
fi
if status_doc "$vm"; then
	off=$doc
	expect_jq "status -j: disabled; registrations and counters kept" "$vm" \
		'.enabled == false and .registered_vcpus == 2 and .totals.notices > $a.totals.notices and
		 .totals.records > $a.totals.records' --argjson a "$first"
	# Both vCPUs keep running guest code: 2 s of it would be up to 2000
	# samples at the 500 Hz just turned off (fewer, as they share L1's one
	# CPU). Every read in between must show none added.
	end=$((SECONDS + 2))
	moved=
	while [ "$SECONDS" -lt "$end" ] && [ -z "$moved" ]; do
		status_doc "$vm" && ! jq_holds '.totals.samples == $a.totals.samples' --argjson a "$off" &&
			moved=$doc
		sleep 0.2
	done
	if [ -z "$moved" ] && status_doc "$vm" && jq_holds '.totals.samples == $a.totals.samples' --argjson a "$off"; then
		pass "status: no samples after disable ($(jq .totals.samples <<<"$off") before and 2 s later)"
	else
		fail "status: no samples after disable" "right after: $(jq -c .totals <<<"$off"), later: $(jq -c .totals <<<"${moved:-$doc}" 2>/dev/null)"
	fi
else
	fail "status after disable" "status -j exit status $rc: ${err:0:300}"
fi
l2_do idle
expect_text "status text: disabled" "$vm" -E '^  pvprof:    disabled, visible to the guest$' \
	'^  sampling:  cpu-clock at 500 Hz per vCPU$' '^  vCPUs:     2, 2 registered$'
expect_err "disable twice: not enabled" 1 "disable VM $label: pvprof is not enabled for it" -- disable "$vm"

echo "== the guest ends"
# Not in a subshell: l2_finish waits for the console reader to drain.
l2_send "$l2dir" stop
l2_finish "$l2dir" 120 >"$tmp/l2.status"
l2_status=$(<"$tmp/l2.status")
if [ "$l2_status" = 0 ]; then
	pass "l2: the guest stopped its loops and powered off (L2-EXIT 0)"
else
	fail "l2: the guest stopped its loops and powered off" "L2-EXIT '$l2_status'; console: $(tail -n 5 "$l2dir/console.log" | tr '\n' '|')"
fi
expect_err "status once QEMU has exited" 1 "no such process: $vm" -- status "$vm"
echo "$suite: $((SECONDS - boot_start)) s from the L2's launch"

finish "$suite"
