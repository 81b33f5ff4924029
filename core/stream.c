// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof stream encoding and decoding.
 *
 * The decoder is used on data from the kernel and on recordings read from
 * files, so it treats every byte as hostile: it copies fixed parts out of
 * the buffer (no alignment assumption) and checks every size against the
 * bytes it was given before looking further.
 */
#include "stream.h"
#include "sideband.h"

static const char * const st_status_names[PVPROF_ST_STATUS_NR] = {
	[PVPROF_ST_OK]		= "ok",
	[PVPROF_ST_END]		= "end",
	[PVPROF_ST_TRUNCATED]	= "truncated",
	[PVPROF_ST_SMALL]	= "size_small",
	[PVPROF_ST_MISALIGNED]	= "size_misaligned",
	[PVPROF_ST_LARGE]	= "size_large",
	[PVPROF_ST_RESERVED]	= "reserved_nonzero",
	[PVPROF_ST_BAD_SIZE]	= "size_inconsistent",
	[PVPROF_ST_BAD_FIELD]	= "field_out_of_range",
	[PVPROF_ST_NO_HELLO]	= "no_hello",
};

static void put_hdr(struct pvprof_stream_hdr *h, __u16 type, __u32 size,
		    __u32 vcpu_id, __u64 time_ns)
{
	h->type = type;
	h->flags = 0;
	h->size = size;
	h->vcpu_id = vcpu_id;
	h->reserved0 = 0;
	h->host_time_ns = time_ns;
}

/**
 * pvprof_st_put_hello() - encode the first entry of a stream
 * @buf: destination
 * @cap: bytes available at @buf
 * @time_ns: host CLOCK_MONOTONIC
 * @nr_vcpus: vCPUs in the VM
 *
 * Return: bytes written, 0 when @cap is too small.
 */
__u32 pvprof_st_put_hello(void *buf, __u32 cap, __u64 time_ns, __u32 nr_vcpus)
{
	struct pvprof_st_hello r;

	if (cap < sizeof(r))
		return 0;
	pvprof_memset(&r, 0, sizeof(r));
	put_hdr(&r.hdr, PVPROF_ST_HELLO, sizeof(r), ~0U, time_ns);
	r.stream_version = PVPROF_STREAM_VERSION;
	r.abi_version = PVPROF_ABI_VERSION;
	r.nr_vcpus = nr_vcpus;
	pvprof_memcpy(buf, &r, sizeof(r));
	return sizeof(r);
}

/**
 * pvprof_st_put_callchain() - encode an accepted callchain with its notice facts
 * @buf: destination
 * @cap: bytes available at @buf
 * @vcpu_id: the vCPU
 * @time_ns: host CLOCK_MONOTONIC
 * @facts: what the host sampled for the callchain's notice
 * @chain: the validated copy of the guest's callchain (frames follow it)
 *
 * Return: bytes written, 0 when @cap is too small or @chain is not a
 * consistent callchain.
 */
__u32 pvprof_st_put_callchain(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			      const struct pvprof_notice_facts *facts,
			      const struct pvprof_callchain *chain)
{
	struct pvprof_st_callchain r;
	__u32 nr = (__u32)chain->nr_kernel + chain->nr_user;
	__u32 chain_size = pvprof_callchain_bytes(nr);
	__u32 size;

	/* A validated snapshot's size is consistent (core/callchain.c). */
	if (chain->flags & PVPROF_CHAIN_F_USTACK) {
		if (chain->size < chain_size + sizeof(struct pvprof_ustack))
			return 0;
		chain_size = chain->size;
	}
	size = sizeof(r) - sizeof(r.chain) + chain_size;
	if (nr > PVPROF_MAX_DEPTH || cap < size || size > PVPROF_STREAM_MAX_ENTRY)
		return 0;
	pvprof_memset(&r, 0, sizeof(r));
	put_hdr(&r.hdr, PVPROF_ST_CALLCHAIN, size, vcpu_id, time_ns);
	r.notice_ip = facts->ip;
	r.guest_tsc = facts->guest_tsc;
	r.notice_cpl = facts->cpl;
	r.event = facts->event;
	r.sample_flags = facts->sample_flags & PVPROF_ST_SAMPLE_F_ALL;
	r.own_nmi_samples = facts->own_nmi_samples;
	pvprof_memcpy(&r.chain, chain, sizeof(r.chain));
	r.chain.size = (__u16)chain_size;
	r.chain.reserved0 = 0;
	pvprof_memcpy(buf, &r, sizeof(r));
	pvprof_memcpy((__u8 *)buf + sizeof(r), chain + 1, chain_size - sizeof(r.chain));
	return size;
}

