// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile guests (issue #4, spec pvprof-invalid-indices,
 * spec pvprof-callchain-drain and spec pvprof-losses): each case runs one
 * misbehaving guest against the sampling host, then checks that
 *   - what it did was dropped and counted with the right loss reason,
 *   - the books balance once the vCPU is quiescent
 *     (samples == notices + sample losses,
 *      notices == callchains + stale + invalid + unanswered),
 *   - every callchain the stream carries passes the callchain rules,
 *   - the host is unharmed: the same vCPU then registers again, behaves,
 *     and gets its callchains accepted, and the stream ends with end of file
 *     after LOSS entries that add up to the final counters.
 *
 * The guest runs in ticks (GUEST_SYNC about every 10 ms) so that the host
 * can watch STATUS while it samples and decide when a phase is over; the
 * host steers the guest by writing its globals in guest memory.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/host.h"
#include "core/ring.h"

enum { STAGE_TICK = 1, STAGE_QUIESCED, STAGE_REREGISTERED, STAGE_END };

#define BUF_GPA		0x300000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define TICK_CYCLES	(20ULL * 1000 * 1000)
#define PHASE_SECONDS	60

enum hostile_mode {
	M_NORMAL,
	M_SIZE_ABSURD,		/* sizes 0, 8, 0xffff, inconsistent, 0xffff frames */
	M_DEPTH_ABSURD,		/* 121 frames, over PVPROF_MAX_DEPTH */
	M_DEPTH_OVER_CONFIG,	/* 9 frames where ENABLE allowed 8 */
	M_SEQ_DUPLICATE,	/* a valid callchain, then the same seq again */
	M_SEQ_FUTURE,		/* a seq the host never wrote */
	M_SEQ_ZERO,
	M_CHAIN_HEAD_GARBAGE,	/* chain_head far ahead of chain_tail */
	M_NOTICE_TAIL_GARBAGE,	/* notice_tail ahead of notice_head */
	M_IGNORE,		/* notices never answered, tail never moves */
	M_GUEST_ZEROES,		/* buffer zeroed after registration */
	M_GUEST_COOKIE,		/* cookie overwritten after registration */
	M_VMM_OVERWRITES,	/* user space overwrites the whole buffer */
	M_SCRIBBLE_HOST_LINES,	/* garbage in the host-written lines */
	M_FLIPPED,		/* a host thread flips callchain and index bytes */
};

/* Guest globals; the host writes them in guest memory (guest_var()). */
static volatile uint32_t g_mode;
static volatile uint32_t g_stop;
static volatile uint32_t g_live;
static volatile uint64_t g_answered;
static uint64_t g_tail, g_rhead;

static struct pvprof_buf_header *const hdr = (void *)BUF_GPA;

static struct pvprof_callchain *chain_slot(uint64_t index)
{
	struct pvprof_geometry geo;

	pvprof_geometry_init(&geo, BUF_SIZE);
	return (struct pvprof_callchain *)((uint8_t *)hdr +
					pvprof_callchain_offset(&geo, index));
}

static uint32_t chain_slots(void)
{
	struct pvprof_geometry geo;

	pvprof_geometry_init(&geo, BUF_SIZE);
	return geo.chain_slots;
}

/* A callchain the host accepts: one kernel frame, the interrupted RIP. */
static void chain_build(struct pvprof_callchain *chain, uint64_t seq, uint64_t rip,
			 uint16_t frames)
{
	uint16_t i;

	memset(chain, 0, sizeof(*chain));
	chain->seq = seq;
	chain->flags = PVPROF_CHAIN_F_KTHREAD;
	chain->nr_kernel = frames;
	chain->size = sizeof(*chain) + 8 * frames;
	for (i = 0; i < frames; i++)
		pvprof_callchain_frames(chain)[i] = PVPROF_KERNEL_HALF_START + rip + i;
}

