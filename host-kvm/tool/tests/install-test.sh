#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make -C host-kvm host-install / host-uninstall / dkms-source, staged with
# DESTDIR into a scratch root that holds a copy of the distro's KVM modules
# (this machine's own kernel is not the one the modules are for), and the
# Secure Boot signing recipe of host-kvm/README.md with a throwaway key.
# modprobe itself decides, from the scratch root, which kvm.ko it would load.
#
# Needs the built modules (make -C host-kvm; O as for the build). Writes
# "<passed> <failed>" to $O/results/host-install.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
O=${O:-$repo/out}
suite=host-install
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

kver=${KVER:-$(basename "$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)")}
kver=${kver#linux-headers-}
distro=/lib/modules/$kver
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mods=$root/lib/modules/$kver

finish() {
	echo "$passed passed, $failed failed"
	mkdir -p "$O/results"
	echo "$passed $failed" >"$O/results/$suite"
	[ "$failed" = 0 ]
	exit
}

# The modules modprobe would load for kvm_amd from the scratch root.
kvm_paths() {
	modprobe -d "$root" -S "$kver" --show-depends kvm_amd 2>&1 |
		sed -n -E 's#^insmod (.*/(kvm|kvm-amd)\.ko).*#\1#p' | sed "s|^$root||" | tr '\n' ' '
}

hmake() {
	out=$(make --no-print-directory -C "$repo/host-kvm" O="$O" KVER="$kver" "$@" 2>&1)
	rc=$?
}

if [ ! -d "$distro/kernel/arch/x86/kvm" ]; then
	fail "setup" "no distro KVM modules in $distro (linux-image-$kver)"
	finish
fi
for ko in kernel/arch/x86/kvm/kvm.ko kernel/arch/x86/kvm/kvm-amd.ko \
	  kernel/virt/lib/irqbypass.ko kernel/drivers/crypto/ccp/ccp.ko; do
	mkdir -p "$mods/${ko%/*}"
	cp "$distro/$ko" "$mods/$ko"
done
cp "$distro"/modules.builtin* "$distro/modules.order" "$mods/"
depmod -b "$root" "$kver"
want_distro="/lib/modules/$kver/kernel/arch/x86/kvm/kvm.ko /lib/modules/$kver/kernel/arch/x86/kvm/kvm-amd.ko "
if [ "$(kvm_paths)" = "$want_distro" ]; then
	pass "scratch root: modprobe picks the distro's KVM"
else
	fail "scratch root: modprobe picks the distro's KVM" "got: $(kvm_paths)"
fi

echo "== host-install"
hmake host-install DESTDIR="$root"
want_pvprof="/lib/modules/$kver/updates/pvprof/kvm.ko /lib/modules/$kver/updates/pvprof/kvm-amd.ko "
if [ "$rc" = 0 ]; then
	pass "host-install: exit status 0"
else
	fail "host-install: exit status 0" "status $rc: ${out:0:400}"
fi
if grep -qF "Installed kvm.ko kvm-amd.ko kvm-intel.ko into $mods/updates/pvprof" <<<"$out" &&
   grep -qF "and ran depmod: modprobe now prefers them over the distro's." <<<"$out"; then
	pass "host-install: says what it installed where"
else
	fail "host-install: says what it installed where" "${out:0:400}"
fi
if cmp -s "$O/host-kvm/kvm.ko" "$mods/updates/pvprof/kvm.ko" &&
   cmp -s "$O/host-kvm/kvm-amd.ko" "$mods/updates/pvprof/kvm-amd.ko"; then
	pass "host-install: the built modules are in updates/pvprof"
else
	fail "host-install: the built modules are in updates/pvprof" "$(ls -l "$mods/updates/pvprof" 2>&1)"
fi
if [ "$(kvm_paths)" = "$want_pvprof" ]; then
	pass "host-install: modprobe now picks the pvprof modules"
else
	fail "host-install: modprobe now picks the pvprof modules" "got: $(kvm_paths)"
fi
if [ "$(modinfo -F vermagic "$mods/updates/pvprof/kvm.ko")" = "$(modinfo -F vermagic "$mods/kernel/arch/x86/kvm/kvm.ko")" ]; then
	pass "host-install: same vermagic as the distro's kvm.ko"
else
	fail "host-install: same vermagic as the distro's kvm.ko" "$(modinfo -F vermagic "$mods/updates/pvprof/kvm.ko")"
fi
out=$("$repo/host-kvm/scripts/host-install.sh" install --destdir "$root" --kver "$kver" \
	--moddir ../x --modules "$O/host-kvm/kvm.ko" 2>&1)
rc=$?
if [ "$rc" != 0 ] && grep -qF "must be one directory name" <<<"$out"; then
	pass "host-install: refuses a module directory outside /lib/modules/KVER"
else
	fail "host-install: refuses a module directory outside /lib/modules/KVER" "status $rc: ${out:0:300}"
fi

echo "== host-uninstall"
hmake host-uninstall DESTDIR="$root"
if [ "$rc" = 0 ] && [ ! -e "$mods/updates/pvprof" ] && [ "$(kvm_paths)" = "$want_distro" ]; then
	pass "host-uninstall: the distro's KVM again"
else
	fail "host-uninstall: the distro's KVM again" "status $rc, modprobe: $(kvm_paths), ${out:0:300}"
fi
if [ -f "$mods/kernel/arch/x86/kvm/kvm.ko" ]; then
	pass "host-uninstall: the distro's modules untouched"
else
	fail "host-uninstall: the distro's modules untouched" "kvm.ko is gone"
fi
hmake host-uninstall DESTDIR="$root"
if [ "$rc" = 0 ] && grep -qF "Nothing to remove" <<<"$out"; then
	pass "host-uninstall: twice is harmless"
else
	fail "host-uninstall: twice is harmless" "status $rc: ${out:0:300}"
fi
if [ "$(uname -r)" != "$kver" ]; then
	out=$("$repo/host-kvm/scripts/host-install.sh" install --kver "$kver" \
		--modules "$O/host-kvm/kvm.ko" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qF "the modules are built for $kver but this host runs $(uname -r)" <<<"$out"; then
		pass "host-install: without DESTDIR, only for the running kernel"
	else
		fail "host-install: without DESTDIR, only for the running kernel" "status $rc: ${out:0:300}"
	fi
fi

echo "== dkms-source"
hmake dkms-source DESTDIR="$root"
src=$root/usr/src/pvprof-kvm-0.1
if [ "$rc" = 0 ] && [ -f "$src/dkms.conf" ] && [ -f "$src/host-kvm/Makefile" ] &&
   [ -f "$src/host-kvm/kvm.Kbuild" ] && [ -d "$src/host-kvm/pvprof" ] &&
   [ -f "$src/abi/pvprof.h" ] && [ -f "$src/core/host.c" ]; then
	pass "dkms-source: dkms.conf, host-kvm/, abi/ and core/ under /usr/src/pvprof-kvm-0.1"
else
	fail "dkms-source: the tree DKMS builds from" "status $rc: $(ls "$src" 2>&1) ${out:0:200}"
fi
# dkms runs "make -C host-kvm ... modules" in (a copy of) the tree and takes
# the modules from BUILT_MODULE_LOCATION: that must be where the tree's
# Makefile puts them (dkms sets no O). make -p prints its variables and runs
# no recipe.
build_dir=$(env -u O make -p -C "$src/host-kvm" KVER="$kver" pvprof-no-such-target 2>/dev/null |
	sed -n 's/^BUILD := //p' | head -n 1)
location=$(sed -n 's/^BUILT_MODULE_LOCATION\[0\]="\(.*\)"$/\1/p' "$src/dkms.conf")
if grep -qF 'MAKE[0]="make -C host-kvm KVER=${kernelver} modules"' "$src/dkms.conf" &&
   [ "$build_dir" = "$src/out/host-kvm" ] && [ "$location" = out/host-kvm/ ]; then
	pass "dkms-source: the tree's Makefile builds where dkms.conf takes the modules"
else
	fail "dkms-source: the tree's Makefile builds where dkms.conf takes the modules" "BUILD '$build_dir', BUILT_MODULE_LOCATION '$location'"
fi

echo "== Secure Boot signing (host-kvm/README.md)"
sign_file=/usr/src/linux-headers-$kver/scripts/sign-file
if ! command -v openssl >/dev/null || [ ! -x "$sign_file" ]; then
	fail "signing" "needs openssl and $sign_file"
	finish
fi
openssl req -new -x509 -newkey rsa:2048 -keyout "$tmp/MOK.priv" -outform DER \
	-out "$tmp/MOK.der" -nodes -days 1 -subj "/CN=pvprof throwaway MOK/" 2>/dev/null
cp "$O/host-kvm/kvm.ko" "$tmp/kvm.ko"
if "$sign_file" sha256 "$tmp/MOK.priv" "$tmp/MOK.der" "$tmp/kvm.ko" &&
   [ "$(modinfo -F signer "$tmp/kvm.ko")" = "pvprof throwaway MOK" ] &&
   [ "$(modinfo -F sig_hashalgo "$tmp/kvm.ko")" = sha256 ]; then
	pass "signing: modinfo shows the MOK as signer (sha256)"
else
	fail "signing: modinfo shows the MOK as signer" "signer '$(modinfo -F signer "$tmp/kvm.ko")'"
fi
if [ -z "$(modinfo -F signer "$O/host-kvm/kvm.ko")" ]; then
	pass "signing: the built module itself stays unsigned"
else
	fail "signing: the built module itself stays unsigned" "it has a signer"
fi
finish
