// SPDX-License-Identifier: GPL-2.0
/*
 * The version in the modinfo of kvm.ko, kvm-amd.ko and kvm-intel.ko: the
 * linux-source package's, marked as pvprof's ("6.1.192-2+pvprof").
 * host-kvm/Makefile links this file in once per module, as
 * pvprof-version/<module>.c (kvm.Kbuild).
 *
 * dkms install puts a module over one the kernel ships only when their
 * versions differ: the distro's KVM modules have no version, and pvprof's
 * without one would be "exactly" the kernel's, so dkms would keep the
 * distro's ("DKMS will not replace this module").
 */
#include <linux/module.h>

#include "pvprof_src_version.h"

MODULE_VERSION(PVPROF_SRC_PKG_VERSION "+pvprof");
