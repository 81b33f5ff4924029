#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make -C host-kvm host-install / host-uninstall / dkms-source, staged with
# DESTDIR into a scratch root that holds a copy of the distro's KVM modules
# (this machine's own kernel is not the one the modules are for), and the
# Secure Boot signing recipe of host-kvm/README.md with a throwaway key.
# modprobe itself decides, from the scratch root, which kvm.ko it would load.
# dkms add and dkms build of the host's and the guest driver's DKMS trees
# run for real, in a private DKMS tree in the scratch root (dkms builds all
# of KVM: 1.5-5 min depending on the machine's load).
#
# KVER selects the kernel as in host-kvm/Makefile: a release, or a name
# scripts/kernels.mk gives one (KVER=6.12); by default the newest installed
# headers.  A kernel whose headers are not installed (6.12 here) is taken
# from the copy "make -C guest-driver kernel KVER=6.12" unpacks: the headers
# there, its image's modules from /lib/modules/KVER (compressed, .ko.xz,
# for Debian's 6.12), and dkms pointed at the headers with --kernelsourcedir.
#
# Needs the built modules (make -C host-kvm [KVER=...]; O as for the build)
# and dkms (make deps). Writes "<passed> <failed>" to $O/results/host-install,
# or host-install-X.Y for another kernel than the default (host-install-6.12).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
O=${O:-$repo/out}
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

default_kver=$(basename "$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)")
default_kver=${default_kver#linux-headers-}
kver=${KVER:-$default_kver}
release=$(sed -n "s/^KVER_${kver//./\\.}[[:space:]]*:=[[:space:]]*//p" "$repo/scripts/kernels.mk")
kver=${release:-$kver}
series=$(echo "$kver" | cut -d. -f1-2)
suite=host-install
[ "$kver" = "$default_kver" ] || suite=host-install-$series
distro=/lib/modules/$kver
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mods=$root/lib/modules/$kver

finish() {
	echo "$passed passed, $failed failed"
	mkdir -p "$O/results"
	echo "$passed $failed" >"$O/results/$suite"
	[ "$failed" = 0 ]
	exit
}

# The module files modprobe would load for kvm_amd from the scratch root,
# with their compression suffix (.ko.xz) if any.
kvm_paths() {
	modprobe -d "$root" -S "$kver" --show-depends kvm_amd 2>&1 |
		sed -n -E 's#^insmod (.*/(kvm|kvm-amd)\.ko(\.xz|\.zst)?)( .*)?$#\1#p' |
		sed "s|^$root||" | tr '\n' ' '
}

# ko_cat MODULE: the module's ELF file, decompressed if need be.
ko_cat() {
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	*) cat "$1" ;;
	esac
}

hmake() {
	out=$(make --no-print-directory -C "$repo/host-kvm" O="$O" KVER="$kver" "$@" 2>&1)
	rc=$?
}

# make_where DIR FIELD [MAKE ARGS...]: FIELD of "make -C DIR where".
make_where() {
	local dir=$1 field=$2
	shift 2
	make --no-print-directory -C "$dir" "$@" where 2>/dev/null | sed -n "s/^$field //p"
}

# The headers and the built modules the host-kvm Makefile takes for $kver
# (installed headers, else the guest driver's unpacked copy under kroot).
kdir=$(make_where "$repo/host-kvm" kdir O="$O" KVER="$kver")
kroot=$(make_where "$repo/host-kvm" kroot O="$O" KVER="$kver")
build=$(make_where "$repo/host-kvm" build O="$O" KVER="$kver")
echo "kernel $kver: headers $kdir, modules built in $build"

if [ ! -d "$distro/kernel/arch/x86/kvm" ]; then
	fail "setup" "no distro KVM modules in $distro (linux-image-$kver)"
	finish
fi
# The image's modules as it ships them: .ko, or compressed (zext).
zext=
for z in .xz .zst; do
	[ -f "$distro/kernel/arch/x86/kvm/kvm.ko$z" ] && zext=$z
