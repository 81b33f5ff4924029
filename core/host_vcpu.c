// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof host sequence of one vCPU (spec pvprof-host-sequence).
 *
 * The operations are called through a table: the KVM module and the unit
 * tests' model each pass their own.  The indirect calls cost little here:
 * a pass runs about once per sample (at most PVPROF_MAX_FREQ samples a
 * second per vCPU), on the vCPU's thread before an entry, and each
 * operation it calls is a user-space access, a memslot check or a stream
 * append that costs more than the call.  The overflow handler, which runs
 * in host NMI or IRQ context, calls none of this.
 */
#include "host_vcpu.h"

/* Offsets of the header fields the host touches after registration. */
#define OFF_LINE1_STATE		__builtin_offsetof(struct pvprof_buf_header, state)
#define OFF_USTACK_SIZE		__builtin_offsetof(struct pvprof_buf_header, ustack_size)
#define OFF_NOTICE_HEAD		__builtin_offsetof(struct pvprof_buf_header, notice_head)
#define OFF_CHAIN_TAIL		__builtin_offsetof(struct pvprof_buf_header, chain_tail)
#define OFF_NMI_HEAD		__builtin_offsetof(struct pvprof_buf_header, nmi_head)
#define OFF_NMI_DELIVERED	__builtin_offsetof(struct pvprof_buf_header, nmi_delivered)
#define OFF_NOTICE_TAIL		__builtin_offsetof(struct pvprof_buf_header, notice_tail)
#define OFF_CHAIN_HEAD		__builtin_offsetof(struct pvprof_buf_header, chain_head)

/* The first 16 bytes of the buffer: what the identity check reads. */
struct pvprof_line0_id {
	__u32 magic;
	__u16 version;
	__u16 header_size;
	__u64 cookie;
};

PVPROF_STATIC_ASSERT(__builtin_offsetof(struct pvprof_buf_header, cookie) ==
		     __builtin_offsetof(struct pvprof_line0_id, cookie),
		     "line 0 identity layout");
/* Line 1's state, event and period are written with one copy. */
PVPROF_STATIC_ASSERT(__builtin_offsetof(struct pvprof_buf_header, event) - OFF_LINE1_STATE ==
		     __builtin_offsetof(struct pvprof_published, event) &&
		     __builtin_offsetof(struct pvprof_buf_header, period) - OFF_LINE1_STATE ==
		     __builtin_offsetof(struct pvprof_published, period),
		     "line 1 configuration layout");

/*
 * Take the pending sample, if any, and count it lost for @reason.  Not a
 * lost sample of the registration (no PVPROF_NOTICE_F_LOST_BEFORE): the
 * registration is ending or gone.
 */
static void vcpu_sample_lost(const struct pvprof_host_vcpu *v, unsigned int reason)
{
	struct pvprof_sample sample;

	if (v->ops->take_sample(v->ctx, &sample))
		pvprof_acct_sample_lost(v->acct, reason, pvprof_sample_weight(&sample));
}

/*
 * Magic and cookie still ours: checked before each batch of writes
 * (spec pvprof-registration-end, rule 3).  Only their 16 bytes are read.
 */
static bool vcpu_identity_ok(const struct pvprof_host_vcpu *v)
{
	struct pvprof_line0_id line0;

	if (v->ops->refresh(v->ctx))
		return false;
	if (v->ops->read(v->ctx, 0, &line0, sizeof(line0)))
		return false;
	return line0.magic == PVPROF_BUF_MAGIC && line0.cookie == v->ring->cookie;
}

/*
 * A callchain with a user stack snapshot: its first slot is in chain_copy,
 * the @span - 1 slots after it (wrapping at the ring's end) are read once
 * more, each from guest memory exactly once.
 */
static int vcpu_read_span(const struct pvprof_host_vcpu *v, __u32 span)
{
	__u8 *dst = v->work->span_copy;
	__u32 k;

	pvprof_memcpy(dst, v->work->chain_copy, PVPROF_CHAIN_SLOT_SIZE);
	for (k = 1; k < span; k++)
		if (v->ops->read(v->ctx, pvprof_host_callchain_slot_offset(v->ring, k),
				 dst + k * PVPROF_CHAIN_SLOT_SIZE,
				 PVPROF_CHAIN_SLOT_SIZE))
			return -PVPROF_EFAULT;
	return 0;
}