/**
 * pvprof_st_put_loss() - encode a count of losses for one reason
 * @buf: destination
 * @cap: bytes available at @buf
 * @vcpu_id: the vCPU, ~0U for the whole VM
 * @time_ns: host CLOCK_MONOTONIC
 * @reason: PVPROF_LOSS_*
 * @count: losses since the last LOSS entry of this reason
 *
 * Return: bytes written, 0 when @cap is too small or @reason unknown.
 */
__u32 pvprof_st_put_loss(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			 __u32 reason, __u64 count)
{
	struct pvprof_st_loss r;

	if (cap < sizeof(r) || reason >= PVPROF_LOSS_NR)
		return 0;
	pvprof_memset(&r, 0, sizeof(r));
	put_hdr(&r.hdr, PVPROF_ST_LOSS, sizeof(r), vcpu_id, time_ns);
	r.reason = reason;
	r.count = count;
	pvprof_memcpy(buf, &r, sizeof(r));
	return sizeof(r);
}

/**
 * pvprof_st_put_vcpu() - encode a registration change
 * @buf: destination
 * @cap: bytes available at @buf
 * @vcpu_id: the vCPU
 * @time_ns: host CLOCK_MONOTONIC
 * @event: PVPROF_VCPU_*
 * @size: buffer size
 * @gpa: buffer gpa
 *
 * Return: bytes written, 0 when @cap is too small or @event unknown.
 */
__u32 pvprof_st_put_vcpu(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			 __u32 event, __u32 size, __u64 gpa)
{
	struct pvprof_st_vcpu r;

	if (cap < sizeof(r) || event < PVPROF_VCPU_REGISTERED ||
	    event > PVPROF_VCPU_DROPPED)
		return 0;
	pvprof_memset(&r, 0, sizeof(r));
	put_hdr(&r.hdr, PVPROF_ST_VCPU, sizeof(r), vcpu_id, time_ns);
	r.event = event;
	r.size = size;
	r.gpa = gpa;
	pvprof_memcpy(buf, &r, sizeof(r));
	return sizeof(r);
}

/**
 * pvprof_st_put_sideband() - encode a sideband message
 * @buf: destination
 * @cap: bytes available at @buf
 * @vcpu_id: the vCPU that sent it
 * @time_ns: host CLOCK_MONOTONIC
 * @msg: the host's copy of the message, framing checked or not
 * @len: its length
 *
 * The entry is padded with zeroes to PVPROF_STREAM_ALIGN.
 *
 * Return: bytes written, 0 when @cap is too small or @msg's framing is
 * invalid.
 */
__u32 pvprof_st_put_sideband(void *buf, __u32 cap, __u32 vcpu_id, __u64 time_ns,
			     const void *msg, __u32 len)
{
	struct pvprof_stream_hdr h;
	__u32 size;

	if (pvprof_sideband_check(msg, len) != PVPROF_SB_OK)
		return 0;
	size = PVPROF_ALIGN8((__u32)sizeof(h) + len);
	if (cap < size)
		return 0;
	put_hdr(&h, PVPROF_ST_SIDEBAND, size, vcpu_id, time_ns);
	pvprof_memcpy(buf, &h, sizeof(h));
	pvprof_memcpy((__u8 *)buf + sizeof(h), msg, len);
	pvprof_memset((__u8 *)buf + sizeof(h) + len, 0, size - sizeof(h) - len);
	return size;
}

static enum pvprof_st_status decode_callchain(struct pvprof_st_view *v)
{
	const struct pvprof_st_callchain *c = &v->u.callchain;
	__u32 nr, frames_end;

