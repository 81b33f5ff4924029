// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof callchains.
 *
 * The host validates a private copy of a slot, taken once: nothing here
 * ever looks at guest memory, so a guest rewriting the slot meanwhile only
 * changes what the copy holds, never what was checked.
 */
#include "callchain.h"

static const char * const reject_names[PVPROF_REJ_NR] = {
	[PVPROF_REJ_NONE]		= "accepted",
	[PVPROF_REJ_SHORT_COPY]		= "short_copy",
	[PVPROF_REJ_SIZE_SMALL]		= "size_small",
	[PVPROF_REJ_SIZE_LARGE]		= "size_large",
	[PVPROF_REJ_SIZE_MISMATCH]	= "size_mismatch",
	[PVPROF_REJ_TOO_DEEP]		= "too_deep",
	[PVPROF_REJ_RESERVED]		= "reserved_nonzero",
	[PVPROF_REJ_FLAGS]		= "unknown_flags",
	[PVPROF_REJ_STALE_FRAMES]	= "stale_with_frames",
	[PVPROF_REJ_CONTEXT]		= "context_mismatch",
	[PVPROF_REJ_SEQ_OLD]		= "seq_old",
	[PVPROF_REJ_SEQ_FUTURE]		= "seq_future",
	[PVPROF_REJ_KERNEL_FRAME]	= "kernel_frame_range",
	[PVPROF_REJ_USER_FRAME]		= "user_frame_range",
	[PVPROF_REJ_BAD_INDEX]		= "bad_chain_head",
	[PVPROF_REJ_USTACK_SIZE]	= "ustack_size",
	[PVPROF_REJ_USTACK_REGS]	= "ustack_regs",
};

/**
 * pvprof_callchain_bytes() - size of a callchain with a number of frames
 * @nr_frames: kernel plus user frames
 *
 * Return: sizeof(struct pvprof_callchain) + 8 * @nr_frames.
 */
__u32 pvprof_callchain_bytes(__u32 nr_frames)
{
	return sizeof(struct pvprof_callchain) + 8U * nr_frames;
}

/**
 * pvprof_callchain_ustack_bytes() - size of a callchain with a user stack snapshot
 * @nr_frames: kernel plus user frames
 * @ustack_size: bytes of user stack in the snapshot
 *
 * Return: the callchain's size with its pvprof_ustack part, the stack bytes
 * padded to a multiple of 8 (spec pvprof-ustack).
 */
__u32 pvprof_callchain_ustack_bytes(__u32 nr_frames, __u32 ustack_size)
{
	return pvprof_callchain_bytes(nr_frames) + sizeof(struct pvprof_ustack) +
	       ((ustack_size + 7U) & ~7U);
}

/**
 * pvprof_callchain_ustack() - where a callchain's user stack snapshot starts
 * @chain: a callchain whose nr_kernel and nr_user are final
 *
 * Return: the pvprof_ustack part right after the frames.
 */
struct pvprof_ustack *pvprof_callchain_ustack(struct pvprof_callchain *chain)
{
	return (struct pvprof_ustack *)&pvprof_callchain_frames(chain)[chain->nr_kernel +
								   chain->nr_user];
}

/**
 * pvprof_callchain_init() - start a callchain in its slot (guest side)
 * @chain: the callchain slot
 * @seq: seq of the notice answered
 * @flags: PVPROF_CHAIN_F_* known so far
 *
 * Clears the fixed part; the caller then fills time, ids, flags, frames and
 * counts and calls pvprof_callchain_finish().
 */
void pvprof_callchain_init(struct pvprof_callchain *chain, __u64 seq, __u32 flags)
{
	pvprof_memset(chain, 0, sizeof(*chain));
	chain->seq = seq;
	chain->flags = flags;
	chain->size = sizeof(*chain);
}

/**
 * pvprof_callchain_finish() - make a filled callchain consistent (guest side)
 * @chain: the callchain, counts and frames written
 * @max_frames: frames the host accepts, at most PVPROF_MAX_DEPTH
 *
 * Clamps the frame counts to @max_frames (user frames go first, they are
 * the outer end of the chain) and marks the callchain truncated when it had
 * to, drops flags the ABI does not define, and sets size and reserved0.
 */
void pvprof_callchain_finish(struct pvprof_callchain *chain, __u32 max_frames)
{
	__u32 nr_kernel = chain->nr_kernel;
	__u32 nr_user = chain->nr_user;

	if (max_frames > PVPROF_MAX_DEPTH)
		max_frames = PVPROF_MAX_DEPTH;
	if (nr_kernel > max_frames) {
		nr_kernel = max_frames;
		chain->flags |= PVPROF_CHAIN_F_TRUNCATED;
	}
	if (nr_kernel + nr_user > max_frames) {
		nr_user = max_frames - nr_kernel;
		chain->flags |= PVPROF_CHAIN_F_TRUNCATED;
	}
	/* A snapshot is attached after the frames are final. */
	chain->flags &= PVPROF_CHAIN_F_ALL & ~PVPROF_CHAIN_F_USTACK;
	chain->nr_kernel = (__u16)nr_kernel;
	chain->nr_user = (__u16)nr_user;
	chain->reserved0 = 0;
	chain->size = (__u16)pvprof_callchain_bytes(nr_kernel + nr_user);
}

