// SPDX-License-Identifier: GPL-2.0
/*
 * The host's callchain validator: every rule broken by one malformed
 * callchain, rejected with its own reason and counted.
 */
#include "runner.h"
#include "test_util.h"

#define COOKIE	0xc00c1eULL

/*
 * A registration with notices 1..6 written and 1..2 resolved: seq 3..6
 * are answerable.
 */
static struct pvprof_host_ring ring;
static struct pvprof_vcpu_acct acct;

static void setup(__u32 max_depth)
{
	struct pvprof_sample s = { .ip = KADDR(0) };
	struct pvprof_notice n;
	__u32 off, i;

	memset(&acct, 0, sizeof(acct));
	memset(&ring, 0, sizeof(ring));
	ck_assert_int_eq(pvprof_host_ring_init(&ring, 16384, max_depth, COOKIE), 0);
	for (i = 0; i < 6; i++) {
		ck_assert(pvprof_host_notice_prepare(&ring, &acct, ring.notice_head,
						     &s, &n, &off));
		pvprof_host_notice_publish(&ring, &acct);
	}
	pvprof_host_unregister(&ring, &acct);	/* resolve all, then reopen 3..6 */
	ring.resolved_seq = 2;
	memset(&acct, 0, sizeof(acct));
	acct.samples = acct.notices = 6;
	acct.losses[PVPROF_LOSS_UNANSWERED] = 2;
}

static void expect(void *slot, __u32 len, enum pvprof_reject want)
{
	struct pvprof_callchain_limits lim = {
		.max_depth = ring.max_depth,
		.ustack_size = ring.ustack_size,
		.answered_seq = ring.resolved_seq,
		.notice_head = ring.notice_head,
	};
	enum pvprof_reject got = pvprof_callchain_validate(slot, len, &lim);
	__u64 invalid = acct.losses[PVPROF_LOSS_INVALID];

	ck_assert_msg(got == want, "validator said %s, expected %s",
		      pvprof_reject_name(got), pvprof_reject_name(want));
	got = pvprof_host_callchain(&ring, &acct, slot, len);
	ck_assert_int_eq(got, want);
	if (want != PVPROF_REJ_NONE) {
		ck_assert_uint_eq(acct.rejects[want], 1);
		ck_assert_uint_eq(acct.losses[PVPROF_LOSS_INVALID], invalid + 1);
	}
	ck_assert_uint_eq(acct.notices, pvprof_acct_notice_outcomes(&acct) +
			  pvprof_host_outstanding(&ring));
}

START_TEST(validate_accepts_kernel_context)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 5, 4);	/* a syscall: kernel then user */
	slot.chain.flags |= PVPROF_CHAIN_F_SKEWED | PVPROF_CHAIN_F_TRUNCATED;
	expect(&slot, sizeof(slot), PVPROF_REJ_NONE);
	ck_assert_uint_eq(acct.callchains, 1);
}
END_TEST

START_TEST(validate_accepts_user_context)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 6, 0, PVPROF_MAX_DEPTH);
	slot.chain.flags = PVPROF_CHAIN_F_USER | PVPROF_CHAIN_F_COMPAT;
	expect(&slot, sizeof(slot), PVPROF_REJ_NONE);
	ck_assert_uint_eq(acct.callchains, 1);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_UNANSWERED], 2 + 3);
}
END_TEST

START_TEST(validate_accepts_stale_and_kthread)
{
	struct test_slot slot;

	setup(0);
	memset(&slot, 0, sizeof(slot));
	pvprof_callchain_init(&slot.chain, 3, PVPROF_CHAIN_F_STALE);
	expect(&slot, sizeof(slot), PVPROF_REJ_NONE);
	ck_assert_uint_eq(acct.losses[PVPROF_LOSS_STALE], 1);
	test_kernel_chain(&slot, 4, 1, 0);
	slot.chain.flags = PVPROF_CHAIN_F_KTHREAD;
	/* Exactly the callchain's bytes copied is enough. */
	expect(&slot, slot.chain.size, PVPROF_REJ_NONE);
}
END_TEST

