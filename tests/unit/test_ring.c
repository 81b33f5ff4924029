// SPDX-License-Identifier: GPL-2.0
/*
 * Ring arithmetic: empty, full, garbage, and indices across the 2^64 wrap.
 */
#include "runner.h"
#include "test_util.h"

START_TEST(ring_empty_and_full)
{
	__u64 base;

	for (base = 0; base < 100; base += 33) {
		ck_assert(pvprof_ring_valid(base, base, 32));
		ck_assert_uint_eq(pvprof_ring_used(base, base), 0);
		ck_assert(!pvprof_ring_full(base, base, 32));
		ck_assert(pvprof_ring_valid(base + 31, base, 32));
		ck_assert(!pvprof_ring_full(base + 31, base, 32));
		ck_assert(pvprof_ring_valid(base + 32, base, 32));
		ck_assert(pvprof_ring_full(base + 32, base, 32));
		ck_assert_uint_eq(pvprof_ring_used(base + 32, base), 32);
	}
}
END_TEST

START_TEST(ring_garbage_indices)
{
	/* Producer overran the consumer by one. */
	ck_assert(!pvprof_ring_valid(133, 100, 32));
	/* Consumer ahead of the producer. */
	ck_assert(!pvprof_ring_valid(100, 101, 32));
	ck_assert(!pvprof_ring_valid(0, 1, 60));
	ck_assert(!pvprof_ring_valid(~0ULL, 0, 60));
	ck_assert(!pvprof_ring_valid(1ULL << 63, 0, 4));
	/* An invalid pair is not "full". */
	ck_assert(!pvprof_ring_full(100, 101, 32));
}
END_TEST

START_TEST(ring_wrap_at_2pow64)
{
	__u64 tail = ~0ULL - 2;		/* 2^64 - 3 */
	__u64 head = 5;			/* 8 entries later, after the wrap */
	__u64 i;

	ck_assert(pvprof_ring_valid(head, tail, 32));
	ck_assert_uint_eq(pvprof_ring_used(head, tail), 8);
	ck_assert(!pvprof_ring_full(head, tail, 32));
	ck_assert(pvprof_ring_full(tail + 32, tail, 32));
	ck_assert(!pvprof_ring_valid(tail + 33, tail, 32));
	ck_assert(pvprof_index_before(tail, head));
	ck_assert(!pvprof_index_before(head, tail));
	/* The notice ring (a power of two) keeps consecutive slots across it. */
	for (i = tail; i != head; i++)
		ck_assert_uint_eq(pvprof_notice_offset(i + 1),
				  PVPROF_NOTICE_OFFSET +
				  ((pvprof_notice_offset(i) - PVPROF_NOTICE_OFFSET +
				    PVPROF_NOTICE_SIZE) % (32 * PVPROF_NOTICE_SIZE)));
}
END_TEST

START_TEST(ring_index_before)
{
	ck_assert(pvprof_index_before(0, 1));
	ck_assert(!pvprof_index_before(1, 1));
	ck_assert(!pvprof_index_before(2, 1));
	ck_assert(pvprof_index_before(~0ULL, 0));
	ck_assert(pvprof_index_before((1ULL << 62), (1ULL << 62) + 7));
}
END_TEST

START_TEST(ring_offsets_in_bounds)
{
	__u64 size;

	for (size = PVPROF_BUF_MIN_SIZE; size <= PVPROF_BUF_MAX_SIZE; size *= 2) {
		struct pvprof_geometry geo;
		__u64 i;

		ck_assert_int_eq(pvprof_geometry_init(&geo, size), 0);
		for (i = ~0ULL - 3000; i != 3000; i++) {
			__u32 r = pvprof_callchain_offset(&geo, i);
			__u32 n = pvprof_notice_offset(i);

			ck_assert_uint_ge(r, PVPROF_CHAIN_OFFSET);
			ck_assert_uint_le(r + PVPROF_CHAIN_SLOT_SIZE, size);
			ck_assert_uint_eq(r % PVPROF_CHAIN_SLOT_SIZE, 0);
			ck_assert_uint_ge(n, PVPROF_NOTICE_OFFSET);
			ck_assert_uint_le(n + PVPROF_NOTICE_SIZE, PVPROF_CHAIN_OFFSET);
			ck_assert_uint_eq(n % PVPROF_NOTICE_SIZE, 0);
		}
	}
}
END_TEST

