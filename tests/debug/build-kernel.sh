#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug 6.1 kernel (lockdep, KASAN, UBSAN, kmemleak, ...) used as
# L1 and L2 by "make check-debug", from the same linux-source-6.1 package as
# the replacement KVM modules.  The build is cached outside the work tree and
# reused while the source package and the config fragment are unchanged.
#
# Usage: build-kernel.sh [CACHE_DIR]    (default $PVPROF_CACHE or /var/cache/pvprof)
# Prints the build directory on its last line.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-${PVPROF_CACHE:-/var/cache/pvprof}}
tarball=/usr/src/linux-source-6.1.tar.xz

[ -r "$tarball" ] || { echo "build-kernel: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$(printf '%s\n' "$srcver" | cat - "$here/debug.config" "$0" | sha256sum | cut -c1-16)
top="$cache/debug-kernel-$key"
src="$top/linux-source-6.1"
build="$top/build"

if [ -f "$top/done" ]; then
	echo "build-kernel: reusing $build (linux-source-6.1 $srcver)" >&2
	echo "$build"
	exit 0
fi

mkdir -p "$top"
start=$(date +%s)
if [ ! -f "$top/extracted" ]; then
	echo "build-kernel: extracting linux-source-6.1 $srcver into $top" >&2
	rm -rf "$src"
	tar -xJf "$tarball" -C "$top"
	touch "$top/extracted"
fi

jobs=$(nproc)
mk() { make -s -C "$src" O="$build" "$@"; }

mk x86_64_defconfig
"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
	"$src/kernel/configs/kvm_guest.config" "$here/debug.config" >/dev/null
mk olddefconfig

# A checker silently dropped by Kconfig would make the whole suite meaningless.
missing=
for opt in PROVE_LOCKING PROVE_RCU DEBUG_ATOMIC_SLEEP KASAN UBSAN DEBUG_OBJECTS \
	   DEBUG_KMEMLEAK PVH VIRTIO_MMIO 9P_FS NET_9P_VIRTIO DEBUG_FS; do
	grep -q "^CONFIG_$opt=y" "$build/.config" || missing="$missing $opt"
done
if [ -n "$missing" ]; then
	echo "build-kernel: Kconfig did not enable:$missing" >&2
	exit 1
fi

echo "build-kernel: building vmlinux and modules with -j$jobs (about 30 min on 2 cores)" >&2
mk -j"$jobs" vmlinux modules
touch "$top/done"
echo "build-kernel: built in $(( $(date +%s) - start )) s" >&2
echo "$build"