/* Make the callchain break one rule, per mode; @n cycles through variants. */
static void chain_corrupt(struct pvprof_callchain *chain, uint32_t mode, uint64_t n,
			   uint64_t rip)
{
	switch (mode) {
	case M_SIZE_ABSURD:
		switch (n % 5) {
		case 0: chain->size = 0; break;
		case 1: chain->size = 8; break;
		case 2: chain->size = 0xffff; break;
		case 3: chain->size += 8; break;
		default: chain->nr_kernel = 0xffff; chain->nr_user = 0xffff; break;
		}
		break;
	case M_DEPTH_ABSURD:
		chain_build(chain, chain->seq, rip, PVPROF_MAX_DEPTH + 1);
		break;
	case M_DEPTH_OVER_CONFIG:
		chain_build(chain, chain->seq, rip, 9);
		break;
	case M_SEQ_FUTURE:
		chain->seq += 1000 + n;
		break;
	case M_SEQ_ZERO:
		chain->seq = 0;
		break;
	}
}

static void hostile_nmi(struct ex_regs *regs)
{
	uint32_t mode = g_mode;
	const struct pvprof_notice *newest;
	uint64_t head, rtail, published;
	struct pvprof_callchain *chain;

	if (!g_live || mode == M_IGNORE)
		return;
	head = pvprof_load_acquire(&hdr->notice_head);
	if (head == g_tail)
		return;
	if (head - g_tail > PVPROF_NOTICE_SLOTS) {
		g_tail = head;
		pvprof_store_release(&hdr->notice_tail, head);
		return;
	}
	newest = (const void *)((uint8_t *)hdr + pvprof_notice_offset(head - 1));
	rtail = pvprof_load_acquire(&hdr->chain_tail);
	if (g_rhead - rtail + 2 <= chain_slots()) {
		chain = chain_slot(g_rhead++);
		chain_build(chain, newest->seq, regs->rip, 1);
		chain_corrupt(chain, mode, g_answered, regs->rip);
		if (mode == M_SEQ_DUPLICATE) {
			chain = chain_slot(g_rhead++);
			chain_build(chain, newest->seq, regs->rip, 1);
		}
		published = g_rhead;
		if (mode == M_CHAIN_HEAD_GARBAGE)
			published += 1ULL << 40;
		pvprof_store_release(&hdr->chain_head, published);
	}
	g_tail = head;
	pvprof_store_release(&hdr->notice_tail,
			     mode == M_NOTICE_TAIL_GARBAGE ? head + 1000 : head);
	g_answered++;

	if (mode == M_GUEST_ZEROES && g_answered == 10) {
		g_live = 0;
		memset(hdr, 0, BUF_SIZE);
	} else if (mode == M_GUEST_COOKIE && g_answered == 10) {
		g_live = 0;
		hdr->cookie ^= 1;
	} else if (mode == M_SCRIBBLE_HOST_LINES) {
		/*
		 * Everything the host writes except magic, cookie and
		 * chain_tail: the host rewrites chain_tail only when it
		 * drains, so a guest that scribbles it stalls its own callchain
		 * ring (it hurts only itself, spec pvprof-invalid-indices).
		 */
		hdr->size = 3;
		hdr->max_depth = 0;
		hdr->reserved0[0] = 0xff;
		hdr->state = 0xdead;
		hdr->period = ~0ULL;
		hdr->notice_head = ~0ULL;
		hdr->nmi_head = 7;
		hdr->reserved1[3] = 0xff;
	}
}

static void guest_register(void)
{
	memset(hdr, 0, BUF_SIZE);
	g_tail = 0;
	g_rhead = 0;
	/*
	 * Live before REGISTER returns: the host's first NMI may arrive right
	 * after the hypercall, and the gate sends no other until it is
	 * answered.  A zeroed buffer has no notice for an early NMI.
	 */
	g_live = 1;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
}

