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
#include <linux/moduleparam.h>
#include <linux/nospec.h>

#include "pvprof_hooks.h"

/* The ABI's first six codes are the -KVM_E* values guests already know. */
static_assert(PVPROF_EPERM == KVM_EPERM);
static_assert(PVPROF_E2BIG == KVM_E2BIG);
static_assert(PVPROF_EFAULT == KVM_EFAULT);
static_assert(PVPROF_EINVAL == KVM_EINVAL);
static_assert(PVPROF_EOPNOTSUPP == KVM_EOPNOTSUPP);
static_assert(PVPROF_ENOSYS == KVM_ENOSYS);

static bool pvprof_expose = true;
module_param(pvprof_expose, bool, 0644);
MODULE_PARM_DESC(pvprof_expose,
		 "Let guests use pvprof (default 1); when 0, PROBE fails with -KVM_ENOSYS exactly as on stock KVM");

/*
 * Features this host implements.  Registration, sampling and sideband come
 * with the host data path; until it exists REGISTER, UNREGISTER, QUERY and
 * SIDEBAND answer -PVPROF_EOPNOTSUPP and the probe advertises no feature, so
 * a conforming guest sees a pvprof host it cannot use and stays inert.
 */
#define PVPROF_HOST_FEATURES	0U

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
 * -PVPROF_ENOTEXPOSED.
 */
long kvm_pvprof_hypercall(struct kvm_vcpu *vcpu, unsigned long op,
			  unsigned long a1, unsigned long a2, unsigned long a3)
{
	if (!READ_ONCE(pvprof_expose))
		return op == PVPROF_OP_PROBE ? -KVM_ENOSYS : -PVPROF_ENOTEXPOSED;

	if (op > PVPROF_OP_MAX)
		return -PVPROF_EOPNOTSUPP;
	op = array_index_nospec(op, PVPROF_OP_MAX + 1);

	if (!pvprof_unused_args_zero(op, a1, a2, a3))
		return -PVPROF_EINVAL;

	switch (op) {
	case PVPROF_OP_PROBE:
		return pvprof_probe(a1);
	default:
		/* REGISTER, UNREGISTER, QUERY, SIDEBAND: see PVPROF_HOST_FEATURES. */
		return -PVPROF_EOPNOTSUPP;
	}
}
