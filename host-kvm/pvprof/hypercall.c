// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof hypercall dispatcher.
 *
 * KVM routes PVPROF_HC_NR here from kvm_emulate_hypercall() after its own
 * checks: the guest was at CPL 0 (else KVM answered -KVM_EPERM) and, outside
 * 64-bit mode, the op and arguments were truncated to 32 bits.  The value
 * returned goes to the guest's rax; negative values are -PVPROF_E* codes.
 * The normative description of every operation is spec/pvprof.rst.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/kvm_para.h>
#include <linux/minmax.h>
#include <linux/nospec.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "pvprof_hooks.h"
#include "pvprof_host.h"
#include "pvprof-core/sideband.h"

/* The ABI's first six codes are the -KVM_E* values guests already know. */
static_assert(PVPROF_EPERM == KVM_EPERM);
static_assert(PVPROF_E2BIG == KVM_E2BIG);
static_assert(PVPROF_EFAULT == KVM_EFAULT);
static_assert(PVPROF_EINVAL == KVM_EINVAL);
static_assert(PVPROF_EOPNOTSUPP == KVM_EOPNOTSUPP);
static_assert(PVPROF_ENOSYS == KVM_ENOSYS);

/*
 * Features this host implements: registration, cpu-clock sampling, NMI
 * delivery attribution, SIDEBAND and user stack snapshots.  Hardware events are not advertised
 * until they are tested on a host with a PMU.
 */
#define PVPROF_HOST_FEATURES	(PVPROF_FEAT_CPU_CLOCK | PVPROF_FEAT_NMI_DELIVERED | \
				 PVPROF_FEAT_SIDEBAND | PVPROF_FEAT_USER_STACK)

static_assert((PVPROF_HOST_FEATURES & ~PVPROF_FEAT_ALL) == 0);

#define PVPROF_ARG1	BIT(0)
#define PVPROF_ARG2	BIT(1)
#define PVPROF_ARG3	BIT(2)

/*
 * The argument registers each operation reads.  The others must be zero so
 * that a later ABI version can give them a meaning without old hosts
 * silently ignoring it.
 */
static const u8 pvprof_op_args[PVPROF_OP_MAX + 1] = {
	[PVPROF_OP_PROBE]	= PVPROF_ARG1,
	[PVPROF_OP_REGISTER]	= PVPROF_ARG1 | PVPROF_ARG2 | PVPROF_ARG3,
	[PVPROF_OP_UNREGISTER]	= 0,
	[PVPROF_OP_QUERY]	= PVPROF_ARG1,
	[PVPROF_OP_SIDEBAND]	= PVPROF_ARG1 | PVPROF_ARG2,
};

static bool pvprof_unused_args_zero(unsigned long op, unsigned long a1,
				    unsigned long a2, unsigned long a3)
{
	u8 used = pvprof_op_args[op];

	return ((used & PVPROF_ARG1) || !a1) &&
	       ((used & PVPROF_ARG2) || !a2) &&
	       ((used & PVPROF_ARG3) || !a3);
}

/* PROBE: agree on the highest ABI version both sides speak. */
static long pvprof_probe(unsigned long guest_version)
{
	if (!guest_version)
		return -PVPROF_EINVAL;

	return PVPROF_PROBE_MAKE(min_t(unsigned long, PVPROF_ABI_VERSION,
				       guest_version),
				 PVPROF_HOST_FEATURES);
}

/* Bytes of the header the host writes at registration: lines 0 and 1. */
#define PVPROF_HOST_LINES_SIZE	offsetof(struct pvprof_buf_header, notice_tail)

static u64 pvprof_new_cookie(u64 previous)
{
	u64 cookie;

	do {
		cookie = get_random_u64();
	} while (!cookie || cookie == previous);
	return cookie;
}

/*
 * REGISTER's checks 5 to 9 and the header writes, for a vCPU that is not
 * registered.  Runs with kvm->srcu held (every hypercall does), which the
 * memslot lookups need.
 */
