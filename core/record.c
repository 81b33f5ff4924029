// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof callchain records.
 *
 * The host validates a private copy of a slot, taken once: nothing here
 * ever looks at guest memory, so a guest rewriting the slot meanwhile only
 * changes what the copy holds, never what was checked.
 */
#include "record.h"

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
	[PVPROF_REJ_BAD_INDEX]		= "bad_record_head",
	[PVPROF_REJ_USTACK_SIZE]	= "ustack_size",
	[PVPROF_REJ_USTACK_REGS]	= "ustack_regs",
};

/**
 * pvprof_record_bytes() - size of a record with a number of frames
 * @nr_frames: kernel plus user frames
 *
 * Return: sizeof(struct pvprof_callchain) + 8 * @nr_frames.
 */
__u32 pvprof_record_bytes(__u32 nr_frames)
{
	return sizeof(struct pvprof_callchain) + 8U * nr_frames;
}

/**
 * pvprof_record_ustack_bytes() - size of a record with a user stack snapshot
 * @nr_frames: kernel plus user frames
 * @ustack_size: bytes of user stack in the snapshot
 *
 * Return: the record's size with its pvprof_ustack part, the stack bytes
 * padded to a multiple of 8 (spec pvprof-ustack).
 */
__u32 pvprof_record_ustack_bytes(__u32 nr_frames, __u32 ustack_size)
{
	return pvprof_record_bytes(nr_frames) + sizeof(struct pvprof_ustack) +
	       ((ustack_size + 7U) & ~7U);
}

/**
 * pvprof_record_ustack() - where a record's user stack snapshot starts
 * @rec: a record whose nr_kernel and nr_user are final
 *
 * Return: the pvprof_ustack part right after the frames.
 */
struct pvprof_ustack *pvprof_record_ustack(struct pvprof_callchain *rec)
{
	return (struct pvprof_ustack *)&pvprof_record_frames(rec)[rec->nr_kernel +
								   rec->nr_user];
}

/**
 * pvprof_record_init() - start a record in its slot (guest side)
 * @rec: the record slot
 * @seq: seq of the notice answered
 * @flags: PVPROF_CHAIN_F_* known so far
 *
 * Clears the fixed part; the caller then fills time, ids, flags, frames and
 * counts and calls pvprof_record_finish().
 */
void pvprof_record_init(struct pvprof_callchain *rec, __u64 seq, __u32 flags)
{
	pvprof_memset(rec, 0, sizeof(*rec));
	rec->seq = seq;
	rec->flags = flags;
	rec->size = sizeof(*rec);
}

/**
 * pvprof_record_finish() - make a filled record consistent (guest side)
 * @rec: the record, counts and frames written
 * @max_frames: frames the host accepts, at most PVPROF_MAX_DEPTH
 *
 * Clamps the frame counts to @max_frames (user frames go first, they are
 * the outer end of the chain) and marks the record truncated when it had
 * to, drops flags the ABI does not define, and sets size and reserved0.
 */
void pvprof_record_finish(struct pvprof_callchain *rec, __u32 max_frames)
{
	__u32 nr_kernel = rec->nr_kernel;
	__u32 nr_user = rec->nr_user;

	if (max_frames > PVPROF_MAX_DEPTH)
		max_frames = PVPROF_MAX_DEPTH;
	if (nr_kernel > max_frames) {
		nr_kernel = max_frames;
		rec->flags |= PVPROF_CHAIN_F_TRUNCATED;
	}
	if (nr_kernel + nr_user > max_frames) {
		nr_user = max_frames - nr_kernel;
		rec->flags |= PVPROF_CHAIN_F_TRUNCATED;
	}
	/* A snapshot is attached after the frames are final. */
	rec->flags &= PVPROF_CHAIN_F_ALL & ~PVPROF_CHAIN_F_USTACK;
	rec->nr_kernel = (__u16)nr_kernel;
	rec->nr_user = (__u16)nr_user;
	rec->reserved0 = 0;
	rec->size = (__u16)pvprof_record_bytes(nr_kernel + nr_user);
}

static enum pvprof_reject check_context(const struct pvprof_callchain *rec)
{
	if (rec->flags & PVPROF_CHAIN_F_STALE)
		return rec->nr_kernel || rec->nr_user ||
		       (rec->flags & PVPROF_CHAIN_F_USTACK) ? PVPROF_REJ_STALE_FRAMES :
							    PVPROF_REJ_NONE;
	if (rec->flags & PVPROF_CHAIN_F_USER) {
		/* The NMI hit user mode: the first user frame is the IP. */
		if (rec->nr_kernel || !rec->nr_user ||
		    (rec->flags & PVPROF_CHAIN_F_KTHREAD))
			return PVPROF_REJ_CONTEXT;
		return PVPROF_REJ_NONE;
	}
	/* Kernel mode: frames[0] is the interrupted IP. */
	if (!rec->nr_kernel)
		return PVPROF_REJ_CONTEXT;
	if ((rec->flags & PVPROF_CHAIN_F_KTHREAD) && rec->nr_user)
		return PVPROF_REJ_CONTEXT;
	return PVPROF_REJ_NONE;
}

