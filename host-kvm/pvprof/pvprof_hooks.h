/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The entry points KVM calls into pvprof.  This is the only pvprof header
 * the hook patch (host-kvm/patches/) includes into KVM's own files; pvprof
 * keeps all of its state in its own tables, so no KVM structure changes.
 */
#ifndef _PVPROF_HOST_HOOKS_H
#define _PVPROF_HOST_HOOKS_H

#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kvm_host.h>

#include "abi/pvprof.h"

/*
 * pvprof's private request: a sample is pending or the sampling
 * configuration changed.  The last arch bit of the 64-bit request word:
 * upstream numbers arch requests up from 0 (6.1 uses 0..31; 6.12 adds
 * KVM_REQ_HV_TLB_FLUSH at 32 and 34, later kernels 33 and 35), so a port
 * to a newer kernel meets a collision last.  KVM_ARCH_REQ() itself fails
 * the build past the word.
 */
#define KVM_REQ_PVPROF		KVM_ARCH_REQ(55)

int __init kvm_pvprof_init(void);
void __exit kvm_pvprof_exit(void);

void kvm_pvprof_vcpu_reset(struct kvm_vcpu *vcpu);
void kvm_pvprof_vcpu_real_mode(struct kvm_vcpu *vcpu);
void kvm_pvprof_nmis_discarded(struct kvm_vcpu *vcpu);
void kvm_pvprof_vcpu_destroy(struct kvm_vcpu *vcpu);
void kvm_pvprof_vm_destroy(struct kvm *kvm);
void kvm_pvprof_handle_request(struct kvm_vcpu *vcpu);

/*
 * The hooks on every KVM_RUN, exit and NMI injection of every VM cost one
 * patched-out jump while no VM has pvprof state: the key counts the VMs
 * that have it (vm.c).
 */
DECLARE_STATIC_KEY_FALSE(kvm_pvprof_in_use);

void __kvm_pvprof_vcpu_run_enter(struct kvm_vcpu *vcpu);
void __kvm_pvprof_vcpu_run_exit(struct kvm_vcpu *vcpu);
void __kvm_pvprof_vcpu_exited(struct kvm_vcpu *vcpu);
void __kvm_pvprof_nmi_delivery(struct kvm_vcpu *vcpu);
void __kvm_pvprof_vnmi_delivery(struct kvm_vcpu *vcpu);
bool __kvm_pvprof_irq_waits_for_window(struct kvm_vcpu *vcpu);
unsigned int __kvm_pvprof_nmi_pending_owed(struct kvm_vcpu *vcpu);

static inline void kvm_pvprof_vcpu_run_enter(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&kvm_pvprof_in_use))
		__kvm_pvprof_vcpu_run_enter(vcpu);
}

static inline void kvm_pvprof_vcpu_run_exit(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&kvm_pvprof_in_use))
		__kvm_pvprof_vcpu_run_exit(vcpu);
}

static inline void kvm_pvprof_vcpu_exited(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&kvm_pvprof_in_use))
		__kvm_pvprof_vcpu_exited(vcpu);
}

static inline void kvm_pvprof_nmi_delivery(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&kvm_pvprof_in_use))
		__kvm_pvprof_nmi_delivery(vcpu);
}

/* 6.12's process_nmi() handed an NMI to the hardware (vNMI). */
static inline void kvm_pvprof_vnmi_delivery(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&kvm_pvprof_in_use))
		__kvm_pvprof_vnmi_delivery(vcpu);
}

static inline bool kvm_pvprof_irq_waits_for_window(struct kvm_vcpu *vcpu)
{
	return static_branch_unlikely(&kvm_pvprof_in_use) &&
	       __kvm_pvprof_irq_waits_for_window(vcpu);
}

static inline unsigned int kvm_pvprof_nmi_pending_owed(struct kvm_vcpu *vcpu)
{
	return static_branch_unlikely(&kvm_pvprof_in_use) ?
	       __kvm_pvprof_nmi_pending_owed(vcpu) : 0;
}
long kvm_pvprof_dev_ioctl(unsigned int ioctl, unsigned long arg);

long kvm_pvprof_hypercall(struct kvm_vcpu *vcpu, unsigned long op,
			  unsigned long a1, unsigned long a2, unsigned long a3);

#endif /* _PVPROF_HOST_HOOKS_H */
