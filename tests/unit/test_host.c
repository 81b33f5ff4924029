// SPDX-License-Identifier: GPL-2.0
/*
 * Host side of one vCPU: registration checks, notices, the NMI gate,
 * draining, and the accounting identities.
 */
#include "runner.h"
#include "test_util.h"

#define COOKIE	0x5eed5eed12345678ULL

static struct pvprof_host_ring ring;
static struct pvprof_vcpu_acct acct;

static void setup(__u32 size)
{
	memset(&acct, 0, sizeof(acct));
	memset(&ring, 0, sizeof(ring));
	ck_assert_int_eq(pvprof_host_ring_init(&ring, size, 0, COOKIE), 0);
}

static void assert_balanced(void)
{
	ck_assert_uint_eq(acct.samples, acct.notices + pvprof_acct_sample_losses(&acct));
	ck_assert_uint_eq(acct.notices, pvprof_acct_notice_outcomes(&acct) +
			  pvprof_host_outstanding(&ring));
}

/* Write one notice with the guest's tail at @tail; true when written. */
static bool sample(__u64 tail)
{
	struct pvprof_sample s = { .ip = KADDR(ring.notice_head), .cpl = 0 };
	struct pvprof_notice n;
	__u32 off;

	if (!pvprof_host_notice_prepare(&ring, &acct, tail, &s, &n, &off))
		return false;
	ck_assert_uint_eq(n.seq, ring.notice_head + 1);
	ck_assert_uint_eq(off, pvprof_notice_offset(ring.notice_head));
	ck_assert_uint_eq(pvprof_host_notice_publish(&ring, &acct), n.seq);
	return true;
}

static enum pvprof_reject answer(__u64 seq, __u32 flags)
{
	struct test_slot slot;

	if (flags & PVPROF_CHAIN_F_STALE) {
		memset(&slot, 0, sizeof(slot));
		pvprof_callchain_init(&slot.chain, seq, PVPROF_CHAIN_F_STALE);
	} else {
		test_kernel_chain(&slot, seq, 3, 2);
	}
	return pvprof_host_callchain(&ring, &acct, &slot, sizeof(slot));
}

/* The gate with the guest's notice_tail @tail and KVM's NMI state. */
static enum pvprof_nmi_gate gate(__u64 tail, bool nmi_held, bool nmi_masked)
{
	return pvprof_host_nmi_gate(&ring, &acct, tail, nmi_held, nmi_masked);
}

START_TEST(host_ring_init_checks)
{
	struct pvprof_host_ring r = { 0 };

	ck_assert_int_eq(pvprof_host_ring_init(&r, 12288, 0, COOKIE), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_host_ring_init(&r, 1 << 17, 0, COOKIE), -PVPROF_E2BIG);
	ck_assert_int_eq(pvprof_host_ring_init(&r, 8192, 0, 0), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_host_ring_init(&r, 8192, 0, COOKIE), 0);
	ck_assert_uint_eq(r.max_depth, PVPROF_MAX_DEPTH);
	ck_assert_int_eq(pvprof_host_ring_init(&r, 8192, 500, COOKIE), 0);
	ck_assert_uint_eq(r.max_depth, PVPROF_MAX_DEPTH);
	ck_assert_int_eq(pvprof_host_ring_init(&r, 65536, 16, COOKIE), 0);
	ck_assert_uint_eq(r.max_depth, 16);
	ck_assert_uint_eq(r.geo.chain_slots, 60);
	ck_assert_uint_eq(r.notice_head | r.chain_tail | r.nmi_head | r.resolved_seq, 0);
}
END_TEST