/**
 * pvprof_host_vcpu_drain() - copy, validate and stream the posted callchains
 * @v: the vCPU, registered, its indices not exhausted
 * @publish_tail: store chain_tail in the buffer afterwards; false for a
 *	drain from a thread other than the vCPU's, which leaves it to the
 *	vCPU's next pass and calls no operation but @read and @emit
 *
 * Copies each posted callchain once, validates the copy, and emits accepted
 * callchains; a stream that cannot take one counts
 * PVPROF_LOSS_STREAM_OVERFLOW (spec pvprof-callchain-drain).
 *
 * Context: process context, the vCPU's lock held.
 * Return: 0, or -PVPROF_EFAULT when the buffer could not be accessed.
 */
int pvprof_host_vcpu_drain(const struct pvprof_host_vcpu *v, bool publish_tail)
{
	const struct pvprof_host_ops *ops = v->ops;
	struct pvprof_host_work *w = v->work;
	__u64 head;
	__u32 n;

	if (ops->read(v->ctx, OFF_CHAIN_HEAD, &head, sizeof(head)))
		return -PVPROF_EFAULT;
	/* Pairs with the guest's release of chain_head. */
	pvprof_smp_rmb();
	n = pvprof_host_callchains_ready(v->ring, v->acct, head);
	while (n) {
		const struct pvprof_callchain *chain = (const void *)w->chain_copy;
		__u32 off = pvprof_host_callchain_offset(v->ring);
		__u32 span = 1;

		if (ops->read(v->ctx, off, w->chain_copy, PVPROF_CHAIN_SLOT_SIZE))
			return -PVPROF_EFAULT;
		if (w->span_copy)
			span = pvprof_host_callchain_span(v->ring, w->chain_copy, n);
		if (span > 1) {
			if (vcpu_read_span(v, span))
				return -PVPROF_EFAULT;
			chain = w->span_copy;
		}
		n -= span;
		w->tail_unpublished = true;
		if (pvprof_host_callchain(v->ring, v->acct, chain,
					  span * PVPROF_CHAIN_SLOT_SIZE) != PVPROF_REJ_NONE ||
		    (chain->flags & PVPROF_CHAIN_F_STALE))
			continue;
		if (!ops->emit(v->ctx, pvprof_host_notice_facts(v->ring, chain->seq),
			       chain, span))
			v->acct->losses[PVPROF_LOSS_STREAM_OVERFLOW]++;
	}
	if (!publish_tail || !w->tail_unpublished)
		return 0;
	w->tail_unpublished = false;
	return ops->store_index(v->ctx, OFF_CHAIN_TAIL, v->ring->chain_tail);
}

/*
 * Step 3: make line 1's state, event, period and ustack_size @want.  The
 * validator follows the ustack_size the guest can see.
 */
static int vcpu_publish(const struct pvprof_host_vcpu *v,
			const struct pvprof_published *want)
{
	struct pvprof_host_work *w = v->work;

	if (!pvprof_memcmp(want, &w->published, sizeof(*want)))
		return 0;
	if (v->ops->write(v->ctx, OFF_LINE1_STATE, want,
			  __builtin_offsetof(struct pvprof_published, ustack_size)))
		return -PVPROF_EFAULT;
	if (want->ustack_size != w->published.ustack_size &&
	    v->ops->write(v->ctx, OFF_USTACK_SIZE, &want->ustack_size,
			  sizeof(want->ustack_size)))
		return -PVPROF_EFAULT;
	w->published = *want;
	v->ring->ustack_size = want->ustack_size;
	return 0;
}

/*
 * Step 4: turn the pending sample into a notice, unless it must wait for
 * the guest to read the notices before it (pvprof_host_sample_waits()).
 */
