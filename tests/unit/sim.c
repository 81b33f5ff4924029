// SPDX-License-Identifier: GPL-2.0
/*
 * Host and guest sharing one buffer, driven by the core.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static __u64 next_cookie = 0x0123456789abcdefULL;

static void host_copy_in(const struct sim_vcpu *v, void *dst, __u32 off, __u32 len)
{
	ck_assert_uint_le((__u64)off + len, v->size);
	memcpy(dst, v->buf + off, len);
}

static void host_copy_out(struct sim_vcpu *v, __u32 off, const void *src, __u32 len)
{
	ck_assert_uint_le((__u64)off + len, v->size);
	memcpy(v->buf + off, src, len);
}

static struct pvprof_buf_header *hdr(struct sim_vcpu *v)
{
	return (struct pvprof_buf_header *)v->buf;
}

static void stream_put(struct sim_vcpu *v, const void *rec, __u32 len)
{
	if (v->stream_len + len > v->stream_cap) {
		v->stream_cap = (v->stream_cap + len) * 2;
		v->stream = realloc(v->stream, v->stream_cap);
		ck_assert_ptr_nonnull(v->stream);
	}
	memcpy(v->stream + v->stream_len, rec, len);
	v->stream_len += len;
}

void sim_init(struct sim_vcpu *v, __u32 vcpu_id)
{
	__u8 hello[sizeof(struct pvprof_st_hello)];

	memset(v, 0, sizeof(*v));
	v->vcpu_id = vcpu_id;
	ck_assert_uint_eq(pvprof_st_put_hello(hello, sizeof(hello), 1, 1), sizeof(hello));
	stream_put(v, hello, sizeof(hello));
}

int sim_register(struct sim_vcpu *v, __u32 size, __u32 max_depth)
{
	struct pvprof_buf_header h;
	int ret;

	/* Guest: allocate and zero. */
	free(v->buf);
	v->buf = test_buffer(size);
	v->size = size;
	ret = pvprof_guest_buf_init(&v->gb, v->buf, size);
	if (ret)
		return ret;
	/* Host: REGISTER. */
	host_copy_in(v, &h, 0, sizeof(h));
	if (!pvprof_host_header_clean(&h))
		return -PVPROF_EINVAL;
	ret = pvprof_host_ring_init(&v->ring, size, max_depth, next_cookie++);
	if (ret)
		return ret;
	pvprof_host_header_init(&h, &v->ring, PVPROF_STATE_ACTIVE,
				PVPROF_EVENT_CPU_CLOCK, 1000000);
	host_copy_out(v, 0, &h, 128);
	v->registered = true;
	return 0;
}

static bool identity_ok(struct sim_vcpu *v)
{
	struct pvprof_buf_header line0;

	host_copy_in(v, &line0, 0, 64);
	return pvprof_host_identity_ok(&line0, &v->ring);
}

bool sim_host_sample(struct sim_vcpu *v, __u64 ip, __u8 cpl)
{
	struct pvprof_sample s = { .ip = ip, .cpl = cpl, .host_time_ns = v->acct.samples,
				   .guest_tsc = 7 * v->acct.samples };
	struct pvprof_notice n;
	__u64 tail;
	__u32 off;

	if (!v->registered) {
		pvprof_acct_sample_lost(&v->acct, PVPROF_LOSS_UNREGISTERED);
		return false;
	}
	if (!identity_ok(v)) {
		pvprof_host_sample_lost(&v->ring, &v->acct, PVPROF_LOSS_BUFFER_GONE);
		v->identity_drops++;
		sim_host_unregister(v);
		return false;
	}
	tail = pvprof_load_acquire(&hdr(v)->notice_tail);
	if (!pvprof_host_notice_prepare(&v->ring, &v->acct, tail, &s, &n, &off))
		return false;
	host_copy_out(v, off, &n, sizeof(n));
	pvprof_store_release(&hdr(v)->notice_head,
			     pvprof_host_notice_publish(&v->ring, &v->acct));
	return true;
}

__u32 sim_host_drain(struct sim_vcpu *v)
{
	static __u64 copy[PVPROF_RECORD_SLOTS(PVPROF_BUF_MAX_SIZE) *
			  PVPROF_RECORD_SLOT_SIZE / 8];
	static __u8 out[PVPROF_STREAM_MAX_RECORD];
	__u32 n, i, k, len, span;

	if (!v->registered)
		return 0;
	if (!identity_ok(v)) {
		v->identity_drops++;
		sim_host_unregister(v);
		return 0;
	}
	n = pvprof_host_records_ready(&v->ring, &v->acct,
				      pvprof_load_acquire(&hdr(v)->record_head));
	for (i = 0; i < n; i += span) {
		const struct pvprof_record *rec = (const void *)copy;

		host_copy_in(v, copy, pvprof_host_record_offset(&v->ring),
			     PVPROF_RECORD_SLOT_SIZE);
		span = pvprof_host_record_span(&v->ring, copy, n - i);
		for (k = 1; k < span; k++)
			host_copy_in(v, (__u8 *)copy + k * PVPROF_RECORD_SLOT_SIZE,
				     pvprof_host_record_slot_offset(&v->ring, k),
				     PVPROF_RECORD_SLOT_SIZE);
		if (pvprof_host_record(&v->ring, &v->acct, copy,
				       span * PVPROF_RECORD_SLOT_SIZE) !=
		    PVPROF_REJ_NONE || (rec->flags & PVPROF_REC_F_STALE))
			continue;
		len = pvprof_st_put_callchain(out, sizeof(out), v->vcpu_id, 0,
					      pvprof_host_notice_facts(&v->ring, rec->seq),
					      rec);
		ck_assert_uint_ne(len, 0);
		stream_put(v, out, len);
	}
	pvprof_store_release(&hdr(v)->record_tail, v->ring.record_tail);
	sim_emit_losses(v);
	return n;
}