/* Rules 2 and 3 of spec pvprof-callchain-drain, with and without a snapshot. */
static enum pvprof_reject check_size(const struct pvprof_callchain *rec, __u32 len)
{
	__u32 bytes = pvprof_record_bytes((__u32)rec->nr_kernel + rec->nr_user);
	struct pvprof_ustack us;

	if (rec->size > len)
		return PVPROF_REJ_SIZE_LARGE;
	if (!(rec->flags & PVPROF_CHAIN_F_USTACK))
		return rec->size > PVPROF_CHAIN_SLOT_SIZE ? PVPROF_REJ_SIZE_LARGE :
		       rec->size != bytes ? PVPROF_REJ_SIZE_MISMATCH : PVPROF_REJ_NONE;
	if (rec->size < bytes + sizeof(us))
		return PVPROF_REJ_SIZE_MISMATCH;
	pvprof_memcpy(&us, (const __u8 *)rec + bytes, sizeof(us));
	if (us.size > PVPROF_USTACK_MAX ||
	    rec->size != pvprof_record_ustack_bytes(rec->nr_kernel + rec->nr_user,
						     us.size))
		return PVPROF_REJ_SIZE_MISMATCH;
	return PVPROF_REJ_NONE;
}

/* Rules 14 and 15: a snapshot asked for, of the chain's own user context. */
static enum pvprof_reject check_ustack(const struct pvprof_callchain *rec,
				       const struct pvprof_record_limits *lim)
{
	struct pvprof_ustack us;

	if (!(rec->flags & PVPROF_CHAIN_F_USTACK))
		return PVPROF_REJ_NONE;
	pvprof_memcpy(&us, (const __u8 *)rec +
		      pvprof_record_bytes((__u32)rec->nr_kernel + rec->nr_user), sizeof(us));
	if (!lim->ustack_size || us.size > lim->ustack_size || us.reserved0)
		return PVPROF_REJ_USTACK_SIZE;
	if (!rec->nr_user ||
	    us.regs[PVPROF_UREG_IP] != pvprof_record_frame(rec, rec->nr_kernel) ||
	    us.regs[PVPROF_UREG_SP] >= PVPROF_USER_HALF_END)
		return PVPROF_REJ_USTACK_REGS;
	return PVPROF_REJ_NONE;
}

/**
 * pvprof_record_validate() - check a copied record (host side)
 * @copy: host-private copy of the record's slot, or of all the slots it
 *	spans, at least 8-byte aligned
 * @len: bytes in @copy (PVPROF_CHAIN_SLOT_SIZE when a whole slot)
 * @lim: the host's current limits for this registration
 *
 * Applies every rule of the ABI in a fixed order and reports the first one
 * broken.  Reads only [@copy, @copy + @len).
 *
 * Return: PVPROF_REJ_NONE when the record may be accepted, else the reason.
 */
enum pvprof_reject pvprof_record_validate(const void *copy, __u32 len,
					  const struct pvprof_record_limits *lim)
{
	const struct pvprof_callchain *rec = copy;
	__u32 nr, i;
	enum pvprof_reject ctx;

	if (len < sizeof(*rec))
		return PVPROF_REJ_SHORT_COPY;
	if (rec->size < sizeof(*rec))
		return PVPROF_REJ_SIZE_SMALL;
	ctx = check_size(rec, len);
	if (ctx != PVPROF_REJ_NONE)
		return ctx;
	nr = (__u32)rec->nr_kernel + rec->nr_user;
	if (nr > lim->max_depth || nr > PVPROF_MAX_DEPTH)
		return PVPROF_REJ_TOO_DEEP;
	if (rec->reserved0)
		return PVPROF_REJ_RESERVED;
	if (rec->flags & ~PVPROF_CHAIN_F_ALL)
		return PVPROF_REJ_FLAGS;
	ctx = check_context(rec);
	if (ctx != PVPROF_REJ_NONE)
		return ctx;
	if (rec->seq <= lim->answered_seq)
		return PVPROF_REJ_SEQ_OLD;
	if (rec->seq > lim->notice_head)
		return PVPROF_REJ_SEQ_FUTURE;
	for (i = 0; i < rec->nr_kernel; i++)
		if (pvprof_record_frame(rec, i) < PVPROF_KERNEL_HALF_START)
			return PVPROF_REJ_KERNEL_FRAME;
	for (; i < nr; i++)
		if (pvprof_record_frame(rec, i) >= PVPROF_USER_HALF_END)
			return PVPROF_REJ_USER_FRAME;
	return check_ustack(rec, lim);
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
