#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The load-time check of host-kvm/pvprof/main.c, inside L1 booted with
# --kvm none: a kvm.ko built from another linux-source version than the
# running kernel's must refuse to load and say why in dmesg; the right one
# must load. Made and run by 'make -C host-kvm check-version-guard'.
#
# usage: nested-version-guard.sh IRQBYPASS_KO WRONG_KVM_KO WRONG_VERSION GOOD_KVM_KO
set -u

irqbypass=$1 wrong=$2 wrong_version=$3 good=$4
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

running=$(uname -v)
if insmod "$irqbypass"; then
	pass "irqbypass loads"
else
	fail "irqbypass loads" "insmod $irqbypass failed"
fi
if insmod "$wrong" 2>/dev/null; then
	fail "kvm.ko from linux-source $wrong_version refused" "it loaded into '$running'"
	rmmod kvm
else
	pass "kvm.ko from linux-source $wrong_version refused"
fi
line=$(dmesg | grep -F "kvm-pvprof: built from linux-source $wrong_version, but the running kernel is \"$running\": refusing to load")
if [ -n "$line" ] && grep -qF "rebuild the pvprof KVM modules for this kernel" <<<"$line"; then
	pass "dmesg says why and what to do"
else
	fail "dmesg says why and what to do" "no such line; kvm-pvprof lines: $(dmesg | grep kvm-pvprof | tail -n 3 | tr '\n' ' ')"
fi
[ -d /sys/module/kvm ] && fail "no kvm module left" "/sys/module/kvm exists" || pass "no kvm module left"
if insmod "$good" && dmesg | grep -q 'kvm-pvprof: host ABI v'; then
	pass "kvm.ko built from the running kernel's source loads"
else
	fail "kvm.ko built from the running kernel's source loads" "$(dmesg | tail -n 3 | tr '\n' ' ')"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
