// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's NMI logic against the host logic, through one shared buffer.
 */
#include "runner.h"
#include "sim.h"

static struct sim_vcpu v;
static struct sim_context kctx = { .user = false, .depth = 4, .time_ns = 77 };

static void setup(__u32 size)
{
	sim_init(&v, 0);
	ck_assert_int_eq(sim_register(&v, size, 0), 0);
}

static void teardown(void)
{
	sim_free(&v);
}

static struct pvprof_buf_header *h(void)
{
	return (struct pvprof_buf_header *)v.buf;
}

static void assert_balanced(void)
{
	ck_assert_uint_eq(v.acct.samples,
			  v.acct.notices + pvprof_acct_sample_losses(&v.acct));
	ck_assert_uint_eq(v.acct.notices, pvprof_acct_notice_outcomes(&v.acct) +
			  pvprof_host_outstanding(&v.ring));
}

START_TEST(guest_register_writes_identity)
{
	setup(32768);
	ck_assert_uint_eq(h()->magic, PVPROF_BUF_MAGIC);
	ck_assert_uint_ne(h()->cookie, 0);
	ck_assert_uint_eq(h()->size, 32768);
	ck_assert_uint_eq(h()->max_depth, PVPROF_MAX_DEPTH);
	ck_assert_uint_eq(h()->state, PVPROF_STATE_ACTIVE);
	/* Registering a buffer that was not zeroed fails. */
	h()->chain_head = 1;
	ck_assert(!pvprof_host_header_clean(h()));
	teardown();
}
END_TEST

/* The gate injects and KVM delivers that NMI alone. */
static void deliver_pvprof_nmi(void)
{
	ck_assert_int_eq(sim_ring_gate(&v, false, false), PVPROF_GATE_INJECT);
	ck_assert(sim_host_nmi_delivery(&v, false));
}

START_TEST(guest_nmi_not_ours)
{
	struct pvprof_nmi_result res;
	__u8 before[PVPROF_BUF_MIN_SIZE];

	setup(8192);
	memcpy(before, v.buf, sizeof(before));
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);
	ck_assert_uint_eq(res.consumed, 0);
	/* A foreign NMI leaves the buffer untouched, statistics included. */
	ck_assert_mem_eq(before, v.buf, sizeof(before));
	teardown();
}
END_TEST

START_TEST(guest_nmi_garbage_head)
{
	struct pvprof_nmi_result res;

	setup(8192);
	h()->notice_head = 33;		/* more than the ring holds */
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);
	ck_assert(res.garbage);
	ck_assert_uint_eq(h()->notice_tail, 33);
	ck_assert_uint_eq(h()->guest_errors, 1);
	ck_assert_uint_eq(h()->guest_nmis_claimed, 0);
	ck_assert_uint_eq(h()->chain_head, 0);
	h()->notice_head = 10;		/* behind the tail now */
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);
	ck_assert(res.garbage);
	ck_assert_uint_eq(h()->notice_tail, 10);
	teardown();
}
END_TEST

START_TEST(guest_nmi_newest_callchain_older_stale)
{
	struct pvprof_nmi_result res;
	struct pvprof_st_iter it;
	struct pvprof_st_view sv;
	int callchains = 0;

	setup(16384);
	ck_assert(sim_put_notice(&v, KADDR(0x100), 0));
	ck_assert_int_eq(sim_ring_gate(&v, false, false), PVPROF_GATE_INJECT);
	ck_assert(sim_put_notice(&v, KADDR(0x200), 0));
	ck_assert(sim_put_notice(&v, KADDR(0x300), 0));
	ck_assert(sim_host_nmi_delivery(&v, false));
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	ck_assert_uint_eq(res.consumed, 3);
	ck_assert_uint_eq(res.callchains, 1);
	ck_assert_uint_eq(res.stale, 2);
	ck_assert_uint_eq(res.dropped, 0);
	ck_assert_uint_eq(h()->notice_tail, 3);
	ck_assert_uint_eq(h()->chain_head, 3);
	ck_assert_uint_eq(h()->guest_nmis_claimed, 1);
	ck_assert_uint_eq(h()->guest_callchains, 1);
	ck_assert_uint_eq(h()->guest_stale, 2);
	/* Not attributed: the next NMI is somebody else's. */
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);

	ck_assert_uint_eq(sim_host_drain(&v), 3);
	ck_assert_uint_eq(h()->chain_tail, 3);
	ck_assert_uint_eq(v.acct.callchains, 1);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_STALE], 2);
	ck_assert_uint_eq(pvprof_host_outstanding(&v.ring), 0);
	assert_balanced();

	/* The stream holds the newest, with the host's facts and the guest's stack. */
	pvprof_st_iter_init(&it, v.stream, v.stream_len);
	while (pvprof_st_iter_next(&it, &sv) == PVPROF_ST_OK) {
		if (sv.hdr.type != PVPROF_ST_CALLCHAIN)
			continue;
		callchains++;
		ck_assert_uint_eq(sv.u.callchain.chain.seq, 3);
		ck_assert_uint_eq(sv.u.callchain.notice_ip, KADDR(0x300));
		ck_assert_uint_eq(sv.nr_frames, 4);
		ck_assert_uint_eq(pvprof_st_frame(&sv, 0), KADDR(0x300));
		ck_assert_uint_eq(sv.u.callchain.chain.flags & PVPROF_CHAIN_F_SKEWED, 0);
	}
	ck_assert_int_eq(it.status, PVPROF_ST_OK);
	ck_assert_int_eq(callchains, 1);
	teardown();
}
END_TEST

