// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof sideband framing.
 */
#include "sideband.h"

static const char * const sb_error_names[PVPROF_SB_ERR_NR] = {
	[PVPROF_SB_OK]		= "ok",
	[PVPROF_SB_SHORT]	= "short",
	[PVPROF_SB_LONG]	= "too_long",
	[PVPROF_SB_BAD_TYPE]	= "bad_type",
	[PVPROF_SB_BAD_VERSION]	= "bad_version",
	[PVPROF_SB_BAD_SIZE]	= "bad_size",
};

/**
 * pvprof_sideband_range_check() - check the SIDEBAND hypercall's arguments
 * @gpa: guest physical address of the message
 * @len: its length in bytes
 *
 * Return: 0 when 16 <= @len <= PVPROF_SIDEBAND_MAX_SIZE and the range lies
 * inside one 4 KiB page; -PVPROF_E2BIG when @len is too large;
 * -PVPROF_EINVAL otherwise.
 */
int pvprof_sideband_range_check(__u64 gpa, __u64 len)
{
	if (len > PVPROF_SIDEBAND_MAX_SIZE)
		return -PVPROF_E2BIG;
	if (len < sizeof(struct pvprof_sideband_hdr))
		return -PVPROF_EINVAL;
	if ((gpa & (PVPROF_PAGE_SIZE - 1)) + len > PVPROF_PAGE_SIZE)
		return -PVPROF_EINVAL;
	return 0;
}

/**
 * pvprof_sideband_check() - check a copied sideband message's framing
 * @msg: host-private copy of the message
 * @len: bytes in @msg
 *
 * Reads only the header inside [@msg, @msg + @len).
 *
 * Return: PVPROF_SB_OK or the first framing rule broken.
 */
enum pvprof_sb_error pvprof_sideband_check(const void *msg, __u64 len)
{
	struct pvprof_sideband_hdr sb;

	if (len < sizeof(sb))
		return PVPROF_SB_SHORT;
	if (len > PVPROF_SIDEBAND_MAX_SIZE)
		return PVPROF_SB_LONG;
	pvprof_memcpy(&sb, msg, sizeof(sb));
	if (sb.type < PVPROF_SB_KERNEL || sb.type > PVPROF_SB_TYPE_MAX)
		return PVPROF_SB_BAD_TYPE;
	if (sb.version != PVPROF_SIDEBAND_VERSION)
		return PVPROF_SB_BAD_VERSION;
	if (sb.size != len)
		return PVPROF_SB_BAD_SIZE;
	return PVPROF_SB_OK;
}

/**
 * pvprof_sb_error_name() - short name of a sideband framing error
 * @err: PVPROF_SB_*
 *
 * Return: a static string, "unknown" when out of range.
 */
const char *pvprof_sb_error_name(enum pvprof_sb_error err)
{
	if ((unsigned int)err >= PVPROF_SB_ERR_NR)
		return "unknown";
	return sb_error_names[err];
}