static long pvprof_register_buffer(struct kvm_vcpu *vcpu, struct pvprof_vcpu *pv,
				   u64 gpa, u64 size)
{
	struct pvprof_vm *pvm = pv->pvm;
	struct pvprof_published line1;
	struct pvprof_buf_header *hdr;
	u64 cookie = pvprof_new_cookie(pv->cookie);
	long ret;

	/*
	 * Checks 5 and 6: the core derives the geometry and rejects the size.
	 * The ring means nothing until registered is set, so a failed
	 * REGISTER may leave it half built.
	 */
	ret = pvprof_host_ring_init(&pv->ring, size, pvm->config.max_depth,
				    cookie);
	if (ret)
		return ret;
	pvprof_published_want(pvm, &line1);
	pv->ring.ustack_size = line1.ustack_size;
	if (!PAGE_ALIGNED(gpa) || gpa + size < gpa)
		return -PVPROF_EINVAL;
	/* Fails for a gfn outside every memslot or in a read-only one. */
	if (kvm_gfn_to_hva_cache_init(vcpu->kvm, &pv->buf, gpa, size) ||
	    kvm_gfn_to_hva_cache_init(vcpu->kvm, &pv->page0, gpa, PAGE_SIZE))
		return -PVPROF_EFAULT;

	/*
	 * Callchains with a user stack snapshot span slots; without room to
	 * copy them they are rejected, and the rest of sampling still works.
	 */
	if (!pv->work.span_copy) {
		pv->work.span_copy = kvmalloc(PVPROF_SPAN_COPY_SIZE + PVPROF_SPAN_STREAM_SIZE,
					      GFP_KERNEL_ACCOUNT);
		if (pv->work.span_copy)
			pv->span_stream = (u8 *)pv->work.span_copy + PVPROF_SPAN_COPY_SIZE;
	}

	hdr = kmalloc(sizeof(*hdr), GFP_KERNEL_ACCOUNT);
	if (!hdr)
		return -PVPROF_ERATELIMIT;
	ret = -PVPROF_EFAULT;
	if (kvm_read_guest_offset_cached(vcpu->kvm, &pv->buf, hdr, 0, sizeof(*hdr)))
		goto free_hdr;
	ret = -PVPROF_EINVAL;
	if (!pvprof_host_header_clean(hdr))
		goto free_hdr;

	pvprof_host_header_init(hdr, &pv->ring, line1.state, line1.event,
				line1.period);
	ret = -PVPROF_EFAULT;
	if (kvm_write_guest_offset_cached(vcpu->kvm, &pv->buf, hdr, 0,
					  PVPROF_HOST_LINES_SIZE))
		goto free_hdr;

	pv->work.published = line1;
	pv->cookie = cookie;
	pv->gpa = gpa;
	pv->registered = true;
	pvprof_stream_put_vcpu(pvm, pv, PVPROF_VCPU_REGISTERED);
	ret = 0;
free_hdr:
	kfree(hdr);
	return ret;
}

/*
 * Check 4: a registration puts a REGISTERED event in the VM's stream, and
 * its end an UNREGISTERED or DROPPED one, so a guest that registered in a
 * loop would fill its VM's stream with them: PVPROF_REGISTER_RATE
 * successful REGISTERs a second per vCPU, in a bucket of one second.
 * pv->lock held.
 */
static bool pvprof_register_budget(struct pvprof_vcpu *pv)
{
	u64 now = ktime_get_ns();

	pv->register_tokens = pvprof_budget_refill(pv->register_tokens,
						   now - pv->register_refill_ns,
						   PVPROF_REGISTER_RATE);
	pv->register_refill_ns = now;
	if (pv->register_tokens)
		return true;
	pr_warn_ratelimited("vCPU %u: REGISTER refused, over %u a second\n",
			    pv->vcpu_id, PVPROF_REGISTER_RATE);
	return false;
}

