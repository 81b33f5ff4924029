/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof notices: host-side encoding, guest-side check of the notice ring.
 */
#ifndef _PVPROF_CORE_NOTICE_H
#define _PVPROF_CORE_NOTICE_H

#include "pvprof_core.h"

/**
 * struct pvprof_sample - what the host read at one sample of guest code
 * @host_time_ns: host CLOCK_MONOTONIC at the sample
 * @guest_tsc: guest TSC at the sample
 * @ip: guest RIP
 * @period: event period the sample stands for
 * @cpl: guest CPL, 0..3
 * @event: PVPROF_EVENT_*
 * @flags: PVPROF_ST_SAMPLE_F_* (the guest was inside pvprof's own NMI path)
 * @own_nmi_samples: later samples that hit pvprof's NMI path while this one
 *	was pending, folded into it (pvprof_sample_fold())
 */
struct pvprof_sample {
	__u64 host_time_ns;
	__u64 guest_tsc;
	__u64 ip;
	__u64 period;
	__u8 cpl;
	__u8 event;
	__u16 flags;
	__u32 own_nmi_samples;
};

/**
 * enum pvprof_notice_state - the guest's view of the notice ring
 * @PVPROF_NOTICES_NONE: nothing new: an NMI arriving now is not pvprof's
 * @PVPROF_NOTICES_NEW: notices to answer
 * @PVPROF_NOTICES_GARBAGE: notice_head is out of bounds
 */
enum pvprof_notice_state {
	PVPROF_NOTICES_NONE,
	PVPROF_NOTICES_NEW,
	PVPROF_NOTICES_GARBAGE,
};

void pvprof_notice_encode(struct pvprof_notice *n, const struct pvprof_sample *s,
			  __u64 seq, bool lost_before);
enum pvprof_notice_state pvprof_notice_check(__u64 head, __u64 tail, __u64 *count);

#endif /* _PVPROF_CORE_NOTICE_H */