START_TEST(host_header_and_identity)
{
	struct pvprof_buf_header h;

	setup(16384);
	pvprof_host_header_init(&h, &ring, PVPROF_STATE_ACTIVE, PVPROF_EVENT_HW_CYCLES, 99);
	ck_assert_uint_eq(h.magic, PVPROF_BUF_MAGIC);
	ck_assert_uint_eq(h.version, PVPROF_ABI_VERSION);
	ck_assert_uint_eq(h.header_size, PVPROF_HEADER_SIZE);
	ck_assert_uint_eq(h.cookie, COOKIE);
	ck_assert_uint_eq(h.size, 16384);
	ck_assert_uint_eq(h.max_depth, PVPROF_MAX_DEPTH);
	ck_assert_uint_eq(h.state, PVPROF_STATE_ACTIVE);
	ck_assert_uint_eq(h.event, PVPROF_EVENT_HW_CYCLES);
	ck_assert_uint_eq(h.period, 99);
	ck_assert(pvprof_host_identity_ok(&h, &ring));
	h.cookie ^= 1;
	ck_assert(!pvprof_host_identity_ok(&h, &ring));
	h.cookie ^= 1;
	h.magic = 0;		/* guest rebooted and zeroed its memory */
	ck_assert(!pvprof_host_identity_ok(&h, &ring));
}
END_TEST

START_TEST(host_header_clean_at_register)
{
	struct pvprof_buf_header h;
	static const size_t dirty[] = {
		offsetof(struct pvprof_buf_header, notice_tail),
		offsetof(struct pvprof_buf_header, chain_head),
		offsetof(struct pvprof_buf_header, reserved0) + 39,
		offsetof(struct pvprof_buf_header, reserved1),
		offsetof(struct pvprof_buf_header, reserved2) + 10,
		offsetof(struct pvprof_buf_header, reserved3),
		offsetof(struct pvprof_buf_header, reserved4) + 1791,
	};
	unsigned int i;

	memset(&h, 0, sizeof(h));
	ck_assert(pvprof_host_header_clean(&h));
	for (i = 0; i < sizeof(dirty) / sizeof(dirty[0]); i++) {
		memset(&h, 0, sizeof(h));
		((__u8 *)&h)[dirty[i]] = 1;
		ck_assert_msg(!pvprof_host_header_clean(&h), "byte %zu", dirty[i]);
	}
}
END_TEST

START_TEST(host_notice_ring_full)
{
	struct pvprof_sample s = { .ip = 1 };
	struct pvprof_notice n;
	__u32 off, i;

	setup(8192);
	for (i = 0; i < 32; i++)
		ck_assert(sample(0));
	/* The 33rd sample finds the ring full: a loss, no seq consumed. */
	ck_assert(!sample(0));
	ck_assert(!sample(0));
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_NOTICE_RING_FULL], 2);
	ck_assert_uint_eq(ring.notice_head, 32);
	assert_balanced();
	/* The guest consumed one: the next notice is seq 33 and says so. */
	ck_assert(pvprof_host_notice_prepare(&ring, &acct, 1, &s, &n, &off));
	ck_assert_uint_eq(n.seq, 33);
	ck_assert(n.flags & PVPROF_NOTICE_F_LOST_BEFORE);
	ck_assert_uint_eq(off, pvprof_notice_offset(32));
	pvprof_host_notice_publish(&ring, &acct);
	ck_assert(pvprof_host_notice_prepare(&ring, &acct, 2, &s, &n, &off));
	ck_assert(!(n.flags & PVPROF_NOTICE_F_LOST_BEFORE));
	pvprof_host_notice_publish(&ring, &acct);
	ck_assert_uint_eq(acct.samples, 36);
	assert_balanced();
}
END_TEST

START_TEST(host_notice_garbage_tail)
{
	setup(8192);
	ck_assert(sample(0));
	ck_assert(sample(0));
	/* A notice_tail ahead of notice_head, or far behind it. */
	ck_assert(!sample(3));
	ck_assert(!sample(~0ULL - 40));
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_NOTICE_RING_FULL], 2);
	ck_assert_uint_eq(ring.notice_head, 2);
	assert_balanced();
}
END_TEST

