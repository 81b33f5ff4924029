// SPDX-License-Identifier: GPL-2.0
/*
 * Layout checks at run time: the compile-time checks in abi/ prove the
 * headers agree with themselves; these pin them to the numbers the spec
 * states, so a header edit that also edits its own static asserts fails.
 */
#include <stddef.h>

#include "runner.h"
#include "test_util.h"

START_TEST(layout_buf_header)
{
	ck_assert_uint_eq(sizeof(struct pvprof_buf_header), 2048);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, magic), 0);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, cookie), 8);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, max_depth), 20);
	/* One cache line per writer. */
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, state), 64);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, notice_head), 80);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, chain_tail), 88);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, nmi_head), 96);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, notice_tail), 128);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, chain_head), 136);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, guest_nmis_claimed), 192);
	ck_assert_uint_eq(offsetof(struct pvprof_buf_header, reserved4), 256);
	ck_assert_uint_eq(PVPROF_BUF_MAGIC, 0x46505650);
	ck_assert_mem_eq(&(__u32){ PVPROF_BUF_MAGIC }, "PVPF", 4);
}
END_TEST

START_TEST(layout_notice_callchain_sideband)
{
	struct test_slot slot;

	ck_assert_uint_eq(sizeof(struct pvprof_notice), PVPROF_NOTICE_SIZE);
	ck_assert_uint_eq(sizeof(struct pvprof_notice), 64);
	ck_assert_uint_eq(offsetof(struct pvprof_notice, ip), 24);
	ck_assert_uint_eq(offsetof(struct pvprof_notice, cpl), 32);
	ck_assert_uint_eq(offsetof(struct pvprof_notice, flags), 34);
	ck_assert_uint_eq(offsetof(struct pvprof_notice, period), 40);
	ck_assert_uint_eq(sizeof(struct pvprof_callchain), 40);
	ck_assert_uint_eq(offsetof(struct pvprof_callchain, flags), 28);
	ck_assert_uint_eq(offsetof(struct pvprof_callchain, size), 32);
	/* The frames follow the fixed part. */
	ck_assert_uint_eq((__u8 *)pvprof_callchain_frames(&slot.chain) - (__u8 *)&slot.chain, 40);
	ck_assert_uint_eq(sizeof(struct pvprof_sideband_hdr), 16);
	ck_assert_uint_eq(offsetof(struct pvprof_sideband_hdr, size), 4);
	ck_assert_uint_eq(PVPROF_NOTICE_OFFSET + PVPROF_NOTICE_SLOTS * PVPROF_NOTICE_SIZE,
			  PVPROF_CHAIN_OFFSET);
}
END_TEST

START_TEST(layout_stream_and_ctl)
{
	ck_assert_uint_eq(sizeof(struct pvprof_stream_hdr), 24);
	ck_assert_uint_eq(sizeof(struct pvprof_st_hello), 40);
	ck_assert_uint_eq(sizeof(struct pvprof_st_callchain), 88);
	ck_assert_uint_eq(offsetof(struct pvprof_st_callchain, chain), 48);
	ck_assert_uint_eq(sizeof(struct pvprof_st_loss), 40);
	ck_assert_uint_eq(sizeof(struct pvprof_st_vcpu), 40);
	ck_assert_uint_eq(sizeof(struct pvprof_st_sideband), 40);
	ck_assert_uint_eq(sizeof(struct pvprof_ctl_enable), 56);
	ck_assert_uint_eq(sizeof(struct pvprof_ctl_vm), 16);
	ck_assert_uint_eq(sizeof(struct pvprof_ctl_expose), 16);
	ck_assert_uint_eq(sizeof(struct pvprof_vcpu_status), 56 + 8 * PVPROF_LOSS_NR);
	ck_assert_uint_eq(sizeof(struct pvprof_ctl_status), 56 + 8 * PVPROF_LOSS_NR);
	/* Every stream entry is a multiple of the stream alignment. */
	ck_assert_uint_eq(sizeof(struct pvprof_st_callchain) % PVPROF_STREAM_ALIGN, 0);
	ck_assert_uint_eq(sizeof(struct pvprof_st_hello) % PVPROF_STREAM_ALIGN, 0);
}
END_TEST