static void guest_ticks(void)
{
	while (!g_stop) {
		uint64_t start = guest_rdtsc();

		while (guest_rdtsc() - start < TICK_CYCLES)
			__asm__ volatile("pause");
		/*
		 * Flipped indices stall the rings (the host sends no NMI for a
		 * garbage notice_tail): publish the private ones again, as a
		 * guest that re-checks its buffer would.
		 */
		if (g_mode == M_FLIPPED && g_live) {
			pvprof_store_release(&hdr->chain_head, g_rhead);
			pvprof_store_release(&hdr->notice_tail, g_tail);
		}
		GUEST_SYNC(STAGE_TICK);
	}
	g_stop = 0;
}

/* Leave the buffer (UNREGISTER unless the host already dropped it). */
static void guest_quiesce(void)
{
	int64_t query = pvprof_hypercall(PVPROF_OP_QUERY, BUF_GPA, 0, 0);

	g_live = 0;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC_ARGS(STAGE_QUIESCED, query, g_answered, 0);
}

static void guest_code(void)
{
	guest_register();
	guest_ticks();
	guest_quiesce();

	/* Host unharmed: the same vCPU registers again and behaves. */
	guest_register();
	GUEST_SYNC(STAGE_REREGISTERED);
	guest_ticks();
	guest_quiesce();
	GUEST_DONE();
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* The flipper: what a second vCPU or the VMM could do at any moment. */
struct flipper {
	uint8_t *buf;
	atomic_bool stop;
	uint64_t flips;
};

static void *flip_bytes(void *arg)
{
	struct flipper *f = arg;
	unsigned int seed = 1;

	while (!atomic_load(&f->stop)) {
		uint32_t r = rand_r(&seed);
		/* Callchain slots (pages 1..3) mostly, line 2's indices sometimes. */
		uint32_t off = (r & 7) ? PVPROF_PAGE_SIZE +
			       (r >> 3) % (BUF_SIZE - PVPROF_PAGE_SIZE) :
			       offsetof(struct pvprof_buf_header, notice_tail) + (r >> 3) % 16;

		f->buf[off] ^= (uint8_t)(1u << (r % 8)) | 0x80;
		f->flips++;
		/* L1 may have one CPU: leave the vCPU thread most of it. */
		if ((f->flips & 63) == 0)
			usleep(100);
	}
	return NULL;
}

struct hostile_case {
	enum hostile_mode mode;
	uint32_t max_depth;
};

/* Is the hostile phase over: enough of what the case is about seen. */
static bool phase_done(enum hostile_mode mode, const struct pvprof_vcpu_status *vs)
{
	switch (mode) {
	case M_SIZE_ABSURD:
	case M_DEPTH_ABSURD:
	case M_DEPTH_OVER_CONFIG:
	case M_SEQ_FUTURE:
	case M_SEQ_ZERO:
		return vs->losses[PVPROF_LOSS_INVALID] >= 20;
	case M_SEQ_DUPLICATE:
		return vs->losses[PVPROF_LOSS_INVALID] >= 10 && vs->callchains >= 10;
	case M_CHAIN_HEAD_GARBAGE:
		return vs->notices >= 60;
	case M_NOTICE_TAIL_GARBAGE:
	case M_IGNORE:
		return vs->losses[PVPROF_LOSS_NOTICE_RING_FULL] >= 20;
	case M_GUEST_ZEROES:
	case M_GUEST_COOKIE:
	case M_VMM_OVERWRITES:
		return !vs->registered && vs->losses[PVPROF_LOSS_UNREGISTERED] >= 5;
	case M_SCRIBBLE_HOST_LINES:
		return vs->callchains >= 40;
	case M_FLIPPED:
		return vs->notices >= 200;
	case M_NORMAL:
		break;
	}
	return vs->callchains >= 20;
}

/* Run ticks until @done, or fail after PHASE_SECONDS; then stop the ticks. */
static void run_phase(struct kvm_vm *vm, struct kvm_vcpu *vcpu,
		      enum hostile_mode mode, uint64_t base_callchains,
		      struct pvprof_vcpu_status *vs)
{
	uint64_t deadline = now_s() + PHASE_SECONDS;
	bool overwritten = false;
	struct ucall uc;

	for (;;) {
		vcpu_run_expect_sync(vcpu, STAGE_TICK, &uc);
		pvprof_vcpu_status(vm, 1, 0, vs);
		if (mode == M_VMM_OVERWRITES && !overwritten && vs->callchains >= 10) {
			guest_var(vm, g_live) = 0;
			memset(vm->mem + BUF_GPA, 0xa5, BUF_SIZE);
			overwritten = true;
		}
		if (mode == M_NORMAL ? vs->callchains >= base_callchains + 20 :
		    phase_done(mode, vs))
			break;
		if (now_s() > deadline) {
			pvprof_print_books("at the deadline", vs);
			TEST_FAIL("phase (mode %u) not over after %d s", mode,
				  PHASE_SECONDS);
		}
	}
	guest_var(vm, g_stop) = 1;
}

/* What the hostile phase must have left in the books. */
static void check_hostile_books(enum hostile_mode mode,
				const struct pvprof_vcpu_status *vs,
				uint64_t query, const struct pvprof_stream_counts *sc)
{
	switch (mode) {
	case M_SIZE_ABSURD:
	case M_DEPTH_ABSURD:
	case M_DEPTH_OVER_CONFIG:
	case M_SEQ_FUTURE:
	case M_SEQ_ZERO:
		TEST_ASSERT_EQ(vs->callchains, 0);
		TEST_ASSERT(vs->losses[PVPROF_LOSS_INVALID] >= 20, "invalid %llu",
			    (unsigned long long)vs->losses[PVPROF_LOSS_INVALID]);
		break;
	case M_SEQ_DUPLICATE:
		/* Each duplicate resolves the next notice as invalid. */
		TEST_ASSERT(vs->callchains >= 10 && vs->losses[PVPROF_LOSS_INVALID] >= 10,
			    "callchains %llu, invalid %llu",
			    (unsigned long long)vs->callchains,
			    (unsigned long long)vs->losses[PVPROF_LOSS_INVALID]);
		break;
	case M_CHAIN_HEAD_GARBAGE:
		TEST_ASSERT_EQ(vs->callchains, 0);
		TEST_ASSERT_EQ(vs->losses[PVPROF_LOSS_INVALID], 0);
		TEST_ASSERT_EQ(vs->losses[PVPROF_LOSS_UNANSWERED], vs->notices);
		break;
	case M_NOTICE_TAIL_GARBAGE:
		/* The first notice was answered; nothing after the garbage. */
		TEST_ASSERT(vs->callchains <= 1 && vs->nmis <= 1,
			    "callchains %llu, nmis %llu after a garbage notice_tail",
			    (unsigned long long)vs->callchains,
			    (unsigned long long)vs->nmis);
		TEST_ASSERT(vs->losses[PVPROF_LOSS_NOTICE_RING_FULL] >= 20, "ring full %llu",
			    (unsigned long long)vs->losses[PVPROF_LOSS_NOTICE_RING_FULL]);
		break;
	case M_IGNORE:
		TEST_ASSERT_EQ(vs->notices, PVPROF_NOTICE_SLOTS);
		/*
		 * The gate injects again after each delivery
		 * (spec pvprof-host-sequence).
		 */
		TEST_ASSERT(vs->nmis >= 1, "no pvprof NMI");
		TEST_ASSERT_EQ(vs->losses[PVPROF_LOSS_UNANSWERED], PVPROF_NOTICE_SLOTS);
		break;
	case M_GUEST_ZEROES:
	case M_GUEST_COOKIE:
	case M_VMM_OVERWRITES:
		TEST_ASSERT_EQ(query, PVPROF_QUERY_UNREGISTERED);
		TEST_ASSERT_EQ(sc->dropped, 1);
		TEST_ASSERT_EQ(sc->unregistered, 0);
		TEST_ASSERT(vs->callchains >= 9, "callchains %llu before the buffer went",
			    (unsigned long long)vs->callchains);
		break;
	case M_SCRIBBLE_HOST_LINES:
		TEST_ASSERT_EQ(vs->losses[PVPROF_LOSS_INVALID], 0);
		TEST_ASSERT(vs->callchains >= 40, "callchains %llu",
			    (unsigned long long)vs->callchains);
		break;
	case M_FLIPPED:
	case M_NORMAL:
		break;
	}
	if (mode != M_GUEST_ZEROES && mode != M_GUEST_COOKIE &&
	    mode != M_VMM_OVERWRITES) {
		TEST_ASSERT_EQ(query, PVPROF_QUERY_REGISTERED);
		TEST_ASSERT_EQ(sc->unregistered, 1);
		TEST_ASSERT_EQ(sc->dropped, 0);
	}
}

static void run_hostile(const struct hostile_case *hc, const char *name)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
		.max_depth = hc->max_depth,
	};
	struct pvprof_stream_counts sc = { 0 };
	struct pvprof_vcpu_status vs, hostile;
	struct flipper flipper = { 0 };
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	pthread_t flip_thread;
	unsigned int r;
	struct ucall uc;
	int stream_fd;

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, NMI_VECTOR, hostile_nmi);
	guest_var(vm, g_mode) = hc->mode;
	/* Before the guest registers: the registration takes max_depth. */
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);

	if (hc->mode == M_FLIPPED) {
		/* After REGISTER, which refuses a buffer with indices set. */
		vcpu_run_expect_sync(vcpu, STAGE_TICK, &uc);
		flipper.buf = vm->mem + BUF_GPA;
		TEST_ASSERT(!pthread_create(&flip_thread, NULL, flip_bytes, &flipper),
			    "pthread_create");
	}
	run_phase(vm, vcpu, hc->mode, 0, &vs);
	if (hc->mode == M_FLIPPED) {
		atomic_store(&flipper.stop, true);
		pthread_join(flip_thread, NULL);
		fprintf(stderr, "# measured: %s: %llu bytes flipped\n", name,
			(unsigned long long)flipper.flips);
	}
	pvprof_disable(vm);
	vcpu_run_expect_sync(vcpu, STAGE_QUIESCED, &uc);
	pvprof_vcpu_status(vm, 1, 0, &hostile);
	pvprof_stream_read(stream_fd, &sc, false);
	pvprof_print_books(name, &hostile);
	pvprof_assert_books(&hostile, "after the hostile phase");
	TEST_ASSERT(sc.callchains + hostile.losses[PVPROF_LOSS_STREAM_OVERFLOW] ==
		    hostile.callchains, "stream callchains %llu, accepted %llu",
		    (unsigned long long)sc.callchains,
		    (unsigned long long)hostile.callchains);
	check_hostile_books(hc->mode, &hostile, uc.args[1], &sc);

	/* The host is unharmed: a well-behaved registration works again. */
	guest_var(vm, g_mode) = M_NORMAL;
	pvprof_enable(vm, &en);
	vcpu_run_expect_sync(vcpu, STAGE_REREGISTERED, &uc);
	run_phase(vm, vcpu, M_NORMAL, hostile.callchains, &vs);
	pvprof_disable(vm);
	vcpu_run_expect_sync(vcpu, STAGE_QUIESCED, &uc);
	TEST_ASSERT_EQ(uc.args[1], PVPROF_QUERY_REGISTERED);
	vcpu_run_expect_done(vcpu);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	pvprof_assert_books(&vs, "after the well-behaved phase");
	TEST_ASSERT(vs.callchains >= hostile.callchains + 20, "callchains %llu after %llu",
		    (unsigned long long)vs.callchains,
		    (unsigned long long)hostile.callchains);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_INVALID],
		       hostile.losses[PVPROF_LOSS_INVALID]);

	/* End of file after the last callchains once the VM is gone. */
	vcpu_release(vcpu);
	kvm_vm_free(vm);
	pvprof_stream_read(stream_fd, &sc, true);
	TEST_ASSERT_EQ(sc.hello, 1);
	TEST_ASSERT_EQ(sc.registered, 2);
	TEST_ASSERT_EQ(sc.callchains + vs.losses[PVPROF_LOSS_STREAM_OVERFLOW],
		       vs.callchains);
	for (r = 0; r < PVPROF_LOSS_NR; r++)
		TEST_ASSERT(sc.losses[r] == vs.losses[r],
			    "LOSS entries of %s add up to %llu, STATUS says %llu",
			    pvprof_loss_name(r), (unsigned long long)sc.losses[r],
			    (unsigned long long)vs.losses[r]);
	close(stream_fd);
}