/* Must the pending sample wait (spec section 10.2, step 4)? */
bool sim_host_sample_waits(struct sim_vcpu *v, bool nmi_busy)
{
	return v->registered &&
	       pvprof_host_sample_waits(&v->ring, pvprof_load_acquire(&hdr(v)->notice_tail),
					nmi_busy);
}

/* A sample found the previous one still pending. */
void sim_host_slot_busy(struct sim_vcpu *v)
{
	if (v->registered)
		pvprof_host_sample_lost(&v->ring, &v->acct, PVPROF_LOSS_SLOT_BUSY);
	else
		pvprof_acct_sample_lost(&v->acct, PVPROF_LOSS_SLOT_BUSY);
}

/* The NMI gate before an entry; an injection is published in line 1. */
enum pvprof_nmi_gate sim_host_nmi_gate(struct sim_vcpu *v, bool nmi_held,
				       bool nmi_masked)
{
	enum pvprof_nmi_gate gate;

	if (!v->registered)
		return PVPROF_GATE_CLOSED;
	gate = pvprof_host_nmi_gate(&v->ring, &v->acct,
				    pvprof_load_acquire(&hdr(v)->notice_tail),
				    nmi_held, nmi_masked);
	if (gate == PVPROF_GATE_INJECT)
		PVPROF_WRITE_ONCE(hdr(v)->nmi_head, v->ring.nmi_head);
	return gate;
}

/* KVM delivers an NMI: the result says whether the guest can tell it is pvprof's. */
bool sim_host_nmi_delivery(struct sim_vcpu *v, bool more_nmis_pending)
{
	if (!pvprof_host_nmi_delivery(&v->ring, more_nmis_pending))
		return false;
	v->nmis_attributed++;
	if (!v->registered)
		return false;
	PVPROF_WRITE_ONCE(hdr(v)->nmi_delivered, v->ring.nmi_delivered);
	return true;
}

/* Loss records for what the counters gained since the last call. */
void sim_emit_losses(struct sim_vcpu *v)
{
	__u8 out[sizeof(struct pvprof_st_loss)];
	unsigned int i;

	for (i = 0; i < PVPROF_LOSS_NR; i++) {
		__u64 delta = v->acct.losses[i] - v->losses_emitted[i];

		if (!delta)
			continue;
		ck_assert_uint_eq(pvprof_st_put_loss(out, sizeof(out), v->vcpu_id, 0, i,
						     delta), sizeof(out));
		stream_put(v, out, sizeof(out));
		v->losses_emitted[i] = v->acct.losses[i];
	}
}

void sim_host_unregister(struct sim_vcpu *v)
{
	if (v->registered) {
		pvprof_host_unregister(&v->ring, &v->acct);
		v->registered = false;
	}
	sim_emit_losses(v);
}

void sim_free(struct sim_vcpu *v)
{
	free(v->buf);
	free(v->stream);
	memset(v, 0, sizeof(*v));
}

void sim_capture(void *ctx, const struct pvprof_notice *n,
		 struct pvprof_record *rec, __u32 max_frames)
{
	const struct sim_context *c = ctx;
	__u64 *frames = pvprof_record_frames(rec);
	__u32 i;

	rec->time_ns = c->time_ns;
	rec->pid = rec->tid = 100;
	/* The IP at the NMI; it differs from the notice's when the guest moved on. */
	if (c->user) {
		rec->flags |= PVPROF_REC_F_USER;
		rec->nr_user = c->depth ? c->depth : 1;
		for (i = 0; i < rec->nr_user && i < max_frames; i++)
			frames[i] = UADDR(8 * i);
		if (n->ip < PVPROF_USER_HALF_END)
			frames[0] = n->ip;
	} else {
		rec->nr_kernel = c->depth ? c->depth : 1;
		for (i = 0; i < rec->nr_kernel && i < max_frames; i++)
			frames[i] = KADDR(8 * i);
		if (n->ip >= PVPROF_KERNEL_HALF_START)
			frames[0] = n->ip;
	}
	if (n->ip != frames[0])
		rec->flags |= PVPROF_REC_F_SKEWED;
}