done
for ko in kernel/arch/x86/kvm/kvm kernel/arch/x86/kvm/kvm-amd \
	  kernel/virt/lib/irqbypass kernel/drivers/crypto/ccp/ccp; do
	mkdir -p "$mods/${ko%/*}"
	cp "$distro/$ko.ko$zext" "$mods/$ko.ko$zext" || fail "setup" "no $distro/$ko.ko$zext"
done
cp "$distro"/modules.builtin* "$distro/modules.order" "$mods/"
depmod -b "$root" "$kver"
distro_kvm=$mods/kernel/arch/x86/kvm/kvm.ko$zext
want_distro="/lib/modules/$kver/kernel/arch/x86/kvm/kvm.ko$zext /lib/modules/$kver/kernel/arch/x86/kvm/kvm-amd.ko$zext "
if [ "$(kvm_paths)" = "$want_distro" ]; then
	pass "scratch root: modprobe picks the distro's KVM (kvm.ko$zext)"
else
	fail "scratch root: modprobe picks the distro's KVM (kvm.ko$zext)" "got: $(kvm_paths)"
fi

echo "== host-install"
hmake host-install DESTDIR="$root"
want_pvprof="/lib/modules/$kver/updates/pvprof/kvm.ko /lib/modules/$kver/updates/pvprof/kvm-amd.ko "
if [ "$rc" = 0 ]; then
	pass "host-install: exit status 0"
else
	fail "host-install: exit status 0" "status $rc: ${out:0:400}"
fi
if grep -qF "Installed kvm.ko kvm-amd.ko kvm-intel.ko into $mods/updates/pvprof" <<<"$out" &&
   grep -qF "and ran depmod: modprobe now prefers them over the distro's." <<<"$out"; then
	pass "host-install: says what it installed where"
else
	fail "host-install: says what it installed where" "${out:0:400}"
fi
if cmp -s "$build/kvm.ko" "$mods/updates/pvprof/kvm.ko" &&
   cmp -s "$build/kvm-amd.ko" "$mods/updates/pvprof/kvm-amd.ko"; then
	pass "host-install: the built modules are in updates/pvprof"
else
	fail "host-install: the built modules are in updates/pvprof" "$(ls -l "$mods/updates/pvprof" 2>&1)"
fi
if [ "$(kvm_paths)" = "$want_pvprof" ]; then
	pass "host-install: modprobe now picks the pvprof modules (over kvm.ko$zext)"
else
	fail "host-install: modprobe now picks the pvprof modules (over kvm.ko$zext)" "got: $(kvm_paths)"
fi
if [ "$(modinfo -F vermagic "$mods/updates/pvprof/kvm.ko")" = "$(modinfo -F vermagic "$distro_kvm")" ]; then
	pass "host-install: same vermagic as the distro's kvm.ko"
else
	fail "host-install: same vermagic as the distro's kvm.ko" "$(modinfo -F vermagic "$mods/updates/pvprof/kvm.ko")"
fi
out=$("$repo/host-kvm/scripts/host-install.sh" install --destdir "$root" --kver "$kver" \
	--moddir ../x --modules "$build/kvm.ko" 2>&1)
rc=$?
if [ "$rc" != 0 ] && grep -qF "must be one directory name" <<<"$out"; then
	pass "host-install: refuses a module directory outside /lib/modules/KVER"
else
	fail "host-install: refuses a module directory outside /lib/modules/KVER" "status $rc: ${out:0:300}"
fi

echo "== host-uninstall"
hmake host-uninstall DESTDIR="$root"
if [ "$rc" = 0 ] && [ ! -e "$mods/updates/pvprof" ] && [ "$(kvm_paths)" = "$want_distro" ]; then
	pass "host-uninstall: the distro's KVM again"
else
	fail "host-uninstall: the distro's KVM again" "status $rc, modprobe: $(kvm_paths), ${out:0:300}"
fi
if [ -f "$distro_kvm" ]; then
	pass "host-uninstall: the distro's modules untouched"
else
	fail "host-uninstall: the distro's modules untouched" "kvm.ko$zext is gone"