#define HOSTILE_CASE(name, mode, depth)					\
	static void test_##name(void)					\
	{								\
		static const struct hostile_case hc = { mode, depth };	\
		run_hostile(&hc, #name);				\
	}

HOSTILE_CASE(callchain_sizes_absurd, M_SIZE_ABSURD, 0)
HOSTILE_CASE(callchain_depth_over_max, M_DEPTH_ABSURD, 0)
HOSTILE_CASE(callchain_depth_over_enable, M_DEPTH_OVER_CONFIG, 8)
HOSTILE_CASE(seq_duplicate, M_SEQ_DUPLICATE, 0)
HOSTILE_CASE(seq_future, M_SEQ_FUTURE, 0)
HOSTILE_CASE(seq_zero, M_SEQ_ZERO, 0)
HOSTILE_CASE(chain_head_garbage, M_CHAIN_HEAD_GARBAGE, 0)
HOSTILE_CASE(notice_tail_garbage, M_NOTICE_TAIL_GARBAGE, 0)
HOSTILE_CASE(notices_never_answered, M_IGNORE, 0)
HOSTILE_CASE(buffer_zeroed_by_guest, M_GUEST_ZEROES, 0)
HOSTILE_CASE(cookie_overwritten_by_guest, M_GUEST_COOKIE, 0)
HOSTILE_CASE(buffer_overwritten_by_vmm, M_VMM_OVERWRITES, 0)
HOSTILE_CASE(host_lines_scribbled, M_SCRIBBLE_HOST_LINES, 0)
HOSTILE_CASE(bytes_flipped_while_sampling, M_FLIPPED, 0)

static const struct test_case cases[] = {
	{ "callchain_sizes_absurd", test_callchain_sizes_absurd },
	{ "callchain_depth_over_max", test_callchain_depth_over_max },
	{ "callchain_depth_over_enable", test_callchain_depth_over_enable },
	{ "seq_duplicate", test_seq_duplicate },
	{ "seq_future", test_seq_future },
	{ "seq_zero", test_seq_zero },
	{ "chain_head_garbage", test_chain_head_garbage },
	{ "notice_tail_garbage", test_notice_tail_garbage },
	{ "notices_never_answered", test_notices_never_answered },
	{ "buffer_zeroed_by_guest", test_buffer_zeroed_by_guest },
	{ "cookie_overwritten_by_guest", test_cookie_overwritten_by_guest },
	{ "buffer_overwritten_by_vmm", test_buffer_overwritten_by_vmm },
	{ "host_lines_scribbled", test_host_lines_scribbled },
	{ "bytes_flipped_while_sampling", test_bytes_flipped_while_sampling },
};

int main(int argc, char **argv)
{
	return test_run_cases("hostile", cases, ARRAY_SIZE(cases), argc, argv);
}