START_TEST(host_sample_waits_for_unread_notices)
{
	setup(8192);
	/* Nothing written yet: a sample never waits, busy or not. */
	ck_assert(!pvprof_host_sample_waits(&ring, 0, true));
	ck_assert(sample(0));
	/* Notice 1 unread and an NMI on its way: the next sample waits. */
	ck_assert(pvprof_host_sample_waits(&ring, 0, true));
	/* Unread but nothing in flight (the VMM dropped it): it goes on. */
	ck_assert(!pvprof_host_sample_waits(&ring, 0, false));
	/* Read, the handler still running: it goes on (answered stale later). */
	ck_assert(!pvprof_host_sample_waits(&ring, 1, true));
	/* A garbage tail is unread notices too; it never blocks an idle vCPU. */
	ck_assert(pvprof_host_sample_waits(&ring, 9, true));
	ck_assert(!pvprof_host_sample_waits(&ring, 9, false));
}
END_TEST

START_TEST(host_nmi_window_only_for_a_handler)
{
	setup(8192);
	/* Nothing unconsumed: no reason to wait for the handler's end. */
	ck_assert_int_eq(gate(0, false, true), PVPROF_GATE_CLOSED);
	ck_assert(sample(0));
	/* Notice 1 unconsumed, the guest in a handler, KVM holding nothing. */
	ck_assert_int_eq(gate(0, false, true), PVPROF_GATE_NMI_WINDOW);
	/* An NMI KVM holds (queued behind the handler) will answer it. */
	ck_assert_int_eq(gate(0, true, true), PVPROF_GATE_CLOSED);
	/* Consumed: nothing waits for an NMI. */
	ck_assert_int_eq(gate(1, false, true), PVPROF_GATE_CLOSED);
	/* A garbage tail, behind or ahead of head, opens nothing. */
	ck_assert_int_eq(gate(9, false, true), PVPROF_GATE_CLOSED);
	ck_assert_int_eq(gate(2, false, true), PVPROF_GATE_CLOSED);
	/* The window injects nothing and owes nothing. */
	ck_assert_uint_eq(acct.nmis, 0);
	ck_assert(!ring.nmi_owed);
	/* Not masked: the gate itself injects, no window is needed. */
	ck_assert_int_eq(gate(0, false, false), PVPROF_GATE_INJECT);
	/* The owed NMI is held: a handler running meanwhile asks for nothing. */
	ck_assert(sample(0));
	ck_assert_int_eq(gate(0, true, true), PVPROF_GATE_CLOSED);
	ck_assert(ring.nmi_owed);
}
END_TEST

/*
 * A guest that never reads a notice gets PVPROF_HOST_UNANSWERED_NMIS NMIs,
 * then one of every PVPROF_HOST_NMI_PROBE_EVERY, until it reads one.
 */
START_TEST(host_nmi_gate_withholds_from_silent_guest)
{
	unsigned int i, injected = 0;

	setup(8192);
	ck_assert(sample(0));
	for (i = 0; i < PVPROF_HOST_UNANSWERED_NMIS; i++) {
		ck_assert_int_eq(gate(0, false, false), PVPROF_GATE_INJECT);
		ck_assert(pvprof_host_nmi_delivery(&ring, false));
	}
	for (i = 0; i < 10 * PVPROF_HOST_NMI_PROBE_EVERY; i++) {
		if (gate(0, false, false) != PVPROF_GATE_INJECT)
			continue;
		injected++;
		ck_assert(pvprof_host_nmi_delivery(&ring, false));
	}
	ck_assert_uint_eq(injected, 10);
	ck_assert_uint_eq(acct.nmis, PVPROF_HOST_UNANSWERED_NMIS + 10);
	ck_assert_uint_eq(acct.nmis_withheld, 10 * (PVPROF_HOST_NMI_PROBE_EVERY - 1));
	/* Nothing withheld is owed. */
	ck_assert(!ring.nmi_owed);
	/* The guest reads the notice: the next one gets its NMI at once. */
	ck_assert(sample(1));
	ck_assert_int_eq(gate(1, false, false), PVPROF_GATE_INJECT);
	ck_assert(pvprof_host_nmi_delivery(&ring, false));
	ck_assert(sample(2));
	ck_assert_int_eq(gate(2, false, false), PVPROF_GATE_INJECT);
	ck_assert_uint_eq(acct.nmis_withheld, 10 * (PVPROF_HOST_NMI_PROBE_EVERY - 1));
}
END_TEST

