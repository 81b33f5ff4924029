/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels pvprof's host code is built for
 * (Debian's linux-source-6.1 and linux-source-6.12), in one place: the .c
 * files call these and never test the kernel version themselves.  Each
 * test names the upstream release that made the change; only 6.1 and 6.12
 * are built and checked (host-kvm/Makefile), the releases in between are
 * not.  doc/kvm-6.12-facts.md says why each one matters.
 */
#ifndef _PVPROF_COMPAT_H
#define _PVPROF_COMPAT_H

#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0) || \
	LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#error "pvprof's host code is written for Linux 6.1 and 6.12 only"
#endif

/* is_smm() moved from kvm_cache_regs.h to arch/x86/kvm/smm.h in 6.2. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#include "smm.h"
#endif

/* 6.12 made struct fd opaque: its file is fd_file(f). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#define fd_file(f)	((f).file)
#endif

/*
 * get_user_pages_remote() lost its vmas argument in 6.5.  One page of
 * @mm at @addr, read only; returns the number of pages pinned.
 */
static inline long pvprof_get_user_page_remote(struct mm_struct *mm,
					       unsigned long addr,
					       struct page **page)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return get_user_pages_remote(mm, addr, 1, 0, page, NULL);
#else
	return get_user_pages_remote(mm, addr, 1, 0, page, NULL, NULL);
#endif
}

/*
 * Virtual NMIs (AMD vNMI, KVM 6.4): with them SVM hands a pending NMI to
 * the hardware in the VMCB (V_NMI_PENDING, set by process_nmi() through
 * kvm_x86_ops.set_vnmi_pending) instead of injecting it, and no longer
 * intercepts the guest's IRET.  svm_hardware_setup() clears both vNMI ops
 * when the host has no vNMI (or kvm_amd.vnmi=0); VMX never sets them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
/* The NMI the vCPU's VMCB holds pending for the hardware. */
static inline bool pvprof_vnmi_pending(struct kvm_vcpu *vcpu)
{
	return static_call(kvm_x86_is_vnmi_pending)(vcpu);
}

/* The vendor module hands NMIs to the hardware (the vNMI ops are set). */
static inline bool pvprof_host_has_vnmi(void)
{
	return kvm_x86_ops.set_vnmi_pending;
}
#else
static inline bool pvprof_vnmi_pending(struct kvm_vcpu *vcpu)
{
	return false;
}

static inline bool pvprof_host_has_vnmi(void)
{
	return false;
}
#endif

/*
 * The NMIs KVM holds pending for injection (after process_nmi()): what
 * KVM_GET_VCPU_EVENTS reports in nmi.pending, kvm_get_nr_pending_nmis()
 * since 6.4 (nmi_pending plus the vNMI one).
 */
static inline unsigned int pvprof_nmis_pending(struct kvm_vcpu *vcpu)
{
	return vcpu->arch.nmi_pending + pvprof_vnmi_pending(vcpu);
}

#endif /* _PVPROF_COMPAT_H */