START_TEST(layout_geometry_every_legal_size)
{
	__u64 size;
	int legal = 0;

	for (size = PVPROF_BUF_MIN_SIZE; size <= PVPROF_BUF_MAX_SIZE; size *= 2) {
		struct pvprof_geometry geo;
		__u64 i;

		ck_assert_int_eq(pvprof_geometry_init(&geo, size), 0);
		ck_assert_uint_eq(geo.size, size);
		ck_assert_uint_eq(geo.chain_slots, (size - 4096) / 1024);
		ck_assert_uint_ge(geo.chain_slots, 4);
		for (i = 0; i < geo.chain_slots; i++) {
			__u32 off = pvprof_callchain_offset(&geo, i);

			ck_assert_uint_eq(off, 4096 + 1024 * i);
			ck_assert_uint_le(off + PVPROF_CHAIN_SLOT_SIZE, size);
		}
		/* The last slot ends exactly at the end of the buffer. */
		ck_assert_uint_eq(pvprof_callchain_offset(&geo, geo.chain_slots - 1) +
				  PVPROF_CHAIN_SLOT_SIZE, size);
		ck_assert_uint_eq(pvprof_callchain_offset(&geo, geo.chain_slots), 4096);
		legal++;
	}
	ck_assert_int_eq(legal, 4);
}
END_TEST

START_TEST(layout_geometry_illegal_sizes)
{
	static const struct {
		__u64 size;
		int err;
	} cases[] = {
		{ 0, -PVPROF_EINVAL },
		{ 4096, -PVPROF_EINVAL },
		{ 8191, -PVPROF_EINVAL },
		{ 12288, -PVPROF_EINVAL },
		{ 3 * 8192, -PVPROF_EINVAL },
		{ 65536 + 4096, -PVPROF_E2BIG },
		{ 131072, -PVPROF_E2BIG },
		{ 1ULL << 40, -PVPROF_E2BIG },
		{ ~0ULL, -PVPROF_E2BIG },
	};
	struct pvprof_geometry geo = { .size = 1, .chain_slots = 2 };
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(pvprof_geometry_init(&geo, cases[i].size) == cases[i].err,
			      "size %llu", (unsigned long long)cases[i].size);
	/* Untouched on failure. */
	ck_assert_uint_eq(geo.size, 1);
	ck_assert_uint_eq(geo.chain_slots, 2);
}
END_TEST

START_TEST(layout_deepest_callchain_fits)
{
	ck_assert_uint_eq(pvprof_callchain_bytes(PVPROF_MAX_DEPTH), 40 + 8 * 120);
	ck_assert_uint_le(pvprof_callchain_bytes(PVPROF_MAX_DEPTH), PVPROF_CHAIN_SLOT_SIZE);
	ck_assert_uint_le(sizeof(struct pvprof_st_callchain) + 8 * PVPROF_MAX_DEPTH,
			  PVPROF_STREAM_MAX_ENTRY);
	ck_assert_uint_le(PVPROF_ALIGN8(24U + PVPROF_SIDEBAND_MAX_SIZE),
			  PVPROF_STREAM_MAX_ENTRY);
}
END_TEST

Suite *layout_suite(void)
{
	Suite *s = suite_create("layout");

	PVPROF_ADD_TEST(s, layout_buf_header);
	PVPROF_ADD_TEST(s, layout_notice_callchain_sideband);
	PVPROF_ADD_TEST(s, layout_stream_and_ctl);
	PVPROF_ADD_TEST(s, layout_geometry_every_legal_size);
	PVPROF_ADD_TEST(s, layout_geometry_illegal_sizes);
	PVPROF_ADD_TEST(s, layout_deepest_callchain_fits);
	return s;
}
