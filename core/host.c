// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof host side of one vCPU.
 *
 * Every sample attributed to guest code ends in exactly one counter: a
 * notice, or a sample-level loss.  Every notice ends in exactly one
 * outcome, resolved in seq order: an accepted callchain, a stale answer, an
 * invalid callchain, or unanswered (a later seq arrived first, or the
 * registration ended).  Resolving strictly in seq order is what lets the host count
 * unanswered notices without trusting anything the guest says about them.
 */
#include "host.h"

static const char * const loss_names[PVPROF_LOSS_NR] = {
	[PVPROF_LOSS_NOTICE_RING_FULL]	= "notice_ring_full",
	[PVPROF_LOSS_THROTTLED]		= "throttled",
	[PVPROF_LOSS_UNREGISTERED]	= "unregistered",
	[PVPROF_LOSS_PROTECTED]		= "protected",
	[PVPROF_LOSS_NESTED]		= "nested",
	[PVPROF_LOSS_SMM]		= "smm",
	[PVPROF_LOSS_STALE]		= "stale",
	[PVPROF_LOSS_INVALID]		= "invalid",
	[PVPROF_LOSS_BUFFER_GONE]	= "buffer_gone",
	[PVPROF_LOSS_UNANSWERED]	= "unanswered",
	[PVPROF_LOSS_STREAM_OVERFLOW]	= "stream_overflow",
	[PVPROF_LOSS_SLOT_BUSY]		= "slot_busy",
};

/**
 * pvprof_host_ring_init() - start the host state of a registration
 * @r: state to initialise; zeroed, or the vCPU's previous registration
 * @size: registered buffer size
 * @max_depth: frames per callchain to accept; 0 or above PVPROF_MAX_DEPTH
 *	means PVPROF_MAX_DEPTH
 * @cookie: this registration's cookie, nonzero
 *
 * Return: 0, or the negative PVPROF_E* code REGISTER answers for a bad
 * size; -PVPROF_EINVAL for a zero cookie.
 */
int pvprof_host_ring_init(struct pvprof_host_ring *r, __u64 size,
			  __u32 max_depth, __u64 cookie)
{
	struct pvprof_geometry geo;
	bool nmi_owed = r->nmi_owed;
	bool own_nmi_delivered = r->own_nmi_delivered;
	int ret;

	ret = pvprof_geometry_init(&geo, size);
	if (ret)
		return ret;
	if (!cookie)
		return -PVPROF_EINVAL;
	pvprof_memset(r, 0, sizeof(*r));
	/*
	 * An NMI in flight outlives the registration that injected it; the
	 * count starts at 0 like the zeroed buffer, so the guest knows it
	 * before REGISTER returns.
	 */
	r->nmi_owed = nmi_owed;
	r->own_nmi_delivered = own_nmi_delivered;
	r->geo = geo;
	r->max_depth = max_depth && max_depth < PVPROF_MAX_DEPTH ?
		       max_depth : PVPROF_MAX_DEPTH;
	r->cookie = cookie;
	return 0;
}

/**
 * pvprof_host_header_init() - build the host-written header lines
 * @h: host-side header image to fill (lines 0 and 1 are meaningful)
 * @r: the registration
 * @state: PVPROF_STATE_*
 * @event: PVPROF_EVENT_*
 * @period: ns for cpu-clock, events otherwise
 *
 * The caller copies the first two cache lines of @h into the guest buffer.
 */
void pvprof_host_header_init(struct pvprof_buf_header *h,
			     const struct pvprof_host_ring *r, __u32 state,
			     __u32 event, __u64 period)
{
	pvprof_memset(h, 0, sizeof(*h));
	h->magic = PVPROF_BUF_MAGIC;
	h->version = PVPROF_ABI_VERSION;
	h->header_size = PVPROF_HEADER_SIZE;
	h->cookie = r->cookie;
	h->size = r->geo.size;
	h->max_depth = r->max_depth;
	h->state = state;
	h->event = event;
	h->period = period;
	h->ustack_size = r->ustack_size;
	h->notice_head = r->notice_head;
	h->chain_tail = r->chain_tail;
	h->nmi_head = r->nmi_head;
	h->nmi_delivered = r->nmi_delivered;
}