fi
hmake host-uninstall DESTDIR="$root"
if [ "$rc" = 0 ] && grep -qF "Nothing to remove" <<<"$out"; then
	pass "host-uninstall: twice is harmless"
else
	fail "host-uninstall: twice is harmless" "status $rc: ${out:0:300}"
fi
if [ "$(uname -r)" != "$kver" ]; then
	out=$("$repo/host-kvm/scripts/host-install.sh" install --kver "$kver" \
		--modules "$build/kvm.ko" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qF "the modules are built for $kver but this host runs $(uname -r)" <<<"$out"; then
		pass "host-install: without DESTDIR, only for the running kernel"
	else
		fail "host-install: without DESTDIR, only for the running kernel" "status $rc: ${out:0:300}"
	fi
fi

echo "== dkms-source"
hmake dkms-source DESTDIR="$root"
src=$root/usr/src/pvprof-kvm-0.1
if [ "$rc" = 0 ] && [ -f "$src/dkms.conf" ] && [ -f "$src/host-kvm/Makefile" ] &&
   [ -f "$src/host-kvm/kvm.Kbuild" ] && [ -d "$src/host-kvm/pvprof" ] &&
   [ -f "$src/abi/pvprof.h" ] && [ -f "$src/core/host.c" ]; then
	pass "dkms-source: dkms.conf, host-kvm/, abi/ and core/ under /usr/src/pvprof-kvm-0.1"
else
	fail "dkms-source: the tree DKMS builds from" "status $rc: $(ls "$src" 2>&1) ${out:0:200}"
fi
# dkms builds against /lib/modules/KVER/build, or the headers it is given
# with --kernelsourcedir (the unpacked ones, when not installed).
dkms_kdir=/lib/modules/$kver/build
dkms_kopts=()
dkms_sign_file=
if [ ! -e "$dkms_kdir" ]; then
	dkms_kdir=$kdir
	dkms_kopts=(--kernelsourcedir "$kdir")
	# dkms looks for sign-file in /lib/modules/KVER/build/scripts (once
	# the headers are installed) when Debian's linux-kbuild-X.Y has none.
	dkms_sign_file=$kdir/scripts/sign-file
fi
# dkms runs "make -C host-kvm ... modules" in (a copy of) the tree and takes
# the modules from BUILT_MODULE_LOCATION: that must be where the tree's
# Makefile puts them, whatever O the environment holds (dkms.conf pins O)
# and whichever headers dkms names (KDIR).
build_dir=$(O=/nonexistent make_where "$src/host-kvm" build KVER="$kver" KDIR="$dkms_kdir" O=../out)
location=$(sed -n 's/^BUILT_MODULE_LOCATION\[0\]="\(.*\)"$/\1/p' "$src/dkms.conf")
if grep -qF 'MAKE[0]="make -C host-kvm KVER=${kernelver} KDIR=${kernel_source_dir} O=../out modules"' "$src/dkms.conf" &&
   [ "$build_dir" = "$src/out/host-kvm" ] && [ "$location" = out/host-kvm/ ]; then
	pass "dkms-source: the tree's Makefile builds where dkms.conf takes the modules"
else
	fail "dkms-source: the tree's Makefile builds where dkms.conf takes the modules" "BUILD '$build_dir', BUILT_MODULE_LOCATION '$location'"
fi

echo "== dkms add and dkms build, in a private DKMS tree"
# A real dkms run of both source trees (the host's, made above, and the guest
# driver's) for $kver, with --dkmstree/--sourcetree in the scratch root and
# dkms's signing key in $tmp: nothing outside them is written (checked).
# dkms runs the MAKE lines of dkms.conf in its own copy of each tree; our O,
# KVER and make's variables must not reach them.
dkms_tree=$root/var/lib/dkms
dkms_src=$root/usr/src
dkms_key=$tmp/dkms-mok.key
dkms_cert=$tmp/dkms-mok.pub
distro_vermagic=$(modinfo -F vermagic "$distro_kvm")
dkms_serial=''
src_version=$(dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null)

# dkms_run ARGS...: dkms ARGS on the private trees; output in $out, status $rc.
dkms_run() {
	out=$(env -u O -u KVER -u KDIR -u DESTDIR -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		mok_signing_key="$dkms_key" mok_certificate="$dkms_cert" \
		${dkms_sign_file:+sign_file="$dkms_sign_file"} \
		dkms "$@" --dkmstree "$dkms_tree" --sourcetree "$dkms_src" 2>&1)
	rc=$?
}

# system_dkms_state: what dkms could write outside the private trees.
system_dkms_state() {
	find /var/lib/dkms /usr/src "$distro" ${kroot:+"$kroot"} -maxdepth 3 -printf '%p %s %T@\n' 2>/dev/null | sort
	ls -l /etc/dkms/framework.conf.d 2>/dev/null
}

# dkms_module_checks NAME MODULE... : the modules dkms built for $kver,
# compressed as the kernel's are (what dkms install copies), with the
# kernel's vermagic, every imported CRC one the kernel exports, and dkms's
# signature made with this test's key.
dkms_module_checks() {
	local pkg=$1 m ko dir bad_vermagic='' bad_crc='' bad_sig='' missing=''
	shift
	dir=$dkms_tree/$pkg/$kver/$(uname -m)/module
	for m in "$@"; do
		ko=$dir/$m.ko$zext
		if [ ! -f "$ko" ]; then
			missing="$missing $m.ko$zext"
			continue
		fi
		[ "$(modinfo -F vermagic "$ko")" = "$distro_vermagic" ] ||
			bad_vermagic="$bad_vermagic $m: '$(modinfo -F vermagic "$ko")'"
		modprobe --dump-modversions "$ko" | awk '{ print $2 "\t" $1 }' | sort >"$tmp/imports"
		n=$(comm -23 "$tmp/imports" "$tmp/kernel-exports" | wc -l)
		[ "$(wc -l <"$tmp/imports")" -gt 0 ] && [ "$n" = 0 ] ||
			bad_crc="$bad_crc $m: $n of $(wc -l <"$tmp/imports")"
		[ "$(modinfo -F signer "$ko")" = "DKMS module signing key" ] &&
		[ "$(modinfo -F sig_key "$ko" | tr -d :)" = "$dkms_serial" ] ||
			bad_sig="$bad_sig $m: signer '$(modinfo -F signer "$ko")' key '$(modinfo -F sig_key "$ko")'"
	done
	if [ -z "$missing" ]; then
		pass "dkms build $pkg: $* in the DKMS tree (.ko$zext)"
	else
		fail "dkms build $pkg: the built modules in the DKMS tree" "missing:$missing in $dir: $(ls "$dir" 2>&1)"
		return
	fi
	if [ -z "$bad_vermagic" ]; then
		pass "dkms build $pkg: vermagic '$distro_vermagic' (the distro's)"
	else
		fail "dkms build $pkg: vermagic" "want '$distro_vermagic', got$bad_vermagic"
	fi
	if [ -z "$bad_crc" ]; then
		pass "dkms build $pkg: every imported CRC is one $kver exports"
	else
		fail "dkms build $pkg: every imported CRC is one $kver exports" "CRCs the kernel does not export:$bad_crc"
	fi
	if [ -z "$bad_sig" ]; then
		pass "dkms build $pkg: signed by dkms with the test's key"
	else
		fail "dkms build $pkg: signed by dkms with the test's key" "cert serial $dkms_serial;$bad_sig"
	fi
}

if ! command -v dkms >/dev/null; then
	fail "dkms" "dkms is not installed (make deps, or apt-get install dkms)"
elif grep -qsE '^[[:space:]]*(sign_file|mok_signing_key|mok_certificate|dkms_tree|source_tree)=' \
	/etc/dkms/framework.conf /etc/dkms/framework.conf.d/*.conf; then
	fail "dkms" "/etc/dkms/framework.conf* set a signing key or tree; a test build would use or write them"
else
	awk -F '\t' '{ print $2 "\t" $1 }' "$kdir/Module.symvers" | sort -u \
		>"$tmp/kernel-exports"
	out=$(make --no-print-directory -C "$repo/guest-driver" dkms-source DESTDIR="$dkms_src" 2>&1)
	rc=$?
	[ "$rc" = 0 ] || fail "guest-driver dkms-source" "status $rc: ${out:0:300}"
	mkdir -p "$dkms_tree"
	system_dkms_state >"$tmp/system-before"
	for pkg in pvprof-kvm/0.1 pvprof-guest/1; do
		dkms_run add -m "${pkg%/*}" -v "${pkg#*/}"
		if [ "$rc" = 0 ] && [ -L "$dkms_tree/$pkg/source" ] &&
		   [ "$(readlink "$dkms_tree/$pkg/source")" = "$dkms_src/${pkg%/*}-${pkg#*/}" ]; then
			pass "dkms add $pkg"
		else
			fail "dkms add $pkg" "status $rc: ${out:0:400}"
		fi
		start=$SECONDS
		dkms_run build -m "${pkg%/*}" -v "${pkg#*/}" -k "$kver" "${dkms_kopts[@]}"
		took=$((SECONDS - start))
		if [ "$rc" = 0 ]; then
			pass "dkms build $pkg -k $kver ($took s)"
		else
			fail "dkms build $pkg -k $kver" "status $rc after $took s: $(tail -n 15 <<<"$out"); make.log: $(tail -n 15 "$dkms_tree/$pkg/build/make.log" 2>/dev/null)"
		fi
		[ -f "$dkms_cert" ] && dkms_serial=$(openssl x509 -inform DER -in "$dkms_cert" -noout -serial | sed 's/^serial=//')
	done
	dkms_run status
	if grep -qxF "pvprof-kvm/0.1, $kver, $(uname -m): built" <<<"$out" &&
	   grep -qxF "pvprof-guest/1, $kver, $(uname -m): built" <<<"$out"; then
		pass "dkms status: both built for $kver"
	else
		fail "dkms status: both built for $kver" "${out:0:400}"
	fi
	dkms_module_checks pvprof-kvm/0.1 kvm kvm-amd kvm-intel
	dkms_module_checks pvprof-guest/1 pvprof_guest
	# The version guard (host-kvm/pvprof/main.c) is compiled in, with the
	# version of the linux-source package the build used.
	ko=$dkms_tree/pvprof-kvm/0.1/$kver/$(uname -m)/module/kvm.ko$zext
	ko_cat "$ko" 2>/dev/null | strings -a >"$tmp/kvm-strings"
	if [ -n "$src_version" ] && [ -f "$ko" ] &&
	   grep -qxF "$src_version" "$tmp/kvm-strings" &&
	   grep -qF 'kvm-pvprof: built from linux-source %s, but the running kernel is "%s": refusing to load' "$tmp/kvm-strings"; then
		pass "dkms build pvprof-kvm: kvm.ko has the version guard, for linux-source $src_version"
	else
		fail "dkms build pvprof-kvm: kvm.ko has the version guard" "linux-source version '$src_version'; guard strings: $(grep -F 'built from linux-source' "$tmp/kvm-strings" | head -c 200)"
	fi
	ko=$dkms_tree/pvprof-guest/1/$kver/$(uname -m)/module/pvprof_guest.ko$zext
	if [ "$(modinfo -F name "$ko" 2>/dev/null)" = pvprof_guest ] &&
	   modinfo -F parm "$ko" | grep -q '^buf_size:'; then
		pass "dkms build pvprof-guest: pvprof_guest.ko is the guest driver (name, buf_size parameter)"
	else
		fail "dkms build pvprof-guest: pvprof_guest.ko is the guest driver" "$(modinfo "$ko" 2>&1 | head -c 300)"
	fi
	# dkms install into the scratch root (--installtree; --no-depmod, as
	# its depmod would be this machine's: depmod -b runs on the scratch
	# root instead).  dkms puts a module over one the kernel has only when
	# their versions differ (host-kvm/pvprof-version.c).
	dkms_dest=$mods/updates/dkms
	dkms_mods=$dkms_tree/pvprof-kvm/0.1/$kver/$(uname -m)/module
	dkms_run install -m pvprof-kvm -v 0.1 -k "$kver" "${dkms_kopts[@]}" \
		--installtree "$root/lib/modules" --no-depmod
	depmod -b "$root" "$kver"
	want_dkms="/lib/modules/$kver/updates/dkms/kvm.ko$zext /lib/modules/$kver/updates/dkms/kvm-amd.ko$zext "
	if [ "$rc" = 0 ] && [ "$(kvm_paths)" = "$want_dkms" ] &&
	   cmp -s "$dkms_mods/kvm.ko$zext" "$dkms_dest/kvm.ko$zext" &&
	   cmp -s "$dkms_mods/kvm-amd.ko$zext" "$dkms_dest/kvm-amd.ko$zext"; then
		pass "dkms install pvprof-kvm/0.1: into updates/dkms (version $(modinfo -F version "$dkms_dest/kvm.ko$zext")), and modprobe picks them (over kvm.ko$zext)"
	else
		fail "dkms install pvprof-kvm/0.1: into updates/dkms, and modprobe picks them" "status $rc, modprobe: $(kvm_paths), updates/dkms: $(ls "$dkms_dest" 2>&1 | tr '\n' ' '); $(grep -E 'will not replace|Error' <<<"$out" | head -n 4)"
	fi
	dkms_run uninstall -m pvprof-kvm -v 0.1 -k "$kver" "${dkms_kopts[@]}" \
		--installtree "$root/lib/modules" --no-depmod
	depmod -b "$root" "$kver"
	if [ "$rc" = 0 ] && [ ! -e "$dkms_dest/kvm.ko$zext" ] && [ "$(kvm_paths)" = "$want_distro" ]; then
		pass "dkms uninstall pvprof-kvm/0.1: the distro's KVM again"
	else
		fail "dkms uninstall pvprof-kvm/0.1: the distro's KVM again" "status $rc, modprobe: $(kvm_paths), ${out:0:300}"
	fi
	system_dkms_state >"$tmp/system-after"
	if cmp -s "$tmp/system-before" "$tmp/system-after"; then
		pass "dkms: nothing written outside the private trees (/var/lib/dkms, /usr/src, /lib/modules/$kver${kroot:+, $kroot})"
	else
		fail "dkms: nothing written outside the private trees" "$(diff "$tmp/system-before" "$tmp/system-after" | head -n 10)"
	fi
