#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-tree-version.sh KERNEL_TREE SOURCE_PACKAGE
#
# Building against a kernel build tree instead of the distro's headers (the
# debug kernel of make check-debug): the tree must have been built from the
# same upstream release as SOURCE_PACKAGE (linux-source-X.Y), else the KVM
# sources we extract from that package would not match the tree's structures.
# Prints the source package's version.
set -eu

tree=$1
src_pkg=$2

release_file=$tree/include/config/kernel.release
[ -r "$release_file" ] || {
	echo "host-kvm: $tree is not a configured kernel build tree (no $release_file)" >&2
	exit 1
}
tree_release=$(cat "$release_file")
src_ver=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null) || src_ver=
[ -n "$src_ver" ] || {
	echo "host-kvm: $src_pkg is not installed (scripts/install-deps.sh)" >&2
	exit 1
}
# Debian version 6.1.192-2 is upstream release 6.1.192, Debian revision 2.
if [ "${src_ver%-*}" != "$tree_release" ]; then
	echo "host-kvm: kernel tree $tree is release $tree_release, but $src_pkg is $src_ver;" >&2
	echo "  rebuild the tree from $src_pkg (tests/debug/build-kernel.sh)" >&2
	exit 1
fi
echo "$src_ver"