	if (v->hdr.size < sizeof(*c))
		return PVPROF_ST_BAD_SIZE;
	pvprof_memcpy(&v->u.callchain, v->raw, sizeof(*c));
	nr = (__u32)c->chain.nr_kernel + c->chain.nr_user;
	frames_end = sizeof(*c) + 8U * nr;
	if (nr > PVPROF_MAX_DEPTH || v->hdr.size != sizeof(*c) - sizeof(c->chain) + c->chain.size)
		return PVPROF_ST_BAD_SIZE;
	if (c->chain.flags & PVPROF_CHAIN_F_USTACK) {
		struct pvprof_ustack us;

		if (v->hdr.size < frames_end + sizeof(us))
			return PVPROF_ST_BAD_SIZE;
		pvprof_memcpy(&us, v->raw + frames_end, sizeof(us));
		if (us.size > PVPROF_USTACK_MAX ||
		    c->chain.size != pvprof_callchain_ustack_bytes(nr, us.size))
			return PVPROF_ST_BAD_SIZE;
		if (us.reserved0)
			return PVPROF_ST_RESERVED;
		pvprof_memcpy(v->ustack_regs, us.regs, sizeof(us.regs));
		v->ustack_size = us.size;
		v->ustack_data = v->raw + frames_end + sizeof(us);
	} else if (c->chain.size != sizeof(c->chain) + 8U * nr) {
		return PVPROF_ST_BAD_SIZE;
	}
	if (c->chain.reserved0)
		return PVPROF_ST_RESERVED;
	/* Version 1 wrote zeroes here, which read the same in version 2. */
	if (c->chain.flags & ~PVPROF_CHAIN_F_ALL ||
	    c->sample_flags & ~PVPROF_ST_SAMPLE_F_ALL)
		return PVPROF_ST_BAD_FIELD;
	v->nr_frames = nr;
	return PVPROF_ST_OK;
}

static enum pvprof_st_status decode_sideband(struct pvprof_st_view *v)
{
	const struct pvprof_sideband_hdr *sb = &v->u.sideband.sb;

	if (v->hdr.size < sizeof(v->u.sideband))
		return PVPROF_ST_BAD_SIZE;
	pvprof_memcpy(&v->u.sideband, v->raw, sizeof(v->u.sideband));
	if (sb->size > v->hdr.size - sizeof(v->hdr) ||
	    v->hdr.size != PVPROF_ALIGN8((__u32)sizeof(v->hdr) + sb->size))
		return PVPROF_ST_BAD_SIZE;
	if (pvprof_sideband_check(v->raw + sizeof(v->hdr), sb->size) != PVPROF_SB_OK)
		return PVPROF_ST_BAD_FIELD;
	v->sb_msg = v->raw + sizeof(v->hdr);
	v->sb_len = sb->size;
	return PVPROF_ST_OK;
}

static enum pvprof_st_status decode_body(struct pvprof_st_view *v)
{
	switch (v->hdr.type) {
	case PVPROF_ST_HELLO:
		if (v->hdr.size != sizeof(v->u.hello))
			return PVPROF_ST_BAD_SIZE;
		pvprof_memcpy(&v->u.hello, v->raw, sizeof(v->u.hello));
		if (v->u.hello.reserved0)
			return PVPROF_ST_RESERVED;
		if (v->u.hello.stream_version < PVPROF_STREAM_VERSION_MIN ||
		    v->u.hello.stream_version > PVPROF_STREAM_VERSION)
			return PVPROF_ST_BAD_FIELD;
		return PVPROF_ST_OK;
	case PVPROF_ST_CALLCHAIN:
		return decode_callchain(v);
	case PVPROF_ST_LOSS:
		if (v->hdr.size != sizeof(v->u.loss))
			return PVPROF_ST_BAD_SIZE;
		pvprof_memcpy(&v->u.loss, v->raw, sizeof(v->u.loss));
		if (v->u.loss.reserved0)
			return PVPROF_ST_RESERVED;
		if (v->u.loss.reason >= PVPROF_LOSS_NR)
			return PVPROF_ST_BAD_FIELD;
		return PVPROF_ST_OK;
	case PVPROF_ST_VCPU:
		if (v->hdr.size != sizeof(v->u.vcpu))
			return PVPROF_ST_BAD_SIZE;
		pvprof_memcpy(&v->u.vcpu, v->raw, sizeof(v->u.vcpu));
		if (v->u.vcpu.event < PVPROF_VCPU_REGISTERED ||
		    v->u.vcpu.event > PVPROF_VCPU_DROPPED)
			return PVPROF_ST_BAD_FIELD;
		return PVPROF_ST_OK;
	case PVPROF_ST_SIDEBAND:
		return decode_sideband(v);
	default:
		/* A newer host's type: framing checked, skipped by size. */
		return PVPROF_ST_OK;
	}
}

/**
 * pvprof_st_decode() - decode the entry at the start of a buffer
 * @buf: the bytes, any alignment
 * @avail: bytes available at @buf
 * @v: filled with the entry on PVPROF_ST_OK (hdr is set whenever a whole
 *	header was available)
 *
 * Checks, in order: a whole header, size >= header, size a multiple of
 * PVPROF_STREAM_ALIGN, size <= PVPROF_STREAM_MAX_ENTRY, size <= @avail,
 * header flags and reserved zero, then the type's own rules.  Reads only
 * [@buf, @buf + @avail).
 *
 * Return: PVPROF_ST_OK, PVPROF_ST_END when @avail is 0, else the rule broken.
 */
