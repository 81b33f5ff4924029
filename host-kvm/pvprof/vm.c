// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof side tables: the per-VM object, found from struct kvm under RCU,
 * and the per-vCPU state it owns.
 *
 * The table holds one reference on each object from its creation until
 * kvm_arch_pre_destroy_vm(); code running on behalf of the VM (vCPU
 * threads, ioctls holding a VM fd) can therefore use the object without a
 * reference of its own.  Anything that outlives the VM (a stream fd) takes
 * a reference.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>

#include "pvprof_hooks.h"
#include "pvprof_host.h"

static bool pvprof_expose = true;
module_param(pvprof_expose, bool, 0644);
MODULE_PARM_DESC(pvprof_expose,
		 "Let guests use pvprof (default 1); when 0, PROBE fails with -KVM_ENOSYS exactly as on stock KVM, except in VMs made visible with PVPROF_CTL_EXPOSE");

#define PVPROF_VM_HASH_BITS	6

static DEFINE_HASHTABLE(pvprof_vms, PVPROF_VM_HASH_BITS);
static DEFINE_SPINLOCK(pvprof_vms_lock);

/* On while the table holds a VM: enabled before it is added, off after. */
DEFINE_STATIC_KEY_FALSE(kvm_pvprof_in_use);

/**
 * pvprof_vm_find() - the pvprof object of a VM, if it has one
 * @kvm: the VM
 *
 * The caller runs on behalf of the VM (it holds the VM alive), so the
 * object stays valid without a reference.  Never inlined: tests count the
 * hash walks with a kprobe (tests/host/static_key_test.c).
 *
 * Return: the object or NULL.
 */
noinline struct pvprof_vm *pvprof_vm_find(struct kvm *kvm)
{
	struct pvprof_vm *pvm;

	rcu_read_lock();
	hash_for_each_possible_rcu(pvprof_vms, pvm, node, (unsigned long)kvm) {
		if (pvm->kvm == kvm) {
			rcu_read_unlock();
			return pvm;
		}
	}
	rcu_read_unlock();
	return NULL;
}

/**
 * pvprof_vm_get_or_create() - the pvprof object of a VM, created on first use
 * @kvm: the VM, held alive by the caller
 *
 * Return: the object, or NULL when it cannot be allocated.
 */
struct pvprof_vm *pvprof_vm_get_or_create(struct kvm *kvm)
{
	struct pvprof_vm *pvm, *old;

	pvm = pvprof_vm_find(kvm);
	if (pvm)
		return pvm;

	pvm = kvzalloc(sizeof(*pvm), GFP_KERNEL_ACCOUNT);
	if (!pvm)
		return NULL;
	kref_init(&pvm->ref);
	mutex_init(&pvm->lock);
	spin_lock_init(&pvm->sideband_lock);
	pvm->sideband_tokens = PVPROF_SIDEBAND_DEFAULT_RATE;
	pvm->sideband_refill_ns = ktime_get_ns();
	pvm->kvm = kvm;
	pvm->expose = PVPROF_EXPOSE_DEFAULT;

	/* The hooks run before anyone can find the object. */
	static_branch_inc(&kvm_pvprof_in_use);
	/* Two threads of one VM may race to create it: keep the first. */
	spin_lock(&pvprof_vms_lock);
	old = pvprof_vm_find(kvm);
	if (!old)
		hash_add_rcu(pvprof_vms, &pvm->node, (unsigned long)kvm);
	spin_unlock(&pvprof_vms_lock);
	if (old) {
		static_branch_dec(&kvm_pvprof_in_use);
		kvfree(pvm);
		return old;
	}
	return pvm;
}

static void pvprof_vm_free_rcu(struct rcu_head *head)
{
	kvfree(container_of(head, struct pvprof_vm, rcu));
}

static void pvprof_vm_release(struct kref *ref)
{
	struct pvprof_vm *pvm = container_of(ref, struct pvprof_vm, ref);

	pvprof_stream_free(pvm->stream);
	call_rcu(&pvm->rcu, pvprof_vm_free_rcu);
}

/**
 * pvprof_vm_put() - drop a reference taken for a stream fd
 * @pvm: the object
 */
void pvprof_vm_put(struct pvprof_vm *pvm)
{
	kref_put(&pvm->ref, pvprof_vm_release);
}

/**
 * pvprof_vm_hidden() - is pvprof hidden from this VM
 * @kvm: the VM
 *
 * Return: true when the VM's exposure mode, or for PVPROF_EXPOSE_DEFAULT
 * the pvprof_expose module parameter, hides pvprof.
 */
bool pvprof_vm_hidden(struct kvm *kvm)
{
	return pvprof_vm_hides(pvprof_vm_find(kvm));
}

/**
 * pvprof_vm_hides() - is pvprof hidden from the VM of this object
 * @pvm: the VM's pvprof object, or NULL when it has none
 *
 * Return: as pvprof_vm_hidden().
 */
