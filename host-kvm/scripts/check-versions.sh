#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-versions.sh KVER SOURCE_PACKAGE [ROOT]
#
# The replacement KVM modules are built from SOURCE_PACKAGE (linux-source-X.Y)
# against the headers of kernel KVER and must load into the image of KVER:
# all three Debian packages must carry the same version, else the rebuilt
# kvm.ko would not match the running kernel's structures and symbol CRCs.
# With ROOT (a kernel unpacked by guest-driver/scripts/unpack-kernel.sh,
# not installed), the headers' and image's versions are the ones of the
# .debs unpacked there (ROOT/.versions); the source package is installed.
set -eu

kver=$1
src_pkg=$2
root=${3:-}

# Prints the version of an installed package, "not installed" otherwise.
version_of() {
	status=$(dpkg-query -W -f='${db:Status-Abbrev}|${Version}' "$1" 2>/dev/null) ||
		status=
	case $status in
	"ii "*"|"?*) echo "${status#*|}" ;;
	*) echo "not installed" ;;
	esac
}

# Prints the version of a package unpacked in ROOT, "not unpacked" otherwise.
unpacked_version_of() {
	ver=$(awk -v p="$1" '$1 == p { print $2 }' "$root/.versions" 2>/dev/null) ||
		ver=
	echo "${ver:-not unpacked in $root}"
}

src_ver=$(version_of "$src_pkg")
if [ -n "$root" ]; then
	hdr_ver=$(unpacked_version_of "linux-headers-$kver")
	img_ver=$(unpacked_version_of "linux-image-$kver")
else
	hdr_ver=$(version_of "linux-headers-$kver")
	img_ver=$(version_of "linux-image-$kver")
fi

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
