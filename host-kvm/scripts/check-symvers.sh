#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-symvers.sh DISTRO_SYMVERS BUILD_SYMVERS DISTRO_MODDIR MODULE.ko...
#
# The rebuilt KVM modules must be drop-in replacements for the distro's:
# - every symbol the distro's module exports is exported again with the same
#   CRC, export type and namespace, and nothing else is exported (other
#   modules such as kvmgt keep loading against them);
# - every imported symbol's CRC equals the one the distro kernel and modules
#   export (the module loads into the distro kernel);
# - vermagic equals the distro module's.
# The distro's modules may be xz-compressed (DISTRO_MODDIR/MODULE.ko.xz, as
# Debian ships 6.12's); modinfo reads both.
# Prints one line per module with the counts and fails on any difference.
set -eu

distro_symvers=$1
build_symvers=$2
distro_moddir=$3
shift 3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

for ko in "$@"; do
	mod=$(basename "$ko" .ko)
	distro_ko=$distro_moddir/$mod.ko
	[ -e "$distro_ko" ] || [ ! -e "$distro_ko.xz" ] || distro_ko=$distro_ko.xz

	# Exports: "name crc type namespace", sorted, from both Module.symvers.
	awk -F '\t' -v m="arch/x86/kvm/$mod" \
		'$3 == m { print $2, $1, $4, $5 }' "$distro_symvers" |
		sort > "$tmp/distro"
	awk -F '\t' -v m="$mod" \
		'{ n = split($3, p, "/") } p[n] == m { print $2, $1, $4, $5 }' \
		"$build_symvers" | sort > "$tmp/built"
	exports=$(wc -l < "$tmp/distro")
	exports_ok=$(comm -12 "$tmp/distro" "$tmp/built" | wc -l)
	if [ "$exports_ok" -ne "$exports" ] ||
	   [ "$(wc -l < "$tmp/built")" -ne "$exports" ]; then
		failed=1
		echo "FAIL $mod exports differ from $distro_symvers (- distro, + rebuilt):"
		diff "$tmp/distro" "$tmp/built" | grep '^[<>]' |
			sed 's/^</  -/; s/^>/  +/' | head -n 20
	fi

	# Imports: "crc name" from __versions against every distro export.
	modprobe --dump-modversions "$ko" | awk '{ print $2, $1 }' |
		sort > "$tmp/imports"
	awk -F '\t' '{ print $2, $1 }' "$distro_symvers" | sort -u > "$tmp/all"
	imports=$(wc -l < "$tmp/imports")
	imports_ok=$(comm -12 "$tmp/imports" "$tmp/all" | wc -l)
	if [ "$imports_ok" -ne "$imports" ]; then
		failed=1
		echo "FAIL $mod imports CRCs the distro kernel does not export:"
		comm -23 "$tmp/imports" "$tmp/all" | sed 's/^/  /' | head -n 20
	fi

	vermagic=$(modinfo -F vermagic "$ko")
	distro_vermagic=$(modinfo -F vermagic "$distro_ko")
	if [ "$vermagic" = "$distro_vermagic" ]; then
		vermagic_result="vermagic matches"
	else
		failed=1
		vermagic_result="vermagic DIFFERS: '$vermagic', distro '$distro_vermagic'"
	fi

	echo "CRC check: $mod: $exports_ok/$exports exported symbols match," \
	     "$imports_ok/$imports imported CRCs match, $vermagic_result"
done

if [ "$failed" -ne 0 ]; then
	echo "host-kvm: the rebuilt modules are not drop-in replacements for the distro's" >&2
	exit 1
fi