START_TEST(host_nmi_gate_one_owed)
{
	setup(8192);
	ck_assert_int_eq(gate(0, false, false), PVPROF_GATE_CLOSED);	/* nothing to say */
	ck_assert(sample(0));
	ck_assert_int_eq(gate(0, false, false), PVPROF_GATE_INJECT);
	ck_assert_uint_eq(ring.nmi_head, 1);
	/* Owed until a delivery is attributed to it, whatever the guest consumed. */
	ck_assert(sample(0));
	ck_assert_int_eq(gate(0, true, false), PVPROF_GATE_CLOSED);
	ck_assert(sample(2));
	ck_assert_int_eq(gate(2, true, false), PVPROF_GATE_CLOSED);
	/* Another NMI is pending behind this delivery: that one will be pvprof's. */
	ck_assert(!pvprof_host_nmi_delivery(&ring, true));
	ck_assert(pvprof_host_nmi_delivery(&ring, false));
	ck_assert_uint_eq(ring.nmi_delivered, 1);
	ck_assert(!pvprof_host_nmi_delivery(&ring, false));	/* nothing owed */
	/* Notice 3 is unconsumed, but a foreign NMI in flight will answer it. */
	ck_assert_int_eq(gate(2, true, false), PVPROF_GATE_CLOSED);
	ck_assert(!pvprof_host_nmi_delivery(&ring, false));
	/* Nothing in flight: the gate opens again. */
	ck_assert_int_eq(gate(2, false, false), PVPROF_GATE_INJECT);
	ck_assert_uint_eq(ring.nmi_head, 3);
	/* The VMM cleared the vCPU's NMIs: nothing in flight, so nothing owed. */
	ck_assert_int_eq(gate(2, true, false), PVPROF_GATE_CLOSED);
	ck_assert_int_eq(gate(2, false, false), PVPROF_GATE_INJECT);
	ck_assert_uint_eq(acct.nmis, 3);
	ck_assert(pvprof_host_nmi_delivery(&ring, false));
	/* A garbage tail injects nothing. */
	ck_assert(sample(3));
	ck_assert_int_eq(gate(9, false, false), PVPROF_GATE_CLOSED);
	ck_assert_int_eq(gate(5, false, false), PVPROF_GATE_CLOSED);	/* ahead of head */
	ck_assert_uint_eq(acct.nmis, 3);
	/* A new registration counts from 0 and keeps an NMI still in flight. */
	ck_assert(sample(3));
	ck_assert_int_eq(gate(3, false, false), PVPROF_GATE_INJECT);
	ck_assert_int_eq(pvprof_host_ring_init(&ring, 8192, 0, 77), 0);
	ck_assert(ring.nmi_owed);
	ck_assert_uint_eq(ring.nmi_delivered, 0);
	ck_assert_uint_eq(ring.notice_head, 0);
	ck_assert(pvprof_host_nmi_delivery(&ring, false));
	ck_assert_uint_eq(ring.nmi_delivered, 1);
}
END_TEST

START_TEST(host_chains_bad_index)
{
	setup(8192);		/* 4 callchain slots */
	ck_assert_uint_eq(pvprof_host_callchains_ready(&ring, &acct, 0), 0);
	ck_assert_uint_eq(pvprof_host_callchains_ready(&ring, &acct, 4), 4);
	ck_assert_uint_eq(acct.rejects[PVPROF_REJ_BAD_INDEX], 0);
	ck_assert_uint_eq(pvprof_host_callchains_ready(&ring, &acct, 5), 0);
	ck_assert_uint_eq(pvprof_host_callchains_ready(&ring, &acct, ~0ULL), 0);
	ck_assert_uint_eq(acct.rejects[PVPROF_REJ_BAD_INDEX], 2);
	ck_assert_uint_eq(ring.chain_tail, 0);
	ck_assert_uint_eq(pvprof_host_callchain_offset(&ring), PVPROF_CHAIN_OFFSET);
}
END_TEST