static int vcpu_write_notice(const struct pvprof_host_vcpu *v, __u64 tail,
			     bool nmi_busy)
{
	const struct pvprof_host_ops *ops = v->ops;
	struct pvprof_notice notice;
	struct pvprof_sample sample;
	__u32 off;

	if (pvprof_host_sample_waits(v->ring, tail, nmi_busy) ||
	    !ops->take_sample(v->ctx, &sample) ||
	    !pvprof_host_notice_prepare(v->ring, v->acct, tail, &sample,
					&notice, &off))
		return 0;
	if (ops->write(v->ctx, off, &notice, sizeof(notice))) {
		pvprof_host_sample_lost(v->ring, v->acct, PVPROF_LOSS_BUFFER_GONE,
					pvprof_sample_weight(&sample));
		return -PVPROF_EFAULT;
	}
	/* The notice is visible before the index that publishes it. */
	pvprof_smp_wmb();
	return ops->store_index(v->ctx, OFF_NOTICE_HEAD,
				pvprof_host_notice_publish(v->ring, v->acct));
}

/*
 * Steps 5 and 6: the NMI gate.  When only the guest's NMI handler keeps it
 * shut, KVM's NMI window brings an exit as soon as the handler has
 * returned, and the next pass rings the gate again.
 */
static int vcpu_ring_gate(const struct pvprof_host_vcpu *v, __u64 tail,
			  bool nmi_held, bool nmi_masked)
{
	const struct pvprof_host_ops *ops = v->ops;

	switch (pvprof_host_nmi_gate(v->ring, v->acct, tail, nmi_held, nmi_masked)) {
	case PVPROF_GATE_INJECT:
		if (ops->store_index(v->ctx, OFF_NMI_HEAD, v->ring->nmi_head))
			return -PVPROF_EFAULT;
		ops->inject_nmi(v->ctx);
		break;
	case PVPROF_GATE_NMI_WINDOW:
		v->work->awaits_nmi_window = ops->open_nmi_window(v->ctx);
		break;
	case PVPROF_GATE_CLOSED:
		break;
	}
	return 0;
}

/*
 * Steps 4 to 6, when a sample is pending or the gate awaits the NMI
 * window.  The gate runs after the notice is published: it injects for
 * the notices unconsumed, the new one included.
 */
static int vcpu_notice(const struct pvprof_host_vcpu *v)
{
	const struct pvprof_host_ops *ops = v->ops;
	bool nmi_held, nmi_masked;
	__u64 tail;
	int ret;

	if (!ops->sample_pending(v->ctx) && !v->work->awaits_nmi_window)
		return 0;
	v->work->awaits_nmi_window = false;
	if (ops->load_index(v->ctx, OFF_NOTICE_TAIL, &tail))
		return -PVPROF_EFAULT;
	ops->nmi_state(v->ctx, &nmi_held, &nmi_masked);
#ifndef PVPROF_HOST_TEST_GATE_FIRST
	ret = vcpu_write_notice(v, tail, nmi_held || nmi_masked);
	if (!ret)
		ret = vcpu_ring_gate(v, tail, nmi_held, nmi_masked);
#else
	/*
	 * A deliberately wrong order, compiled only into the unit tests'
	 * misorder build (tests/unit/Makefile): the model must fail on it.
	 */
	ret = vcpu_ring_gate(v, tail, nmi_held, nmi_masked);
	if (!ret)
		ret = vcpu_write_notice(v, tail, nmi_held || nmi_masked);
#endif
	return ret;
}

/**
 * pvprof_host_vcpu_fold_losses() - count the samples the overflow handler lost
 * @v: the vCPU, registered or not
 * @irq_losses: samples lost so far by PVPROF_LOSS_*, written by the
 *	overflow handler and only ever incremented
 * @folded: the part of @irq_losses already counted, updated
 *
 * A registered vCPU's next notice carries PVPROF_NOTICE_F_LOST_BEFORE.
 *
 * Context: process context, the vCPU's lock held.
 */
void pvprof_host_vcpu_fold_losses(const struct pvprof_host_vcpu *v,
				  const __u64 *irq_losses, __u64 *folded)
{
	unsigned int r;

	for (r = 0; r < PVPROF_LOSS_NR; r++) {
		__u64 lost = PVPROF_READ_ONCE(irq_losses[r]);
		__u64 n = lost - folded[r];

		folded[r] = lost;
		if (!n)
			continue;
		if (v->registered)
			pvprof_host_sample_lost(v->ring, v->acct, r, n);
		else
			pvprof_acct_sample_lost(v->acct, r, n);
	}
}