START_TEST(guest_nmi_foreign_first_answers_without_claiming)
{
	struct pvprof_nmi_result res;

	setup(8192);
	ck_assert(sim_put_notice(&v, KADDR(0x100), 0));
	ck_assert_int_eq(sim_ring_gate(&v, false, false), PVPROF_GATE_INJECT);
	/* A foreign NMI was pending too: KVM delivers it first. */
	ck_assert(!sim_host_nmi_delivery(&v, true));
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);
	ck_assert_uint_eq(res.consumed, 1);
	ck_assert_uint_eq(res.callchains, 1);
	ck_assert_uint_eq(h()->guest_nmis_claimed, 0);
	/* The host's gate stays shut until pvprof's own delivery ... */
	ck_assert(sim_put_notice(&v, KADDR(0x200), 0));
	ck_assert_int_eq(sim_ring_gate(&v, true, false), PVPROF_GATE_CLOSED);
	/* ... which the guest claims although the notice it was for is gone. */
	ck_assert(sim_host_nmi_delivery(&v, false));
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	ck_assert_uint_eq(res.consumed, 1);
	ck_assert_uint_eq(h()->guest_nmis_claimed, 1);
	/* Exactly once. */
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);
	ck_assert_uint_eq(sim_host_drain(&v), 2);
	ck_assert_uint_eq(v.acct.callchains, 2);
	assert_balanced();
	teardown();
}
END_TEST

START_TEST(guest_nmi_claim_across_reregistration)
{
	struct pvprof_nmi_result res;

	setup(8192);
	ck_assert(sim_put_notice(&v, KADDR(0x100), 0));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	/*
	 * An NMI injected for the old registration is still in flight when
	 * the guest registers again, and is delivered on the entry that
	 * returns from REGISTER: the guest, whose count starts at 0 like
	 * the host's, claims it without having looked at the header.
	 */
	ck_assert(sim_put_notice(&v, KADDR(0x200), 0));
	ck_assert_int_eq(sim_ring_gate(&v, false, false), PVPROF_GATE_INJECT);
	sim_host_unregister(&v);
	ck_assert_int_eq(sim_register(&v, 8192, 0), 0);
	ck_assert_uint_eq(h()->nmi_delivered, 0);
	ck_assert(sim_host_nmi_delivery(&v, false));
	ck_assert_uint_eq(h()->nmi_delivered, 1);
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	ck_assert_uint_eq(res.consumed, 0);
	/* Exactly once, and the next one is claimed again. */
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 0);
	ck_assert(sim_put_notice(&v, KADDR(0x300), 0));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	teardown();
}
END_TEST

