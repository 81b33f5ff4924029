/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof host state kept beside KVM's own: one object per VM that uses
 * pvprof, found from its struct kvm, and one per registered vCPU slot.
 * Nothing here is part of struct kvm or struct kvm_vcpu, so no KVM export
 * changes its CRC.
 */
#ifndef _PVPROF_HOST_H
#define _PVPROF_HOST_H

#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/kvm_host.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>

#include "pvprof-core/host.h"

/**
 * struct pvprof_vcpu - pvprof state of one vCPU
 * @lock: serialises the vCPU thread and control-plane readers
 * @vcpu_id: the id given to KVM_CREATE_VCPU
 * @registered: a buffer is registered
 * @gpa: its guest physical address
 * @cookie: the last cookie chosen for this vCPU (a new one must differ)
 * @buf: cached translation of the whole buffer
 * @ring: host side of the registration (core/host.h)
 * @acct: counters, kept across registrations
 */
struct pvprof_vcpu {
	struct mutex lock;
	u32 vcpu_id;
	bool registered;
	gpa_t gpa;
	u64 cookie;
	struct gfn_to_hva_cache buf;
	struct pvprof_host_ring ring;
	struct pvprof_vcpu_acct acct;
};

/**
 * struct pvprof_vm - pvprof state of one VM
 * @node: in the table keyed by @kvm
 * @rcu: frees the object after lookups that may still see it
 * @ref: held by the table (until the VM is destroyed) and by stream fds
 * @kvm: the VM; only valid while the object is in the table
 * @lock: protects @vcpus allocation and the configuration
 * @expose: PVPROF_EXPOSE_* for this VM
 * @vcpus: per-vCPU state by vcpu_idx, allocated on first use
 */
struct pvprof_vm {
	struct hlist_node node;
	struct rcu_head rcu;
	struct kref ref;
	struct kvm *kvm;
	struct mutex lock;
	u32 expose;
	struct pvprof_vcpu *vcpus[KVM_MAX_VCPUS];
};

struct pvprof_vm *pvprof_vm_find(struct kvm *kvm);
struct pvprof_vm *pvprof_vm_get_or_create(struct kvm *kvm);
struct pvprof_vcpu *pvprof_vcpu_find(struct kvm_vcpu *vcpu);
struct pvprof_vcpu *pvprof_vcpu_get_or_create(struct kvm_vcpu *vcpu);
bool pvprof_vm_hidden(struct kvm *kvm);
void pvprof_vcpu_drop(struct pvprof_vcpu *pv);

#endif /* _PVPROF_HOST_H */
