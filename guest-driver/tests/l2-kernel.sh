# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest driver's nested suites, after tests/nested/common.sh:
# the kernel their L2 guests boot and the driver built for it.
# shellcheck shell=bash
#
# L2_KVER unset: the L2s boot L1's own kernel (run-l2's default) and load
# $O/guest-driver/pvprof_guest.ko, as before there was a choice.
# L2_KVER=R (a kernel release, or 6.12 for the one guest-driver/Makefile
# pins): the L2s boot R's bzImage and load the driver built with
# "make -C guest-driver KVER=R", in $O/guest-driver-R.  R's headers and
# bzImage come from the installed packages, else from $O/kernels/R, which
# "make -C guest-driver kernel KVER=R" fills (run here when they are
# missing).  L1 keeps its kernel either way: KVER, which names L1's kernel
# to run-l1, is a different variable.

# l2_make ARG...: make in guest-driver for the L2 kernel.
l2_make() {
	make -s -C "$REPO_DIR/guest-driver" O="$O" ${L2_KVER:+KVER="$L2_KVER"} "$@"
}

# l2_where NAME: the value "make where" prints for NAME.
l2_where() {
	l2_make where | sed -n "s/^$1 //p"
}

# l2_kernel_select: sets L2_REL (the release, empty for L1's own kernel),
# L2_SUFFIX ("" or "-S", S the series of R such as 6.12: for the names of
# outputs and results), L2_MODULE, L2_SELFTEST_DIR and L2_IMAGE_ARGS
# (run-l2's --kernel option, or nothing).
# Builds nothing.
# shellcheck disable=SC2034 # the variables are the sourcing script's
l2_kernel_select() {
	L2_REL=
	L2_SUFFIX=
	L2_IMAGE_ARGS=()
	if [ -n "${L2_KVER:-}" ]; then
		if [ -z "$(l2_where kver)" ] || [ -z "$(l2_where vmlinuz)" ]; then
			l2_make kernel >&2 ||
				die "cannot unpack kernel $L2_KVER (make -C guest-driver kernel KVER=$L2_KVER)"
		fi
		L2_REL=$(l2_where kver)
		[ -n "$L2_REL" ] || die "no kernel build tree for L2_KVER=$L2_KVER"
		L2_SUFFIX=-$(kernel_series "$L2_REL")
		L2_IMAGE_ARGS=(--kernel "$(l2_where vmlinuz)")
	fi
	L2_MODULE=$(l2_where module)
	L2_SELFTEST_DIR=$(l2_where selftest)
}
