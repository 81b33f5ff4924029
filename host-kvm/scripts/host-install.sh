#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# host-install.sh install|uninstall|reload [options]
#
# Puts the pvprof KVM modules where modprobe prefers them over the distro's
# (/lib/modules/KVER/updates/pvprof), takes them away again, or reloads KVM
# so that the preferred modules are the loaded ones. Called by
# make -C host-kvm host-install / host-uninstall / host-reload.
#
#   --destdir DIR   install into DIR/lib/modules/... (a staging root, no reload
#                   advice and no running-kernel checks)
#   --kver KVER     the kernel release (default: the running one)
#   --moddir NAME   the directory under /lib/modules/KVER (default: updates)
#   --modules "A.ko B.ko ..."   the built modules (install)
#
# Exit status: 0 done, 1 refused or failed, 2 usage.
set -u

prog=host-install.sh
destdir= kver=$(uname -r) moddir=updates modules=

die() { echo "$prog: $*" >&2; exit 1; }
usage() { echo "usage: $prog install|uninstall|reload [--destdir DIR] [--kver KVER] [--moddir NAME] [--modules \"A.ko ...\"]" >&2; exit 2; }

[ $# -ge 1 ] || usage
action=$1
shift
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case $1 in
	--destdir) destdir=$2 ;;
	--kver) kver=$2 ;;
	--moddir) moddir=$2 ;;
	--modules) modules=$2 ;;
	*) usage ;;
	esac
	shift 2
done
case $moddir in ''|*/*|.|..) die "--moddir must be one directory name, got '$moddir'" ;; esac

target=$destdir/lib/modules/$kver/$moddir/pvprof

# Processes holding a KVM VM fd, as "PID (comm)".
vm_holders() {
	local fd pid seen=
	for fd in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:kvm-vm" ] || continue
		pid=${fd#/proc/}
		pid=${pid%%/*}
		case " $seen " in *" $pid "*) continue ;; esac
		seen="$seen $pid"
		echo "$pid ($(cat "/proc/$pid/comm" 2>/dev/null))"
	done
}

# VMs pin the vendor module (kvm_amd or kvm_intel), open /dev/kvm fds pin kvm.
kvm_users() {
	local m n total=0
	for m in kvm_amd kvm_intel kvm; do
		[ -r "/sys/module/$m/refcnt" ] || continue
		n=$(cat "/sys/module/$m/refcnt")
		total=$((total + n))
	done
	echo "$total"
}

vendor_module() {
	if grep -qw svm /proc/cpuinfo; then
		echo kvm_amd
	elif grep -qw vmx /proc/cpuinfo; then
		echo kvm_intel
	else
		die "this CPU has neither SVM nor VMX: KVM cannot run here"
	fi
}

run_depmod() {
	if [ -n "$destdir" ]; then
		depmod -b "$destdir" "$kver" || die "depmod -b $destdir $kver failed"
	else
		depmod "$kver" || die "depmod $kver failed"
	fi
}

# Why a running system needs a reload, and whether it can have one now.
reload_advice() {
	local holders
	[ -z "$destdir" ] && [ "$kver" = "$(uname -r)" ] || return 0
	holders=$(vm_holders)
	echo "The loaded KVM modules stay in use until KVM is reloaded:"
	echo "  make -C host-kvm host-reload    (modprobe -r kvm_amd kvm_intel kvm; modprobe $(vendor_module))"
	if [ -n "$holders" ]; then
		echo "VMs are running now, held by:"
		echo "$holders" | sed 's/^/  /'
		echo "Stop or migrate them first: KVM cannot be unloaded while a VM exists."
	fi
}

secure_boot_advice() {
	local var
	for var in /sys/firmware/efi/efivars/SecureBoot-*; do
		[ -r "$var" ] || continue
		# 4 bytes of attributes, then the value.
		if [ "$(od -An -t u1 -j 4 -N 1 "$var" | tr -d ' ')" = 1 ]; then
			echo "Secure Boot is on: the kernel loads only signed modules. Sign them with"
			echo "your Machine Owner Key first (host-kvm/README.md, \"Secure Boot\")."
		fi
	done
}

do_install() {
	local ko
	[ -n "$modules" ] || usage
	if [ -z "$destdir" ]; then
		[ "$(id -u)" = 0 ] || die "installing into /lib/modules needs root"
		[ "$kver" = "$(uname -r)" ] ||
			die "the modules are built for $kver but this host runs $(uname -r): build with KVER=$(uname -r), or stage them with DESTDIR"
	fi
	for ko in $modules; do
		[ -r "$ko" ] || die "$ko is missing: build first (make -C host-kvm)"
	done
	mkdir -p "$target" || die "cannot create $target"
	for ko in $modules; do
		install -m 0644 "$ko" "$target/" || die "cannot install $ko into $target"
	done
	run_depmod
	echo "Installed $(for ko in $modules; do printf '%s ' "${ko##*/}"; done)into $target"
	echo "and ran depmod: modprobe now prefers them over the distro's."
	reload_advice
	secure_boot_advice
}

do_uninstall() {
	if [ -z "$destdir" ]; then
		[ "$(id -u)" = 0 ] || die "removing modules from /lib/modules needs root"
	fi
	if [ ! -d "$target" ]; then
		echo "Nothing to remove: $target does not exist."
		return 0
	fi
	rm -rf "$target" || die "cannot remove $target"
	rmdir "${target%/pvprof}" 2>/dev/null
	run_depmod
	echo "Removed $target and ran depmod: modprobe loads the distro's KVM again."
	reload_advice
}

do_reload() {
	local holders users vendor
	[ -z "$destdir" ] || die "reload acts on the running system, not on --destdir"
	[ "$(id -u)" = 0 ] || die "reloading KVM needs root"
	holders=$(vm_holders)
	if [ -n "$holders" ]; then
		echo "$prog: refusing to reload KVM while VMs run; they are held by:" >&2
		echo "$holders" | sed 's/^/  /' >&2
		echo "Stop or migrate these VMs, then run this again." >&2
		exit 1
	fi
	users=$(kvm_users)
	if [ "$users" != 0 ]; then
		echo "$prog: refusing to reload KVM: it is in use ($users references: open /dev/kvm or VM fds);" >&2
		echo "  see 'lsof /dev/kvm' and stop those programs first." >&2
		exit 1
	fi
	vendor=$(vendor_module)
	modprobe -r kvm_amd kvm_intel kvm 2>/dev/null
	[ ! -d /sys/module/kvm ] || die "could not unload KVM (modprobe -r kvm_amd kvm_intel kvm)"
	modprobe "$vendor" || die "modprobe $vendor failed: see dmesg"
	if [ -e /sys/module/kvm/parameters/pvprof_expose ]; then
		echo "Reloaded KVM: the pvprof modules are loaded ($(modinfo -F filename kvm))."
	else
		echo "Reloaded KVM: the distro's modules are loaded ($(modinfo -F filename kvm))."
	fi
}

case $action in
install) do_install ;;
uninstall) do_uninstall ;;
reload) do_reload ;;
*) usage ;;
esac
