#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# prepare-src.sh TARBALL PKG_VERSION SRCDIR [PATCH...]
#
# Extracts arch/x86/kvm and virt/kvm from the kernel source TARBALL into
# SRCDIR (only when SRCDIR was not extracted from this very tarball and
# package version) and brings SRCDIR to exactly the given patches: when the
# patch set changed since the last run, the old set is reverted first, so
# only the files the patches touch change and the rebuild stays incremental.
set -eu

tarball=$1
pkg_version=$2
src=$3
shift 3

stamp=$src/.pvprof-extracted
applied=$src/.pvprof-applied.patch
wanted=$src/.pvprof-wanted.patch
top=$(basename "$tarball" .tar.xz)

die() {
	echo "host-kvm: $*" >&2
	exit 1
}

[ -r "$tarball" ] || die "kernel source $tarball not found (Debian package $top)"

source_id="$(stat -c '%n %s %Y' "$tarball") $pkg_version"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$source_id" ]; then
	echo "  EXTRACT arch/x86/kvm virt/kvm from $tarball ($pkg_version)"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1 \
		"$top/arch/x86/kvm" "$top/virt/kvm" ||
		die "cannot extract arch/x86/kvm and virt/kvm from $tarball"
	echo "$source_id" > "$stamp"
fi

cat /dev/null "$@" > "$wanted"
if [ -f "$applied" ] && cmp -s "$applied" "$wanted"; then
	exit 0
fi

if [ -f "$applied" ]; then
	echo "  UNPATCH the previous patch set (patches changed)"
	if ! patch -R -p1 -s -d "$src" --no-backup-if-mismatch -r - < "$applied"; then
		rm -f "$stamp"
		die "cannot revert the previously applied patches; run make again to start from a fresh extraction"
	fi
	rm -f "$applied"
fi

: > "$applied"
for p in "$@"; do
	echo "  PATCH   $(basename "$p")"
	if ! out=$(patch -p1 --forward --dry-run -d "$src" < "$p" 2>&1); then
		echo "$out" >&2
		die "$p does not apply to $top $pkg_version; update the patch for this kernel"
	fi
	patch -p1 --forward -s -d "$src" --no-backup-if-mismatch < "$p"
	cat "$p" >> "$applied"
done
