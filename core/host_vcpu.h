/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof host sequence of one vCPU: the order in which the host reads and
 * writes the guest's buffer, takes the pending sample, rings the NMI gate
 * and drains callchains (spec pvprof-host-sequence), written once here.
 *
 * host.h decides; this file sequences those decisions around the guest
 * memory accesses, which it makes through a small table of operations.
 * The KVM module supplies operations on the real vCPU
 * (host-kvm/pvprof/sample.c); the unit tests' model supplies simulated ones
 * (tests/unit/sim.c), so the model checks the kernel's own order.
 *
 * Nothing here runs in the overflow handler: every function is called in
 * process context, on the vCPU's thread (a remote drain: on a control
 * thread), with the caller's per-vCPU lock held.  The operations may sleep.
 */
#ifndef _PVPROF_CORE_HOST_VCPU_H
#define _PVPROF_CORE_HOST_VCPU_H

#include "host.h"

/**
 * struct pvprof_published - line 1's configuration fields as written
 * @state: PVPROF_STATE_*
 * @event: PVPROF_EVENT_*
 * @period: ns for cpu-clock, events otherwise
 * @ustack_size: user stack bytes asked per callchain, 0 for none
 * @unused: zero; the struct is compared whole
 *
 * @state, @event and @period are laid out as in struct pvprof_buf_header,
 * so that they are written with one copy.
 */
struct pvprof_published {
	__u32 state;
	__u32 event;
	__u64 period;
	__u32 ustack_size;
	__u32 unused;
};

/**
 * struct pvprof_host_work - what the host sequence keeps between passes
 * @published: line 1's configuration as last written to the buffer
 * @awaits_nmi_window: the NMI gate opened KVM's NMI window; the notice
 *	step runs again at the next pass even without a sample
 * @tail_unpublished: chain_tail moved since it was last written (a
 *	remote drain leaves writing it to the vCPU's next pass)
 * @chain_copy: host-private copy of one callchain slot
 * @span_copy: NULL, or 8-byte aligned room for
 *	PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) slots, for callchains with a
 *	user stack snapshot (a guest may announce one spanning every posted
 *	slot; validation rejects it after the copy); without it such callchains
 *	are judged one slot at a time, and rejected
 *
 * Unlike struct pvprof_host_ring, it is not reset by a new registration.
 */
struct pvprof_host_work {
	struct pvprof_published published;
	bool awaits_nmi_window;
	bool tail_unpublished;
	__u64 chain_copy[PVPROF_CHAIN_SLOT_SIZE / 8];
	void *span_copy;
};

/**
 * struct pvprof_host_ops - how the host sequence reaches one vCPU
 * @refresh: make the registered buffer reachable for a batch of accesses
 *	(KVM: revalidate the cached translations against the memslots)
 * @read: copy @len bytes at byte @off of the buffer into @dst
 * @write: copy @len bytes from @src to byte @off of the buffer and mark
 *	the pages dirty
 * @load_index: load the 8-byte index at byte @off in one access
 * @store_index: store the 8-byte index at byte @off in one access and
 *	mark its page dirty
 * @sample_pending: the overflow handler left a sample in the vCPU's slot
 * @take_sample: move that sample to @s and free the slot; false when none
 * @nmi_state: whether KVM holds an NMI for the vCPU (@held: queued,
 *	pending or being injected, from any source) and whether the guest is
 *	handling one (@masked: KVM's NMI mask)
 * @inject_nmi: queue one NMI through KVM's normal NMI path
 * @open_nmi_window: ask for an exit as soon as the guest can take an NMI;
 *	false, and nothing done, when the NMI mask is not this guest's handler
 *	(SMM, a nested guest)
 * @emit: append the callchain stream entry of an accepted callchain of
 *	@slots slots, with the facts of its notice; false when the stream
 *	cannot take it
 *
 * Operations that access the buffer return 0 or a negative error; any
 * error means the buffer is no longer reachable.
 */
struct pvprof_host_ops {
	int (*refresh)(void *ctx);
	int (*read)(void *ctx, __u32 off, void *dst, __u32 len);
	int (*write)(void *ctx, __u32 off, const void *src, __u32 len);
	int (*load_index)(void *ctx, __u32 off, __u64 *val);
	int (*store_index)(void *ctx, __u32 off, __u64 val);
	bool (*sample_pending)(void *ctx);
	bool (*take_sample)(void *ctx, struct pvprof_sample *s);
	void (*nmi_state)(void *ctx, bool *held, bool *masked);
	void (*inject_nmi)(void *ctx);
	bool (*open_nmi_window)(void *ctx);
	bool (*emit)(void *ctx, const struct pvprof_notice_facts *facts,
		     const struct pvprof_callchain *chain, __u32 slots);
};

/**
 * struct pvprof_host_vcpu - one vCPU as the host sequence sees it
 * @ring: the registration (meaningful while @registered)
 * @acct: the vCPU's counters
 * @work: what the sequence keeps between passes
 * @registered: a buffer is registered
 * @ops: the operations
 * @ctx: passed to every operation
 *
 * A view the caller builds for one call; a function that returns an error
 * leaves ending the registration to the caller.
 */
struct pvprof_host_vcpu {
	struct pvprof_host_ring *ring;
	struct pvprof_vcpu_acct *acct;
	struct pvprof_host_work *work;
	bool registered;
	const struct pvprof_host_ops *ops;
	void *ctx;
};

void pvprof_host_vcpu_fold_losses(const struct pvprof_host_vcpu *v,
				  const __u64 *irq_losses, __u64 *folded);
int pvprof_host_vcpu_work(const struct pvprof_host_vcpu *v,
			  const struct pvprof_published *want);
int pvprof_host_vcpu_drain(const struct pvprof_host_vcpu *v, bool publish_tail);
int pvprof_host_vcpu_nmi_delivery(const struct pvprof_host_vcpu *v,
				  bool more_nmis_pending);
void pvprof_host_vcpu_unregister(const struct pvprof_host_vcpu *v);

#endif /* _PVPROF_CORE_HOST_VCPU_H */
