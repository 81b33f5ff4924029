/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof guest side: the protocol part of the NMI handler.
 */
#ifndef _PVPROF_CORE_GUEST_H
#define _PVPROF_CORE_GUEST_H

#include "pvprof_core.h"
#include "ring.h"

/**
 * struct pvprof_guest_buf - the guest's handle on its registered buffer
 * @hdr: the buffer, mapped in the guest
 * @geo: geometry from the size the guest registered
 * @nmi_seen: the host's nmi_delivered as of the last NMI pvprof claimed
 *	(0, like the zeroed buffer, until the first)
 */
struct pvprof_guest_buf {
	struct pvprof_buf_header *hdr;
	struct pvprof_geometry geo;
	__u64 nmi_seen;
};

/**
 * typedef pvprof_capture_fn - capture the interrupted context
 * @ctx: the caller's context (registers of the interrupted code)
 * @n: copy of the newest notice
 * @rec: record initialised with seq; fill time_ns, pid, tid, exec_gen,
 *	flags, frames, nr_kernel and nr_user
 * @max_frames: frames that fit (nr_kernel + nr_user); more are clamped
 *
 * Runs in NMI context: no locks, no sleeping, bounded work.
 */
typedef void (*pvprof_capture_fn)(void *ctx, const struct pvprof_notice *n,
				  struct pvprof_record *rec, __u32 max_frames);

/**
 * enum pvprof_nmi_verdict - whether the NMI is pvprof's
 * @PVPROF_NMI_NOT_OURS: the host did not attribute this delivery to pvprof:
 *	do not claim it (notices found were answered all the same)
 * @PVPROF_NMI_CLAIMED: the host attributed this delivery to pvprof: claim it
 */
enum pvprof_nmi_verdict {
	PVPROF_NMI_NOT_OURS,
	PVPROF_NMI_CLAIMED,
};

/**
 * struct pvprof_nmi_result - what one handler run consumed and wrote
 * @deliveries: deliveries the host attributed to pvprof since the last
 *	claim (nmi_delivered minus the count last seen), 0 unless claimed.
 *	More than 1 when an NMI nested in the handler was attributed before
 *	this run read the count: its own run of the handlers follows and
 *	finds nothing to claim.
 * @consumed: notices consumed
 * @callchains: callchain records posted (0 or 1)
 * @stale: stale records posted
 * @dropped: notices left unanswered because the record ring was full
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

/**
 * pvprof_guest_nmi_handled() - what the NMI handler returns to the kernel
 * @res: the result of this run
 *
 * A count of handled events, as Linux's NMI handlers return: more than one
 * makes default_do_nmi() swallow the next back-to-back NMI that nobody
 * claims, the empty run a nested NMI claimed early leaves behind.
 *
 * Return: 0 (not pvprof's), 1, or 2 for two or more deliveries.
 */
static inline int pvprof_guest_nmi_handled(const struct pvprof_nmi_result *res)
{
	return res->deliveries > 2 ? 2 : (int)res->deliveries;
}

int pvprof_guest_buf_init(struct pvprof_guest_buf *gb, void *base, __u64 size);
enum pvprof_nmi_verdict pvprof_guest_nmi(struct pvprof_guest_buf *gb,
					 pvprof_capture_fn capture, void *ctx,
					 struct pvprof_nmi_result *res);

#endif /* _PVPROF_CORE_GUEST_H */
