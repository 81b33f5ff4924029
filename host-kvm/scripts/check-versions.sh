#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-versions.sh KVER SOURCE_PACKAGE
#
# The replacement KVM modules are built from SOURCE_PACKAGE (linux-source-X.Y)
# against the headers of kernel KVER and must load into the image of KVER:
# all three Debian packages must carry the same version, else the rebuilt
# kvm.ko would not match the running kernel's structures and symbol CRCs.
set -eu

kver=$1
src_pkg=$2

# Prints the version of an installed package, "not installed" otherwise.
version_of() {
	status=$(dpkg-query -W -f='${db:Status-Abbrev}|${Version}' "$1" 2>/dev/null) ||
		status=
	case $status in
	"ii "*"|"?*) echo "${status#*|}" ;;
	*) echo "not installed" ;;
	esac
}

src_ver=$(version_of "$src_pkg")
hdr_ver=$(version_of "linux-headers-$kver")
img_ver=$(version_of "linux-image-$kver")

if [ "$src_ver" != "$hdr_ver" ] || [ "$src_ver" != "$img_ver" ] ||
   [ "$src_ver" = "not installed" ]; then
	echo "host-kvm: package versions differ, cannot build KVM for $kver:" >&2
	echo "  $src_pkg: $src_ver" >&2
	echo "  linux-headers-$kver: $hdr_ver" >&2
	echo "  linux-image-$kver: $img_ver" >&2
	echo "  install matching versions (scripts/install-deps.sh) or set KVER" >&2
	exit 1
fi
echo "$src_ver"
