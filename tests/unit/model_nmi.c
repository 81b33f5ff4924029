// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized model of the pvprof NMI protocol.
 *
 * The host runs the core's own host sequence (pvprof_host_vcpu_work() and
 * pvprof_host_vcpu_nmi_delivery(), the functions the KVM module calls),
 * with sim.c's operations on a simulated vCPU; the guest runs the core's
 * NMI handler.  Around them sits a model of KVM and of the guest kernel:
 * when the host's work runs (the overflow handler's request, an exit with a
 * sample still pending or an NMI window awaited, KVM_RUN returning to user
 * space), KVM's NMI merging (pending capped at two, at one while
 * the guest is in an NMI handler), foreign NMI sources (one with work its
 * handler claims, like perf; one with none, like a VMM's inject-nmi), the
 * guest being descheduled, the host dropping a registration and the guest
 * registering again, and Linux's NMI dispatch (every handler runs; an NMI
 * nobody claims is "unknown" unless it is a swallowed back-to-back one;
 * an exception's IRET inside a handler ends NMI blocking, and an NMI
 * nested after it makes every handler run once more).
 *
 * pvprof must claim exactly the deliveries the host attributed to it and
 * must never leave more unclaimed deliveries than foreign NMIs were sent.
 *
 * A reference model that knows only counts (no indices, no slots) predicts
 * every decision the core makes; the test fails at the first step where
 * they disagree or where an accounting identity breaks.  A host sequence in
 * the wrong order fails it too (tests/unit/Makefile's misorder check).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "runner.h"
#include "sim.h"

#define MAX_SEQ		(1U << 20)

struct params {
	__u64 seed;
	int steps;
	__u32 size;		/* 0: chosen by the seed */
	int p_sample;		/* weights of the step kinds */
	int p_foreign;
	int p_ownerless;	/* foreign NMIs nobody claims */
	int p_progress;
	int p_iret;
	int p_sched;
	int p_exit;
	int p_drop;
	int p_fault;		/* percent of handler runs and captures taking an exception */
	int p_drain;		/* percent of other exits after which the host's
				 * work runs anyway (KVM_RUN returns to user
				 * space), draining callchains */
	bool randomize;		/* let the seed pick the weights too */
	bool expect_merges;	/* the run must have nested and merged NMIs */
	int hostile;		/* percent of steps the guest scribbles on its buffer */
};

/* What the reference expects of a notice's stream entry. */
struct seq_ref {
	__u64 ip;
	bool own_nmi;			/* the sample hit pvprof's NMI path */
	__u32 folded;			/* samples of that path folded into it */
};

struct model {
	struct sim_vcpu v;
	struct params p;
	__u64 rng;
	int step;

	/* KVM (its NMI state is the simulated vCPU's: m->v.nmi_*) */
	bool running;

	/* Guest kernel (arch/x86/kernel/nmi.c, arch/x86/entry/entry_64.S) */
	bool in_nmi;			/* the handlers are running */
	bool nmi_latched;		/* an NMI nested in them: run them again */
	bool progress_since_nmi;
	bool swallow_nmi;
	bool want_register;
	struct seq_ref pending;		/* the sample in the host's slot */
	__u64 nmis_delivered;
	__u64 attributed;		/* deliveries the host attributed to pvprof */
	__u64 not_attributed;
	__u64 foreign_nmis;		/* foreign NMIs sent, with or without work */
	__u64 unclaimed;		/* handler runs nobody claimed */
	__u64 swallowed;
	__u64 unknown;			/* unclaimed and not swallowed: reported */
	__u64 to_claim;			/* attributed deliveries pvprof has not claimed */
	__u64 faults;			/* exceptions (IRETs) inside handlers */
	__u64 nested;			/* NMIs delivered inside handlers */
	__u64 merged;			/* claims of more than one delivery */
	__u64 window_exits;		/* exits the NMI window brought */

	/* Foreign NMI source: work it raised, checked by its own handler. */
	__u64 foreign_work;
	__u64 foreign_raised;
	__u64 foreign_handled;

	/* Reference model */
	__u64 ref_samples;
	__u64 ref_notices;
	__u64 ref_ring_full;
	__u64 ref_unregistered;
	__u64 ref_slot_busy;
	__u64 ref_nmis;
	__u64 ref_unconsumed;		/* written, not consumed by the guest */
	bool ref_owed;			/* a pvprof NMI not yet attributed a delivery */
	bool ref_last_ours;		/* the last delivery was attributed to pvprof */
	__u64 ref_folded;		/* samples folded into a pending one */
	__u64 ref_in_ring;		/* callchain slots posted, not drained */
	__u64 ref_ring_callchains;	/* of those, callchains */
	__u64 ref_callchains;		/* drained */
	__u64 ref_stale;		/* drained */
	__u64 ref_reg_notices;		/* this registration */
	__u64 ref_reg_answered;		/* this registration, drained */
	__u64 ref_unanswered_closed;	/* unanswered of ended registrations */

	struct seq_ref *of_seq;		/* this registration's notices */
	size_t stream_pos;		/* stream bytes checked so far */
	__u64 last_seq;			/* this registration's last callchain */
};

static __u64 rnd(struct model *m)
{
	/* xorshift64* */
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 0x2545f4914f6cdd1dULL;
}

static bool chance(struct model *m, int percent)
{
	return (int)(rnd(m) % 100) < percent;
}

static void __attribute__((format(printf, 3, 4), noreturn))
model_fail(const struct model *m, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ck_abort_msg("seed %llu step %d (model_nmi.c:%d): %s",
		     (unsigned long long)m->p.seed, m->step, line, msg);
	abort();	/* ck_abort_msg does not return; tell the compiler */
}

#define MCHECK(m, cond, ...)						\
	do {								\
		if (!(cond))						\
			model_fail(m, __LINE__, __VA_ARGS__);		\
	} while (0)

/* Predictions of the reference model; a hostile guest voids them. */
#define RCHECK(m, cond, ...)						\
	do {								\
		if (!(m)->p.hostile && !(cond))				\
			model_fail(m, __LINE__, __VA_ARGS__);		\
	} while (0)

static void check_books(struct model *m)
{
	const struct pvprof_vcpu_acct *a = &m->v.acct;

	MCHECK(m, a->samples == a->notices + pvprof_acct_sample_losses(a),
	       "samples %llu != notices %llu + sample losses %llu",
	       (unsigned long long)a->samples, (unsigned long long)a->notices,
	       (unsigned long long)pvprof_acct_sample_losses(a));
	MCHECK(m, a->notices == pvprof_acct_notice_outcomes(a) +
	       (m->v.registered ? pvprof_host_outstanding(&m->v.ring) : 0),
	       "notices %llu != outcomes %llu + outstanding",
	       (unsigned long long)a->notices,
	       (unsigned long long)pvprof_acct_notice_outcomes(a));
	RCHECK(m, a->samples == m->ref_samples, "samples %llu, reference %llu",
	       (unsigned long long)a->samples, (unsigned long long)m->ref_samples);
	RCHECK(m, a->notices == m->ref_notices, "notices %llu, reference %llu",
	       (unsigned long long)a->notices, (unsigned long long)m->ref_notices);
	RCHECK(m, a->losses[PVPROF_LOSS_NOTICE_RING_FULL] == m->ref_ring_full,
	       "ring-full losses differ from the reference");
	RCHECK(m, a->losses[PVPROF_LOSS_UNREGISTERED] == m->ref_unregistered,
	       "unregistered losses differ from the reference");
	RCHECK(m, a->losses[PVPROF_LOSS_SLOT_BUSY] == m->ref_slot_busy,
	       "slot-busy losses differ from the reference");
	RCHECK(m, a->callchains == m->ref_callchains, "callchains %llu, reference %llu",
	       (unsigned long long)a->callchains, (unsigned long long)m->ref_callchains);
	RCHECK(m, a->losses[PVPROF_LOSS_STALE] == m->ref_stale, "stale differs");
	RCHECK(m, a->losses[PVPROF_LOSS_INVALID] == 0, "an honest guest's callchain was rejected");
	RCHECK(m, a->nmis == m->ref_nmis, "NMIs injected %llu, reference %llu",
	       (unsigned long long)a->nmis, (unsigned long long)m->ref_nmis);
	MCHECK(m, m->v.nmi_pending <= 2, "KVM holds %u NMIs", m->v.nmi_pending);
	MCHECK(m, !m->v.nmi_masked || m->v.nmi_pending <= 1,
	       "two NMIs pending while one is handled");
}

static void do_register(struct model *m)
{
	MCHECK(m, sim_register(&m->v, m->p.size, 0) == 0, "registration failed");
	m->ref_unconsumed = 0;
	m->ref_in_ring = 0;
	m->ref_ring_callchains = 0;
	m->ref_reg_notices = 0;
	m->ref_reg_answered = 0;
	m->last_seq = 0;
	m->want_register = false;
}

static void host_drop(struct model *m)
{
	sim_host_unregister(&m->v);
	m->ref_unanswered_closed += m->ref_reg_notices - m->ref_reg_answered;
	/* The host forgot its gate; the guest re-registers when it next can. */
	m->want_register = true;
}

static void process_nmi(struct model *m)
{
	unsigned int limit = m->v.nmi_masked ? 1 : 2;

	m->v.nmi_pending += m->v.nmi_queued;
	m->v.nmi_queued = 0;
	if (m->v.nmi_pending > limit)
		m->v.nmi_pending = limit;
}

static void entry(struct model *m, bool with_sample);

struct handler_ctx {
	struct model *m;
	struct sim_context sc;
};

/*
 * An exception inside an NMI handler returns with IRET, which KVM takes for
 * the end of the NMI (its IRET intercept): NMIs are unblocked until the
 * handlers are done, and the exits that follow can deliver one.
 */
static void handler_exception(struct model *m)
{
	m->faults++;
	m->v.nmi_masked = false;
	entry(m, chance(m, 70));
}

/*
 * The capture runs between the handler's load of notice_head and its
 * stores of chain_head and notice_tail: a VM exit there (a sample, an
 * interrupt) runs the host's entry path against a half-done handler.
 */
static void capture_with_exit(void *ctx, const struct pvprof_notice *n,
			      struct pvprof_callchain *chain, __u32 max_frames)
{
	struct handler_ctx *hc = ctx;

	sim_capture(&hc->sc, n, chain, max_frames);
	if (chance(hc->m, hc->m->p.p_fault))
		handler_exception(hc->m);
	else if (chance(hc->m, 30))
		entry(hc->m, chance(hc->m, 70));
}

/* One run of every NMI handler of the guest; pvprof's is the core. */
static void run_handlers(struct model *m, bool b2b)
{
	struct handler_ctx ctx = {
		.m = m,
		.sc = { .user = chance(m, 40), .depth = 1 + rnd(m) % 24,
			.time_ns = (__u64)m->step },
	};
	struct pvprof_nmi_result res;
	__u64 batch, room, answer;
	int handled = 0;

	/* The entry code or a handler before pvprof's takes an exception. */
	if (chance(m, m->p.p_fault))
		handler_exception(m);
	batch = m->ref_unconsumed;
	room = m->v.gb.geo.chain_slots - m->ref_in_ring;
	answer = batch < room ? batch : room;

	handled = pvprof_guest_nmi(&m->v.gb, capture_with_exit, &ctx, &res);
	MCHECK(m, !handled == !res.deliveries && handled <= 2,
	       "handled %d with %llu deliveries", handled,
	       (unsigned long long)res.deliveries);
	MCHECK(m, res.deliveries <= m->to_claim,
	       "pvprof claimed %llu deliveries of %llu the host attributed to it",
	       (unsigned long long)res.deliveries, (unsigned long long)m->to_claim);
	m->to_claim -= res.deliveries;
	if (res.deliveries > 1)
		m->merged++;
	if (batch) {
		/* Whichever NMI comes first answers; notices written during the handler wait. */
		RCHECK(m, res.consumed == batch, "consumed %u of %llu",
		       res.consumed, (unsigned long long)batch);
		RCHECK(m, res.callchains + res.stale == answer && res.callchains == 1 - !answer,
		       "answered %u+%u, reference %llu", res.callchains, res.stale,
		       (unsigned long long)answer);
		RCHECK(m, res.dropped == batch - answer, "dropped %u", res.dropped);
		m->ref_in_ring += answer;
		m->ref_ring_callchains += res.callchains;
		m->ref_unconsumed -= batch;
	}
	if (m->foreign_work) {
		/* Like perf's handler: it returns how many events it handled. */
		handled += (int)m->foreign_work;
		m->foreign_handled += m->foreign_work;
		m->foreign_work = 0;
	}

	if (handled > 1)
		m->swallow_nmi = true;
	if (!handled) {
		/* Foreign by the checks above: an ownerless NMI, or one whose work went early. */
		m->unclaimed++;
		if (b2b && m->swallow_nmi)
			m->swallowed++;
		else
			m->unknown++;
	}
}

static void deliver_nmi(struct model *m)
{
	bool b2b = !m->progress_since_nmi;
	bool more, ours, visible;

	m->v.nmi_pending--;
	more = m->v.nmi_pending || m->v.nmi_queued;
	ours = m->ref_owed && !more;
	m->ref_last_ours = ours;
	visible = sim_host_nmi_delivery(&m->v, more);
	MCHECK(m, !visible || ours, "the host attributed a delivery it did not owe");
	if (ours) {
		m->ref_owed = false;
		m->attributed++;
	} else {
		m->not_attributed++;
	}
	MCHECK(m, m->attributed <= m->v.acct.nmis, "%llu deliveries attributed to %llu injections",
	       (unsigned long long)m->attributed, (unsigned long long)m->v.acct.nmis);
	MCHECK(m, m->not_attributed <= m->foreign_nmis,
	       "%llu deliveries not pvprof's but only %llu foreign NMIs sent",
	       (unsigned long long)m->not_attributed, (unsigned long long)m->foreign_nmis);
	m->to_claim += visible;
	m->nmis_delivered++;
	if (m->in_nmi) {
		/*
		 * Nested in the handlers after an IRET: the entry code latches
		 * it and returns at once, with an IRET that ends its blocking.
		 */
		m->nested++;
		m->nmi_latched = true;
		return;
	}
	m->v.nmi_masked = true;
	m->progress_since_nmi = false;
	if (!b2b)
		m->swallow_nmi = false;
	m->in_nmi = true;
	do {
		m->nmi_latched = false;
		run_handlers(m, b2b);
		/* The run a nested NMI asks for sees the same registers. */
		b2b = true;
	} while (m->nmi_latched);
	m->in_nmi = false;
	MCHECK(m, m->to_claim == 0, "%llu deliveries attributed to pvprof left unclaimed",
	       (unsigned long long)m->to_claim);
}

/* Callchains the last drain emitted: in seq order, with the host's facts. */
static void check_new_callchains(struct model *m)
{
	struct pvprof_st_view sv;
	__u32 i;

	while (m->stream_pos < m->v.stream_len) {
		MCHECK(m, pvprof_st_decode(m->v.stream + m->stream_pos,
					   m->v.stream_len - m->stream_pos, &sv) == PVPROF_ST_OK,
		       "undecodable stream entry at %zu", m->stream_pos);
		m->stream_pos += sv.hdr.size;
		if (sv.hdr.type != PVPROF_ST_CALLCHAIN)
			continue;
		MCHECK(m, sv.u.callchain.chain.seq > m->last_seq &&
		       sv.u.callchain.chain.seq <= m->ref_reg_notices,
		       "callchain seq %llu after %llu",
		       (unsigned long long)sv.u.callchain.chain.seq,
		       (unsigned long long)m->last_seq);
		m->last_seq = sv.u.callchain.chain.seq;
		MCHECK(m, sv.u.callchain.notice_ip == m->of_seq[m->last_seq].ip,
		       "callchain of seq %llu carries another notice's IP",
		       (unsigned long long)m->last_seq);
		RCHECK(m, sv.u.callchain.sample_flags ==
		       (m->of_seq[m->last_seq].own_nmi ? PVPROF_ST_SAMPLE_F_OWN_NMI : 0) &&
		       sv.u.callchain.own_nmi_samples == m->of_seq[m->last_seq].folded,
		       "callchain of seq %llu: sample flags %u, %u folded; reference %d, %u",
		       (unsigned long long)m->last_seq, sv.u.callchain.sample_flags,
		       sv.u.callchain.own_nmi_samples, m->of_seq[m->last_seq].own_nmi,
		       m->of_seq[m->last_seq].folded);
		MCHECK(m, sv.nr_frames >= 1, "callchain without frames");
		for (i = 0; i < sv.nr_frames; i++)
			MCHECK(m, i < sv.u.callchain.chain.nr_kernel ?
			       pvprof_st_frame(&sv, i) >= PVPROF_KERNEL_HALF_START :
			       pvprof_st_frame(&sv, i) < PVPROF_USER_HALF_END,
			       "frame %u of seq %llu in the wrong half", i,
			       (unsigned long long)m->last_seq);
		RCHECK(m, (pvprof_st_frame(&sv, 0) == sv.u.callchain.notice_ip) ==
		       !(sv.u.callchain.chain.flags & PVPROF_CHAIN_F_SKEWED),
		       "skew flag disagrees with the frames");
	}
}

/*
 * A sample of guest code: the overflow handler fills the slot, folds a
 * sample of pvprof's own NMI path (masked after a delivery attributed to
 * pvprof) into the pending one, or counts a loss.
 */
static void overflow(struct model *m)
{
	bool user = chance(m, 40);
	__u64 ip = user ? UADDR(rnd(m) % 0x100000) : KADDR(rnd(m) % 0x100000);
	bool own_nmi = m->v.nmi_masked && m->ref_last_ours;
	bool full = m->v.slot_full;

	switch (sim_overflow(&m->v, ip, user ? 3 : 0)) {
	case SIM_SAMPLE_PENDING:
		MCHECK(m, !full, "a sample replaced the pending one");
		m->pending = (struct seq_ref){ .ip = ip, .own_nmi = own_nmi };
		return;
	case SIM_SAMPLE_FOLDED:
		RCHECK(m, full && own_nmi, "folded a sample %s",
		       full ? "outside pvprof's NMI path" : "into an empty slot");
		m->pending.folded++;
		m->ref_folded++;
		return;
	case SIM_SAMPLE_LOST:
		RCHECK(m, full && !own_nmi, "lost a sample of pvprof's NMI path");
		m->ref_samples++;
		m->ref_slot_busy++;
		return;
	}
}

/*
 * The host's work before an entry: the core's sequence
 * (spec pvprof-host-sequence), run by sim_host_entry() as the KVM module runs
 * it.  The reference model predicts each of its decisions from counts alone:
 * whether the pending sample waits or becomes a notice, whether the gate
 * injects or opens the NMI window, how many callchains the drain takes.
 */
static void host_work(struct model *m)
{
	const struct pvprof_vcpu_acct *a = &m->v.acct;
	bool held = m->v.nmi_queued || m->v.nmi_pending;
	bool masked = m->v.nmi_masked;
	bool busy = held || masked;
	bool registered = m->v.registered;
	bool pending = m->v.slot_full;
	bool gate_runs = registered && (pending || m->v.work.awaits_nmi_window);
	bool room = m->ref_unconsumed < PVPROF_NOTICE_SLOTS;
	__u64 notices = a->notices, nmis = a->nmis;
	__u64 windows = m->v.nmi_windows_opened;
	__u64 chain_tail = m->v.ring.chain_tail;
	bool waits, injected, opened;
	__u64 drained, lost_weight;

	sim_host_entry(&m->v);
	waits = m->v.slot_full;
	/* A lost sample counts the samples folded into it; a notice, itself. */
	lost_weight = 1 + (__u64)m->pending.folded;
	if (!registered) {
		MCHECK(m, !waits, "a sample waits without a registration");
		MCHECK(m, a->notices == notices, "notice written without a registration");
		if (pending) {
			m->ref_samples += lost_weight;
			m->ref_unregistered += lost_weight;
		}
		return;
	}
	RCHECK(m, m->v.registered, "the host dropped an honest guest's registration");
	if (!m->v.registered)
		return;		/* a hostile guest's buffer is gone */
	RCHECK(m, waits == (pending && m->ref_unconsumed && busy),
	       "the sample %s with %llu unconsumed", waits ? "waits" : "goes on",
	       (unsigned long long)m->ref_unconsumed);
	if (pending && !waits) {
		bool wrote = a->notices != notices;

		RCHECK(m, wrote == room, "notice %s with %llu unconsumed",
		       wrote ? "written" : "refused", (unsigned long long)m->ref_unconsumed);
		if (wrote) {
			m->ref_samples++;
			m->ref_notices++;
			m->ref_reg_notices++;
			m->ref_unconsumed++;
			MCHECK(m, m->ref_reg_notices < MAX_SEQ, "model seq table too small");
			m->of_seq[m->ref_reg_notices] = m->pending;
		} else {
			m->ref_samples += lost_weight;
			m->ref_ring_full += lost_weight;
		}
	}

	/* The gate runs after the notice: it injects for the new one too. */
	if (gate_runs && !busy)
		m->ref_owed = false;
	injected = a->nmis != nmis;
	RCHECK(m, injected == (gate_runs && m->ref_unconsumed && !busy),
	       "gate %s an NMI (unconsumed %llu, owed %d, sample %s)",
	       injected ? "injected" : "withheld", (unsigned long long)m->ref_unconsumed,
	       m->ref_owed, pending ? "pending" : "none");
	if (injected) {
		m->ref_owed = true;
		m->ref_nmis++;
	}
	/* Only the guest's handler keeps notices waiting for an NMI. */
	opened = m->v.nmi_windows_opened != windows;
	RCHECK(m, opened == (gate_runs && m->ref_unconsumed && masked && !held),
	       "NMI window %s with %llu unconsumed, masked %d, held %d",
	       opened ? "opened" : "not opened",
	       (unsigned long long)m->ref_unconsumed, masked, held);

	/* The drain comes last, and takes every callchain posted. */
	drained = m->v.ring.chain_tail - chain_tail;
	RCHECK(m, drained == m->ref_in_ring, "drained %llu, reference %llu",
	       (unsigned long long)drained, (unsigned long long)m->ref_in_ring);
	m->ref_callchains += m->ref_ring_callchains;
	m->ref_stale += m->ref_in_ring - m->ref_ring_callchains;
	m->ref_reg_answered += m->ref_in_ring;
	m->ref_in_ring = 0;
	m->ref_ring_callchains = 0;
	check_new_callchains(m);
}

/*
 * An exit of the running vCPU, with or without a sample.  The host's work
 * runs when KVM_REQ_PVPROF is raised (by the overflow handler, or after
 * the exit while a sample is pending or the gate awaits the NMI window:
 * __kvm_pvprof_vcpu_exited()), and on p_drain percent of the other exits
 * (KVM_RUN returning to user space).  Then KVM processes NMIs and, when
 * the guest can take one, delivers.
 */
static void entry(struct model *m, bool with_sample)
{
	if (!m->running)
		return;
	if (with_sample)
		overflow(m);
	if (with_sample || m->v.slot_full || m->v.work.awaits_nmi_window ||
	    chance(m, m->p.p_drain))
		host_work(m);
	process_nmi(m);
	if (!m->v.nmi_masked && m->v.nmi_pending)
		deliver_nmi(m);
}

/*
 * The guest's IRET at the end of its NMI handlers.  KVM exits there when
 * it holds an NMI (its own NMI window) or pvprof opened the window; the
 * entry after it delivers a pending NMI at once, at the same RIP.
 */
static void iret(struct model *m)
{
	m->v.nmi_masked = false;
	if (m->v.nmi_window) {
		m->v.nmi_window = false;
		m->window_exits++;
	} else if (!m->v.nmi_pending) {
		return;
	}
	entry(m, false);
}

/* A hostile or broken guest writes whatever it likes into its buffer. */
static void scribble(struct model *m)
{
	struct pvprof_buf_header *h = (struct pvprof_buf_header *)m->v.buf;
	const struct pvprof_geometry *geo = &m->v.gb.geo;
	struct pvprof_callchain *chain;
	__u32 i;

	switch (rnd(m) % 9) {
	case 0:
		h->notice_tail += rnd(m) % 81 - 40;
		break;
	case 1:
		h->chain_head += rnd(m) % 21 - 10;
		break;
	case 2:		/* flip bits in a posted or unposted callchain */
		m->v.buf[pvprof_callchain_offset(geo, rnd(m)) + rnd(m) % 64] ^= 1 << (rnd(m) % 8);
		break;
	case 3:		/* post a forged callchain: replayed, future or malformed */
		chain = (struct pvprof_callchain *)(m->v.buf + pvprof_callchain_offset(geo, h->chain_head));
		pvprof_callchain_init(chain, h->notice_tail + rnd(m) % 5 - 2, rnd(m) % 128);
		chain->nr_kernel = rnd(m) % 4;
		chain->nr_user = rnd(m) % 3;
		for (i = 0; i < 7U; i++)
			pvprof_callchain_frames(chain)[i] = rnd(m) % 2 ? KADDR(i) : UADDR(i);
		chain->size = rnd(m) % 4 ? pvprof_callchain_bytes(chain->nr_kernel + chain->nr_user) :
			    (__u16)rnd(m);
		h->chain_head++;
		break;
	case 4:		/* overwrite the host's lines */
		h->notice_head = rnd(m) % 2 ? rnd(m) : h->notice_head + 33;
		break;
	case 5:
		h->chain_tail += rnd(m) % 9 - 4;
		break;
	case 6:		/* reused the memory: the host must stop writing */
		h->cookie ^= 1;
		break;
	case 7:
		h->guest_errors = rnd(m);
		h->reserved2[rnd(m) % sizeof(h->reserved2)] = (__u8)rnd(m);
		break;
	case 8:		/* the guest unregisters and starts over */
		if (m->v.registered)
			host_drop(m);
		break;
	}
}

static void step(struct model *m)
{
	int total = m->p.p_sample + m->p.p_foreign + m->p.p_ownerless + m->p.p_progress +
		    m->p.p_iret + m->p.p_sched + m->p.p_exit + m->p.p_drop;
	int r = (int)(rnd(m) % total);

	if (m->p.hostile && chance(m, m->p.hostile))
		scribble(m);
	if ((r -= m->p.p_sample) < 0) {
		/* A sample of guest code: entry() does nothing unless the vCPU runs. */
		entry(m, true);
	} else if ((r -= m->p.p_foreign) < 0) {
		m->foreign_work++;
		m->foreign_raised++;
		m->foreign_nmis++;
		m->v.nmi_queued++;
		entry(m, false);		/* the kick makes the vCPU exit */
	} else if ((r -= m->p.p_ownerless) < 0) {
		m->foreign_nmis++;
		m->v.nmi_queued++;
		entry(m, false);
	} else if ((r -= m->p.p_progress) < 0) {
		if (m->running && !m->v.nmi_masked) {
			m->progress_since_nmi = true;
			/* The guest's periodic QUERY finds the host dropped it. */
			if (!m->v.registered)
				m->want_register = true;
			if (m->want_register && !m->v.nmi_pending && !m->v.nmi_queued)
				do_register(m);
		}
	} else if ((r -= m->p.p_iret) < 0) {
		if (m->running && m->v.nmi_masked)
			iret(m);
	} else if ((r -= m->p.p_sched) < 0) {
		m->running = !m->running;
		entry(m, false);
	} else if ((r -= m->p.p_exit) < 0) {
		entry(m, false);
	} else if (m->v.registered) {
		host_drop(m);
	}
	check_books(m);
}

/* Stop the sources and let the protocol settle: nothing may stay stuck. */
static void settle(struct model *m)
{
	int i;

	m->running = true;
	m->p.p_drain = 100;
	for (i = 0; i < 1000; i++) {
		if (m->want_register && !m->v.nmi_masked && !m->v.nmi_pending)
			do_register(m);
		entry(m, false);
		if (m->v.nmi_masked)
			iret(m);
		m->progress_since_nmi = true;
		check_books(m);
		if (!m->v.slot_full && !m->ref_unconsumed && !m->ref_in_ring &&
		    !m->v.nmi_pending && !m->v.nmi_queued && !m->v.nmi_masked &&
		    !m->foreign_work && !m->want_register)
			break;
	}
	MCHECK(m, i < 1000, "protocol did not settle: %llu unconsumed, %u NMIs pending",
	       (unsigned long long)m->ref_unconsumed, m->v.nmi_pending);
	MCHECK(m, m->foreign_handled == m->foreign_raised, "foreign NMI work lost");
	MCHECK(m, !m->v.ring.nmi_owed && m->v.nmis_attributed == m->v.acct.nmis,
	       "%llu of %llu pvprof NMIs delivered after settling",
	       (unsigned long long)m->v.nmis_attributed, (unsigned long long)m->v.acct.nmis);
}

static void check_stream(struct model *m)
{
	struct pvprof_st_iter it;
	struct pvprof_st_view sv;
	__u64 callchains = 0, losses[PVPROF_LOSS_NR] = { 0 };
	unsigned int i;

	pvprof_st_iter_init(&it, m->v.stream, m->v.stream_len);
	while (pvprof_st_iter_next(&it, &sv) == PVPROF_ST_OK) {
		if (sv.hdr.type == PVPROF_ST_LOSS)
			losses[sv.u.loss.reason] += sv.u.loss.count;
		else if (sv.hdr.type == PVPROF_ST_CALLCHAIN)
			callchains++;
	}
	MCHECK(m, it.status == PVPROF_ST_OK, "stream decode: %s",
	       pvprof_st_status_name(it.status));
	MCHECK(m, callchains == m->v.acct.callchains, "stream has %llu callchains, host %llu",
	       (unsigned long long)callchains, (unsigned long long)m->v.acct.callchains);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		MCHECK(m, losses[i] == m->v.acct.losses[i], "stream reports %llu %s, host %llu",
		       (unsigned long long)losses[i], pvprof_loss_name(i),
		       (unsigned long long)m->v.acct.losses[i]);
}

static void run_model(struct params p)
{
	static const __u32 sizes[] = { 8192, 16384, 32768, 65536 };
	struct model *m = calloc(1, sizeof(*m));
	const struct pvprof_vcpu_acct *a;
	int drain;

	ck_assert_ptr_nonnull(m);
	m->p = p;
	m->rng = p.seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!m->p.size)
		m->p.size = sizes[rnd(m) % 4];
	if (!m->p.p_drain)
		m->p.p_drain = 20 + rnd(m) % 81;
	if (p.randomize) {
		m->p.p_iret = 1 + rnd(m) % 30;
		m->p.p_foreign = rnd(m) % 30;
		m->p.p_ownerless = rnd(m) % 10;
		m->p.p_sched = rnd(m) % 8;
		m->p.p_drop = rnd(m) % 3 == 0;
		m->p.p_fault = rnd(m) % 2 ? (int)(rnd(m) % 25) : 0;
	}
	drain = m->p.p_drain;
	m->of_seq = calloc(MAX_SEQ, sizeof(*m->of_seq));
	ck_assert_ptr_nonnull(m->of_seq);
	m->running = true;
	sim_init(&m->v, 0);
	do_register(m);

	for (m->step = 0; m->step < p.steps; m->step++)
		step(m);
	if (!p.hostile)
		settle(m);
	host_drop(m);
	m->want_register = false;
	check_books(m);

	a = &m->v.acct;
	MCHECK(m, a->notices == pvprof_acct_notice_outcomes(a),
	       "books do not balance after the registration ended");
	RCHECK(m, a->losses[PVPROF_LOSS_UNANSWERED] == m->ref_unanswered_closed,
	       "unanswered %llu, reference %llu",
	       (unsigned long long)a->losses[PVPROF_LOSS_UNANSWERED],
	       (unsigned long long)m->ref_unanswered_closed);
	check_stream(m);
	/* Only another source's NMIs may be reported as unknown. */
	MCHECK(m, m->foreign_nmis || !m->unknown, "%llu unknown NMIs without a foreign one",
	       (unsigned long long)m->unknown);
	/* The run must have exercised what it claims to test. */
	MCHECK(m, a->notices > 100 && (p.hostile || a->callchains > 50), "too little traffic");
	MCHECK(m, p.hostile || m->window_exits, "no exit through an NMI window");
	MCHECK(m, !p.expect_merges || (m->nested && m->merged && m->swallowed),
	       "no NMI nested, merged and swallowed");
	if (p.hostile) {
		__u64 rejects = 0;
		unsigned int i;

		for (i = 0; i < PVPROF_REJ_NR; i++)
			rejects += a->rejects[i];
		MCHECK(m, rejects && a->losses[PVPROF_LOSS_INVALID] &&
		       m->v.identity_drops && a->callchains,
		       "the hostile guest did not provoke rejections, drops and successes");
		printf("  hostile: %llu rejected callchains or indices, %llu invalid, "
		       "%llu registrations dropped (%llu samples lost as buffer_gone)\n",
		       (unsigned long long)rejects,
		       (unsigned long long)a->losses[PVPROF_LOSS_INVALID],
		       (unsigned long long)m->v.identity_drops,
		       (unsigned long long)a->losses[PVPROF_LOSS_BUFFER_GONE]);
	}
	RCHECK(m, m->foreign_raised == 0 || m->foreign_handled == m->foreign_raised,
	       "foreign NMI work lost");

	printf("  seed %-4llu size %5u drain %3d%% iret %2d foreign %2d: samples %llu notices %llu callchains %llu "
	       "stale %llu unanswered %llu ring_full %llu unregistered %llu nmis %llu "
	       "delivered %llu (pvprof %llu) foreign %llu unclaimed %llu swallowed %llu unknown %llu "
	       "faults %llu nested %llu merged %llu window_exits %llu slot_busy %llu folded %llu\n",
	       (unsigned long long)p.seed, m->p.size, drain, m->p.p_iret, m->p.p_foreign,
	       (unsigned long long)a->samples, (unsigned long long)a->notices,
	       (unsigned long long)a->callchains,
	       (unsigned long long)a->losses[PVPROF_LOSS_STALE],
	       (unsigned long long)a->losses[PVPROF_LOSS_UNANSWERED],
	       (unsigned long long)a->losses[PVPROF_LOSS_NOTICE_RING_FULL],
	       (unsigned long long)a->losses[PVPROF_LOSS_UNREGISTERED],
	       (unsigned long long)a->nmis, (unsigned long long)m->nmis_delivered,
	       (unsigned long long)m->attributed, (unsigned long long)m->foreign_nmis,
	       (unsigned long long)m->unclaimed, (unsigned long long)m->swallowed,
	       (unsigned long long)m->unknown, (unsigned long long)m->faults,
	       (unsigned long long)m->nested, (unsigned long long)m->merged,
	       (unsigned long long)m->window_exits,
	       (unsigned long long)a->losses[PVPROF_LOSS_SLOT_BUSY],
	       (unsigned long long)m->ref_folded);
	fflush(stdout);
	free(m->of_seq);
	sim_free(&m->v);
	free(m);
}

