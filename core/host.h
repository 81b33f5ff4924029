/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof host side of one vCPU: notice production, the NMI gate, callchain
 * draining, and the per-vCPU accounting every test balances.
 *
 * The host never works on guest memory through these functions: it passes
 * in the values it read (indices, a copied callchain slot) and writes out what
 * they return.  The caller provides the locking (the vCPU thread owns it).
 */
#ifndef _PVPROF_CORE_HOST_H
#define _PVPROF_CORE_HOST_H

#include "pvprof_core.h"
#include "ring.h"
#include "notice.h"
#include "callchain.h"

/**
 * struct pvprof_vcpu_acct - per-vCPU counters, kept across registrations
 * @samples: samples attributed to this vCPU's guest code
 * @notices: notices written
 * @callchains: callchains accepted
 * @nmis: pvprof NMIs injected
 * @nmis_withheld: pvprof NMIs not injected because the guest had left
 *	PVPROF_HOST_UNANSWERED_NMIS of them in a row without reading a notice
 * @losses: by PVPROF_LOSS_* reason
 * @rejects: refused callchains and indices by PVPROF_REJ_* reason (debugging)
 *
 * Two identities hold at every moment:
 * samples == notices + pvprof_acct_sample_losses(), and
 * notices == pvprof_acct_notice_outcomes() + notices not yet resolved.
 * PVPROF_LOSS_STREAM_OVERFLOW counts accepted callchains the stream could
 * not take; it is in neither identity.
 */
struct pvprof_vcpu_acct {
	__u64 samples;
	__u64 notices;
	__u64 callchains;
	__u64 nmis;
	__u64 nmis_withheld;
	__u64 losses[PVPROF_LOSS_NR];
	__u64 rejects[PVPROF_REJ_NR];
};

/*
 * A guest that took this many pvprof NMIs in a row without reading a
 * notice (a crash kernel without the driver, a hung driver) gets only
 * every PVPROF_HOST_NMI_PROBE_EVERY-th one after that, until it reads one.
 */
#define PVPROF_HOST_UNANSWERED_NMIS	8U
#define PVPROF_HOST_NMI_PROBE_EVERY	64U

/*
 * Notices the host remembers, for the stream's callchains; a notice
 * still unresolved when its entry is needed again is counted unanswered.
 * Covers the notice ring plus the largest callchain ring.
 */
#define PVPROF_HOST_HISTORY		128U

/**
 * struct pvprof_notice_facts - what the host sampled for one notice
 * @ip: guest RIP
 * @guest_tsc: guest TSC
 * @cpl: guest CPL
 * @event: PVPROF_EVENT_*
 * @sample_flags: the sample's PVPROF_ST_SAMPLE_F_*
 * @own_nmi_samples: samples folded into it
 */
struct pvprof_notice_facts {
	__u64 ip;
	__u64 guest_tsc;
	__u8 cpl;
	__u8 event;
	__u16 sample_flags;
	__u32 own_nmi_samples;
};

/**
 * struct pvprof_host_ring - host state of one registration
 * @geo: buffer geometry
 * @max_depth: frames per callchain the host accepts, 1..PVPROF_MAX_DEPTH
 * @ustack_size: user stack bytes per callchain asked for, as last published
 *	in the header (0: callchains carry no snapshot)
 * @cookie: the registration's cookie, nonzero
 * @notice_head: notices written (seq of the last one)
 * @chain_tail: callchain slots consumed
 * @nmi_head: notice_head when the last pvprof NMI was injected
 * @nmi_owed: a pvprof NMI was injected and no delivery was attributed to
 *	it yet; outlives the registration, like the NMI itself
 * @own_nmi_delivered: the last NMI KVM delivered to the vCPU was pvprof's,
 *	so while the guest's NMIs are masked it runs pvprof's NMI path;
 *	outlives the registration too
 * @nmi_delivered: deliveries attributed to pvprof during this registration
 *	(header nmi_delivered), from 0
 * @nmi_answer_tail: the guest's notice_tail when the last pvprof NMI was
 *	injected
 * @nmi_unanswered: pvprof NMIs injected in a row after which notice_tail
 *	did not move
 * @nmi_withheld_run: NMIs withheld since the guest stopped answering
 * @resolved_seq: every notice up to this seq has its outcome counted
 * @lost_before: a sample was lost since the last notice written
 * @history: facts of notice seq s at index s % PVPROF_HOST_HISTORY
 */
