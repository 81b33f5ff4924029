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

static void stream_put(struct sim_vcpu *v, const void *entry, __u32 len)
{
	if (v->stream_len + len > v->stream_cap) {
		v->stream_cap = (v->stream_cap + len) * 2;
		v->stream = realloc(v->stream, v->stream_cap);
		ck_assert_ptr_nonnull(v->stream);
	}
	memcpy(v->stream + v->stream_len, entry, len);
	v->stream_len += len;
}

void sim_init(struct sim_vcpu *v, __u32 vcpu_id)
{
	static __u64 span_copy[PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) *
			       PVPROF_CHAIN_SLOT_SIZE / 8];
	__u8 hello[sizeof(struct pvprof_st_hello)];

	memset(v, 0, sizeof(*v));
	v->vcpu_id = vcpu_id;
	v->work.span_copy = span_copy;
	v->want.state = PVPROF_STATE_ACTIVE;
	v->want.event = PVPROF_EVENT_CPU_CLOCK;
	v->want.period = 1000000;
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
	/* Host: REGISTER, with line 1 as the VM's configuration says. */
	host_copy_in(v, &h, 0, sizeof(h));
	if (!pvprof_host_header_clean(&h))
		return -PVPROF_EINVAL;
	ret = pvprof_host_ring_init(&v->ring, size, max_depth, next_cookie++);
	if (ret)
		return ret;
	v->ring.ustack_size = v->want.ustack_size;
	pvprof_host_header_init(&h, &v->ring, v->want.state, v->want.event,
				v->want.period);
	host_copy_out(v, 0, &h, 128);
	v->work.published = v->want;
	v->registered = true;
	return 0;
}

static bool identity_ok(struct sim_vcpu *v)
{
	struct pvprof_buf_header line0;

	host_copy_in(v, &line0, 0, 64);
	return pvprof_host_identity_ok(&line0, &v->ring);
}

/*
 * The host writes only its registration's buffer
 * (spec pvprof-registration-end, rule 3).
 */
static void check_write(struct sim_vcpu *v, __u32 off)
{
	ck_assert_msg(v->registered && identity_ok(v),
		      "host write at offset %u into a buffer that is not its registration's",
		      off);
}

/* The host's operations (core/host_vcpu.h) on the simulated vCPU. */

static int op_refresh(void *ctx)
{
	(void)ctx;
	return 0;
}

static int op_read(void *ctx, __u32 off, void *dst, __u32 len)
{
	host_copy_in(ctx, dst, off, len);
	return 0;
}

static int op_write(void *ctx, __u32 off, const void *src, __u32 len)
{
	check_write(ctx, off);
	host_copy_out(ctx, off, src, len);
	return 0;
}

static __u64 *index_at(struct sim_vcpu *v, __u32 off)
{
	ck_assert_uint_eq(off % 8, 0);
	ck_assert_uint_le((__u64)off + 8, PVPROF_HEADER_SIZE);
	return (__u64 *)(v->buf + off);
}

static int op_load_index(void *ctx, __u32 off, __u64 *val)
{
	*val = pvprof_load_acquire(index_at(ctx, off));
	return 0;
}

static int op_store_index(void *ctx, __u32 off, __u64 val)
{
	check_write(ctx, off);
	pvprof_store_release(index_at(ctx, off), val);
	return 0;
}

static bool op_sample_pending(void *ctx)
{
	return ((struct sim_vcpu *)ctx)->slot_full;
}

static bool op_take_sample(void *ctx, struct pvprof_sample *s)
{
	struct sim_vcpu *v = ctx;

	if (!v->slot_full)
		return false;
	*s = v->slot;
	v->slot_full = false;
	return true;
}

static void op_nmi_state(void *ctx, bool *held, bool *masked)
{
	struct sim_vcpu *v = ctx;

	*held = v->nmi_queued || v->nmi_pending;
	*masked = v->nmi_masked;
}

static void op_inject_nmi(void *ctx)
{
	((struct sim_vcpu *)ctx)->nmi_queued++;
}

static bool op_open_nmi_window(void *ctx)
{
	struct sim_vcpu *v = ctx;

	v->nmi_window = true;
	v->nmi_windows_opened++;
	return true;
}

static bool op_emit(void *ctx, const struct pvprof_notice_facts *facts,
		    const struct pvprof_callchain *chain, __u32 slots)
{
	static __u8 out[PVPROF_STREAM_MAX_ENTRY];
	struct sim_vcpu *v = ctx;
	__u32 len;

	(void)slots;
	len = pvprof_st_put_callchain(out, sizeof(out), v->vcpu_id, 0, facts, chain);
	ck_assert_uint_ne(len, 0);
	stream_put(v, out, len);
	return true;
}

static const struct pvprof_host_ops sim_ops = {
	.refresh		= op_refresh,
	.read			= op_read,
	.write			= op_write,
	.load_index		= op_load_index,
	.store_index		= op_store_index,
	.sample_pending		= op_sample_pending,
	.take_sample		= op_take_sample,
	.nmi_state		= op_nmi_state,
	.inject_nmi		= op_inject_nmi,
	.open_nmi_window	= op_open_nmi_window,
	.emit			= op_emit,
};