static struct params base_params(__u64 seed)
{
	struct params p = {
		.seed = seed, .steps = 20000, .p_sample = 30, .p_foreign = 8, .p_ownerless = 2,
		.p_progress = 30, .p_iret = 20, .p_sched = 2, .p_exit = 10,
	};

	return p;
}

START_TEST(model_random_seeds)
{
	struct params p = base_params(1000 + (__u64)_i);

	p.randomize = true;
	run_model(p);
}
END_TEST

START_TEST(model_long_handlers_fill_the_ring)
{
	/*
	 * IRET rarely: samples pile up while the guest sits in its handler.
	 * Each handler's run answers a few notices at most: twice the steps.
	 */
	struct params p = base_params(7);

	p.steps *= 2;
	p.p_iret = 1;
	p.p_sample = 60;

	run_model(p);
}
END_TEST

START_TEST(model_foreign_nmi_storm)
{
	struct params p = base_params(11);

	p.p_foreign = 60;

	run_model(p);
}
END_TEST

START_TEST(model_small_chain_ring_slow_host)
{
	/*
	 * The smallest ring, and a host that passes only when asked: the
	 * kernel's work always drains, so "slow" is now only as slow as it
	 * can be (no pass on exits without a request).
	 */
	struct params p = base_params(13);

	p.size = 8192;
	p.p_drain = 5;
	p.p_iret = 40;

	run_model(p);
}
END_TEST