static bool all_zero(const __u8 *p, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/**
 * pvprof_host_header_clean() - check a header copy at registration
 * @h: copy of the guest's buffer header taken before registering
 *
 * Return: true when the guest-written indices and every reserved field
 * are zero, as REGISTER requires (else it answers -PVPROF_EINVAL).
 */
bool pvprof_host_header_clean(const struct pvprof_buf_header *h)
{
	return !h->notice_tail && !h->chain_head &&
	       all_zero(h->reserved0, sizeof(h->reserved0)) &&
	       all_zero(h->reserved1, sizeof(h->reserved1)) &&
	       all_zero(h->reserved2, sizeof(h->reserved2)) &&
	       all_zero(h->reserved3, sizeof(h->reserved3)) &&
	       all_zero(h->reserved4, sizeof(h->reserved4));
}

/**
 * pvprof_host_identity_ok() - may the host still write this buffer
 * @h: copy of at least the first cache line of the buffer
 * @r: the registration
 *
 * Return: true when magic and cookie still match; false means the guest
 * reused or cleared the memory and the registration must be dropped.
 */
bool pvprof_host_identity_ok(const struct pvprof_buf_header *h,
			     const struct pvprof_host_ring *r)
{
	return h->magic == PVPROF_BUF_MAGIC && h->cookie == r->cookie;
}

/**
 * pvprof_acct_sample_lost() - count samples that did not become a notice
 * @acct: the vCPU's counters
 * @reason: sample-level PVPROF_LOSS_* reason; out-of-range values are
 *	counted as samples only, which unbalances the books visibly
 * @n: how many (a pending sample lost counts the samples folded into it)
 */
void pvprof_acct_sample_lost(struct pvprof_vcpu_acct *acct, unsigned int reason,
			     __u64 n)
{
	acct->samples += n;
	if (reason < PVPROF_LOSS_NR)
		acct->losses[reason] += n;
}

/**
 * pvprof_host_sample_lost() - count lost samples of a registered vCPU
 * @r: the registration; its next notice carries PVPROF_NOTICE_F_LOST_BEFORE
 * @acct: the vCPU's counters
 * @reason: sample-level PVPROF_LOSS_* reason
 * @n: how many
 */
void pvprof_host_sample_lost(struct pvprof_host_ring *r,
			     struct pvprof_vcpu_acct *acct, unsigned int reason,
			     __u64 n)
{
	pvprof_acct_sample_lost(acct, reason, n);
	r->lost_before = true;
}

/**
 * pvprof_sample_weight() - the samples a pending sample stands for
 * @s: the sample
 *
 * Return: 1 plus the samples folded into it (pvprof_sample_fold()).
 */
__u64 pvprof_sample_weight(const struct pvprof_sample *s)
{
	return 1 + (__u64)s->own_nmi_samples;
}

/**
 * pvprof_acct_sample_losses() - samples that never became a notice
 * @acct: the vCPU's counters
 *
 * Return: the sum of the sample-level loss reasons.
 */
__u64 pvprof_acct_sample_losses(const struct pvprof_vcpu_acct *acct)
{
	return acct->losses[PVPROF_LOSS_NOTICE_RING_FULL] +
	       acct->losses[PVPROF_LOSS_THROTTLED] +
	       acct->losses[PVPROF_LOSS_UNREGISTERED] +
	       acct->losses[PVPROF_LOSS_PROTECTED] +
	       acct->losses[PVPROF_LOSS_NESTED] +
	       acct->losses[PVPROF_LOSS_SMM] +
	       acct->losses[PVPROF_LOSS_BUFFER_GONE] +
	       acct->losses[PVPROF_LOSS_SLOT_BUSY];
}

/**
 * pvprof_acct_notice_outcomes() - notices whose outcome is counted
 * @acct: the vCPU's counters
 *
 * Return: callchains + stale + invalid + unanswered.
 */
__u64 pvprof_acct_notice_outcomes(const struct pvprof_vcpu_acct *acct)
{
	return acct->callchains +
	       acct->losses[PVPROF_LOSS_STALE] +
	       acct->losses[PVPROF_LOSS_INVALID] +
	       acct->losses[PVPROF_LOSS_UNANSWERED];
}

/**
 * pvprof_loss_name() - short name of a loss reason
 * @reason: PVPROF_LOSS_*
 *
 * Return: a static string, "unknown" when out of range.
 */
const char *pvprof_loss_name(unsigned int reason)
{
	if (reason >= PVPROF_LOSS_NR)
		return "unknown";
	return loss_names[reason];
}

/**
 * pvprof_host_notice_prepare() - turn a sample into a notice if there is room
 * @r: the registration
 * @acct: the vCPU's counters
 * @guest_notice_tail: notice_tail as just read from the guest (untrusted)
 * @s: the sample
 * @out: the notice to write, filled on success
 * @offset: byte offset of its slot in the buffer, set on success
 *
 * On success the caller writes @out at @offset and then calls
 * pvprof_host_notice_publish(); if that write fails it counts the sample
 * with pvprof_host_sample_lost() instead.  A full ring, or a notice_tail
 * out of bounds, loses the sample as PVPROF_LOSS_NOTICE_RING_FULL.  The
 * host keeps the notice's facts; a notice that stayed unresolved for
 * PVPROF_HOST_HISTORY notices is counted unanswered here.
 *
 * Return: true when a notice is to be written.
 */
bool pvprof_host_notice_prepare(struct pvprof_host_ring *r,
				struct pvprof_vcpu_acct *acct, __u64 guest_notice_tail,
				const struct pvprof_sample *s,
				struct pvprof_notice *out, __u32 *offset)
{
	struct pvprof_notice_facts *fact;

	if (!pvprof_ring_valid(r->notice_head, guest_notice_tail, PVPROF_NOTICE_SLOTS) ||
	    pvprof_ring_full(r->notice_head, guest_notice_tail, PVPROF_NOTICE_SLOTS)) {
		pvprof_host_sample_lost(r, acct, PVPROF_LOSS_NOTICE_RING_FULL,
					pvprof_sample_weight(s));
		return false;
	}
	if (r->notice_head + 1 - r->resolved_seq > PVPROF_HOST_HISTORY) {
		/* Its facts are about to be overwritten: too late to answer. */
		r->resolved_seq++;
		acct->losses[PVPROF_LOSS_UNANSWERED]++;
	}
	pvprof_notice_encode(out, s, r->notice_head + 1, r->lost_before);
	fact = &r->history[(r->notice_head + 1) % PVPROF_HOST_HISTORY];
	fact->ip = out->ip;
	fact->guest_tsc = out->guest_tsc;
	fact->cpl = out->cpl;
	fact->event = out->event;
	fact->sample_flags = s->flags;
	fact->own_nmi_samples = s->own_nmi_samples;
	*offset = pvprof_notice_offset(r->notice_head);
	return true;
}

/**
 * pvprof_host_notice_publish() - account a notice written to its slot
 * @r: the registration
 * @acct: the vCPU's counters
 *
 * Return: the new notice_head, to store-release into the guest's line 1.
 */
__u64 pvprof_host_notice_publish(struct pvprof_host_ring *r,
				 struct pvprof_vcpu_acct *acct)
{
	acct->samples++;
	acct->notices++;
	r->lost_before = false;
	return ++r->notice_head;
}

/**
 * pvprof_host_sample_waits() - must the pending sample wait to be a notice
 * @r: the registration
 * @guest_notice_tail: notice_tail as just read from the guest (untrusted)
 * @nmi_busy: KVM holds an NMI for this vCPU, or the guest is handling one
	(pvprof_host_nmi_gate()'s @nmi_held or @nmi_masked)
 *
 * While notices already written are unconsumed and an NMI that will read
 * them is on its way or being handled, a new notice would be the newest
 * one that NMI finds: the guest would answer it with the older sample's
 * stack and the older sample as stale.  The sample stays in the slot until
 * the guest has read them (spec pvprof-host-sequence, step 4).
 *
 * Return: true when the caller must leave the sample pending.
 */
bool pvprof_host_sample_waits(const struct pvprof_host_ring *r,
			      __u64 guest_notice_tail, bool nmi_busy)
{
	return nmi_busy && guest_notice_tail != r->notice_head;
}

/*
 * A guest that stops reading notices (a crash kernel without the driver, a
 * hung driver) would take one unknown NMI per sample.  After
 * PVPROF_HOST_UNANSWERED_NMIS NMIs in a row with notice_tail unmoved, only
 * every PVPROF_HOST_NMI_PROBE_EVERY-th one is injected, so that a guest that
 * recovers is heard; the first notice it reads ends the run.
 */
static bool pvprof_host_nmi_withheld(struct pvprof_host_ring *r,
				     struct pvprof_vcpu_acct *acct,
				     __u64 guest_notice_tail)
{
	if (guest_notice_tail != r->nmi_answer_tail) {
		r->nmi_unanswered = 0;
		r->nmi_withheld_run = 0;
	}
	if (r->nmi_unanswered < PVPROF_HOST_UNANSWERED_NMIS ||
	    ++r->nmi_withheld_run % PVPROF_HOST_NMI_PROBE_EVERY == 0)
		return false;
	acct->nmis_withheld++;
	return true;
}

/**
 * pvprof_host_nmi_gate() - decide how the notices unconsumed reach the guest
 * @r: the registration
 * @acct: the vCPU's counters
 * @guest_notice_tail: notice_tail as just read from the guest (untrusted)
 * @nmi_held: KVM holds an NMI for this vCPU (queued, pending or being
 *	injected, whatever its source)
 * @nmi_masked: the guest is handling an NMI
 *
 * Called before every entry, after new notices are written.  Injects only
 * when the vCPU has no NMI in flight and is not in an NMI handler: an NMI
 * in flight answers the notices when it is delivered, and an NMI queued
 * next to another (or behind a handler, where KVM keeps only one) could be
 * merged with it, hiding that one's event behind pvprof's claim.  So at
 * most one pvprof NMI is owed, from its injection until
 * pvprof_host_nmi_delivery() attributes a delivery to it; one owed while
 * the vCPU is not busy was dropped under KVM (a VMM that rewrote the
 * vCPU's NMI state) and is forgotten.
 *
 * Notices withheld only because the guest is inside an NMI handler would
 * otherwise wait for the first exit after that handler's IRET, usually the
 * next sample's, whose notice then makes them stale.  KVM's NMI window
 * (SVM's IRET intercept and a single step over the IRET, VMX's NMI-window
 * exiting) brings an exit as soon as the guest can take an NMI, and the
 * gate runs again there (spec pvprof-host-sequence, steps 5 and 6).
 *
 * A notice_tail out of bounds asks for nothing; the guest's own samples
 * are what it loses.  A guest that left PVPROF_HOST_UNANSWERED_NMIS NMIs
 * in a row unanswered gets only every PVPROF_HOST_NMI_PROBE_EVERY-th one
 * until it reads a notice (spec pvprof-host-sequence, step 5).
 *
 * Return: %PVPROF_GATE_INJECT when the caller must inject an NMI (nmi_head
 * is then set to notice_head, and the caller may publish it in line 1);
 * %PVPROF_GATE_NMI_WINDOW when it must open KVM's NMI window and run the
 * gate again at the next entry; %PVPROF_GATE_CLOSED otherwise.
 */
enum pvprof_nmi_gate pvprof_host_nmi_gate(struct pvprof_host_ring *r,
					  struct pvprof_vcpu_acct *acct,
					  __u64 guest_notice_tail,
					  bool nmi_held, bool nmi_masked)
{
	bool unconsumed;

	if (nmi_held)
		return PVPROF_GATE_CLOSED;
	unconsumed = pvprof_ring_valid(r->notice_head, guest_notice_tail,
				       PVPROF_NOTICE_SLOTS) &&
		     guest_notice_tail != r->notice_head;
	if (nmi_masked)
		return unconsumed ? PVPROF_GATE_NMI_WINDOW : PVPROF_GATE_CLOSED;
	r->nmi_owed = false;
	if (!unconsumed)
		return PVPROF_GATE_CLOSED;
	if (pvprof_host_nmi_withheld(r, acct, guest_notice_tail))
		return PVPROF_GATE_CLOSED;
	r->nmi_owed = true;
	r->nmi_head = r->notice_head;
	r->nmi_answer_tail = guest_notice_tail;
	r->nmi_unanswered++;
	acct->nmis++;
	return PVPROF_GATE_INJECT;
}

/**
 * pvprof_host_nmi_delivery() - KVM is delivering an NMI: is it pvprof's?
 * @r: the vCPU's registration state (registered or not)
 * @more_nmis_pending: KVM still holds NMIs for this vCPU after this one
 *
 * KVM keeps only a count of pending NMIs, so which delivery "is" pvprof's
 * is a choice: the last one of a run, when nothing is left pending.  The
 * guest's handlers then see every other source's NMI first, and pvprof
 * claims exactly one NMI per injection it did not lose to KVM's merging,
 * never one that carried another source's event alone.
 *
 * Return: true when this delivery is pvprof's; nmi_delivered was
 * incremented and the caller must publish it before the entry delivers.
 */
bool pvprof_host_nmi_delivery(struct pvprof_host_ring *r, bool more_nmis_pending)
{
	r->own_nmi_delivered = r->nmi_owed && !more_nmis_pending;
	if (!r->own_nmi_delivered)
		return false;
	r->nmi_owed = false;
	r->nmi_delivered++;
	return true;
}

/**
 * pvprof_host_nmis_discarded() - KVM dropped every NMI it held for the vCPU
 * @r: the vCPU's registration state (registered or not)
 *
 * A reset, or a VMM writing the vCPU's NMI state, leaves no NMI for a
 * delivery to attribute: an NMI still owed would claim the vCPU's next
 * unrelated NMI as pvprof's.
 */
void pvprof_host_nmis_discarded(struct pvprof_host_ring *r)
{
	r->nmi_owed = false;
	r->own_nmi_delivered = false;
}

/**
 * pvprof_host_in_own_nmi() - is the guest running pvprof's own NMI path
 * @r: the vCPU's registration state (registered or not)
 * @nmi_masked: the guest's NMIs are masked: it is handling an NMI
 *
 * The NMI being handled is the last one delivered, and pvprof's when
 * pvprof_host_nmi_delivery() attributed it.  A sample taken there measures
 * pvprof, not the code the NMI interrupted (spec pvprof-own-nmi-samples).
 *
 * Context: any, on the vCPU's thread (the overflow handler included).
 * Return: true when a sample taken now lands in pvprof's NMI path.
 */
bool pvprof_host_in_own_nmi(const struct pvprof_host_ring *r, bool nmi_masked)
{
	return nmi_masked && PVPROF_READ_ONCE(r->own_nmi_delivered);
}

/**
 * pvprof_sample_fold() - fold a new sample into the pending one
 * @pending: the sample still waiting to become a notice
 * @in_own_nmi: the new sample hit pvprof's own NMI path
 *
 * A pending sample waits while the guest handles the NMI that reads the
 * notices before it; samples taken meanwhile inside that NMI would all be
 * answered with one stack (the one the NMI interrupted), so they ride
 * along with the pending sample instead of being lost.  Any other sample
 * the caller counts as PVPROF_LOSS_SLOT_BUSY.
 *
 * Return: true when the new sample was folded into @pending.
 */
bool pvprof_sample_fold(struct pvprof_sample *pending, bool in_own_nmi)
{
	if (!in_own_nmi || pending->own_nmi_samples == (__u32)~0U)
		return false;
	pending->own_nmi_samples++;
	return true;
}

/**
 * pvprof_host_callchains_ready() - how many callchain slots to drain now
 * @r: the registration
 * @acct: the vCPU's counters
 * @guest_chain_head: chain_head as just load-acquired from the guest
 *
 * A chain_head out of bounds drains nothing and counts
 * PVPROF_REJ_BAD_INDEX; the guest stalls its own callchains until it fixes
 * the index, and the notices they answer end up unanswered.
 *
 * Return: number of slots to pass to pvprof_host_callchain(), at most the
 * number of callchain slots.
 */
__u32 pvprof_host_callchains_ready(struct pvprof_host_ring *r,
				   struct pvprof_vcpu_acct *acct, __u64 guest_chain_head)
{
	if (!pvprof_ring_valid(guest_chain_head, r->chain_tail, r->geo.chain_slots)) {
		acct->rejects[PVPROF_REJ_BAD_INDEX]++;
		return 0;
	}
	return (__u32)pvprof_ring_used(guest_chain_head, r->chain_tail);
}

/**
 * pvprof_host_callchain_offset() - byte offset of the next slot to drain
 * @r: the registration
 *
 * Return: offset of slot chain_tail in the buffer.
 */
__u32 pvprof_host_callchain_offset(const struct pvprof_host_ring *r)
{
	return pvprof_callchain_offset(&r->geo, r->chain_tail);
}

/**
 * pvprof_host_callchain_span() - how many slots the next callchain occupies
 * @r: the registration
 * @first_slot: host-private copy of the slot at pvprof_host_callchain_offset()
 * @ready: slots posted and not drained yet, >= 1
 *
 * A callchain with a user stack snapshot spans several slots
 * (spec pvprof-callchain-drain, step 2) when the host asked for snapshots and
 * the guest posted them all; anything else is one slot, which validation
 * then judges by itself.
 *
 * Return: slots the caller copies, starting with @first_slot, 1..@ready.
 */
__u32 pvprof_host_callchain_span(const struct pvprof_host_ring *r,
				 const void *first_slot, __u32 ready)
{
	struct pvprof_callchain chain;
	__u32 span;

	pvprof_memcpy(&chain, first_slot, sizeof(chain));
	if (!(chain.flags & PVPROF_CHAIN_F_USTACK) || !r->ustack_size ||
	    chain.size <= PVPROF_CHAIN_SLOT_SIZE)
		return 1;
	span = PVPROF_CHAIN_SPAN((__u32)chain.size);
	return span <= ready ? span : 1;
}

/**
 * pvprof_host_callchain_slot_offset() - byte offset of a later slot to drain
 * @r: the registration
 * @k: slots after chain_tail
 *
 * Return: offset of slot chain_tail + @k, wrapping at the ring's end.
 */
__u32 pvprof_host_callchain_slot_offset(const struct pvprof_host_ring *r, __u32 k)
{
	return pvprof_callchain_offset(&r->geo, r->chain_tail + k);
}

/**
 * pvprof_host_callchain() - validate and account one drained callchain
 * @r: the registration
 * @acct: the vCPU's counters
 * @copy: host-private copy of the slots at pvprof_host_callchain_offset(),
 *	as many as pvprof_host_callchain_span() said, 8-byte aligned
 * @len: bytes in @copy: PVPROF_CHAIN_SLOT_SIZE times the slots, or less
 *	for a single slot
 *
 * Consumes the slots (chain_tail advances; the caller store-releases
 * chain_tail after the batch).  An accepted callchain resolves every older
 * unresolved notice as unanswered and its own as callchain or stale.  A
 * rejected one counts its reason and resolves the oldest unresolved notice,
 * if any, as invalid.
 *
 * Return: PVPROF_REJ_NONE when accepted (the caller emits a callchain to
 * the stream unless the callchain is stale), else the reason.
 */
enum pvprof_reject pvprof_host_callchain(struct pvprof_host_ring *r,
					 struct pvprof_vcpu_acct *acct,
				      const void *copy, __u32 len)
{
	const struct pvprof_callchain *chain = copy;
	struct pvprof_callchain_limits lim = {
		.max_depth = r->max_depth,
		.ustack_size = r->ustack_size,
		.answered_seq = r->resolved_seq,
		.notice_head = r->notice_head,
	};
	enum pvprof_reject reason;

	r->chain_tail += len > PVPROF_CHAIN_SLOT_SIZE ? PVPROF_CHAIN_SPAN(len) : 1;
	reason = pvprof_callchain_validate(copy, len, &lim);
	if (reason != PVPROF_REJ_NONE) {
		acct->rejects[reason]++;
		if (r->resolved_seq != r->notice_head) {
			r->resolved_seq++;
			acct->losses[PVPROF_LOSS_INVALID]++;
		}
		return reason;
	}
	acct->losses[PVPROF_LOSS_UNANSWERED] += chain->seq - 1 - r->resolved_seq;
	r->resolved_seq = chain->seq;
	if (chain->flags & PVPROF_CHAIN_F_STALE)
		acct->losses[PVPROF_LOSS_STALE]++;
	else
		acct->callchains++;
	return PVPROF_REJ_NONE;
}

/**
 * pvprof_host_notice_facts() - what the host sampled for an accepted seq
 * @r: the registration
 * @seq: seq of a callchain pvprof_host_callchain() just accepted
 *
 * Return: the facts the host kept when it wrote notice @seq; valid until
 * the next notice is prepared.
 */
const struct pvprof_notice_facts *
pvprof_host_notice_facts(const struct pvprof_host_ring *r, __u64 seq)
{
	return &r->history[seq % PVPROF_HOST_HISTORY];
}

/**
 * pvprof_host_outstanding() - notices written but not resolved yet
 * @r: the registration
 *
 * Return: notice_head - resolved_seq.
 */
__u64 pvprof_host_outstanding(const struct pvprof_host_ring *r)
{
	return r->notice_head - r->resolved_seq;
}

/* No index the host writes ever reaches 2^63 (spec pvprof-rings). */
#define PVPROF_HOST_INDEX_LIMIT		(1ULL << 63)

/**
 * pvprof_host_indices_exhausted() - must the registration end before its
 *	indices wrap
 * @r: the registration
 *
 * Callchain slot counts are not powers of two, so a slot index taken modulo
 * them would jump where the free-running indices wrap.  The host drops
 * the registration (spec pvprof-rings) when the next notice would make
 * notice_head reach 2^63, or the next drain (at most chain_slots slots)
 * could make chain_tail reach it.  Called before every batch of writes.
 *
 * Return: true when the caller must drop the registration instead of
 * writing a notice or draining.
 */
bool pvprof_host_indices_exhausted(const struct pvprof_host_ring *r)
{
	return r->notice_head >= PVPROF_HOST_INDEX_LIMIT - 1 ||
	       r->chain_tail >= PVPROF_HOST_INDEX_LIMIT - r->geo.chain_slots;
}

/**
 * pvprof_host_unregister() - end a registration's books
 * @r: the registration
 * @acct: the vCPU's counters
 *
 * Counts every unresolved notice as PVPROF_LOSS_UNANSWERED.  Called on
 * UNREGISTER and whenever the host drops the registration.
 */
void pvprof_host_unregister(struct pvprof_host_ring *r, struct pvprof_vcpu_acct *acct)
{
	acct->losses[PVPROF_LOSS_UNANSWERED] += pvprof_host_outstanding(r);
	r->resolved_seq = r->notice_head;
}