START_TEST(guest_nmi_nested_delivery_claimed_early)
{
	struct pvprof_nmi_result res;

	setup(8192);
	ck_assert(sim_put_notice(&v, KADDR(0x100), 0));
	deliver_pvprof_nmi();
	/*
	 * The handler took an exception and its IRET ended NMI blocking
	 * before pvprof's handler ran: KVM delivers the next pvprof NMI, nested.
	 */
	ck_assert(sim_put_notice(&v, KADDR(0x200), 0));
	deliver_pvprof_nmi();
	ck_assert_uint_eq(h()->nmi_delivered, 2);
	/* Two events: Linux swallows the empty back-to-back run that follows. */
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res), 2);
	ck_assert_uint_eq(res.deliveries, 2);
	ck_assert_uint_eq(res.consumed, 2);
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res), 0);
	ck_assert_uint_eq(res.deliveries, 0);
	/* One delivery is one event, and a garbage count at most two. */
	ck_assert(sim_put_notice(&v, KADDR(0x300), 0));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res), 1);
	h()->nmi_delivered += 1000;
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res), 2);
	ck_assert_uint_eq(res.deliveries, 1000);
	teardown();
}
END_TEST

START_TEST(guest_nmi_chain_ring_full)
{
	struct pvprof_nmi_result res;
	int i;

	setup(8192);		/* 4 callchain slots */
	for (i = 0; i < 6; i++)
		ck_assert(sim_put_notice(&v, KADDR(i), 0));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	/* The newest four are answered, the two oldest dropped. */
	ck_assert_uint_eq(res.consumed, 6);
	ck_assert_uint_eq(res.dropped, 2);
	ck_assert_uint_eq(res.stale, 3);
	ck_assert_uint_eq(h()->guest_errors, 2);
	ck_assert_uint_eq(h()->chain_head, 4);
	/* Full callchain ring, host not drained: the next notice is dropped too. */
	ck_assert(sim_put_notice(&v, KADDR(7), 0));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	ck_assert_uint_eq(res.dropped, 1);
	ck_assert_uint_eq(h()->chain_head, 4);

	ck_assert_uint_eq(sim_host_drain(&v), 4);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_UNANSWERED], 2);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_STALE], 3);
	ck_assert_uint_eq(v.acct.callchains, 1);
	sim_host_unregister(&v);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_UNANSWERED], 3);
	assert_balanced();
	teardown();
}
END_TEST

START_TEST(guest_nmi_bad_chain_tail)
{
	struct pvprof_nmi_result res;

	setup(8192);
	ck_assert(sim_put_notice(&v, KADDR(1), 0));
	h()->chain_tail = 100;		/* the host's index, corrupted */
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &kctx, &res),
			 1);
	ck_assert_uint_eq(res.dropped, 1);
	ck_assert_uint_eq(h()->chain_head, 0);
	ck_assert_uint_eq(h()->notice_tail, 1);
	ck_assert_uint_eq(h()->guest_errors, 2);
	teardown();
}
END_TEST

START_TEST(guest_capture_clamped_to_max_depth)
{
	struct sim_context deep = { .user = true, .depth = 200 };
	struct pvprof_nmi_result res;

	sim_init(&v, 0);
	ck_assert_int_eq(sim_register(&v, 8192, 10), 0);
	ck_assert(sim_put_notice(&v, UADDR(0x40), 3));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &deep, &res),
			 1);
	ck_assert_uint_eq(sim_host_drain(&v), 1);
	ck_assert_uint_eq(v.acct.callchains, 1);
	ck_assert_uint_eq(v.acct.rejects[PVPROF_REJ_TOO_DEEP], 0);
	teardown();
}
END_TEST

START_TEST(guest_reboot_zeroes_buffer)
{
	setup(8192);
	ck_assert(sim_put_notice(&v, KADDR(1), 0));
	memset(v.buf, 0, v.size);	/* the guest rebooted */
	ck_assert(!sim_put_notice(&v, KADDR(2), 0));
	ck_assert(!v.registered);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_BUFFER_GONE], 1);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_UNANSWERED], 1);
	/* Nothing written after the drop. */
	ck_assert(!sim_put_notice(&v, KADDR(3), 0));
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_UNREGISTERED], 1);
	ck_assert_uint_eq(((struct pvprof_buf_header *)v.buf)->notice_head, 0);
	assert_balanced();
	teardown();
}
END_TEST

/* A user stack the fake snapshot copies: byte i is (i * 13 + 5). */
#define FAKE_STACK	3000
#define FAKE_SP		UADDR(0x8000)

static int fake_ustack(void *ctx, const struct pvprof_callchain *chain, __u64 *regs,
		       __u8 *data, __u32 max)
{
	__u32 i, n = max < FAKE_STACK ? max : FAKE_STACK;

	(void)ctx;
	regs[PVPROF_UREG_IP] = pvprof_callchain_frame(chain, chain->nr_kernel);
	regs[PVPROF_UREG_SP] = FAKE_SP;
	regs[PVPROF_UREG_BP] = 0xb0;
	for (i = 0; i < n; i++)
		data[i] = (__u8)(i * 13 + 5);
	return (int)n;
}