bool pvprof_vm_hides(const struct pvprof_vm *pvm)
{
	u32 mode = pvm ? READ_ONCE(pvm->expose) : PVPROF_EXPOSE_DEFAULT;

	if (mode == PVPROF_EXPOSE_DEFAULT)
		return !READ_ONCE(pvprof_expose);
	return mode == PVPROF_EXPOSE_HIDDEN;
}

/*
 * The state in @vcpu's slot, only if it is @vcpu's own.  KVM sets vcpu_idx
 * only after kvm_arch_vcpu_create() (whose kvm_vcpu_reset() calls pvprof)
 * and frees a vCPU whose KVM_CREATE_VCPU failed (a duplicate id) with the
 * index still 0: the slot then holds vCPU 0's state, which no hook of the
 * new vCPU may touch.
 */
static struct pvprof_vcpu *pvprof_vcpu_slot(struct pvprof_vm *pvm,
					    struct kvm_vcpu *vcpu)
{
	/* Pairs with the release in pvprof_vcpu_get_or_create(). */
	struct pvprof_vcpu *pv = smp_load_acquire(&pvm->vcpus[vcpu->vcpu_idx]);

	return pv && pv->vcpu == vcpu ? pv : NULL;
}

/*
 * The vCPU state each CPU found last, so that the hooks on every exit and
 * KVM_RUN of a VM with pvprof state find it without the table's hash walk.
 * Only a hint: taken when it is the state of the vCPU asked about, which
 * stays valid while that vCPU is, and pvprof_vcpu_free() clears every
 * entry naming a state before freeing it after an RCU grace period.
 */
static DEFINE_PER_CPU(struct pvprof_vcpu *, pvprof_vcpu_hint);

/**
 * pvprof_vcpu_find() - pvprof state of a vCPU, if it has any
 * @vcpu: the vCPU, held alive by the caller
 *
 * Return: the state, or NULL when the vCPU has none (including a vCPU
 * still being created, whose index is not its own yet).
 */
struct pvprof_vcpu *pvprof_vcpu_find(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv;
	struct pvprof_vm *pvm;

	rcu_read_lock();
	pv = this_cpu_read(pvprof_vcpu_hint);
	if (pv && READ_ONCE(pv->vcpu) == vcpu) {
		rcu_read_unlock();
		return pv;
	}
	rcu_read_unlock();
	pvm = pvprof_vm_find(vcpu->kvm);
	pv = pvm ? pvprof_vcpu_slot(pvm, vcpu) : NULL;
	if (pv)
		this_cpu_write(pvprof_vcpu_hint, pv);
	return pv;
}

/* No CPU's hint names @pv any more. */
static void pvprof_vcpu_forget_hints(struct pvprof_vcpu *pv)
{
	int cpu;

	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&pvprof_vcpu_hint, cpu), pv, NULL);
}

/**
 * pvprof_vcpu_get_or_create() - pvprof state of a vCPU, created on first use
 * @vcpu: the vCPU, running or in an ioctl (so it has its own index)
 *
 * Return: the state, or NULL when it cannot be allocated.
 */
struct pvprof_vcpu *pvprof_vcpu_get_or_create(struct kvm_vcpu *vcpu)
{
	struct pvprof_vm *pvm = pvprof_vm_get_or_create(vcpu->kvm);
	struct pvprof_vcpu *pv;

	if (!pvm)
		return NULL;
	mutex_lock(&pvm->lock);
	pv = pvm->vcpus[vcpu->vcpu_idx];
	if (!pv) {
		pv = kzalloc(sizeof(*pv), GFP_KERNEL_ACCOUNT);
		if (pv) {
			mutex_init(&pv->lock);
			pv->pvm = pvm;
			pv->vcpu = vcpu;
			pv->vcpu_id = vcpu->vcpu_id;
			pv->register_tokens = PVPROF_REGISTER_RATE;
			pv->register_refill_ns = ktime_get_ns();
			/* Lockless finders see it initialised. */
			smp_store_release(&pvm->vcpus[vcpu->vcpu_idx], pv);
		}
	} else if (WARN_ON_ONCE(pv->vcpu != vcpu)) {
		pv = NULL;
	}
	mutex_unlock(&pvm->lock);
	return pv;
}

/**
 * pvprof_vcpu_drop() - end a registration without touching the buffer
 * @pvm: the VM
 * @pv: the vCPU's state, lock held
 * @event: PVPROF_VCPU_UNREGISTERED or PVPROF_VCPU_DROPPED, for the stream
 *
 * Counts the outstanding notices as unanswered (core/host.h) and queues
 * the losses to the stream.  Does nothing when the vCPU is not registered.
 */
void pvprof_vcpu_drop(struct pvprof_vm *pvm, struct pvprof_vcpu *pv, u32 event)
{
	lockdep_assert_held(&pv->lock);
	if (!pv->registered)
		return;
	pvprof_host_unregister(&pv->ring, &pv->acct);
	pv->registered = false;
	pvprof_stream_put_vcpu(pvm, pv, event);
	pvprof_stream_put_losses(pvm, pv);
}

/**
 * pvprof_vcpu_drop_registration() - end a vCPU's registration from outside
 * @vcpu: the vCPU, on its own thread or with vcpu->mutex held
 */
