// SPDX-License-Identifier: GPL-2.0
/*
 * Sideband framing: the hypercall's range rules and the header check.
 */
#include "runner.h"
#include "test_util.h"

START_TEST(sideband_range_rules)
{
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 16), 0);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 4096), 0);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1ff0, 16), 0);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 15), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 0), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 4097), -PVPROF_E2BIG);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, ~0ULL), -PVPROF_E2BIG);
	/* Crossing into the next page. */
	ck_assert_int_eq(pvprof_sideband_range_check(0x1ff1, 16), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1008, 4096), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(~0ULL - 7, 16), -PVPROF_EINVAL);
}
END_TEST

START_TEST(sideband_header_rules)
{
	__u8 msg[PVPROF_SIDEBAND_MAX_SIZE + 8] = { 0 };
	struct pvprof_sideband_hdr *sb = (void *)msg;
	unsigned int t;

	sb->version = PVPROF_SIDEBAND_VERSION;
	for (t = PVPROF_SB_KERNEL; t <= PVPROF_SB_TYPE_MAX; t++) {
		sb->type = t;
		sb->size = 100;
		ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_OK);
	}
	ck_assert_int_eq(pvprof_sideband_check(msg, 15), PVPROF_SB_SHORT);
	sb->size = PVPROF_SIDEBAND_MAX_SIZE + 8;
	ck_assert_int_eq(pvprof_sideband_check(msg, sb->size), PVPROF_SB_LONG);
	sb->size = 100;
	ck_assert_int_eq(pvprof_sideband_check(msg, 99), PVPROF_SB_BAD_SIZE);
	sb->type = 0;
	ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_BAD_TYPE);
	sb->type = PVPROF_SB_TYPE_MAX + 1;
	ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_BAD_TYPE);
	sb->type = PVPROF_SB_MMAP;
	sb->version = 2;
	ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_BAD_VERSION);
	ck_assert_str_eq(pvprof_sb_error_name(PVPROF_SB_BAD_VERSION), "bad_version");
	ck_assert_str_eq(pvprof_sb_error_name(PVPROF_SB_ERR_NR), "unknown");
}
END_TEST

Suite *sideband_suite(void)
{
	Suite *s = suite_create("sideband");

	PVPROF_ADD_TEST(s, sideband_range_rules);
	PVPROF_ADD_TEST(s, sideband_header_rules);
	return s;
}
