#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# boot-image.sh TREE: prints the path of the debug kernel's bzImage, making it
# in the kernel build TREE (from build-kernel.sh) when missing or older than
# the tree's vmlinux.
#
# Why not the ELF vmlinux the nested host boots otherwise: 6.1's PVH entry
# calls xen_prepare_pvh(), which is KASAN-instrumented, before the KASAN
# shadow is mapped, so a KASAN vmlinux triple-faults on its first instruction
# of C.  The bzImage enters through the Linux boot protocol, where
# kasan_early_init() runs first.  Kept apart from build-kernel.sh so that the
# cached build (keyed on that script) stays valid.
set -eu

tree=$1
image=$tree/arch/x86/boot/bzImage

[ -f "$tree/vmlinux" ] || { echo "boot-image: no vmlinux in $tree" >&2; exit 1; }
if [ ! -f "$image" ] || [ "$tree/vmlinux" -nt "$image" ]; then
	echo "boot-image: making the bzImage in $tree" >&2
	start=$(date +%s)
	make -s -C "$tree" -j"$(nproc)" bzImage >&2
	echo "boot-image: made in $(( $(date +%s) - start )) s" >&2
fi
echo "$image"