/*
 * Callchains with snapshots span slots and wrap at the ring's end; the host
 * copies each once and streams it whole (spec pvprof-callchain-drain and
 * spec pvprof-ustack).
 */
START_TEST(guest_ustack_spans_wrap_and_stream)
{
	static __u64 scratch[PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) *
			     PVPROF_CHAIN_SLOT_SIZE / 8];
	struct sim_context uctx = { .user = true, .depth = 4, .time_ns = 9 };
	struct pvprof_nmi_result res;
	struct pvprof_st_iter it;
	struct pvprof_st_view sv;
	__u32 round, i, snapshots = 0;

	setup(16384);			/* 12 slots; a callchain takes 4 */
	v.want.ustack_size = 4096;	/* the VM asks for snapshots */
	ck_assert_uint_eq(sim_host_drain(&v), 0);
	ck_assert_uint_eq(h()->ustack_size, 4096);
	pvprof_guest_set_ustack(&v.gb, fake_ustack, scratch, sizeof(scratch));
	for (round = 0; round < 10; round++) {
		ck_assert(sim_put_notice(&v, UADDR(0), 3));
		deliver_pvprof_nmi();
		ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &uctx, &res), 1);
		ck_assert_uint_eq(res.callchains, 1);
		ck_assert_uint_eq(h()->chain_head, 4 * (round + 1));
		ck_assert_uint_eq(sim_host_drain(&v), 4);
	}
	ck_assert_uint_eq(v.acct.callchains, 10);
	ck_assert_uint_eq(v.acct.losses[PVPROF_LOSS_INVALID], 0);
	assert_balanced();

	pvprof_st_iter_init(&it, v.stream, v.stream_len);
	while (pvprof_st_iter_next(&it, &sv) == PVPROF_ST_OK) {
		if (sv.hdr.type != PVPROF_ST_CALLCHAIN)
			continue;
		ck_assert_ptr_nonnull(sv.ustack_data);
		ck_assert_uint_eq(sv.ustack_size, FAKE_STACK);
		ck_assert_uint_eq(sv.ustack_regs[PVPROF_UREG_SP], FAKE_SP);
		ck_assert_uint_eq(sv.ustack_regs[PVPROF_UREG_IP], pvprof_st_frame(&sv, 0));
		for (i = 0; i < FAKE_STACK; i++)
			ck_assert_uint_eq(sv.ustack_data[i], (__u8)(i * 13 + 5));
		snapshots++;
	}
	ck_assert_uint_eq(snapshots, 10);

	/* A host that stops asking gets plain one-slot callchains again. */
	v.want.ustack_size = 0;
	ck_assert_uint_eq(sim_host_drain(&v), 0);
	ck_assert_uint_eq(h()->ustack_size, 0);
	ck_assert(sim_put_notice(&v, UADDR(0), 3));
	deliver_pvprof_nmi();
	ck_assert_int_eq(pvprof_guest_nmi(&v.gb, sim_capture, &uctx, &res), 1);
	ck_assert_uint_eq(h()->chain_head, 41);
	teardown();
}
END_TEST

Suite *guest_suite(void)
{
	Suite *s = suite_create("guest");

	PVPROF_ADD_TEST(s, guest_register_writes_identity);
	PVPROF_ADD_TEST(s, guest_nmi_not_ours);
	PVPROF_ADD_TEST(s, guest_nmi_garbage_head);
	PVPROF_ADD_TEST(s, guest_nmi_newest_callchain_older_stale);
	PVPROF_ADD_TEST(s, guest_nmi_foreign_first_answers_without_claiming);
	PVPROF_ADD_TEST(s, guest_nmi_claim_across_reregistration);
	PVPROF_ADD_TEST(s, guest_nmi_nested_delivery_claimed_early);
	PVPROF_ADD_TEST(s, guest_nmi_chain_ring_full);
	PVPROF_ADD_TEST(s, guest_nmi_bad_chain_tail);
	PVPROF_ADD_TEST(s, guest_capture_clamped_to_max_depth);
	PVPROF_ADD_TEST(s, guest_reboot_zeroes_buffer);
	PVPROF_ADD_TEST(s, guest_ustack_spans_wrap_and_stream);
	return s;
}