static struct pvprof_host_vcpu host_view(struct sim_vcpu *v)
{
	struct pvprof_host_vcpu hv = {
		.ring = &v->ring, .acct = &v->acct, .work = &v->work,
		.registered = v->registered, .ops = &sim_ops, .ctx = v,
	};

	return hv;
}

/*
 * The overflow handler, at a sample of guest code: it leaves the sample in
 * the slot or, finding the slot taken, folds it into the pending one (a
 * sample of pvprof's own NMI path) or counts it lost for the host's next
 * pass to fold into the books.
 */
enum sim_sample sim_overflow(struct sim_vcpu *v, __u64 ip, __u8 cpl)
{
	bool in_own_nmi = pvprof_host_in_own_nmi(&v->ring, v->nmi_masked);

	if (v->slot_full) {
		if (pvprof_sample_fold(&v->slot, in_own_nmi))
			return SIM_SAMPLE_FOLDED;
		v->irq_losses[PVPROF_LOSS_SLOT_BUSY]++;
		return SIM_SAMPLE_LOST;
	}
	v->slot = (struct pvprof_sample){
		.ip = ip, .cpl = cpl, .host_time_ns = v->acct.samples,
		.guest_tsc = 7 * v->acct.samples,
		.flags = in_own_nmi ? PVPROF_ST_SAMPLE_F_OWN_NMI : 0,
	};
	v->slot_full = true;
	return SIM_SAMPLE_PENDING;
}

/*
 * KVM_REQ_PVPROF before an entry, as host-kvm/pvprof/sample.c's
 * pvprof_vcpu_work() runs it: the losses the overflow handler counted,
 * then the core's host sequence; a registration it finds gone is dropped.
 */
int sim_host_entry(struct sim_vcpu *v)
{
	struct pvprof_host_vcpu hv = host_view(v);
	int ret;

	pvprof_host_vcpu_fold_losses(&hv, v->irq_losses, v->folded_losses);
	ret = pvprof_host_vcpu_work(&hv, &v->want);
	if (ret) {
		if (ret == -PVPROF_EFAULT)
			v->identity_drops++;
		sim_host_unregister(v);
	}
	sim_emit_losses(v);
	return ret;
}

/* A pass with nothing pending: the callchain slots it drained. */
__u32 sim_host_drain(struct sim_vcpu *v)
{
	__u64 tail = v->ring.chain_tail;

	if (!v->registered)
		return 0;
	sim_host_entry(v);
	return (__u32)(v->ring.chain_tail - tail);
}

/* KVM delivers an NMI: the result says whether the guest can tell it is pvprof's. */
bool sim_host_nmi_delivery(struct sim_vcpu *v, bool more_nmis_pending)
{
	struct pvprof_host_vcpu hv = host_view(v);
	int ret = pvprof_host_vcpu_nmi_delivery(&hv, more_nmis_pending);

	if (ret)
		v->nmis_attributed++;
	if (ret < 0) {
		v->identity_drops++;
		sim_host_unregister(v);
	}
	return ret > 0;
}

/* Step 4 alone: a notice for a sample, now (spec pvprof-host-sequence). */
bool sim_put_notice(struct sim_vcpu *v, __u64 ip, __u8 cpl)
{
	struct pvprof_sample s = { .ip = ip, .cpl = cpl, .host_time_ns = v->acct.samples,
				   .guest_tsc = 7 * v->acct.samples };
	struct pvprof_notice n;
	__u64 tail;
	__u32 off;

	if (!v->registered) {
		pvprof_acct_sample_lost(&v->acct, PVPROF_LOSS_UNREGISTERED, 1);
		return false;
	}
	if (!identity_ok(v)) {
		pvprof_host_sample_lost(&v->ring, &v->acct, PVPROF_LOSS_BUFFER_GONE, 1);
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

/* Step 5 alone: the NMI gate; an injection is published in line 1. */
enum pvprof_nmi_gate sim_ring_gate(struct sim_vcpu *v, bool nmi_held,
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

/* LOSS entries for what the counters gained since the last call. */
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

/* The host drops the registration (pvprof_vcpu_drop()). */
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
		 struct pvprof_callchain *chain, __u32 max_frames)
{
	const struct sim_context *c = ctx;
	__u64 *frames = pvprof_callchain_frames(chain);
	__u32 i;

	chain->time_ns = c->time_ns;
	chain->pid = chain->tid = 100;
	/* The IP at the NMI; it differs from the notice's when the guest moved on. */
	if (c->user) {
		chain->flags |= PVPROF_CHAIN_F_USER;
		chain->nr_user = c->depth ? c->depth : 1;
		for (i = 0; i < chain->nr_user && i < max_frames; i++)
			frames[i] = UADDR(8 * i);
		if (n->ip < PVPROF_USER_HALF_END)
			frames[0] = n->ip;
	} else {
		chain->nr_kernel = c->depth ? c->depth : 1;
		for (i = 0; i < chain->nr_kernel && i < max_frames; i++)
			frames[i] = KADDR(8 * i);
		if (n->ip >= PVPROF_KERNEL_HALF_START)
			frames[0] = n->ip;
	}
	if (n->ip != frames[0])
		chain->flags |= PVPROF_CHAIN_F_SKEWED;
}