START_TEST(reject_short_copy)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 1, 0);
	expect(&slot, sizeof(struct pvprof_callchain) - 1, PVPROF_REJ_SHORT_COPY);
}
END_TEST

START_TEST(reject_size_small)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 0, 0);
	slot.chain.size = 39;
	expect(&slot, sizeof(slot), PVPROF_REJ_SIZE_SMALL);
}
END_TEST

START_TEST(reject_size_large)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 1, 0);
	slot.chain.size = PVPROF_CHAIN_SLOT_SIZE + 8;
	expect(&slot, sizeof(slot), PVPROF_REJ_SIZE_LARGE);
	/* Larger than what was copied, though within a slot. */
	setup(0);
	test_kernel_chain(&slot, 3, 4, 0);
	expect(&slot, slot.chain.size - 8, PVPROF_REJ_SIZE_LARGE);
}
END_TEST

START_TEST(reject_size_mismatch)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 2, 1);
	slot.chain.size += 8;
	expect(&slot, sizeof(slot), PVPROF_REJ_SIZE_MISMATCH);
	/* Counts that would wrap a 16-bit size. */
	setup(0);
	test_kernel_chain(&slot, 3, 1, 0);
	slot.chain.nr_user = 0x2000;
	expect(&slot, sizeof(slot), PVPROF_REJ_SIZE_MISMATCH);
}
END_TEST

START_TEST(reject_too_deep)
{
	struct test_slot slot;

	setup(8);		/* the host published max_depth 8 */
	test_kernel_chain(&slot, 3, 6, 3);
	expect(&slot, sizeof(slot), PVPROF_REJ_TOO_DEEP);
	setup(8);
	test_kernel_chain(&slot, 3, 6, 2);
	expect(&slot, sizeof(slot), PVPROF_REJ_NONE);
}
END_TEST

START_TEST(reject_reserved)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 1, 0);
	slot.chain.reserved0 = 0x8000;
	expect(&slot, sizeof(slot), PVPROF_REJ_RESERVED);
}
END_TEST

START_TEST(reject_unknown_flags)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 1, 0);
	slot.chain.flags = PVPROF_CHAIN_F_ALL + 1;
	expect(&slot, sizeof(slot), PVPROF_REJ_FLAGS);
}
END_TEST

START_TEST(reject_stale_with_frames)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 1, 0);
	slot.chain.flags = PVPROF_CHAIN_F_STALE;
	expect(&slot, sizeof(slot), PVPROF_REJ_STALE_FRAMES);
}
END_TEST

START_TEST(reject_context_mismatch)
{
	static const struct {
		__u32 flags, nr_kernel, nr_user;
	} bad[] = {
		{ PVPROF_CHAIN_F_USER, 1, 1 },	/* user context with kernel frames */
		{ PVPROF_CHAIN_F_USER, 0, 0 },	/* user context without its IP */
		{ 0, 0, 2 },			/* kernel context without its IP */
		{ PVPROF_CHAIN_F_KTHREAD, 2, 1 },	/* kernel thread with a user stack */
		{ PVPROF_CHAIN_F_KTHREAD | PVPROF_CHAIN_F_USER, 0, 1 },
	};
	struct test_slot slot;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setup(0);
		test_kernel_chain(&slot, 3, bad[i].nr_kernel, bad[i].nr_user);
		slot.chain.flags = bad[i].flags;
		expect(&slot, sizeof(slot), PVPROF_REJ_CONTEXT);
	}
}
END_TEST

START_TEST(reject_seq_old)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 2, 1, 0);	/* already resolved */
	expect(&slot, sizeof(slot), PVPROF_REJ_SEQ_OLD);
	setup(0);
	test_kernel_chain(&slot, 0, 1, 0);	/* seq starts at 1 */
	expect(&slot, sizeof(slot), PVPROF_REJ_SEQ_OLD);
	/* A duplicate of an accepted answer. */
	setup(0);
	test_kernel_chain(&slot, 4, 1, 0);
	expect(&slot, sizeof(slot), PVPROF_REJ_NONE);
	memset(acct.rejects, 0, sizeof(acct.rejects));
	expect(&slot, sizeof(slot), PVPROF_REJ_SEQ_OLD);
}
END_TEST