static enum pvprof_reject check_context(const struct pvprof_callchain *chain)
{
	if (chain->flags & PVPROF_CHAIN_F_STALE)
		return chain->nr_kernel || chain->nr_user ||
		       (chain->flags & PVPROF_CHAIN_F_USTACK) ? PVPROF_REJ_STALE_FRAMES :
							    PVPROF_REJ_NONE;
	if (chain->flags & PVPROF_CHAIN_F_USER) {
		/* The NMI hit user mode: the first user frame is the IP. */
		if (chain->nr_kernel || !chain->nr_user ||
		    (chain->flags & PVPROF_CHAIN_F_KTHREAD))
			return PVPROF_REJ_CONTEXT;
		return PVPROF_REJ_NONE;
	}
	/* Kernel mode: frames[0] is the interrupted IP. */
	if (!chain->nr_kernel)
		return PVPROF_REJ_CONTEXT;
	if ((chain->flags & PVPROF_CHAIN_F_KTHREAD) && chain->nr_user)
		return PVPROF_REJ_CONTEXT;
	return PVPROF_REJ_NONE;
}

/* Rules 2 and 3 of spec pvprof-callchain-drain, with and without a snapshot. */
static enum pvprof_reject check_size(const struct pvprof_callchain *chain, __u32 len)
{
	__u32 bytes = pvprof_callchain_bytes((__u32)chain->nr_kernel + chain->nr_user);
	struct pvprof_ustack us;

	if (chain->size > len)
		return PVPROF_REJ_SIZE_LARGE;
	if (!(chain->flags & PVPROF_CHAIN_F_USTACK))
		return chain->size > PVPROF_CHAIN_SLOT_SIZE ? PVPROF_REJ_SIZE_LARGE :
		       chain->size != bytes ? PVPROF_REJ_SIZE_MISMATCH : PVPROF_REJ_NONE;
	if (chain->size < bytes + sizeof(us))
		return PVPROF_REJ_SIZE_MISMATCH;
	pvprof_memcpy(&us, (const __u8 *)chain + bytes, sizeof(us));
	if (us.size > PVPROF_USTACK_MAX ||
	    chain->size != pvprof_callchain_ustack_bytes(chain->nr_kernel + chain->nr_user,
						     us.size))
		return PVPROF_REJ_SIZE_MISMATCH;
	return PVPROF_REJ_NONE;
}

/* Rules 14 and 15: a snapshot asked for, of the chain's own user context. */
static enum pvprof_reject check_ustack(const struct pvprof_callchain *chain,
				       const struct pvprof_callchain_limits *lim)
{
	struct pvprof_ustack us;

	if (!(chain->flags & PVPROF_CHAIN_F_USTACK))
		return PVPROF_REJ_NONE;
	pvprof_memcpy(&us, (const __u8 *)chain +
		      pvprof_callchain_bytes((__u32)chain->nr_kernel + chain->nr_user), sizeof(us));
	if (!lim->ustack_size || us.size > lim->ustack_size || us.reserved0)
		return PVPROF_REJ_USTACK_SIZE;
	if (!chain->nr_user ||
	    us.regs[PVPROF_UREG_IP] != pvprof_callchain_frame(chain, chain->nr_kernel) ||
	    us.regs[PVPROF_UREG_SP] >= PVPROF_USER_HALF_END)
		return PVPROF_REJ_USTACK_REGS;
	return PVPROF_REJ_NONE;
}

/**
 * pvprof_callchain_validate() - check a copied callchain (host side)
 * @copy: host-private copy of the callchain's slot, or of all the slots it
 *	spans, at least 8-byte aligned
 * @len: bytes in @copy (PVPROF_CHAIN_SLOT_SIZE when a whole slot)
 * @lim: the host's current limits for this registration
 *
 * Applies every rule of the ABI in a fixed order and reports the first one
 * broken.  Reads only [@copy, @copy + @len).
 *
 * Return: PVPROF_REJ_NONE when the callchain may be accepted, else the reason.
 */
enum pvprof_reject pvprof_callchain_validate(const void *copy, __u32 len,
					     const struct pvprof_callchain_limits *lim)
{
	const struct pvprof_callchain *chain = copy;
	__u32 nr, i;
	enum pvprof_reject ctx;

	if (len < sizeof(*chain))
		return PVPROF_REJ_SHORT_COPY;
	if (chain->size < sizeof(*chain))
		return PVPROF_REJ_SIZE_SMALL;
	ctx = check_size(chain, len);
	if (ctx != PVPROF_REJ_NONE)
		return ctx;
	nr = (__u32)chain->nr_kernel + chain->nr_user;
	if (nr > lim->max_depth || nr > PVPROF_MAX_DEPTH)
		return PVPROF_REJ_TOO_DEEP;
	if (chain->reserved0)
		return PVPROF_REJ_RESERVED;
	if (chain->flags & ~PVPROF_CHAIN_F_ALL)
		return PVPROF_REJ_FLAGS;
	ctx = check_context(chain);
	if (ctx != PVPROF_REJ_NONE)
		return ctx;
	if (chain->seq <= lim->answered_seq)
		return PVPROF_REJ_SEQ_OLD;
	if (chain->seq > lim->notice_head)
		return PVPROF_REJ_SEQ_FUTURE;
	for (i = 0; i < chain->nr_kernel; i++)
		if (pvprof_callchain_frame(chain, i) < PVPROF_KERNEL_HALF_START)
			return PVPROF_REJ_KERNEL_FRAME;
	for (; i < nr; i++)
		if (pvprof_callchain_frame(chain, i) >= PVPROF_USER_HALF_END)
			return PVPROF_REJ_USER_FRAME;
	return check_ustack(chain, lim);
}

/**
 * pvprof_reject_name() - short name of a rejection reason
 * @reason: PVPROF_REJ_*
 *
 * Return: a static string for messages and counters, "unknown" when
 * @reason is out of range.
 */
const char *pvprof_reject_name(enum pvprof_reject reason)
{
	if ((unsigned int)reason >= PVPROF_REJ_NR)
		return "unknown";
	return reject_names[reason];
}
