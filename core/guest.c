// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof guest side: the protocol part of the NMI handler.
 *
 * KVM merges NMIs from every source, so neither the guest nor the notices
 * can tell which NMI is pvprof's: the host decides when it delivers one
 * and says so through nmi_delivered, and the guest claims exactly those.
 * Notices are answered by whichever NMI comes first, all at once, the
 * newest with the interrupted context's callchain and the older ones as
 * stale, so one NMI catches up however many the host's gate let
 * accumulate.
 */
#include "guest.h"
#include "notice.h"
#include "callchain.h"

/**
 * pvprof_guest_buf_init() - describe a buffer the guest is registering
 * @gb: handle to fill
 * @base: the buffer, zeroed by the caller, aligned to PVPROF_PAGE_SIZE
 * @size: its size in bytes
 *
 * Call it before REGISTER, and let the NMI handler use @gb from then on
 * until UNREGISTER has returned: the host may attribute an NMI to the
 * registration on the entry that returns from REGISTER, and the guest
 * claims it by comparing nmi_delivered with 0, the count a registration
 * starts with.
 *
 * Return: 0, or the negative PVPROF_E* code REGISTER would answer.
 */
int pvprof_guest_buf_init(struct pvprof_guest_buf *gb, void *base, __u64 size)
{
	int ret;

	ret = pvprof_geometry_init(&gb->geo, size);
	if (ret)
		return ret;
	gb->hdr = base;
	gb->nmi_seen = 0;
	gb->ustack = NULL;
	gb->scratch = NULL;
	gb->scratch_size = 0;
	return 0;
}

/**
 * pvprof_guest_set_ustack() - take user stack snapshots when asked to
 * @gb: a handle from pvprof_guest_buf_init()
 * @ustack: the snapshot function
 * @scratch: 8-byte aligned memory the NMI handler alone uses
 * @scratch_size: its size; a callchain with a snapshot is at most this large
 *
 * Only for a host that offered PVPROF_FEAT_USER_STACK; the snapshots are
 * taken while the header's ustack_size is not 0 (spec pvprof-ustack).
 */
void pvprof_guest_set_ustack(struct pvprof_guest_buf *gb, pvprof_ustack_fn ustack,
			     void *scratch, __u32 scratch_size)
{
	gb->ustack = ustack;
	gb->scratch = scratch;
	gb->scratch_size = scratch_size & ~7U;
}

static struct pvprof_callchain *chain_slot(struct pvprof_guest_buf *gb, __u64 index)
{
	return (struct pvprof_callchain *)((__u8 *)gb->hdr +
					pvprof_callchain_offset(&gb->geo, index));
}

static void bump(__u64 *stat, __u64 n)
{
	PVPROF_WRITE_ONCE(*stat, PVPROF_READ_ONCE(*stat) + n);
}

/*
 * Bytes of user stack to snapshot in a callchain of @nr frames that may
 * take @slots slots: @asked (the header's ustack_size), within the scratch
 * memory and half the ring (spec pvprof-ustack), 0 for none.
 */
static __u32 ustack_room(const struct pvprof_guest_buf *gb, __u32 asked, __u32 nr,
			 __u64 slots)
{
	__u64 fixed = pvprof_callchain_bytes(nr) + sizeof(struct pvprof_ustack);
	__u64 limit = asked & ~7U;
	__u64 half = (__u64)gb->geo.chain_slots / 2 * PVPROF_CHAIN_SLOT_SIZE;

	if (limit > PVPROF_USTACK_MAX)
		limit = PVPROF_USTACK_MAX;
	if (slots * PVPROF_CHAIN_SLOT_SIZE < half)
		half = slots * PVPROF_CHAIN_SLOT_SIZE;
	if (gb->scratch_size < half)
		half = gb->scratch_size;
	if (half <= fixed)
		return 0;
	return (__u32)(limit < half - fixed ? limit : (half - fixed) & ~7ULL);
}

/*
 * Attach a snapshot to the finished callchain in @gb->scratch, if one fits in
 * @slots slots.  Return: the callchain's span in slots.
 */
static __u32 attach_ustack(struct pvprof_guest_buf *gb, void *ctx, __u32 asked,
			   __u64 slots)
{
	struct pvprof_callchain *chain = gb->scratch;
	__u32 nr = (__u32)chain->nr_kernel + chain->nr_user;
	__u32 room = ustack_room(gb, asked, nr, slots);
	struct pvprof_ustack *us;
	int got;

	if (!room || !chain->nr_user ||
	    (chain->flags & (PVPROF_CHAIN_F_KTHREAD | PVPROF_CHAIN_F_COMPAT)))
		return 1;
	us = pvprof_callchain_ustack(chain);
	pvprof_memset(us, 0, sizeof(*us));
	got = gb->ustack(ctx, chain, us->regs, pvprof_ustack_data(us), room);
	if (got < 0 || (__u32)got > room ||
	    us->regs[PVPROF_UREG_IP] != pvprof_callchain_frame(chain, chain->nr_kernel))
		return 1;
	us->size = (__u32)got;
	pvprof_memset(pvprof_ustack_data(us) + got, 0, ((us->size + 7U) & ~7U) - us->size);
	chain->flags |= PVPROF_CHAIN_F_USTACK;
	chain->size = (__u16)pvprof_callchain_ustack_bytes(nr, us->size);
	return PVPROF_CHAIN_SPAN((__u32)chain->size);
}