enum pvprof_st_status pvprof_st_decode(const void *buf, __u64 avail,
				       struct pvprof_st_view *v)
{
	pvprof_memset(v, 0, sizeof(*v));
	if (!avail)
		return PVPROF_ST_END;
	if (avail < sizeof(v->hdr))
		return PVPROF_ST_TRUNCATED;
	pvprof_memcpy(&v->hdr, buf, sizeof(v->hdr));
	if (v->hdr.size < sizeof(v->hdr))
		return PVPROF_ST_SMALL;
	if (v->hdr.size % PVPROF_STREAM_ALIGN)
		return PVPROF_ST_MISALIGNED;
	if (v->hdr.size > PVPROF_STREAM_MAX_ENTRY)
		return PVPROF_ST_LARGE;
	if (v->hdr.size > avail)
		return PVPROF_ST_TRUNCATED;
	if (v->hdr.flags || v->hdr.reserved0)
		return PVPROF_ST_RESERVED;
	v->raw = buf;
	return decode_body(v);
}

/**
 * pvprof_st_iter_init() - start walking a stream from its first entry
 * @it: iterator
 * @buf: the stream's bytes, from its first entry on
 * @len: their number
 */
void pvprof_st_iter_init(struct pvprof_st_iter *it, const void *buf, __u64 len)
{
	it->buf = buf;
	it->len = len;
	it->pos = 0;
	it->entries = 0;
	it->status = PVPROF_ST_OK;
}

/**
 * pvprof_st_iter_feed() - go on with a stream's next bytes
 * @it: an iterator started with pvprof_st_iter_init(), or zeroed
 * @buf: the stream's next bytes: whole entries, the first one right after
 *	the last entry of the bytes before
 * @len: their number
 *
 * A stream read in pieces (each read(2) of a stream fd, each STREAM section
 * of a recording) is walked by one iterator: the HELLO rule is the stream's,
 * not each piece's, and @it->entries goes on counting.  @it->pos starts
 * again at 0, in @buf.  A piece starts at an entry, so framing lost in the
 * piece before is known again: its error does not stick to this one.
 */
void pvprof_st_iter_feed(struct pvprof_st_iter *it, const void *buf, __u64 len)
{
	it->buf = buf;
	it->len = len;
	it->pos = 0;
	it->status = PVPROF_ST_OK;
}

/**
 * pvprof_st_iter_next() - decode the next entry of a stream
 * @it: iterator
 * @v: the entry, on PVPROF_ST_OK
 *
 * The first entry must be PVPROF_ST_HELLO.  After an error the iterator
 * stays at the bad entry and keeps returning the error.
 *
 * Return: PVPROF_ST_OK, PVPROF_ST_END after the last entry, or an error.
 */
enum pvprof_st_status pvprof_st_iter_next(struct pvprof_st_iter *it,
					  struct pvprof_st_view *v)
{
	enum pvprof_st_status st;

	if (it->status != PVPROF_ST_OK)
		return it->status;
	st = pvprof_st_decode(it->buf + it->pos, it->len - it->pos, v);
	if (st == PVPROF_ST_OK && !it->entries && v->hdr.type != PVPROF_ST_HELLO)
		st = PVPROF_ST_NO_HELLO;
	if (st == PVPROF_ST_END)
		return st;
	if (st != PVPROF_ST_OK) {
		it->status = st;
		return st;
	}
	it->pos += v->hdr.size;
	it->entries++;
	return PVPROF_ST_OK;
}

/**
 * pvprof_st_frame() - one frame of a decoded callchain
 * @v: a PVPROF_ST_CALLCHAIN view
 * @i: frame index, below @v->nr_frames
 *
 * Return: the frame's address (kernel frames first, innermost first).
 */
__u64 pvprof_st_frame(const struct pvprof_st_view *v, __u32 i)
{
	__u64 frame;

	pvprof_memcpy(&frame, v->raw + sizeof(struct pvprof_st_callchain) + 8U * i,
		      sizeof(frame));
	return frame;
}

/**
 * pvprof_st_status_name() - short name of a decoder status
 * @status: PVPROF_ST_*
 *
 * Return: a static string, "unknown" when out of range.
 */
const char *pvprof_st_status_name(enum pvprof_st_status status)
{
	if ((unsigned int)status >= PVPROF_ST_STATUS_NR)
		return "unknown";
	return st_status_names[status];
}
