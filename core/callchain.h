/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof callchains: guest-side encoding, host-side validation.
 */
#ifndef _PVPROF_CORE_CALLCHAIN_H
#define _PVPROF_CORE_CALLCHAIN_H

#include "pvprof_core.h"

/**
 * enum pvprof_reject - why the host refused a guest-written callchain
 * @PVPROF_REJ_NONE: accepted
 * @PVPROF_REJ_SHORT_COPY: fewer bytes copied than a callchain header
 * @PVPROF_REJ_SIZE_SMALL: size below sizeof(struct pvprof_callchain)
 * @PVPROF_REJ_SIZE_LARGE: size above the slot or above the bytes copied
 * @PVPROF_REJ_SIZE_MISMATCH: size != 40 + 8 * (nr_kernel + nr_user)
 * @PVPROF_REJ_TOO_DEEP: nr_kernel + nr_user above the registered max_depth
 * @PVPROF_REJ_RESERVED: reserved0 nonzero
 * @PVPROF_REJ_FLAGS: a flag outside PVPROF_CHAIN_F_ALL
 * @PVPROF_REJ_STALE_FRAMES: a stale callchain carries frames
 * @PVPROF_REJ_CONTEXT: frames disagree with the USER/KTHREAD flags
 * @PVPROF_REJ_SEQ_OLD: seq already answered (duplicate, old, or zero)
 * @PVPROF_REJ_SEQ_FUTURE: seq of a notice not written yet
 * @PVPROF_REJ_KERNEL_FRAME: a kernel frame outside the kernel half
 * @PVPROF_REJ_USER_FRAME: a user frame outside the user half
 * @PVPROF_REJ_BAD_INDEX: chain_head out of bounds (nothing drained)
 * @PVPROF_REJ_USTACK_SIZE: a user stack snapshot not asked for, larger than
 *	asked, or with reserved0 set
 * @PVPROF_REJ_USTACK_REGS: a snapshot whose registers do not belong to
 *	the callchain's user part
 * @PVPROF_REJ_NR: number of reasons
 */
enum pvprof_reject {
	PVPROF_REJ_NONE,
	PVPROF_REJ_SHORT_COPY,
	PVPROF_REJ_SIZE_SMALL,
	PVPROF_REJ_SIZE_LARGE,
	PVPROF_REJ_SIZE_MISMATCH,
	PVPROF_REJ_TOO_DEEP,
	PVPROF_REJ_RESERVED,
	PVPROF_REJ_FLAGS,
	PVPROF_REJ_STALE_FRAMES,
	PVPROF_REJ_CONTEXT,
	PVPROF_REJ_SEQ_OLD,
	PVPROF_REJ_SEQ_FUTURE,
	PVPROF_REJ_KERNEL_FRAME,
	PVPROF_REJ_USER_FRAME,
	PVPROF_REJ_BAD_INDEX,
	PVPROF_REJ_USTACK_SIZE,
	PVPROF_REJ_USTACK_REGS,
	PVPROF_REJ_NR,
};

/**
 * struct pvprof_callchain_limits - what the host accepts right now
 * @max_depth: frames per callchain, as published in the header
 * @answered_seq: highest seq already resolved (answered or written off)
 * @notice_head: notices written; the highest valid seq
 * @ustack_size: user stack bytes the host asks for, 0 when none
 */
struct pvprof_callchain_limits {
	__u32 max_depth;
	__u32 ustack_size;
	__u64 answered_seq;
	__u64 notice_head;
};

/*
 * A callchain's frames follow its fixed part, and a snapshot's stack bytes
 * follow the pvprof_ustack part: the ABI structs end where their
 * variable-length parts begin (abi/pvprof.h), so that pvprof_st_callchain
 * can embed a pvprof_callchain and the headers stay ISO C and C++.
 */

/**
 * pvprof_callchain_frames() - where a callchain's frames are
 * @chain: a callchain
 *
 * Return: frames[0 .. nr_kernel + nr_user), right after the fixed part.
 */
static inline __u64 *pvprof_callchain_frames(struct pvprof_callchain *chain)
{
	return (__u64 *)(chain + 1);
}

/**
 * pvprof_callchain_frame() - read one frame of a callchain
 * @chain: a callchain
 * @i: a frame index below nr_kernel + nr_user
 *
 * Return: frames[@i].
 */
static inline __u64 pvprof_callchain_frame(const struct pvprof_callchain *chain, __u32 i)
{
	return ((const __u64 *)(chain + 1))[i];
}

/**
 * pvprof_ustack_data() - where a snapshot's stack bytes are
 * @us: the pvprof_ustack part of a callchain
 *
 * Return: the bytes right after the part's registers and size.
 */
static inline __u8 *pvprof_ustack_data(struct pvprof_ustack *us)
{
	return (__u8 *)(us + 1);
}

__u32 pvprof_callchain_bytes(__u32 nr_frames);
__u32 pvprof_callchain_ustack_bytes(__u32 nr_frames, __u32 ustack_size);
struct pvprof_ustack *pvprof_callchain_ustack(struct pvprof_callchain *chain);
void pvprof_callchain_init(struct pvprof_callchain *chain, __u64 seq, __u32 flags);
void pvprof_callchain_finish(struct pvprof_callchain *chain, __u32 max_frames);
enum pvprof_reject pvprof_callchain_validate(const void *copy, __u32 len,
					     const struct pvprof_callchain_limits *lim);
const char *pvprof_reject_name(enum pvprof_reject reason);

#endif /* _PVPROF_CORE_CALLCHAIN_H */
