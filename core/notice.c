// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof notices.
 */
#include "notice.h"
#include "ring.h"

/**
 * pvprof_notice_encode() - fill a notice from a sample
 * @n: notice to fill (host memory; the caller copies it to the slot)
 * @s: the sample
 * @seq: sequence number of this notice in the registration, from 1
 * @lost_before: the host dropped samples since the previous notice
 *
 * Every byte of @n is written, reserved fields as zero.
 */
void pvprof_notice_encode(struct pvprof_notice *n, const struct pvprof_sample *s,
			  __u64 seq, bool lost_before)
{
	pvprof_memset(n, 0, sizeof(*n));
	n->seq = seq;
	n->host_time_ns = s->host_time_ns;
	n->guest_tsc = s->guest_tsc;
	n->ip = s->ip;
	n->cpl = s->cpl & 3;
	n->event = s->event;
	n->flags = (s->cpl & 3) == 3 ? PVPROF_NOTICE_F_USER : 0;
	if (lost_before)
		n->flags |= PVPROF_NOTICE_F_LOST_BEFORE;
	n->period = s->period;
}

/**
 * pvprof_notice_check() - classify the notice ring as the guest sees it
 * @head: notice_head, load-acquired from the host-written line
 * @tail: the guest's own notice_tail
 * @count: set to the number of notices to answer when there are some
 *
 * Return: PVPROF_NOTICES_NONE when @head == @tail (an NMI now is not
 * pvprof's and must not be claimed); PVPROF_NOTICES_GARBAGE when
 * @head - @tail exceeds the ring (the guest resyncs its tail and does not
 * claim); PVPROF_NOTICES_NEW otherwise, with *@count in 1..32.
 */
enum pvprof_notice_state pvprof_notice_check(__u64 head, __u64 tail, __u64 *count)
{
	if (head == tail)
		return PVPROF_NOTICES_NONE;
	if (!pvprof_ring_valid(head, tail, PVPROF_NOTICE_SLOTS))
		return PVPROF_NOTICES_GARBAGE;
	*count = pvprof_ring_used(head, tail);
	return PVPROF_NOTICES_NEW;
}
