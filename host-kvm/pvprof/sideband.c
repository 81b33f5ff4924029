// SPDX-License-Identifier: GPL-2.0
/*
 * PVPROF_OP_SIDEBAND (spec pvprof-op-sideband): one message from the guest
 * agent, copied once, checked by the shared core, charged to the VM's token
 * bucket and appended to the stream.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "pvprof_host.h"
#include "pvprof-core/sideband.h"
#include "pvprof-core/stream.h"

/* Take @len bytes from the VM's budget: a token bucket of one second. */
static bool pvprof_sideband_charge(struct pvprof_vm *pvm, u32 len)
{
	u64 now = ktime_get_ns();
	bool ok;

	spin_lock(&pvm->sideband_lock);
	pvm->sideband_tokens = pvprof_budget_refill(pvm->sideband_tokens,
						    now - pvm->sideband_refill_ns,
						    PVPROF_SIDEBAND_DEFAULT_RATE);
	pvm->sideband_refill_ns = now;
	ok = pvm->sideband_tokens >= len;
	if (ok)
		pvm->sideband_tokens -= len;
	spin_unlock(&pvm->sideband_lock);
	return ok;
}

static void pvprof_sideband_refund(struct pvprof_vm *pvm, u32 len)
{
	spin_lock(&pvm->sideband_lock);
	pvm->sideband_tokens += len;
	spin_unlock(&pvm->sideband_lock);
}

static long pvprof_sideband_append(struct kvm_vcpu *vcpu, struct pvprof_vm *pvm,
				   gpa_t gpa, u32 len)
{
	struct pvprof_stream *st = READ_ONCE(pvm->stream);
	u32 cap = sizeof(struct pvprof_stream_hdr) + PVPROF_SIDEBAND_MAX_SIZE;
	u8 *msg, *entry;
	long ret;
	u32 n;

	msg = kmalloc(len, GFP_KERNEL_ACCOUNT);
	entry = kmalloc(cap, GFP_KERNEL_ACCOUNT);
	ret = -PVPROF_ERATELIMIT;
	if (!msg || !entry)
		goto free;
	ret = -PVPROF_EFAULT;
	if (kvm_vcpu_read_guest(vcpu, gpa, msg, len))
		goto free;
	ret = -PVPROF_EINVAL;
	if (pvprof_sideband_check(msg, len) != PVPROF_SB_OK)
		goto free;
	/* Sampling is off: discard without charging the budget. */
	ret = 0;
	if (!READ_ONCE(pvm->enabled) || !st)
		goto free;
	ret = -PVPROF_ERATELIMIT;
	if (!pvprof_sideband_charge(pvm, len))
		goto free;
	n = pvprof_st_put_sideband(entry, cap, vcpu->vcpu_id, ktime_get_ns(), msg, len);
	if (!n || !pvprof_stream_append(st, NULL, entry, n)) {
		pvprof_sideband_refund(pvm, len);
		goto free;
	}
	atomic64_add(len, &pvm->sideband_bytes);
	ret = 0;
free:
	kfree(entry);
	kfree(msg);
	return ret;
}

/**
 * pvprof_sideband() - handle PVPROF_OP_SIDEBAND
 * @vcpu: the calling vCPU, on its thread, kvm->srcu held
 * @gpa: the message
 * @len: its length in bytes
 *
 * The caller checked that the unused argument is zero.
 *
 * Return: 0 or a negated PVPROF_E* code; every error is counted in the
 * VM's sideband_refused.
 */
long pvprof_sideband(struct kvm_vcpu *vcpu, u64 gpa, u64 len)
{
	struct pvprof_vm *pvm = pvprof_vm_get_or_create(vcpu->kvm);
	long ret;

	if (!pvm)
		return -PVPROF_ERATELIMIT;
	ret = pvprof_sideband_range_check(gpa, len);
	if (!ret)
		ret = pvprof_sideband_append(vcpu, pvm, gpa, len);
	if (ret)
		atomic64_inc(&pvm->sideband_refused);
	return ret;
}