START_TEST(reject_seq_future)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 7, 1, 0);	/* notice 7 not written */
	expect(&slot, sizeof(slot), PVPROF_REJ_SEQ_FUTURE);
	setup(0);
	test_kernel_chain(&slot, ~0ULL, 1, 0);
	expect(&slot, sizeof(slot), PVPROF_REJ_SEQ_FUTURE);
}
END_TEST

START_TEST(reject_kernel_frame_range)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 3, 1);
	pvprof_callchain_frames(&slot.chain)[2] = PVPROF_KERNEL_HALF_START - 8;
	expect(&slot, sizeof(slot), PVPROF_REJ_KERNEL_FRAME);
}
END_TEST

START_TEST(reject_user_frame_range)
{
	struct test_slot slot;

	setup(0);
	test_kernel_chain(&slot, 3, 0, 3);
	slot.chain.flags = PVPROF_CHAIN_F_USER;
	pvprof_callchain_frames(&slot.chain)[2] = PVPROF_USER_HALF_END;	/* non-canonical */
	expect(&slot, sizeof(slot), PVPROF_REJ_USER_FRAME);
	setup(0);
	test_kernel_chain(&slot, 3, 1, 1);
	pvprof_callchain_frames(&slot.chain)[1] = KADDR(0);		/* a kernel address as user frame */
	expect(&slot, sizeof(slot), PVPROF_REJ_USER_FRAME);
}
END_TEST

/* Slots enough for the largest callchain with a snapshot (spec pvprof-ustack). */
struct test_span {
	union {
		struct pvprof_callchain chain;
		__u64 words[PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) *
			    PVPROF_CHAIN_SLOT_SIZE / 8];
	};
};

/*
 * seq 3 answered with 2 kernel and 2 user frames and @stack_bytes of
 * stack, in a ring of 12 slots that asks for 8192 bytes.
 */
static struct pvprof_ustack *ustack_chain(struct test_span *t, __u32 stack_bytes)
{
	__u64 *frames = pvprof_callchain_frames(&t->chain);
	struct pvprof_ustack *us;
	__u32 i;

	setup(0);
	ring.ustack_size = 8192;
	memset(t, 0, sizeof(*t));
	pvprof_callchain_init(&t->chain, 3, 0);
	t->chain.nr_kernel = 2;
	t->chain.nr_user = 2;
	frames[0] = KADDR(0);
	frames[1] = KADDR(16);
	frames[2] = UADDR(0x100);
	frames[3] = UADDR(0x200);
	pvprof_callchain_finish(&t->chain, PVPROF_MAX_DEPTH);
	us = pvprof_callchain_ustack(&t->chain);
	us->regs[PVPROF_UREG_IP] = UADDR(0x100);
	us->regs[PVPROF_UREG_SP] = UADDR(0x7000);
	us->size = stack_bytes;
	for (i = 0; i < stack_bytes; i++)
		pvprof_ustack_data(us)[i] = (__u8)(i * 7 + 1);
	t->chain.flags |= PVPROF_CHAIN_F_USTACK;
	t->chain.size = pvprof_callchain_ustack_bytes(4, stack_bytes);
	return us;
}

