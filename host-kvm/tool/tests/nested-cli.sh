#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof against the pvprof KVM: enable, status, disable and expose round
# trips on real VMs, checked through status -j and the text output, and the
# errors only a pvprof host can give (not enabled, no PMU, missing
# capability). Runs inside L1 with the pvprof modules loaded:
#
#   make -C host-kvm/tool check-nested
#   (tests/nested/run-l1 --kvm pvprof -- host-kvm/tool/tests/nested-cli.sh)
#
# The VMs are kvm-vm-holder's (VM fds with vCPUs that never run) and a QEMU
# started with -S (a real VMM whose vCPUs are created but stopped). A booted
# Linux guest that registers buffers is nested-cli-l2.sh's, in the same boot.
#
# On a host whose KVM lacks the pvprof ioctls it fails at once, saying so.
# Writes "<passed> <failed>" to $PVPROF_RESULTS_DIR/tool-nested (else
# $O/results/tool-nested).
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

suite=tool-nested
expose_param=/sys/module/kvm/parameters/pvprof_expose
loss_names='["notice_ring_full", "throttled", "unregistered", "protected",
"nested", "smm", "stale", "invalid", "buffer_gone", "unanswered",
"stream_overflow", "slot_busy"]'

# expect_status NAME VM PYTHON-CONDITION: status VM -j succeeds and the
# condition holds for the parsed document d.
expect_status() {
	local name=$1 vm=$2 cond=$3 why
	run -- status "$vm" -j
	if [ "$rc" != 0 ]; then
		fail "$name" "status -j exit status $rc: ${err:0:300}${out:0:300}"
	elif ! why=$("$python" -c '
import json, sys
d = json.loads(sys.stdin.read())
loss_names = json.loads(sys.argv[2])
if not eval(sys.argv[1]):
    sys.exit("does not hold: " + sys.argv[1] + "\n  status: " + json.dumps(d)[:600])
' "$cond" "$loss_names" <<<"$out" 2>&1); then
		fail "$name" "$why"
	else
		pass "$name"
	fi
}

echo "== preflight"
require_dev_kvm
if ! start_holder -- 1 2; then
	fail "preflight: kvm-vm-holder" "did not start: $holder_error"
	finish "$suite"
	exit
fi
vm=$holder_pid
run -- status "$vm"
if grep -qF "$no_pvprof" <<<"$err"; then
	fail "preflight: pvprof ioctls" "this L1's KVM answers the pvprof system ioctls with EINVAL: the control plane (PVPROF_CTL_*) is missing from the modules in \$O/host-kvm"
	finish "$suite"
	exit
fi
pass "preflight: pvprof ioctls present"

echo "== a VM never enabled"
expect_status "status: never enabled" "$vm" \
	'd["enabled"] is False and d["hidden"] is False and d["sample_freq"] == 0 and d["sample_period"] == 0'
expect_status "status: vCPUs listed in creation order" "$vm" \
	'd["nr_vcpus"] == 2 and [v["vcpu_id"] for v in d["vcpus"]] == [0, 1]'
expect_status "status: no registration, no counters" "$vm" \
	'd["registered_vcpus"] == 0 and all(not v["registered"] and v["gpa"] == 0 and v["size"] == 0 and v["samples"] == v["notices"] == v["records"] == v["nmis"] == 0 for v in d["vcpus"])'
expect_status "status: losses by every reason, all zero" "$vm" \
	'list(d["losses"]) == loss_names and not any(d["losses"].values()) and all(list(v["losses"]) == loss_names for v in d["vcpus"]) and d["totals"]["lost"] == 0'
expect_text "status text: never enabled" "$vm" -F \
	"VM $vm:${holder_fds[0]} (kvm-vm-holder)" \
	"pvprof:    disabled, visible to the guest" \
	"sampling:  not configured (never enabled)" \
	"vCPUs:     2, 0 registered" \
	"losses by reason (VM totals):" "notice_ring_full" "slot_busy" \
	"totals: samples 0, notices 0, callchains 0, nmis 0, lost 0"
expect_err "disable: not enabled" 1 "disable VM $vm:${holder_fds[0]} (kvm-vm-holder): pvprof is not enabled for it" -- disable "$vm"

echo "== enable, reconfigure, disable"
expect_ok "enable: defaults" -- enable "$vm"
expect_no_stdout "enable: prints nothing"
expect_status "status: enabled at the default 1000 Hz on cpu-clock" "$vm" \
	'd["enabled"] is True and d["event"] == "cpu-clock" and d["sample_freq"] == 1000'
expect_text "status text: enabled" "$vm" -F "pvprof:    enabled, visible to the guest" \
	"sampling:  cpu-clock at 1000 Hz per vCPU"
expect_ok "enable: reconfigure to -F 500" -- enable "$vm" -F 500
expect_status "status: reconfigured to 500 Hz" "$vm" 'd["enabled"] and d["sample_freq"] == 500'
expect_ok "enable: reconfigure to -c 200000 ns" -- enable "$vm" -c 200000 --max-depth 64 --vm-rate 5000
expect_status "status: period 200000 ns" "$vm" \
	'd["enabled"] and d["event"] == "cpu-clock" and d["sample_freq"] == 0 and d["sample_period"] == 200000'
expect_text "status text: period" "$vm" -F "sampling:  cpu-clock every 200000 ns"
run -- enable "$vm" -F 10000 -j
if [ "$rc" = 0 ] && [ "$out" = null ]; then
	pass "enable -j: prints null"
else
	fail "enable -j: prints null" "exit $rc, stdout '${out:0:100}', stderr ${err:0:200}"
fi
if [ -e /sys/bus/event_source/devices/cpu ]; then
	expect_ok "enable: cycles with a host PMU" -- enable "$vm" -e cycles -c 1000000
else
	expect_err "enable: cycles without a host PMU" 1 "the host cannot count cycles (no PMU)" -- enable "$vm" -e cycles -c 1000000
	expect_in_err "enable: no-PMU hint" "Hint: sample on cpu-clock (-e cpu-clock), which needs no PMU"
	expect_status "status: a refused enable keeps the configuration" "$vm" \
		'd["enabled"] and d["event"] == "cpu-clock" and d["sample_freq"] == 10000'
fi
expect_ok "disable" -- disable "$vm"
expect_status "status: disabled, counters kept" "$vm" 'd["enabled"] is False and d["nr_vcpus"] == 2'
expect_err "disable: twice" 1 "pvprof is not enabled for it" -- disable "$vm"
expect_ok "enable: again after disable" -- enable "$vm" -F 250
expect_status "status: enabled again" "$vm" 'd["enabled"] and d["sample_freq"] == 250'

echo "== exposure"
expect_ok "expose: hidden" -- expose "$vm" hidden
expect_status "status: hidden" "$vm" 'd["hidden"] is True'
expect_text "status text: hidden" "$vm" -F "hidden from the guest"
expect_ok "expose: visible" -- expose "$vm" visible
expect_status "status: visible" "$vm" 'd["hidden"] is False'
if [ ! -w "$expose_param" ]; then
	fail "expose: default follows pvprof_expose" "$expose_param is missing or read-only"
else
	saved=$(cat "$expose_param")
	expect_ok "expose: default" -- expose "$vm" default
	echo 0 >"$expose_param"
	expect_status "expose: default follows pvprof_expose=0" "$vm" 'd["hidden"] is True'
	echo 1 >"$expose_param"
	expect_status "expose: default follows pvprof_expose=1" "$vm" 'd["hidden"] is False'
	echo 0 >"$expose_param"
	expect_ok "expose: visible overrides pvprof_expose=0" -- expose "$vm" visible
	expect_status "status: visible despite pvprof_expose=0" "$vm" 'd["hidden"] is False'
	echo "$saved" >"$expose_param"
fi
expect_ok "disable: before the capability cases" -- disable "$vm"

echo "== several VMs in one process"
if start_holder -- 2 1; then
	two=$holder_pid
	expect_err "several VMs: PID alone is ambiguous" 1 "process $two (kvm-vm-holder) holds 2 KVM VMs" -- status "$two"
	expect_ok "several VMs: enable PID:FD of the second" -- enable "$two:${holder_fds[1]}"
	expect_status "several VMs: the second is enabled" "$two:${holder_fds[1]}" 'd["enabled"] and d["vm"]["fd"] == '"${holder_fds[1]}"
	expect_status "several VMs: the first is not" "$two:${holder_fds[0]}" 'd["enabled"] is False and d["nr_vcpus"] == 1'
else
	fail "several VMs" "kvm-vm-holder did not start: $holder_error"
fi

echo "== capabilities"
expect_err "capability: root without CAP_SYS_ADMIN and CAP_PERFMON" 1 "status VM $vm:${holder_fds[0]} (kvm-vm-holder): Operation not permitted" \
	setpriv --bounding-set=-sys_admin,-perfmon -- status "$vm"
expect_in_err "capability: hint says what to do" "Hint: the pvprof ioctls need CAP_SYS_ADMIN or CAP_PERFMON: run as root"
expect_ok "capability: CAP_PERFMON without CAP_SYS_ADMIN is enough" \
	setpriv --bounding-set=-sys_admin -- status "$vm"
expect_err "capability: enable refused without both" 1 "Operation not permitted" \
	setpriv --bounding-set=-sys_admin,-perfmon -- enable "$vm"
expect_status "capability: the refused enable changed nothing" "$vm" 'd["enabled"] is False'

echo "== QEMU as the VMM"
qemu_pidfile=$tmp/qemu.pid
# -daemonize returns once the machine (VM and vCPUs) is created; -S keeps
# the vCPUs stopped, so no guest code is needed.
if qemu-system-x86_64 -accel kvm -M microvm,x-option-roms=off -cpu host -smp 2 -m 64 \
	-S -nodefaults -display none -daemonize -pidfile "$qemu_pidfile" \
	</dev/null >"$tmp/qemu.log" 2>&1; then
	qemu=$(cat "$qemu_pidfile")
	helper_pids+=("$qemu")
	expect_status "qemu: status names the process and its two vCPUs" "$qemu" \
		'd["vm"]["comm"].startswith("qemu-system") and d["nr_vcpus"] == 2 and d["enabled"] is False'
	expect_ok "qemu: enable -F 100" -- enable "$qemu" -F 100
	expect_status "qemu: enabled" "$qemu" 'd["enabled"] and d["sample_freq"] == 100'
	expect_ok "qemu: disable" -- disable "$qemu"
	expect_status "qemu: disabled" "$qemu" 'd["enabled"] is False'
else
	fail "qemu: start with -S" "$(head -c 300 "$tmp/qemu.log")"
fi


echo "== an unprivileged user holding its own VM"
# The holder runs as nobody; Yama at 0 and /dev/kvm open to all, so that
# nothing but the pvprof ioctls' own capability check stands in the way.
if ! start_holder -- --uid 65534 1; then
	fail "unprivileged" "kvm-vm-holder did not start as nobody: $holder_error"
elif [ ! -w "$yama" ]; then
	fail "unprivileged" "needs a writable $yama"
else
	nobody_vm=$holder_pid
	as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	with_perfmon=("${as_nobody[@]}" --inh-caps=+perfmon --ambient-caps=+perfmon)
	saved_scope=$(cat "$yama")
	saved_mode=$(stat -c %a /dev/kvm)
	echo 0 >"$yama"
	chmod 0666 /dev/kvm
	expect_err "unprivileged: status refused without CAP_SYS_ADMIN/CAP_PERFMON" 1 \
		"status VM $nobody_vm:${holder_fds[0]} (kvm-vm-holder): Operation not permitted" \
		"${as_nobody[@]}" -- status "$nobody_vm"
	expect_in_err "unprivileged: hint says what to do" "Hint: the pvprof ioctls need CAP_SYS_ADMIN or CAP_PERFMON: run as root"
	expect_err "unprivileged: enable refused" 1 "enable VM $nobody_vm:${holder_fds[0]} (kvm-vm-holder): Operation not permitted" \
		"${as_nobody[@]}" -- enable "$nobody_vm"
	expect_status "unprivileged: the refused enable changed nothing" "$nobody_vm" 'd["enabled"] is False'
	expect_ok "unprivileged with CAP_PERFMON only: status" "${with_perfmon[@]}" -- status "$nobody_vm"
	expect_ok "unprivileged with CAP_PERFMON only: enable" "${with_perfmon[@]}" -- enable "$nobody_vm" -F 100
	expect_status "unprivileged with CAP_PERFMON only: the VM is enabled" "$nobody_vm" 'd["enabled"] and d["sample_freq"] == 100'
	expect_ok "unprivileged with CAP_PERFMON only: disable" "${with_perfmon[@]}" -- disable "$nobody_vm"
	chmod "$saved_mode" /dev/kvm
	echo "$saved_scope" >"$yama"
fi

echo "== host-reload refuses while VMs run"
run_reload=$(cd "$repo" && host-kvm/scripts/host-install.sh reload 2>&1)
rc=$?
if [ "$rc" = 1 ] && grep -qF "refusing to reload KVM while VMs run" <<<"$run_reload" &&
   grep -qF "$vm (kvm-vm-holder)" <<<"$run_reload"; then
	pass "host-reload: refused, naming the processes that hold VMs"
else
	fail "host-reload: refused, naming the processes that hold VMs" "status $rc: ${run_reload:0:300}"
fi
if [ -d /sys/module/kvm ] && [ -e /sys/module/kvm/parameters/pvprof_expose ]; then
	pass "host-reload: the pvprof KVM is still loaded"
else
	fail "host-reload: the pvprof KVM is still loaded" "/sys/module/kvm changed"
fi

# Last: Yama's scope 3 cannot be lowered again until L1 reboots.
echo "== Yama ptrace_scope 3 refuses pidfd_getfd even to root"
if [ -z "${qemu:-}" ] || [ ! -w "$yama" ]; then
	fail "yama 3" "needs the QEMU above and a writable $yama"
else
	echo 3 >"$yama"
	expect_err "yama 3: root cannot take QEMU's VM fd" 1 "from process $qemu (qemu-system-x86): Operation not permitted" -- status "$qemu"
	expect_in_err "yama 3: the hint says why" "Yama forbids every ptrace attach, even for root ($yama is 3, and stays 3 until reboot)"
	expect_in_err "yama 3: the hint says what to do" "set kernel.yama.ptrace_scope = 1 in /etc/sysctl.d/ and reboot"
	expect_err "yama 3: enable refused the same way" 1 "cannot take fd" -- enable "$qemu"
fi

finish "$suite"
