#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages pvprof builds and tests with, when missing.
# Idempotent: does nothing (and needs no network) when all are present.
set -eu

# golang-go and chromium are test oracles: go tool pprof reads report --pprof,
# chromium runs the flame graph SVG's script headless (host-kvm/tool/tests).
# dwarves (pahole): the guest driver's 6.12 build makes module BTF
# (linux-kbuild-6.12 depends on it; guest-driver/scripts/unpack-kernel.sh).
PKGS="gcc g++ make pkg-config python3 python3-docutils cpio xz-utils kmod
linux-source-6.1 linux-headers-amd64 linux-image-amd64
qemu-system-x86 busybox-static linux-perf
libelf-dev libdw-dev liburcu-dev check clang libclang-rt-14-dev
groff-base bsdextrautils qemu-utils jq dkms openssl dwarves
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go chromium"
# Callers may name more: make check-debug adds what the kernel build needs.
PKGS="$PKGS $*"

missing=
for p in $PKGS; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "pvprof: missing Debian packages:$missing" >&2
	echo "pvprof: run 'make deps' as root, or: apt-get install$missing" >&2
	exit 1
fi

echo "pvprof: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