START_TEST(ustack_spans_slots_and_streams)
{
	static struct test_span t;
	static __u8 st[PVPROF_STREAM_MAX_ENTRY];
	const struct pvprof_notice_facts *facts;
	struct pvprof_st_view v;
	__u32 len;

	ustack_chain(&t, 8190);	/* padded to 8192: 9 slots */
	ck_assert_uint_eq(t.chain.size, 40 + 32 + 72 + 8192);
	ck_assert_uint_eq(pvprof_host_callchain_span(&ring, &t, 12), 9);
	ck_assert_uint_eq(pvprof_host_callchain_span(&ring, &t, 8), 1);
	expect(&t, 9 * PVPROF_CHAIN_SLOT_SIZE, PVPROF_REJ_NONE);
	ck_assert_uint_eq(ring.chain_tail, 9);
	ck_assert_uint_eq(acct.callchains, 1);

	facts = pvprof_host_notice_facts(&ring, 3);
	len = pvprof_st_put_callchain(st, sizeof(st), 0, 1, facts, &t.chain);
	ck_assert_uint_eq(len, 48 + t.chain.size);
	ck_assert_int_eq(pvprof_st_decode(st, len, &v), PVPROF_ST_OK);
	ck_assert_ptr_nonnull(v.ustack_data);
	ck_assert_uint_eq(v.nr_frames, 4);
	ck_assert_uint_eq(v.ustack_size, 8190);
	ck_assert_uint_eq(v.ustack_regs[PVPROF_UREG_SP], UADDR(0x7000));
	ck_assert_mem_eq(v.ustack_data, pvprof_ustack_data(pvprof_callchain_ustack(&t.chain)), 8190);
	/* The stream decoder holds a snapshot to the same sizes. */
	((struct pvprof_st_callchain *)st)->chain.size -= 8;
	ck_assert_int_eq(pvprof_st_decode(st, len, &v), PVPROF_ST_BAD_SIZE);
}
END_TEST

START_TEST(ustack_not_asked)
{
	static struct test_span t;

	ustack_chain(&t, 512);
	ring.ustack_size = 0;
	/* Not asked: one slot is copied, and the callchain is larger. */
	ck_assert_uint_eq(pvprof_host_callchain_span(&ring, &t, 12), 1);
	ustack_chain(&t, 2048);
	ring.ustack_size = 0;
	expect(&t, PVPROF_CHAIN_SLOT_SIZE, PVPROF_REJ_SIZE_LARGE);
	ustack_chain(&t, 512);
	ring.ustack_size = 0;
	expect(&t, PVPROF_CHAIN_SLOT_SIZE, PVPROF_REJ_USTACK_SIZE);
}
END_TEST

START_TEST(ustack_reject_size)
{
	static struct test_span t;
	struct pvprof_ustack *us;

	ustack_chain(&t, 8200);	/* above the 8192 asked */
	expect(&t, sizeof(t), PVPROF_REJ_USTACK_SIZE);
	us = ustack_chain(&t, 64);
	us->reserved0 = 1;
	expect(&t, sizeof(t), PVPROF_REJ_USTACK_SIZE);
	us = ustack_chain(&t, 64);
	us->size = 72;			/* disagrees with the callchain's size */
	expect(&t, sizeof(t), PVPROF_REJ_SIZE_MISMATCH);
	ustack_chain(&t, 64);
	t.chain.size = 40 + 32 + 8;	/* no room for the part */
	expect(&t, sizeof(t), PVPROF_REJ_SIZE_MISMATCH);
	ustack_chain(&t, 64);
	t.chain.flags |= PVPROF_CHAIN_F_STALE;
	t.chain.nr_kernel = t.chain.nr_user = 0;
	t.chain.size = pvprof_callchain_ustack_bytes(0, 64);
	us = pvprof_callchain_ustack(&t.chain);
	memset(us, 0, sizeof(*us));
	us->size = 64;
	expect(&t, sizeof(t), PVPROF_REJ_STALE_FRAMES);
}
END_TEST

START_TEST(ustack_reject_regs)
{
	static struct test_span t;
	struct pvprof_ustack *us;

	us = ustack_chain(&t, 64);
	us->regs[PVPROF_UREG_IP] = UADDR(0x200);	/* not the chain's first user frame */
	expect(&t, sizeof(t), PVPROF_REJ_USTACK_REGS);
	us = ustack_chain(&t, 64);
	us->regs[PVPROF_UREG_SP] = KADDR(0);
	expect(&t, sizeof(t), PVPROF_REJ_USTACK_REGS);
	/* A kernel thread's callchain has no user part to snapshot. */
	ustack_chain(&t, 0);
	t.chain.nr_user = 0;
	t.chain.size = pvprof_callchain_ustack_bytes(2, 0);
	memset(pvprof_callchain_ustack(&t.chain), 0, sizeof(struct pvprof_ustack));
	expect(&t, sizeof(t), PVPROF_REJ_USTACK_REGS);
}
END_TEST

