/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof stream: encoding entries into a caller-provided buffer, and a
 * decoder that checks framing and never reads past its buffer.
 */
#ifndef _PVPROF_CORE_STREAM_H
#define _PVPROF_CORE_STREAM_H

#include "pvprof_core.h"
#include "host.h"

/* The oldest stream version the decoder reads: version 1 is version 2 with zeroes. */
#define PVPROF_STREAM_VERSION_MIN	1

/**
 * enum pvprof_st_status - result of decoding one stream entry
 * @PVPROF_ST_OK: an entry was decoded (its type may be unknown: skip it)
 * @PVPROF_ST_END: no bytes left
 * @PVPROF_ST_TRUNCATED: fewer bytes than the header or than its size
 * @PVPROF_ST_SMALL: size below the stream header
 * @PVPROF_ST_MISALIGNED: size not a multiple of PVPROF_STREAM_ALIGN
 * @PVPROF_ST_LARGE: size above PVPROF_STREAM_MAX_ENTRY
 * @PVPROF_ST_RESERVED: header flags or a reserved field nonzero
 * @PVPROF_ST_BAD_SIZE: size inconsistent with the type's contents
 * @PVPROF_ST_BAD_FIELD: a field out of range (version, reason, event, ...)
 * @PVPROF_ST_NO_HELLO: the stream does not start with PVPROF_ST_HELLO
 * @PVPROF_ST_STATUS_NR: number of statuses
 */
enum pvprof_st_status {
	PVPROF_ST_OK,
	PVPROF_ST_END,
	PVPROF_ST_TRUNCATED,
	PVPROF_ST_SMALL,
	PVPROF_ST_MISALIGNED,
	PVPROF_ST_LARGE,
	PVPROF_ST_RESERVED,
	PVPROF_ST_BAD_SIZE,
	PVPROF_ST_BAD_FIELD,
	PVPROF_ST_NO_HELLO,
	PVPROF_ST_STATUS_NR,
};

/**
 * struct pvprof_st_view - one decoded stream entry
 * @hdr: copy of its header
 * @raw: the entry in the decoder's buffer (any alignment), @hdr.size bytes
 * @nr_frames: callchain frames at @raw + sizeof(struct pvprof_st_callchain);
 *	read them with pvprof_st_frame()
 * @ustack_regs: a callchain's user registers (PVPROF_UREG_*), when
 *	@ustack_data is set
 * @ustack_size: bytes at @ustack_data
 * @ustack_data: the user stack snapshot's bytes inside @raw, NULL when the
 *	callchain has no snapshot
 * @sb_msg: the sideband message (header included) inside @raw
 * @sb_len: its length, u.sideband.sb.size
 * @u: copy of the fixed part of a known type
 * @u.hello: PVPROF_ST_HELLO
 * @u.loss: PVPROF_ST_LOSS
 * @u.vcpu: PVPROF_ST_VCPU
 * @u.callchain: PVPROF_ST_CALLCHAIN, without frames
 * @u.sideband: PVPROF_ST_SIDEBAND, header of the message
 */
struct pvprof_st_view {
	struct pvprof_stream_hdr hdr;
	const __u8 *raw;
	__u32 nr_frames;
	__u64 ustack_regs[PVPROF_UREG_NR];
	__u32 ustack_size;
	const __u8 *ustack_data;
	const __u8 *sb_msg;
	__u32 sb_len;
	union {
		struct pvprof_st_hello hello;
		struct pvprof_st_loss loss;
		struct pvprof_st_vcpu vcpu;
		struct pvprof_st_callchain callchain;
		struct pvprof_st_sideband sideband;
	} u;
};

/**
 * struct pvprof_st_iter - walks the entries of a stream buffer
 * @buf: the bytes
 * @len: their number
 * @pos: offset in @buf of the next entry; after an error, of the bad one
 * @entries: entries decoded so far
 * @status: sticky status after the first error (framing is lost then)
 */
struct pvprof_st_iter {
	const __u8 *buf;
	__u64 len;
	__u64 pos;
	__u64 entries;
	enum pvprof_st_status status;
};

__u32 pvprof_st_put_hello(void *buf, __u32 cap, __u64 time_ns, __u32 nr_vcpus);
__u32 pvprof_st_put_callchain(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			      const struct pvprof_notice_facts *facts,
			      const struct pvprof_callchain *chain);
__u32 pvprof_st_put_loss(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			 __u32 reason, __u64 count);
__u32 pvprof_st_put_vcpu(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			 __u32 event, __u32 size, __u64 gpa);
__u32 pvprof_st_put_sideband(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			     const void *msg, __u32 len);

enum pvprof_st_status pvprof_st_decode(const void *buf, __u64 avail,
				       struct pvprof_st_view *v);
void pvprof_st_iter_init(struct pvprof_st_iter *it, const void *buf, __u64 len);
void pvprof_st_iter_feed(struct pvprof_st_iter *it, const void *buf, __u64 len);
enum pvprof_st_status pvprof_st_iter_next(struct pvprof_st_iter *it,
					  struct pvprof_st_view *v);
__u64 pvprof_st_frame(const struct pvprof_st_view *v, __u32 i);
const char *pvprof_st_status_name(enum pvprof_st_status status);

#endif /* _PVPROF_CORE_STREAM_H */