/* REGISTER: spec pvprof-op-register, checks in the spec's order. */
static long pvprof_register(struct kvm_vcpu *vcpu, u64 gpa, u64 size, u64 flags)
{
	struct pvprof_vcpu *pv;
	long ret;

	if (flags)
		return -PVPROF_EINVAL;
	if (vcpu->arch.guest_state_protected)
		return -PVPROF_EPROTECTED;
	pv = pvprof_vcpu_get_or_create(vcpu);
	if (!pv)
		return -PVPROF_ERATELIMIT;

	mutex_lock(&pv->lock);
	if (pv->registered)
		ret = -PVPROF_EALREADY;
	else if (!pvprof_register_budget(pv))
		ret = -PVPROF_ERATELIMIT;
	else
		ret = pvprof_register_buffer(vcpu, pv, gpa, size);
	if (!ret)
		pv->register_tokens--;
	mutex_unlock(&pv->lock);
	return ret;
}

/* UNREGISTER: spec pvprof-op-unregister; idempotent. */
static long pvprof_unregister(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);

	if (!pv)
		return 0;
	mutex_lock(&pv->lock);
	pvprof_vcpu_unregister(vcpu, pv);
	mutex_unlock(&pv->lock);
	return 0;
}

/* QUERY: spec pvprof-op-query; never touches guest memory. */
static long pvprof_query(struct kvm_vcpu *vcpu, u64 gpa)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);
	long ret = PVPROF_QUERY_UNREGISTERED;

	if (!pv)
		return ret;
	mutex_lock(&pv->lock);
	if (pv->registered && pv->gpa == gpa)
		ret = PVPROF_QUERY_REGISTERED;
	mutex_unlock(&pv->lock);
	return ret;
}

/**
 * kvm_pvprof_hypercall() - handle one PVPROF_HC_NR hypercall
 * @vcpu: the calling vCPU (the one a registration would belong to)
 * @op: PVPROF_OP_* from the guest's rbx
 * @a1: first argument (rcx)
 * @a2: second argument (rdx)
 * @a3: third argument (rsi)
 *
 * Runs on the vCPU thread in process context with kvm->srcu held, as every
 * hypercall does.
 *
 * Return: the value for the guest's rax: non-negative on success, else a
 * negated PVPROF_E* code.  When pvprof is not exposed, PROBE returns
 * -KVM_ENOSYS (indistinguishable from stock KVM) and every other op
 * -PVPROF_ENOTEXPOSED; a hidden VM's registration of this vCPU is dropped.
 */
long kvm_pvprof_hypercall(struct kvm_vcpu *vcpu, unsigned long op,
			  unsigned long a1, unsigned long a2, unsigned long a3)
{
	if (pvprof_vm_hidden(vcpu->kvm)) {
		pvprof_vcpu_drop_registration(vcpu);
		return op == PVPROF_OP_PROBE ? -KVM_ENOSYS : -PVPROF_ENOTEXPOSED;
	}

	if (op > PVPROF_OP_MAX)
		return -PVPROF_EOPNOTSUPP;
	op = array_index_nospec(op, PVPROF_OP_MAX + 1);

	if (!pvprof_unused_args_zero(op, a1, a2, a3))
		return -PVPROF_EINVAL;

	switch (op) {
	case PVPROF_OP_PROBE:
		return pvprof_probe(a1);
	case PVPROF_OP_REGISTER:
		return pvprof_register(vcpu, a1, a2, a3);
	case PVPROF_OP_UNREGISTER:
		return pvprof_unregister(vcpu);
	case PVPROF_OP_QUERY:
		return pvprof_query(vcpu, a1);
	case PVPROF_OP_SIDEBAND:
		return pvprof_sideband(vcpu, a1, a2);
	}
	return -PVPROF_EOPNOTSUPP;
}
