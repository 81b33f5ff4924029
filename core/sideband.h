/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof sideband framing: the hypercall's range check and the message
 * header check.  Payloads are provisional and not looked at here.
 */
#ifndef _PVPROF_CORE_SIDEBAND_H
#define _PVPROF_CORE_SIDEBAND_H

#include "pvprof_core.h"

/**
 * enum pvprof_sb_error - why a sideband message was refused
 * @PVPROF_SB_OK: framing is valid
 * @PVPROF_SB_SHORT: fewer bytes than the header
 * @PVPROF_SB_LONG: more than PVPROF_SIDEBAND_MAX_SIZE bytes
 * @PVPROF_SB_BAD_TYPE: type not a known PVPROF_SB_*
 * @PVPROF_SB_BAD_VERSION: version != PVPROF_SIDEBAND_VERSION
 * @PVPROF_SB_BAD_SIZE: size field != bytes supplied
 * @PVPROF_SB_ERR_NR: number of errors
 */
enum pvprof_sb_error {
	PVPROF_SB_OK,
	PVPROF_SB_SHORT,
	PVPROF_SB_LONG,
	PVPROF_SB_BAD_TYPE,
	PVPROF_SB_BAD_VERSION,
	PVPROF_SB_BAD_SIZE,
	PVPROF_SB_ERR_NR,
};

int pvprof_sideband_range_check(__u64 gpa, __u64 len);
enum pvprof_sb_error pvprof_sideband_check(const void *msg, __u64 len);
const char *pvprof_sb_error_name(enum pvprof_sb_error err);

#endif /* _PVPROF_CORE_SIDEBAND_H */