fi

echo "== Secure Boot signing (host-kvm/README.md)"
sign_file=$kdir/scripts/sign-file
if ! command -v openssl >/dev/null || [ ! -x "$sign_file" ]; then
	fail "signing" "needs openssl and $sign_file"
	finish
fi
openssl req -new -x509 -newkey rsa:2048 -keyout "$tmp/MOK.priv" -outform DER \
	-out "$tmp/MOK.der" -nodes -days 1 -subj "/CN=pvprof throwaway MOK/" 2>/dev/null
cp "$build/kvm.ko" "$tmp/kvm.ko"
if "$sign_file" sha256 "$tmp/MOK.priv" "$tmp/MOK.der" "$tmp/kvm.ko" &&
   [ "$(modinfo -F signer "$tmp/kvm.ko")" = "pvprof throwaway MOK" ] &&
   [ "$(modinfo -F sig_hashalgo "$tmp/kvm.ko")" = sha256 ]; then
	pass "signing: modinfo shows the MOK as signer (sha256)"
else
	fail "signing: modinfo shows the MOK as signer" "signer '$(modinfo -F signer "$tmp/kvm.ko")'"
fi
if [ -z "$(modinfo -F signer "$build/kvm.ko")" ]; then
	pass "signing: the built module itself stays unsigned"
else
	fail "signing: the built module itself stays unsigned" "it has a signer"
fi
finish
