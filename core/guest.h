/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof guest side: the protocol part of the NMI handler.
 */
#ifndef _PVPROF_CORE_GUEST_H
#define _PVPROF_CORE_GUEST_H

#include "pvprof_core.h"
#include "ring.h"

/**
 * typedef pvprof_ustack_fn - snapshot the user stack of a captured callchain
 * @ctx: the caller's context, as for the capture function
 * @chain: the finished callchain, with at least one user frame
 * @regs: to fill with the user registers, in PVPROF_UREG_* order;
 *	regs[PVPROF_UREG_IP] must be the callchain's first user frame
 * @data: where the stack bytes from regs[PVPROF_UREG_SP] upward go
 * @max: bytes that fit at @data, a multiple of 8
 *
 * Runs in NMI context like the capture function; the copy must never
 * fault or sleep.
 *
 * Return: bytes copied (a short copy is fine), or a negative value when
 * there is no snapshot to take (the callchain is then posted without one).
 */
typedef int (*pvprof_ustack_fn)(void *ctx, const struct pvprof_callchain *chain,
				__u64 *regs, __u8 *data, __u32 max);

/**
 * struct pvprof_guest_buf - the guest's handle on its registered buffer
 * @hdr: the buffer, mapped in the guest
 * @geo: geometry from the size the guest registered
 * @nmi_seen: the host's nmi_delivered as of the last NMI pvprof claimed
 *	(0, like the zeroed buffer, until the first)
 * @ustack: takes user stack snapshots, NULL when the host did not offer
 *	PVPROF_FEAT_USER_STACK or the guest does not want them
 * @scratch: where a callchain with a snapshot is built before it is copied
 *	into the slots it spans (they may wrap at the ring's end)
 * @scratch_size: bytes at @scratch, a multiple of 8
 */
struct pvprof_guest_buf {
	struct pvprof_buf_header *hdr;
	struct pvprof_geometry geo;
	__u64 nmi_seen;
	pvprof_ustack_fn ustack;
	void *scratch;
	__u32 scratch_size;
};

/**
 * typedef pvprof_capture_fn - capture the interrupted context
 * @ctx: the caller's context (registers of the interrupted code)
 * @n: copy of the newest notice
 * @chain: callchain initialised with seq; fill time_ns, pid, tid, exec_gen,
 *	flags, frames, nr_kernel and nr_user
 * @max_frames: frames that fit (nr_kernel + nr_user); more are clamped
 *
 * Runs in NMI context: no locks, no sleeping, bounded work.
 */
typedef void (*pvprof_capture_fn)(void *ctx, const struct pvprof_notice *n,
				  struct pvprof_callchain *chain, __u32 max_frames);

/**
 * struct pvprof_nmi_result - what one handler run consumed and wrote
 * @deliveries: deliveries the host attributed to pvprof since the last
 *	claim (nmi_delivered minus the count last seen), 0 unless claimed.
 *	More than 1 when an NMI nested in the handler was attributed before
 *	this run read the count: its own run of the handlers follows and
 *	finds nothing to claim.
 * @consumed: notices consumed
 * @callchains: callchains posted (0 or 1)
 * @stale: stale callchains posted
 * @dropped: notices left unanswered because the callchain ring was full
 * @garbage: notice_head was out of bounds; the tail was resynced
 */
struct pvprof_nmi_result {
	__u64 deliveries;
	__u32 consumed;
	__u32 callchains;
	__u32 stale;
	__u32 dropped;
	bool garbage;
};

int pvprof_guest_buf_init(struct pvprof_guest_buf *gb, void *base, __u64 size);
void pvprof_guest_set_ustack(struct pvprof_guest_buf *gb, pvprof_ustack_fn ustack,
			     void *scratch, __u32 scratch_size);
int pvprof_guest_nmi(struct pvprof_guest_buf *gb, pvprof_capture_fn capture,
		     void *ctx, struct pvprof_nmi_result *res);

#endif /* _PVPROF_CORE_GUEST_H */