START_TEST(host_callchain_outcomes)
{
	__u32 i;

	setup(16384);
	for (i = 0; i < 6; i++)
		ck_assert(sample(ring.notice_head));
	ck_assert_int_eq(answer(1, 0), PVPROF_REJ_NONE);
	ck_assert_uint_eq(acct.callchains, 1);
	ck_assert_int_eq(answer(2, PVPROF_CHAIN_F_STALE), PVPROF_REJ_NONE);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_STALE], 1);
	/* Seq 3 and 4 never answered: counted when 5 arrives. */
	ck_assert_int_eq(answer(5, 0), PVPROF_REJ_NONE);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_UNANSWERED], 2);
	ck_assert_uint_eq(acct.callchains, 2);
	ck_assert_uint_eq(pvprof_host_outstanding(&ring), 1);
	assert_balanced();
	/* The facts the host kept for seq 5. */
	ck_assert_uint_eq(pvprof_host_notice_facts(&ring, 5)->ip, KADDR(4));
	ck_assert_uint_eq(ring.chain_tail, 3);
	ck_assert_uint_eq(pvprof_host_callchain_offset(&ring), PVPROF_CHAIN_OFFSET + 3 * 1024);
}
END_TEST

START_TEST(host_rejected_callchain_resolves_oldest)
{
	struct test_slot slot;

	setup(8192);
	ck_assert(sample(0));
	ck_assert(sample(0));
	test_kernel_chain(&slot, 2, 1, 0);
	slot.chain.reserved0 = 1;
	ck_assert_int_eq(pvprof_host_callchain(&ring, &acct, &slot, sizeof(slot)),
			 PVPROF_REJ_RESERVED);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_INVALID], 1);
	ck_assert_uint_eq(acct.rejects[PVPROF_REJ_RESERVED], 1);
	ck_assert_uint_eq(ring.resolved_seq, 1);
	assert_balanced();
	/* A rejected callchain with nothing outstanding resolves nothing. */
	ck_assert_int_eq(answer(2, 0), PVPROF_REJ_NONE);
	ck_assert_int_eq(answer(2, 0), PVPROF_REJ_SEQ_OLD);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_INVALID], 1);
	ck_assert_uint_eq(acct.rejects[PVPROF_REJ_SEQ_OLD], 1);
	ck_assert_uint_eq(ring.chain_tail, 3);
	assert_balanced();
}
END_TEST

START_TEST(host_unregister_counts_unanswered)
{
	__u32 i;

	setup(8192);
	for (i = 0; i < 5; i++)
		ck_assert(sample(ring.notice_head));
	ck_assert_int_eq(answer(2, 0), PVPROF_REJ_NONE);
	pvprof_host_unregister(&ring, &acct);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_UNANSWERED], 4);
	ck_assert_uint_eq(pvprof_host_outstanding(&ring), 0);
	assert_balanced();
	/* Idempotent. */
	pvprof_host_unregister(&ring, &acct);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_UNANSWERED], 4);
}
END_TEST

START_TEST(host_indices_stop_before_2_63)
{
	const __u64 limit = 1ULL << 63;
	__u32 written = 0;

	setup(8192);
	ck_assert(!pvprof_host_indices_exhausted(&ring));
	/* notice_head: the guard fires before the notice that would reach it. */
	ring.notice_head = ring.resolved_seq = ring.nmi_head = limit - 5;
	while (!pvprof_host_indices_exhausted(&ring)) {
		ck_assert(sample(ring.notice_head));
		written++;
	}
	ck_assert_uint_eq(written, 4);
	ck_assert_uint_eq(ring.notice_head, limit - 1);

	/* chain_tail: a whole drain (4 slots at 8 KiB) must still fit. */
	setup(8192);
	ring.chain_tail = limit - ring.geo.chain_slots - 1;
	ck_assert(!pvprof_host_indices_exhausted(&ring));
	ring.chain_tail++;
	ck_assert(pvprof_host_indices_exhausted(&ring));
	ring.chain_tail = ~0ULL;
	ck_assert(pvprof_host_indices_exhausted(&ring));
}
END_TEST