START_TEST(reject_names_distinct)
{
	unsigned int i, j;

	for (i = 0; i < PVPROF_REJ_NR; i++) {
		ck_assert_str_ne(pvprof_reject_name(i), "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(pvprof_reject_name(i), pvprof_reject_name(j));
	}
	ck_assert_str_eq(pvprof_reject_name(PVPROF_REJ_NR), "unknown");
	ck_assert_str_eq(pvprof_reject_name((enum pvprof_reject)-1), "unknown");
}
END_TEST

START_TEST(callchain_finish_clamps)
{
	struct test_slot slot;

	memset(&slot, 0, sizeof(slot));
	pvprof_callchain_init(&slot.chain, 9, 0);
	slot.chain.nr_kernel = 10;
	slot.chain.nr_user = 10;
	slot.chain.flags |= 0x80000000U;
	pvprof_callchain_finish(&slot.chain, 16);
	ck_assert_uint_eq(slot.chain.nr_kernel, 10);
	ck_assert_uint_eq(slot.chain.nr_user, 6);
	ck_assert_uint_eq(slot.chain.size, 40 + 8 * 16);
	ck_assert_uint_eq(slot.chain.flags, PVPROF_CHAIN_F_TRUNCATED);

	slot.chain.nr_kernel = 200;
	slot.chain.nr_user = 3;
	slot.chain.flags = 0;
	pvprof_callchain_finish(&slot.chain, 1000);	/* never above the ABI maximum */
	ck_assert_uint_eq(slot.chain.nr_kernel, PVPROF_MAX_DEPTH);
	ck_assert_uint_eq(slot.chain.nr_user, 0);
	ck_assert_uint_eq(slot.chain.size, pvprof_callchain_bytes(PVPROF_MAX_DEPTH));
	ck_assert(slot.chain.flags & PVPROF_CHAIN_F_TRUNCATED);
}
END_TEST

Suite *callchain_suite(void)
{
	Suite *s = suite_create("callchain");

	PVPROF_ADD_TEST(s, validate_accepts_kernel_context);
	PVPROF_ADD_TEST(s, validate_accepts_user_context);
	PVPROF_ADD_TEST(s, validate_accepts_stale_and_kthread);
	PVPROF_ADD_TEST(s, reject_short_copy);
	PVPROF_ADD_TEST(s, reject_size_small);
	PVPROF_ADD_TEST(s, reject_size_large);
	PVPROF_ADD_TEST(s, reject_size_mismatch);
	PVPROF_ADD_TEST(s, reject_too_deep);
	PVPROF_ADD_TEST(s, reject_reserved);
	PVPROF_ADD_TEST(s, reject_unknown_flags);
	PVPROF_ADD_TEST(s, reject_stale_with_frames);
	PVPROF_ADD_TEST(s, reject_context_mismatch);
	PVPROF_ADD_TEST(s, reject_seq_old);
	PVPROF_ADD_TEST(s, reject_seq_future);
	PVPROF_ADD_TEST(s, reject_kernel_frame_range);
	PVPROF_ADD_TEST(s, reject_user_frame_range);
	PVPROF_ADD_TEST(s, ustack_spans_slots_and_streams);
	PVPROF_ADD_TEST(s, ustack_not_asked);
	PVPROF_ADD_TEST(s, ustack_reject_size);
	PVPROF_ADD_TEST(s, ustack_reject_regs);
	PVPROF_ADD_TEST(s, reject_names_distinct);
	PVPROF_ADD_TEST(s, callchain_finish_clamps);
	return s;
}
