#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# unpack-kernel.sh KVER DIR: Debian's headers and bzImage of kernel release
# KVER, unpacked under DIR/root without installing them.
#
# The guest driver is built for a second kernel (6.12 beside 6.1) and its
# tests boot that kernel as L2.  Installing that kernel's linux-headers
# would install its linux-image too (the headers depend on it), and a
# second installed kernel changes what host-kvm (the newest headers) and
# the nested host (the newest /boot/vmlinuz-*) build and boot by default.
# An unpacked copy changes nothing on the machine.  Needs the package lists
# (apt-get update) and pahole (dwarves), which linux-kbuild depends on:
# its kbuild makes module BTF against the vmlinux the headers carry.
#
# Leaves DIR/root/usr/src/linux-headers-KVER, a kernel build tree for
# "make -C KDIR M=...", DIR/root/boot/vmlinuz-KVER, the image's KVM
# modules (DIR/root/lib/modules/KVER/kernel/arch/x86/kvm and virt/lib,
# which host-kvm's CRC and vermagic check compares its rebuilt modules
# against) and DIR/root/.versions, "package version" per unpacked .deb
# (host-kvm/scripts/check-versions.sh reads it).  Does nothing when
# DIR/root/.unpacked already names KVER and this layout.

set -euo pipefail
PROG=unpack-kernel

die() {
	echo "$PROG: $*" >&2
	exit 1
}

[ $# = 2 ] || die "usage: $PROG KVER DIR"
kver=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd) || die "cannot create $2"
root=$dir/root

stamp="$kver kvm-modules"
if [ "$(cat "$root/.unpacked" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
command -v pahole > /dev/null ||
	die "pahole missing (linux-kbuild depends on it): apt-get install dwarves"

# dep_of PACKAGE PREFIX: the dependency of PACKAGE whose name starts with
# PREFIX (the -common headers and linux-kbuild of the same build).
dep_of() {
	apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Depends: //p' | tr ',' '\n' |
		sed -n "s/^ *\($2[^ ]*\).*/\1/p" | head -n 1
}

headers=linux-headers-$kver
image=linux-image-$kver
version=$(apt-cache show --no-all-versions "$headers" 2>/dev/null | sed -n 's/^Version: //p')
[ -n "$version" ] ||
	die "no package $headers in the apt lists (apt-get update; apt-cache policy 'linux-headers-6.*-amd64' lists them)"
common=$(dep_of "$headers" linux-headers-)
kbuild=$(dep_of "$headers" linux-kbuild-)
if [ -z "$common" ] || [ -z "$kbuild" ]; then
	die "cannot tell the -common headers and linux-kbuild of $headers $version"
fi

debs=$dir/debs
rm -rf "$root" "$debs"
mkdir -p "$root" "$debs"
# apt-get download writes to the current directory, which its _apt
# sandbox user cannot write to when it is root's.
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
(cd "$debs" && apt-get download -q "${sandbox[@]}" "$headers=$version" "$common=$version" \
	"$kbuild=$version" "$image=$version") ||
	die "apt-get download of $headers $version failed"

for deb in "$debs"/*.deb; do
	dpkg-deb -f "$deb" Package Version | sed "s/^[^:]*: //" | paste -sd " " >> "$root/.versions"
	case "${deb##*/}" in
	linux-image-*)
		# The bzImage (the L2 guests load no distro module) and the
		# KVM modules host-kvm's rebuilt ones must match.
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" ./boot \
			"./lib/modules/$kver/kernel/arch/x86/kvm" \
			"./lib/modules/$kver/kernel/virt/lib"
		;;
	*)
		dpkg-deb -x "$deb" "$root"
		;;
	esac
done
rm -rf "$debs"

# The headers' Makefile includes the -common tree by absolute path.
kdir=$root/usr/src/$headers
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
grep -qx "#define UTS_RELEASE \"$kver\"" "$kdir/include/generated/utsrelease.h" ||
	die "$kdir is not a build tree of $kver"
[ -f "$root/boot/vmlinuz-$kver" ] || die "$image has no /boot/vmlinuz-$kver"

echo "$stamp" > "$root/.unpacked"
echo "$PROG: $headers, the bzImage and KVM modules of $image $version in $root"