START_TEST(host_history_bounds_unresolved)
{
	__u32 i;

	/* A guest that consumes notices but never posts a callchain. */
	setup(8192);
	for (i = 0; i < 3 * PVPROF_HOST_HISTORY; i++) {
		ck_assert(sample(ring.notice_head));
		ck_assert_uint_le(pvprof_host_outstanding(&ring), PVPROF_HOST_HISTORY);
		assert_balanced();
	}
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_UNANSWERED], 2 * PVPROF_HOST_HISTORY);
	/* A late answer to a written-off notice is old; a recent one is fine. */
	ck_assert_int_eq(answer(5, 0), PVPROF_REJ_SEQ_OLD);
	ck_assert_int_eq(answer(ring.notice_head, 0), PVPROF_REJ_NONE);
	assert_balanced();
}
END_TEST

START_TEST(host_other_sample_losses)
{
	setup(8192);
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_THROTTLED, 1);
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_NESTED, 1);
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_SMM, 1);
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_PROTECTED, 1);
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_UNREGISTERED, 1);
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_SLOT_BUSY, 1);
	pvprof_host_sample_lost(&ring, &acct, PVPROF_LOSS_BUFFER_GONE, 1);
	ck_assert(ring.lost_before);
	ck_assert_uint_eq(pvprof_acct_sample_losses(&acct), 7);
	assert_balanced();
	/* Notice outcomes are not sample losses. */
	acct.losses[PVPROF_LOSS_STALE] = 5;
	acct.losses[PVPROF_LOSS_STREAM_OVERFLOW] = 5;
	ck_assert_uint_eq(pvprof_acct_sample_losses(&acct), 7);
	/* An unknown reason unbalances the books instead of vanishing. */
	pvprof_acct_sample_lost(&acct, PVPROF_LOSS_NR, 1);
	ck_assert_uint_ne(acct.samples, acct.notices + pvprof_acct_sample_losses(&acct));
}
END_TEST

START_TEST(host_loss_names)
{
	unsigned int i, j;

	for (i = 0; i < PVPROF_LOSS_NR; i++) {
		ck_assert_ptr_nonnull(pvprof_loss_name(i));
		ck_assert_str_ne(pvprof_loss_name(i), "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(pvprof_loss_name(i), pvprof_loss_name(j));
	}
	ck_assert_str_eq(pvprof_loss_name(PVPROF_LOSS_NR), "unknown");
	ck_assert_str_eq(pvprof_loss_name(PVPROF_LOSS_STALE), "stale");
}
END_TEST

Suite *host_suite(void)
{
	Suite *s = suite_create("host");

	PVPROF_ADD_TEST(s, host_ring_init_checks);
	PVPROF_ADD_TEST(s, host_header_and_identity);
	PVPROF_ADD_TEST(s, host_header_clean_at_register);
	PVPROF_ADD_TEST(s, host_notice_ring_full);
	PVPROF_ADD_TEST(s, host_notice_garbage_tail);
	PVPROF_ADD_TEST(s, host_sample_waits_for_unread_notices);
	PVPROF_ADD_TEST(s, host_nmi_window_only_for_a_handler);
	PVPROF_ADD_TEST(s, host_nmi_gate_one_owed);
	PVPROF_ADD_TEST(s, host_nmi_gate_withholds_from_silent_guest);
	PVPROF_ADD_TEST(s, host_chains_bad_index);
	PVPROF_ADD_TEST(s, host_callchain_outcomes);
	PVPROF_ADD_TEST(s, host_rejected_callchain_resolves_oldest);
	PVPROF_ADD_TEST(s, host_unregister_counts_unanswered);
	PVPROF_ADD_TEST(s, host_indices_stop_before_2_63);
	PVPROF_ADD_TEST(s, host_history_bounds_unresolved);
	PVPROF_ADD_TEST(s, host_other_sample_losses);
	PVPROF_ADD_TEST(s, host_loss_names);
	return s;
}