/**
 * pvprof_host_vcpu_work() - everything the host does before an entry
 * @v: the vCPU, registered or not
 * @want: line 1's configuration as the VM's says now
 *
 * The block "before an entry" of spec pvprof-host-sequence: checks that the
 * buffer is still the registration's (step 1) and that its indices can go on,
 * drains the callchains written for a ustack_size about to change (step 2),
 * publishes the configuration (step 3), turns the pending sample into a
 * notice (step 4), rings the NMI gate (steps 5 and 6) and drains the callchains
 * (step 7).  An unregistered vCPU's pending sample is counted as
 * PVPROF_LOSS_UNREGISTERED.
 *
 * Context: process context, the vCPU's thread, its lock held.
 * Return: 0; -PVPROF_EFAULT when the buffer is gone, -PVPROF_E2BIG when
 * its indices are exhausted (spec pvprof-registration-end, rules 3, 4
 * and 7): the pending sample was counted, and the caller must drop the
 * registration.
 */
int pvprof_host_vcpu_work(const struct pvprof_host_vcpu *v,
			  const struct pvprof_published *want)
{
	if (!v->registered) {
		v->work->awaits_nmi_window = false;
		vcpu_sample_lost(v, PVPROF_LOSS_UNREGISTERED);
		return 0;
	}
	if (!vcpu_identity_ok(v))
		goto buffer_gone;
	if (pvprof_host_indices_exhausted(v->ring)) {
		vcpu_sample_lost(v, PVPROF_LOSS_UNREGISTERED);
		return -PVPROF_E2BIG;
	}
	/*
	 * Callchains posted since the last pass were written for the ustack_size
	 * the guest saw then: they are judged by it before a new one is
	 * published.
	 */
	if (want->ustack_size != v->work->published.ustack_size &&
	    pvprof_host_vcpu_drain(v, true))
		goto buffer_gone;
	if (vcpu_publish(v, want) || vcpu_notice(v) ||
	    pvprof_host_vcpu_drain(v, true))
		goto buffer_gone;
	return 0;

buffer_gone:
	vcpu_sample_lost(v, PVPROF_LOSS_BUFFER_GONE);
	return -PVPROF_EFAULT;
}

/**
 * pvprof_host_vcpu_nmi_delivery() - KVM is delivering an NMI: is it pvprof's?
 * @v: the vCPU, registered or not
 * @more_nmis_pending: KVM still holds NMIs for the vCPU after this one
 *
 * Attributes the delivery (pvprof_host_nmi_delivery()) and, when the vCPU
 * is registered, stores the new count in nmi_delivered before the entry
 * that delivers it, so that the guest's handler can tell the NMI is
 * pvprof's (spec pvprof-host-sequence, "at delivery").
 *
 * Context: process context, the vCPU's thread, its lock held.
 * Return: 1 when the delivery is pvprof's and the guest can see it, 0
 * when it is not pvprof's or the vCPU is not registered; -PVPROF_EFAULT
 * when it is pvprof's but the buffer is gone: the caller must drop the
 * registration.
 */
int pvprof_host_vcpu_nmi_delivery(const struct pvprof_host_vcpu *v,
				  bool more_nmis_pending)
{
	if (!pvprof_host_nmi_delivery(v->ring, more_nmis_pending) || !v->registered)
		return 0;
	if (!vcpu_identity_ok(v) ||
	    v->ops->store_index(v->ctx, OFF_NMI_DELIVERED, v->ring->nmi_delivered))
		return -PVPROF_EFAULT;
	return 1;
}

/**
 * pvprof_host_vcpu_unregister() - the guest's UNREGISTER, before the drop
 * @v: the vCPU, registered or not
 *
 * Counts a pending sample as PVPROF_LOSS_UNREGISTERED and drains the callchain
 * ring once if the buffer is still the registration's
 * (spec pvprof-op-unregister).  The caller then ends the registration
 * (pvprof_host_unregister()), and accesses the buffer no more.
 *
 * Context: process context, the vCPU's thread, its lock held.
 */
void pvprof_host_vcpu_unregister(const struct pvprof_host_vcpu *v)
{
	vcpu_sample_lost(v, PVPROF_LOSS_UNREGISTERED);
	if (!v->registered)
		return;
	if (vcpu_identity_ok(v) && !pvprof_host_indices_exhausted(v->ring))
		pvprof_host_vcpu_drain(v, true);
}