void pvprof_vcpu_drop_registration(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);

	if (!pv)
		return;
	mutex_lock(&pv->lock);
	pvprof_vcpu_drop(pv->pvm, pv, PVPROF_VCPU_DROPPED);
	mutex_unlock(&pv->lock);
}

/**
 * kvm_pvprof_vcpu_real_mode() - the VMM set the vCPU to real mode
 * @vcpu: the vCPU, vcpu->mutex held
 *
 * Called from KVM_SET_SREGS(2) with CR0.PE clear, the VMM's reset of the vCPU
 * (spec pvprof-registration-end): drops the registration.  KVM keeps the NMIs
 * it holds, so an NMI pvprof owes stays owed.
 */
void kvm_pvprof_vcpu_real_mode(struct kvm_vcpu *vcpu)
{
	pvprof_vcpu_drop_registration(vcpu);
}

/**
 * kvm_pvprof_nmis_discarded() - KVM no longer holds the NMI pvprof owes
 * @vcpu: the vCPU, vcpu->mutex held
 *
 * Called where KVM discards the vCPU's pending NMIs (reset, or the VMM
 * writing the pending count with KVM_SET_VCPU_EVENTS, which never holds
 * pvprof's: KVM_GET_VCPU_EVENTS leaves it out).  An NMI owed but no longer
 * held would attribute the vCPU's next unrelated NMI to pvprof.
 */
void kvm_pvprof_nmis_discarded(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);

	if (!pv)
		return;
	mutex_lock(&pv->lock);
	pvprof_host_nmis_discarded(&pv->ring);
	pv->work.awaits_nmi_window = false;
	mutex_unlock(&pv->lock);
}

/**
 * kvm_pvprof_vcpu_reset() - KVM resets the vCPU (creation, INIT, RESET)
 * @vcpu: the vCPU, on its own thread or being created
 *
 * Drops the registration (spec pvprof-registration-end) and forgets the NMI
 * pvprof owed: kvm_vcpu_reset() discards every NMI KVM holds.  A vCPU being
 * created has no state of its own yet (pvprof_vcpu_find()).
 */
void kvm_pvprof_vcpu_reset(struct kvm_vcpu *vcpu)
{
	pvprof_vcpu_drop_registration(vcpu);
	kvm_pvprof_nmis_discarded(vcpu);
}

static void pvprof_vcpu_free(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	unsigned int idx = pv->vcpu->vcpu_idx;

	mutex_lock(&pv->lock);
	pvprof_vcpu_stop_sampling(pv);
	pvprof_vcpu_drop(pvm, pv, PVPROF_VCPU_DROPPED);
	pvprof_stream_put_losses(pvm, pv);
	kvfree(pv->work.span_copy);
	pv->work.span_copy = NULL;
	pv->span_stream = NULL;
	mutex_unlock(&pv->lock);
	WRITE_ONCE(pvm->vcpus[idx], NULL);
	pvprof_vcpu_forget_hints(pv);
	/* A finder may still compare a hint it read before the line above. */
	kfree_rcu(pv, rcu);
}

/**
 * kvm_pvprof_vcpu_destroy() - a vCPU is being freed
 * @vcpu: the vCPU
 *
 * KVM frees vCPUs only with their VM (after kvm_pvprof_vm_destroy(), which
 * already released everything) or when KVM_CREATE_VCPU fails, when no
 * other thread can see the vCPU yet: then it has no state of its own, and
 * its index may still be another vCPU's.
 */
void kvm_pvprof_vcpu_destroy(struct kvm_vcpu *vcpu)
{
	struct pvprof_vm *pvm = pvprof_vm_find(vcpu->kvm);
	struct pvprof_vcpu *pv;

	if (!pvm)
		return;
	mutex_lock(&pvm->lock);
	pv = pvprof_vcpu_slot(pvm, vcpu);
	if (pv)
		pvprof_vcpu_free(pvm, pv);
	mutex_unlock(&pvm->lock);
}

/**
 * kvm_pvprof_vm_destroy() - a VM is going away
 * @kvm: the VM
 *
 * Called from kvm_arch_pre_destroy_vm(): no vCPU runs and no ioctl is in
 * flight any more.  Ends every registration and unlinks the object; a
 * stream fd may keep it (without its vCPUs) until closed.
 */
void kvm_pvprof_vm_destroy(struct kvm *kvm)
{
	struct pvprof_vm *pvm = pvprof_vm_find(kvm);
	unsigned int idx;

	if (!pvm)
		return;
	mutex_lock(&pvm->lock);
	for (idx = 0; idx < KVM_MAX_VCPUS; idx++)
		if (pvm->vcpus[idx])
			pvprof_vcpu_free(pvm, pvm->vcpus[idx]);
	if (pvm->stream)
		pvprof_stream_finish(pvm->stream);
	mutex_unlock(&pvm->lock);

	spin_lock(&pvprof_vms_lock);
	hash_del_rcu(&pvm->node);
	spin_unlock(&pvprof_vms_lock);
	static_branch_dec(&kvm_pvprof_in_use);
	kref_put(&pvm->ref, pvprof_vm_release);
}