struct pvprof_host_ring {
	struct pvprof_geometry geo;
	__u32 max_depth;
	__u32 ustack_size;
	__u64 cookie;
	__u64 notice_head;
	__u64 chain_tail;
	__u64 nmi_head;
	bool nmi_owed;
	bool own_nmi_delivered;
	__u64 nmi_delivered;
	__u64 nmi_answer_tail;
	__u32 nmi_unanswered;
	__u32 nmi_withheld_run;
	__u64 resolved_seq;
	bool lost_before;
	struct pvprof_notice_facts history[PVPROF_HOST_HISTORY];
};

/**
 * enum pvprof_nmi_gate - what pvprof_host_nmi_gate() asks before an entry
 * @PVPROF_GATE_CLOSED: nothing; an NMI in flight or none needed
 * @PVPROF_GATE_INJECT: inject a pvprof NMI
 * @PVPROF_GATE_NMI_WINDOW: notices wait only for the guest's NMI handler
 *	to return: open KVM's NMI window
 */
enum pvprof_nmi_gate {
	PVPROF_GATE_CLOSED,
	PVPROF_GATE_INJECT,
	PVPROF_GATE_NMI_WINDOW,
};

int pvprof_host_ring_init(struct pvprof_host_ring *r, __u64 size,
			  __u32 max_depth, __u64 cookie);
void pvprof_host_header_init(struct pvprof_buf_header *h,
			     const struct pvprof_host_ring *r, __u32 state,
			     __u32 event, __u64 period);
bool pvprof_host_header_clean(const struct pvprof_buf_header *h);
bool pvprof_host_identity_ok(const struct pvprof_buf_header *h,
			     const struct pvprof_host_ring *r);

void pvprof_acct_sample_lost(struct pvprof_vcpu_acct *acct, unsigned int reason,
			     __u64 n);
__u64 pvprof_sample_weight(const struct pvprof_sample *s);
void pvprof_host_sample_lost(struct pvprof_host_ring *r,
			     struct pvprof_vcpu_acct *acct, unsigned int reason,
			     __u64 n);
__u64 pvprof_acct_sample_losses(const struct pvprof_vcpu_acct *acct);
__u64 pvprof_acct_notice_outcomes(const struct pvprof_vcpu_acct *acct);
const char *pvprof_loss_name(unsigned int reason);

bool pvprof_host_notice_prepare(struct pvprof_host_ring *r,
				struct pvprof_vcpu_acct *acct, __u64 guest_notice_tail,
				const struct pvprof_sample *s,
				struct pvprof_notice *out, __u32 *offset);
__u64 pvprof_host_notice_publish(struct pvprof_host_ring *r,
				 struct pvprof_vcpu_acct *acct);
bool pvprof_host_sample_waits(const struct pvprof_host_ring *r,
			      __u64 guest_notice_tail, bool nmi_busy);
enum pvprof_nmi_gate pvprof_host_nmi_gate(struct pvprof_host_ring *r,
					  struct pvprof_vcpu_acct *acct,
					  __u64 guest_notice_tail,
					  bool nmi_held, bool nmi_masked);
bool pvprof_host_nmi_delivery(struct pvprof_host_ring *r, bool more_nmis_pending);
void pvprof_host_nmis_discarded(struct pvprof_host_ring *r);
bool pvprof_host_in_own_nmi(const struct pvprof_host_ring *r, bool nmi_masked);
bool pvprof_sample_fold(struct pvprof_sample *pending, bool in_own_nmi);
__u32 pvprof_host_callchains_ready(struct pvprof_host_ring *r,
				   struct pvprof_vcpu_acct *acct, __u64 guest_chain_head);
__u32 pvprof_host_callchain_offset(const struct pvprof_host_ring *r);
__u32 pvprof_host_callchain_span(const struct pvprof_host_ring *r,
				 const void *first_slot, __u32 ready);
__u32 pvprof_host_callchain_slot_offset(const struct pvprof_host_ring *r, __u32 k);
enum pvprof_reject pvprof_host_callchain(struct pvprof_host_ring *r,
					 struct pvprof_vcpu_acct *acct,
				      const void *copy, __u32 len);
const struct pvprof_notice_facts *
pvprof_host_notice_facts(const struct pvprof_host_ring *r, __u64 seq);
__u64 pvprof_host_outstanding(const struct pvprof_host_ring *r);
bool pvprof_host_indices_exhausted(const struct pvprof_host_ring *r);
void pvprof_host_unregister(struct pvprof_host_ring *r, struct pvprof_vcpu_acct *acct);

#endif /* _PVPROF_CORE_HOST_H */
