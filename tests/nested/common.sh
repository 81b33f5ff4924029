# SPDX-License-Identifier: GPL-2.0
# Shared by run-l1 and l2-initramfs: paths, the kernel release, the vmlinux
# extracted from the distro bzImage, and initramfs assembly.
# shellcheck shell=bash

NESTED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$NESTED_DIR/../.." && pwd)
O=${O:-$REPO_DIR/out}
NESTED_OUT=$O/nested

die() {
	echo "${PROG:-nested}: $*" >&2
	exit 125
}

# The kernel release the nested machines boot: $KVER, else the one Debian's
# linux-image-amd64 depends on (6.1 on Debian 12: another series installed
# beside it, such as 6.12 for make check-6.12, is only booted when asked
# for), else the newest /boot/vmlinuz-* that has its modules installed (the
# running kernel of this machine is foreign, so uname -r is of no use).
default_kver() {
	local img ver best=
	ver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	      grep -o 'linux-image-[^ ,]*' | head -n 1)
	ver=${ver#linux-image-}
	if [ -n "$ver" ] && [ -r "/boot/vmlinuz-$ver" ] && [ -d "/lib/modules/$ver/kernel" ]; then
		echo "$ver"
		return
	fi
	for img in /boot/vmlinuz-*; do
		ver=${img#/boot/vmlinuz-}
		[ -d "/lib/modules/$ver/kernel" ] && best=$ver
	done
	[ -n "$best" ] || die "no /boot/vmlinuz-<ver> with /lib/modules/<ver>; install linux-image-amd64"
	echo "$best"
}

# kernel_release NAME: the release NAME stands for: 6.12 for the release of
# scripts/kernels.mk, 6.1 for the default; any other NAME is a release.
kernel_release() {
	case "$1" in
	6.1) default_kver ;;
	6.12) sed -n 's/^KVER_6\.12[[:space:]]*:=[[:space:]]*//p' "$REPO_DIR/scripts/kernels.mk" ;;
	*) echo "$1" ;;
	esac
}

# kernel_series KVER: the series of release KVER (6.12 for
# 6.12.117+deb12-amd64), which names another kernel's results (host-6.12).
kernel_series() {
	local version=${1%%-*}
	echo "${version%.*}"
}

# pvprof_modules_dir KVER: where the pvprof KVM modules for KVER are: 'make
# modules' builds the default kernel's into $O/host-kvm, 'make -C host-kvm
# KVER=R' another release's into $O/host-kvm-R.
pvprof_modules_dir() {
	if [ "$1" = "$(default_kver)" ]; then
		echo "$O/host-kvm"
	else
		echo "$O/host-kvm-$1"
	fi
}

# Hold an exclusive lock on $NESTED_OUT/.build.lock for the rest of the
# process, so concurrent runs never read a half-written vmlinux or initramfs.
lock_build_dir() {
	mkdir -p "$NESTED_OUT" || die "cannot create $NESTED_OUT"
	exec {build_lock_fd}>"$NESTED_OUT/.build.lock"
	flock "$build_lock_fd"
}

unlock_build_dir() {
	exec {build_lock_fd}>&-
}

# ensure_vmlinux KVER: prints the path of the uncompressed ELF vmlinux (PVH
# entry, boots much faster than the bzImage), extracting it when missing or
# older than the bzImage. Caller holds the build lock.
ensure_vmlinux() {
	local ver=$1 vmlinuz=/boot/vmlinuz-$1 out=$NESTED_OUT/vmlinux-$1
	[ -r "$vmlinuz" ] || die "$vmlinuz not found (kernel release $ver)"
	if [ ! -s "$out" ] || [ "$vmlinuz" -nt "$out" ]; then
		python3 - "$vmlinuz" "$out.tmp" <<'PY' || die "cannot extract vmlinux from $vmlinuz"
import lzma, subprocess, sys
# Debian's 6.1 images are XZ, its 6.12 images zstd (the zstd command).
data = open(sys.argv[1], "rb").read()
xz, zstd = data.find(b"\xfd7zXZ\x00"), data.find(b"\x28\xb5\x2f\xfd")
if xz >= 0:
    elf = lzma.LZMADecompressor(lzma.FORMAT_XZ).decompress(data[xz:])
elif zstd >= 0:
    # The payload is followed by the image's trailer: zstd stops there.
    elf = subprocess.run(["zstd", "-dcq"], input=data[zstd:], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
else:
    sys.exit("no XZ or zstd payload in " + sys.argv[1])
if elf[:4] != b"\x7fELF":
    sys.exit("the payload of " + sys.argv[1] + " is not an ELF vmlinux")
open(sys.argv[2], "wb").write(elf)
PY
		mv -f "$out.tmp" "$out"
	fi
	echo "$out"
}

# module_deps KVER MODULE...: the .ko files MODULE needs, dependencies first,
# each once, as modprobe would load them.
module_deps() {
	local ver=$1 m line ko seen=" "
	shift
	for m in "$@"; do
		while read -r line; do
			case "$line" in
			insmod\ *) ko=${line#insmod }; ko=${ko%% *} ;;
			builtin\ *) continue ;;
			*) die "unexpected modprobe output for $m: $line" ;;
			esac
			case "$seen" in *" $ko "*) continue ;; esac
			seen="$seen$ko "
			echo "$ko"
		done < <(modprobe -S "$ver" --show-depends "$m" 2>/dev/null ||
			 die "module $m not found for kernel $ver")
	done
}