START_TEST(ring_chain_slots_distinct_in_window)
{
	/*
	 * Any window of chain_slots consecutive indices below the wrap uses
	 * every slot once: a full ring never maps two live callchains together.
	 */
	__u64 size;

	for (size = PVPROF_BUF_MIN_SIZE; size <= PVPROF_BUF_MAX_SIZE; size *= 2) {
		struct pvprof_geometry geo;
		__u64 start;

		ck_assert_int_eq(pvprof_geometry_init(&geo, size), 0);
		for (start = 0; start < 200; start += 7) {
			__u8 seen[64] = { 0 };
			__u64 i;

			for (i = start; i < start + geo.chain_slots; i++) {
				__u32 slot = pvprof_ring_slot(i, geo.chain_slots);

				ck_assert_uint_eq(seen[slot], 0);
				seen[slot] = 1;
			}
		}
	}
}
END_TEST

START_TEST(notice_encode_fields)
{
	struct pvprof_sample s = {
		.host_time_ns = 111, .guest_tsc = 222, .ip = UADDR(4),
		.period = 1000000, .cpl = 3, .event = PVPROF_EVENT_CPU_CLOCK,
	};
	struct pvprof_notice n;

	memset(&n, 0xa5, sizeof(n));
	pvprof_notice_encode(&n, &s, 42, false);
	ck_assert_uint_eq(n.seq, 42);
	ck_assert_uint_eq(n.host_time_ns, 111);
	ck_assert_uint_eq(n.guest_tsc, 222);
	ck_assert_uint_eq(n.ip, UADDR(4));
	ck_assert_uint_eq(n.cpl, 3);
	ck_assert_uint_eq(n.period, 1000000);
	ck_assert_uint_eq(n.flags, PVPROF_NOTICE_F_USER);
	ck_assert_uint_eq(n.reserved0, 0);
	ck_assert_uint_eq(n.reserved1[0] | n.reserved1[1], 0);

	s.cpl = 0;
	pvprof_notice_encode(&n, &s, 43, true);
	ck_assert_uint_eq(n.flags, PVPROF_NOTICE_F_LOST_BEFORE);
}
END_TEST

START_TEST(notice_check_states)
{
	__u64 count = 0;

	ck_assert_int_eq(pvprof_notice_check(7, 7, &count), PVPROF_NOTICES_NONE);
	ck_assert_int_eq(pvprof_notice_check(8, 7, &count), PVPROF_NOTICES_NEW);
	ck_assert_uint_eq(count, 1);
	ck_assert_int_eq(pvprof_notice_check(39, 7, &count), PVPROF_NOTICES_NEW);
	ck_assert_uint_eq(count, 32);
	ck_assert_int_eq(pvprof_notice_check(40, 7, &count), PVPROF_NOTICES_GARBAGE);
	ck_assert_int_eq(pvprof_notice_check(6, 7, &count), PVPROF_NOTICES_GARBAGE);
	ck_assert_int_eq(pvprof_notice_check(2, ~0ULL - 1, &count), PVPROF_NOTICES_NEW);
	ck_assert_uint_eq(count, 4);
}
END_TEST

Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");

	PVPROF_ADD_TEST(s, ring_empty_and_full);
	PVPROF_ADD_TEST(s, ring_garbage_indices);
	PVPROF_ADD_TEST(s, ring_wrap_at_2pow64);
	PVPROF_ADD_TEST(s, ring_index_before);
	PVPROF_ADD_TEST(s, ring_offsets_in_bounds);
	PVPROF_ADD_TEST(s, ring_chain_slots_distinct_in_window);
	PVPROF_ADD_TEST(s, notice_encode_fields);
	PVPROF_ADD_TEST(s, notice_check_states);
	return s;
}