START_TEST(model_guest_often_descheduled)
{
	struct params p = base_params(17);

	p.p_sched = 25;

	run_model(p);
}
END_TEST

START_TEST(model_host_drops_registration)
{
	struct params p = base_params(19);

	p.p_drop = 1;

	run_model(p);
}
END_TEST

START_TEST(model_exceptions_in_nmi_handlers)
{
	/*
	 * pvprof alone: IRETs inside the handlers let NMIs nest, and not one
	 * may be reported as unknown.
	 */
	struct params p = base_params(29);

	p.p_foreign = 0;
	p.p_ownerless = 0;
	p.p_fault = 30;
	p.expect_merges = true;

	run_model(p);
}
END_TEST

START_TEST(model_hostile_guest)
{
	/* Only the identities and the host's own guarantees must hold. */
	struct params p = base_params(23 + (__u64)_i);

	p.hostile = 5;
	p.size = 8192 << _i;
	run_model(p);
}
END_TEST

#define MODEL_SEEDS	8

/* Every case with an honest guest, where the reference model predicts all. */
static void add_honest_cases(Suite *s)
{
	static char names[MODEL_SEEDS][32];
	int i;

	for (i = 0; i < MODEL_SEEDS; i++) {
		TCase *tc;

		snprintf(names[i], sizeof(names[i]), "model_seed_%d", 1000 + i);
		tc = tcase_create(names[i]);
		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, model_random_seeds, i, i + 1);
		suite_add_tcase(s, tc);
	}
	PVPROF_ADD_TEST(s, model_long_handlers_fill_the_ring);
	PVPROF_ADD_TEST(s, model_foreign_nmi_storm);
	PVPROF_ADD_TEST(s, model_small_chain_ring_slow_host);
	PVPROF_ADD_TEST(s, model_guest_often_descheduled);
	PVPROF_ADD_TEST(s, model_host_drops_registration);
	PVPROF_ADD_TEST(s, model_exceptions_in_nmi_handlers);
}

Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	int i;

	add_honest_cases(s);
	for (i = 0; i < 2; i++) {
		TCase *tc = tcase_create(i ? "model_hostile_guest_large" : "model_hostile_guest");

		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, model_hostile_guest, 3 * i, 3 * i + 1);
		suite_add_tcase(s, tc);
	}
	return s;
}

/*
 * The cases model_misorder_main.c expects to fail against a host sequence
 * in the wrong order.  With a hostile guest the reference model's
 * predictions are void and only the identities and the host's own
 * guarantees are checked, which a late NMI does not break: those cases
 * are left out.
 */
Suite *model_misorder_suite(void)
{
	Suite *s = suite_create("model_misorder");

	add_honest_cases(s);
	return s;
}