# tree_module_deps TREE MODULE...: module_deps for the modules of a kernel
# build tree, which has no modules.dep: dependencies from each module's
# modinfo, built-in modules (modules.builtin) left out.
tree_module_deps() {
	local tree=$1 m
	shift
	_tree_modules_seen=" "
	for m in "$@"; do
		_tree_module_visit "$tree" "$m" || return 1
	done
}

_tree_module_visit() {
	local tree=$1 name=${2//-/_} path deps dep
	case "$_tree_modules_seen" in *" $name "*) return 0 ;; esac
	_tree_modules_seen="$_tree_modules_seen$name "
	# Module names use _ where file names may use -.
	path=$(awk -v want="$name" '
		{ base = $0; sub(/.*\//, "", base); sub(/\.ko$/, "", base); gsub(/-/, "_", base) }
		base == want { print; exit }' "$tree/modules.builtin" "$tree/modules.order")
	[ -n "$path" ] || die "module $name is neither built nor built in in the kernel tree $tree"
	case "$path" in kernel/*) return 0 ;; esac	# modules.builtin's form
	[ -f "$tree/$path" ] || die "module $tree/$path missing: build the tree's modules"
	deps=$(modinfo -F depends "$tree/$path") || die "modinfo failed on $tree/$path"
	for dep in ${deps//,/ }; do
		_tree_module_visit "$tree" "$dep" || return 1
	done
	echo "$tree/$path"
}

# newer_than TARGET INPUT...: true when TARGET is missing or an INPUT is newer.
newer_than() {
	local target=$1 f
	shift
	[ -e "$target" ] || return 0
	for f in "$@"; do
		[ "$f" -nt "$target" ] && return 0
	done
	return 1
}

# make_cpio STAGING_DIR OUTPUT: newc archive of STAGING_DIR, owned by root,
# written atomically. Left uncompressed: the guest unpacks it faster under TCG
# than it would inflate it.
make_cpio() {
	local dir=$1 out=$2
	(cd "$dir" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0) > "$out.tmp" ||
		die "cpio failed for $out"
	mv -f "$out.tmp" "$out"
}

# stage_busybox DIR: busybox-static under DIR with /bin/sh; the init script
# installs the other applet links at boot.
stage_busybox() {
	local dir=$1 bb
	bb=$(command -v busybox) || die "busybox not found: install busybox-static"
	mkdir -p "$dir/bin" "$dir/sbin" "$dir/usr/bin" "$dir/usr/sbin" \
		"$dir/dev" "$dir/proc" "$dir/sys" "$dir/tmp"
	cp "$bb" "$dir/bin/busybox" || die "cannot copy $bb"
	ln -s busybox "$dir/bin/sh"
}

# Scenario scripts: "check NAME WHY CMD..." runs CMD and prints one PASS or
# FAIL line; "results_write SUITE" prints the closing "N passed, N failed"
# line, leaves "<passed> <failed>" in $O/results/SUITE and fails when a case
# did.
passed=0
failed=0
check() {
	local name=$1 why=$2
	shift 2
	if "$@"; then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name: $why"
		failed=$((failed + 1))
	fi
}

# vm_state SOCKET: what a QEMU that stopped making progress is doing, read
# through its QMP socket (supervisor.py state).
vm_state() {
	python3 "$NESTED_DIR/supervisor.py" state "$1"
}

# kernel_system_map IMAGE KVER: the System.map of the kernel a VM boots: the
# one of IMAGE's build tree, or the distro's for KVER when IMAGE is empty
# (Debian's is a placeholder without symbols; stuck-symbols says so).
kernel_system_map() {
	local dir
	if [ -z "$1" ]; then
		echo "/boot/System.map-$2"
		return
	fi
	dir=$(dirname "$(realpath "$1")")
	while [ "$dir" != / ] && [ ! -f "$dir/System.map" ]; do
		dir=$(dirname "$dir")
	done
	echo "$dir/System.map"
}

# stuck_rips STATE SYSTEM_MAP: the RIPs of a vm_state dump on one line,
# named where the map allows (supervisor.py rips).
stuck_rips() {
	python3 "$NESTED_DIR/supervisor.py" rips "$1" "$2"
}

# run_l1_said STDERR: run-l1's own messages in a file that holds its stderr,
# without the console tail it appends on failure (the console is in its --out).
run_l1_said() {
	grep -v '^  | ' "$1" 2>/dev/null | tail -n 40
}

results_write() {
	mkdir -p "$O/results"
	echo "$passed $failed" > "$O/results/$1"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