/* Copy a callchain built in scratch memory into its slots, wrapping. */
static void post_span(struct pvprof_guest_buf *gb, __u64 index,
		      const struct pvprof_callchain *chain)
{
	__u32 first = (__u32)(index % gb->geo.chain_slots);
	__u32 before_end = (gb->geo.chain_slots - first) * PVPROF_CHAIN_SLOT_SIZE;
	__u32 size = chain->size;

	if (size <= before_end) {
		pvprof_memcpy(chain_slot(gb, index), chain, size);
		return;
	}
	pvprof_memcpy(chain_slot(gb, index), chain, before_end);
	pvprof_memcpy(chain_slot(gb, 0), (const __u8 *)chain + before_end,
		      size - before_end);
}

/**
 * pvprof_guest_nmi() - answer the notices the host posted
 * @gb: this CPU's registered buffer
 * @capture: fills the callchain of the newest notice
 * @ctx: passed to @capture
 * @res: what was consumed and written, filled on every call
 *
 * Decides ownership from nmi_delivered, then reads notice_head (acquire)
 * and the host's chain_tail (acquire, bounds checked), writes callchains for
 * the notices that fit in the callchain ring (the newest ones: the oldest are
 * dropped when it is full), publishes chain_head and then notice_tail
 * (release), and keeps the line 3 statistics.
 *
 * Return: the events to report to the kernel's NMI layer, as Linux's NMI
 * handlers count them: 0 when the host attributed no delivery to pvprof
 * since the last claim (notices found are answered all the same), else
 * the deliveries this run claims, capped at 2.  More than one makes Linux
 * swallow the next back-to-back NMI that nobody claims: the empty run of
 * the handlers that a nested NMI claimed early leaves behind
 * (spec pvprof-guest-nmi-handler).
 */
int pvprof_guest_nmi(struct pvprof_guest_buf *gb, pvprof_capture_fn capture,
		     void *ctx, struct pvprof_nmi_result *res)
{
	struct pvprof_buf_header *h = gb->hdr;
	int handled;
	struct pvprof_notice newest;
	struct pvprof_callchain *chain;
	__u64 head, tail, count, rhead, rtail, room, answer, i, delivered;
	__u32 max_frames, asked, span = 1;

	pvprof_memset(res, 0, sizeof(*res));
	delivered = PVPROF_READ_ONCE(h->nmi_delivered);
	res->deliveries = delivered - gb->nmi_seen;
	handled = res->deliveries > 2 ? 2 : (int)res->deliveries;
	if (handled) {
		gb->nmi_seen = delivered;
		bump(&h->guest_nmis_claimed, 1);
	}

	head = pvprof_load_acquire(&h->notice_head);
	tail = PVPROF_READ_ONCE(h->notice_tail);
	switch (pvprof_notice_check(head, tail, &count)) {
	case PVPROF_NOTICES_NONE:
		return handled;
	case PVPROF_NOTICES_GARBAGE:
		pvprof_store_release(&h->notice_tail, head);
		bump(&h->guest_errors, 1);
		res->garbage = true;
		return handled;
	case PVPROF_NOTICES_NEW:
		break;
	}

	rhead = PVPROF_READ_ONCE(h->chain_head);
	rtail = pvprof_load_acquire(&h->chain_tail);
	if (pvprof_ring_valid(rhead, rtail, gb->geo.chain_slots)) {
		room = gb->geo.chain_slots - pvprof_ring_used(rhead, rtail);
	} else {
		room = 0;
		bump(&h->guest_errors, 1);
	}
	answer = count < room ? count : room;
	res->consumed = (__u32)count;
	res->dropped = (__u32)(count - answer);

	if (answer) {
		/* Slots for notices tail + (count - answer) .. head - 1, in order. */
		pvprof_memcpy(&newest, (__u8 *)h + pvprof_notice_offset(head - 1),
			      sizeof(newest));
		max_frames = PVPROF_READ_ONCE(h->max_depth);
		if (!max_frames || max_frames > PVPROF_MAX_DEPTH)
			max_frames = PVPROF_MAX_DEPTH;
		/*
		 * With a snapshot the callchain is built aside: it may span
		 * slots past the ring's end, and the stale callchains before
		 * it leave it room - (answer - 1) slots.  Without one it is
		 * written in its slot directly.
		 */
		asked = gb->ustack ? PVPROF_READ_ONCE(h->ustack_size) : 0;
		chain = asked ? gb->scratch : chain_slot(gb, rhead + answer - 1);
		pvprof_callchain_init(chain, newest.seq, 0);
		capture(ctx, &newest, chain, max_frames);
		chain->seq = newest.seq;
		chain->flags &= ~PVPROF_CHAIN_F_STALE;
		pvprof_callchain_finish(chain, max_frames);
		if (asked) {
			span = attach_ustack(gb, ctx, asked, room - (answer - 1));
			post_span(gb, rhead + answer - 1, chain);
		}
		res->callchains = 1;

		for (i = 0; i + 1 < answer; i++) {
			const struct pvprof_notice *n = (const void *)((__u8 *)h +
				pvprof_notice_offset(head - answer + i));
			struct pvprof_callchain *stale = chain_slot(gb, rhead + i);

			pvprof_callchain_init(stale, PVPROF_READ_ONCE(n->seq),
					      PVPROF_CHAIN_F_STALE);
			stale->time_ns = chain->time_ns;
			res->stale++;
		}
		pvprof_store_release(&h->chain_head, rhead + answer - 1 + span);
	}
	pvprof_store_release(&h->notice_tail, head);

	bump(&h->guest_callchains, res->callchains);
	bump(&h->guest_stale, res->stale);
	if (res->dropped)
		bump(&h->guest_errors, res->dropped);
	return handled;
}
