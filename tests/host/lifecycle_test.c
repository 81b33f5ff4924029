// SPDX-License-Identifier: GPL-2.0
/*
 * Registration lifecycle under sampling (issue #4, spec pvprof-lifecycle and
 * spec pvprof-losses): a vCPU reset, the buffer's memslot deleted or moved,
 * dirty logging and the dirty ring, ENABLE/DISABLE a thousand times while the
 * vCPU runs, DISABLE draining a halted vCPU, the VM destroyed while sampling
 * with a reader blocked in read(), and KSM merging and compaction in L1 while
 * sampling.
 *
 * The buffer lives in its own memslot (slot 1) so that it can be deleted,
 * moved and dirty-logged alone. The guest answers notices with the shared
 * core (core/guest.h) and runs in ticks of about 10 ms (GUEST_SYNC), so the
 * host watches STATUS while sampling and steers the guest through its
 * globals in guest memory.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_TICK = 1, STAGE_QUIESCED, STAGE_REREGISTERED };

#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(16 * PVPROF_PAGE_SIZE)
#define MOVED_GPA	0x3000000ULL
#define TICK_CYCLES	(20ULL * 1000 * 1000)
#define PHASE_SECONDS	60
/* CR0 after RESET: CD, NW and ET set, protection and paging off. */
#define CR0_RESET_VALUE	0x60000010ULL

static struct pvprof_guest_buf gbuf;
static volatile uint32_t g_stop, g_live, g_ignore, g_halted;
static volatile uint64_t g_posted;

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;

	if (g_live && !g_ignore)
		pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res);
}

static void guest_register(void)
{
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	/* Live before REGISTER returns: the first NMI may come right after. */
	g_live = 1;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
}

static void guest_ticks(void)
{
	while (!g_stop) {
		uint64_t start = guest_rdtsc();

		while (guest_rdtsc() - start < TICK_CYCLES)
			__asm__ volatile("pause");
		GUEST_SYNC(STAGE_TICK);
	}
	g_stop = 0;
}

static void guest_quiesce(void)
{
	int64_t query = pvprof_hypercall(PVPROF_OP_QUERY, BUF_GPA, 0, 0);

	g_live = 0;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC_ARGS(STAGE_QUIESCED, query, 0, 0);
}

/* Register, sample until told, leave; then the same again. */
static void guest_code(void)
{
	guest_register();
	guest_ticks();
	guest_quiesce();
	guest_register();
	GUEST_SYNC(STAGE_REREGISTERED);
	guest_ticks();
	guest_quiesce();
	GUEST_DONE();
}

/*
 * Leaves NMIs unanswered while it ticks; then answers the notices itself,
 * with interrupts off, and halts for good: a vCPU whose posted callchains only
 * DISABLE can drain.
 */
static void guest_code_post_and_halt(void)
{
	struct ex_regs regs = { .rip = (uint64_t)guest_code_post_and_halt };
	struct pvprof_nmi_result res;

	g_ignore = 1;
	guest_register();
	guest_ticks();
	__asm__ volatile("cli");
	pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, &regs, &res);
	g_posted = res.callchains + res.stale;
	g_halted = 1;
	for (;;)
		__asm__ volatile("hlt");
}

struct test_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
	uint8_t *slot_mem;
	int stream_fd;
	struct pvprof_stream_counts sc;
};

static struct pvprof_ctl_enable enable_2khz(void)
{
	return (struct pvprof_ctl_enable) {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};
}

/*
 * The VM running @guest, with an in-kernel irqchip if asked (HLT then
 * sleeps in KVM_RUN instead of exiting to user space), the buffer's memslot
 * (with @slot_flags), sampling and a reader.
 */
static void test_vm_start_guest(struct test_vm *t, uint32_t slot_flags, void *guest,
				bool irqchip)
{
	struct pvprof_ctl_enable en = enable_2khz();

	memset(t, 0, sizeof(*t));
	t->vm = vm_create_barebones();
	if (irqchip)
		TEST_ASSERT(!ioctl(t->vm->fd, KVM_CREATE_IRQCHIP, 0),
			    "KVM_CREATE_IRQCHIP: %s", strerror(errno));
	t->vcpu = vm_vcpu_add(t->vm, guest);
	t->slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(t->slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(t->vm, BUF_SLOT, slot_flags, BUF_GPA, SLOT_SIZE, t->slot_mem);
	vm_install_exception_handler(t->vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(t->vm, &en);
	t->stream_fd = pvprof_stream_open(t->vm);
}

static void test_vm_start(struct test_vm *t, uint32_t slot_flags)
{
	test_vm_start_guest(t, slot_flags, guest_code, false);
}

/* Ticks until @done says so (or fail after PHASE_SECONDS). */
static void run_ticks(struct test_vm *t, bool (*done)(const struct pvprof_vcpu_status *,
						      uint64_t),
		      uint64_t arg, struct pvprof_vcpu_status *vs)
{
	uint64_t deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	struct ucall uc;

	for (;;) {
		vcpu_run_expect_sync(t->vcpu, STAGE_TICK, &uc);
		pvprof_vcpu_status(t->vm, 1, 0, vs);
		if (done(vs, arg))
			return;
		if (test_now_ns() > deadline) {
			pvprof_print_books("at the deadline", vs);
			TEST_FAIL("condition not reached in %d s", PHASE_SECONDS);
		}
	}
}

static bool callchains_reach(const struct pvprof_vcpu_status *vs, uint64_t n)
{
	return vs->callchains >= n;
}

static bool dropped_and_sampled(const struct pvprof_vcpu_status *vs, uint64_t unreg)
{
	return !vs->registered && vs->losses[PVPROF_LOSS_UNREGISTERED] >= unreg + 5;
}

static bool notices_reach(const struct pvprof_vcpu_status *vs, uint64_t n)
{
	return vs->notices >= n;
}

/* Stop the ticks, quiesce, and check the books and the registration. */
static uint64_t quiesce(struct test_vm *t, struct pvprof_vcpu_status *vs)
{
	struct ucall uc;

	guest_var(t->vm, g_stop) = 1;
	pvprof_disable(t->vm);
	vcpu_run_expect_sync(t->vcpu, STAGE_QUIESCED, &uc);
	pvprof_vcpu_status(t->vm, 1, 0, vs);
	pvprof_assert_books(vs, "quiesced");
	pvprof_stream_read(t->stream_fd, &t->sc, false);
	TEST_ASSERT_EQ(t->sc.callchains + vs->losses[PVPROF_LOSS_STREAM_OVERFLOW],
		       vs->callchains);
	return uc.args[1];
}

/* Second round: the same vCPU registers again and is sampled normally. */
static void second_round_and_end(struct test_vm *t, const char *name)
{
	struct pvprof_ctl_enable en = enable_2khz();
	struct pvprof_vcpu_status vs, before;
	unsigned int r;

	pvprof_vcpu_status(t->vm, 1, 0, &before);
	pvprof_enable(t->vm, &en);
	vcpu_run_expect_sync(t->vcpu, STAGE_REREGISTERED, NULL);
	run_ticks(t, callchains_reach, before.callchains + 20, &vs);
	TEST_ASSERT_EQ(quiesce(t, &vs), PVPROF_QUERY_REGISTERED);
	vcpu_run_expect_done(t->vcpu);
	pvprof_print_books(name, &vs);

	vcpu_release(t->vcpu);
	kvm_vm_free(t->vm);
	munmap(t->slot_mem, SLOT_SIZE);
	pvprof_stream_read(t->stream_fd, &t->sc, true);
	TEST_ASSERT_EQ(t->sc.callchains + vs.losses[PVPROF_LOSS_STREAM_OVERFLOW],
		       vs.callchains);
	for (r = 0; r < PVPROF_LOSS_NR; r++)
		TEST_ASSERT(t->sc.losses[r] == vs.losses[r],
			    "LOSS entries of reason %u add up to %llu, STATUS says %llu",
			    r, (unsigned long long)t->sc.losses[r],
			    (unsigned long long)vs.losses[r]);
	close(t->stream_fd);
}

/* KVM_SET_SREGS to real mode (what QEMU does on reset) drops it (5.2). */
static void test_reset_drops_registration(void)
{
	struct pvprof_vcpu_status vs;
	struct kvm_sregs sregs, real;
	struct test_vm t;

	test_vm_start(&t, 0);
	run_ticks(&t, callchains_reach, 10, &vs);
	vcpu_sregs_get(t.vcpu, &sregs);
	real = sregs;
	real.cr0 = CR0_RESET_VALUE;
	real.cr4 = 0;
	real.efer = 0;
	real.cs.l = 0;
	vcpu_sregs_set(t.vcpu, &real);
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	TEST_ASSERT_EQ(vs.registered, 0);
	/* Back to where the guest was: it keeps running, unregistered. */
	guest_var(t.vm, g_live) = 0;
	vcpu_sregs_set(t.vcpu, &sregs);
	run_ticks(&t, dropped_and_sampled, vs.losses[PVPROF_LOSS_UNREGISTERED], &vs);
	TEST_ASSERT_EQ(quiesce(&t, &vs), PVPROF_QUERY_UNREGISTERED);
	TEST_ASSERT_EQ(t.sc.dropped, 1);
	TEST_ASSERT_EQ(t.sc.unregistered, 0);
	second_round_and_end(&t, "reset_drops_registration");
}

/* The buffer's memslot deleted, or moved, while sampling (5.2, item 4). */
static void memslot_gone(bool move)
{
	struct pvprof_vcpu_status vs;
	struct test_vm t;

	test_vm_start(&t, 0);
	run_ticks(&t, callchains_reach, 10, &vs);
	/* The guest must not touch the buffer's old address any more. */
	guest_var(t.vm, g_live) = 0;
	vm_memslot_set(t.vm, BUF_SLOT, 0, move ? MOVED_GPA : BUF_GPA,
		       move ? SLOT_SIZE : 0, t.slot_mem);
	run_ticks(&t, dropped_and_sampled, vs.losses[PVPROF_LOSS_UNREGISTERED], &vs);
	TEST_ASSERT_EQ(quiesce(&t, &vs), PVPROF_QUERY_UNREGISTERED);
	TEST_ASSERT_EQ(t.sc.dropped, 1);
	/* Put it back where it was (a move back, or a new slot). */
	vm_memslot_set(t.vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE,
		       t.slot_mem);
	second_round_and_end(&t, move ? "memslot_moved" : "memslot_deleted");
}

static void test_memslot_deleted_while_sampling(void)
{
	memslot_gone(false);
}

static void test_memslot_moved_while_sampling(void)
{
	memslot_gone(true);
}

/*
 * Dirty logging: while the guest ignores its notices (and writes nothing
 * in the buffer), the host's notices alone must dirty the buffer's first
 * page, and nothing else of it.
 */
static void test_dirty_log_marks_buffer(void)
{
	uint64_t bitmap[SLOT_SIZE / PVPROF_PAGE_SIZE / 64 + 1];
	struct kvm_dirty_log log = { .slot = BUF_SLOT, .dirty_bitmap = bitmap };
	struct pvprof_vcpu_status vs;
	struct test_vm t;

	test_vm_start(&t, KVM_MEM_LOG_DIRTY_PAGES);
	run_ticks(&t, callchains_reach, 5, &vs);
	guest_var(t.vm, g_ignore) = 1;
	/* Let a tick pass so that no answer is in flight, then clear the log. */
	run_ticks(&t, notices_reach, vs.notices + 1, &vs);
	vm_ioctl(t.vm, KVM_GET_DIRTY_LOG, &log);
	run_ticks(&t, notices_reach, vs.notices + 3, &vs);
	memset(bitmap, 0, sizeof(bitmap));
	vm_ioctl(t.vm, KVM_GET_DIRTY_LOG, &log);
	TEST_ASSERT(bitmap[0] & 1, "the page holding the notices is not dirty (bitmap %#llx)",
		    (unsigned long long)bitmap[0]);
	TEST_ASSERT((bitmap[0] & ~1ULL) == 0,
		    "pages no one wrote are dirty (bitmap %#llx)",
		    (unsigned long long)bitmap[0]);
	guest_var(t.vm, g_ignore) = 0;
	TEST_ASSERT_EQ(quiesce(&t, &vs), PVPROF_QUERY_REGISTERED);
	second_round_and_end(&t, "dirty_log");
}

/* The same with the dirty ring: entries for slot 1 come from the host. */
static void test_dirty_ring_marks_buffer(void)
{
	const uint32_t ring_bytes = 4096 * sizeof(struct kvm_dirty_gfn);
	struct kvm_enable_cap cap = { .cap = KVM_CAP_DIRTY_LOG_RING,
				      .args = { ring_bytes } };
	struct pvprof_ctl_enable en = enable_2khz();
	struct pvprof_vcpu_status vs;
	struct kvm_dirty_gfn *ring;
	uint64_t page0 = 0, others = 0;
	uint32_t i, next = 0;
	struct test_vm t;

	TEST_REQUIRE(kvm_check_cap(KVM_CAP_DIRTY_LOG_RING) > 0);
	memset(&t, 0, sizeof(t));
	t.vm = vm_create_barebones();
	vm_ioctl(t.vm, KVM_ENABLE_CAP, &cap);
	t.vcpu = vm_vcpu_add(t.vm, guest_code);
	ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, t.vcpu->fd,
		    (off_t)KVM_DIRTY_LOG_PAGE_OFFSET * getpagesize());
	TEST_ASSERT(ring != MAP_FAILED, "mmap of the dirty ring");
	t.slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(t.slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(t.vm, BUF_SLOT, KVM_MEM_LOG_DIRTY_PAGES, BUF_GPA, SLOT_SIZE,
		       t.slot_mem);
	vm_install_exception_handler(t.vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(t.vm, &en);
	t.stream_fd = pvprof_stream_open(t.vm);

	run_ticks(&t, callchains_reach, 5, &vs);
	guest_var(t.vm, g_ignore) = 1;
	run_ticks(&t, notices_reach, vs.notices + 1, &vs);
	/* Collect and reset what is there, then watch the host alone. */
	for (;; next++) {
		struct kvm_dirty_gfn *e = &ring[next % 4096];

		if (!(__atomic_load_n(&e->flags, __ATOMIC_ACQUIRE) & KVM_DIRTY_GFN_F_DIRTY))
			break;
		__atomic_store_n(&e->flags, KVM_DIRTY_GFN_F_RESET, __ATOMIC_RELEASE);
	}
	TEST_ASSERT(ioctl(t.vm->fd, KVM_RESET_DIRTY_RINGS, 0) >= 0, "KVM_RESET_DIRTY_RINGS");
	run_ticks(&t, notices_reach, vs.notices + 3, &vs);
	for (i = next;; i++) {
		struct kvm_dirty_gfn *e = &ring[i % 4096];

		if (!(__atomic_load_n(&e->flags, __ATOMIC_ACQUIRE) & KVM_DIRTY_GFN_F_DIRTY))
			break;
		if (e->slot == BUF_SLOT && e->offset == 0)
			page0++;
		else if (e->slot == BUF_SLOT)
			others++;
	}
	TEST_ASSERT(page0 >= 1, "no dirty-ring entry for the page holding the notices");
	TEST_ASSERT_EQ(others, 0);
	guest_var(t.vm, g_ignore) = 0;
	TEST_ASSERT_EQ(quiesce(&t, &vs), PVPROF_QUERY_REGISTERED);
	munmap(ring, ring_bytes);
	second_round_and_end(&t, "dirty_ring");
}

/* A vCPU thread that runs ticks until told to stop. */
struct ticker {
	struct test_vm *t;
	atomic_bool stop;
	atomic_uint_fast64_t ticks;
};

static void *run_ticker(void *arg)
{
	struct ticker *tk = arg;

	while (!atomic_load(&tk->stop)) {
		vcpu_run_expect_sync(tk->t->vcpu, STAGE_TICK, NULL);
		atomic_fetch_add(&tk->ticks, 1);
	}
	return NULL;
}

/*
 * Wait until the ticker has run a tick more than @seen.  On a 1-CPU L1 a
 * loop of ioctls can finish inside one time slice, before the vCPU thread
 * runs at all (1000 pairs take 14-18 ms there), so the loop hands over.
 */
static uint64_t ticker_advanced(struct ticker *tk, uint64_t seen, int batch)
{
	uint64_t deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	uint64_t now;

	while ((now = atomic_load(&tk->ticks)) <= seen) {
		TEST_ASSERT(test_now_ns() < deadline,
			    "the vCPU made no progress in %d s after batch %d of ENABLE/DISABLE",
			    PHASE_SECONDS, batch);
		sched_yield();
	}
	return now;
}

/*
 * ENABLE and DISABLE 1000 times while the vCPU runs (12.3, 12.4), in ten
 * batches with the vCPU running a tick between them.
 */
static void test_enable_disable_1000_while_running(void)
{
	struct pvprof_vcpu_status vs;
	struct ticker tk = { 0 };
	uint64_t start, elapsed, seen;
	pthread_t thread;
	struct test_vm t;
	int i;

	test_vm_start(&t, 0);
	tk.t = &t;
	TEST_ASSERT(!pthread_create(&thread, NULL, run_ticker, &tk), "pthread_create");
	seen = ticker_advanced(&tk, 0, 0);
	start = test_now_ns();
	for (i = 0; i < 1000; i++) {
		struct pvprof_ctl_enable en = enable_2khz();

		en.sample_freq = 1000 + (i % 4) * 1000;
		pvprof_disable(t.vm);
		pvprof_enable(t.vm, &en);
		if (i % 100 == 99)
			seen = ticker_advanced(&tk, seen, i / 100 + 1);
	}
	elapsed = test_now_ns() - start;
	atomic_store(&tk.stop, true);
	pthread_join(thread, NULL);
	fprintf(stderr, "# measured: 1000 DISABLE+ENABLE pairs in %llu ms over %llu vCPU ticks\n",
		(unsigned long long)(elapsed / 1000000),
		(unsigned long long)atomic_load(&tk.ticks));
	/* Still sampling normally afterwards. */
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	run_ticks(&t, callchains_reach, vs.callchains + 20, &vs);
	TEST_ASSERT_EQ(quiesce(&t, &vs), PVPROF_QUERY_REGISTERED);
	second_round_and_end(&t, "enable_disable_1000");
}

static void *run_until_signalled(void *arg)
{
	struct kvm_vcpu *vcpu = arg;

	TEST_ASSERT(_vcpu_run(vcpu) == -1 && errno == EINTR,
		    "KVM_RUN of the halted vCPU ended other than by the signal");
	return NULL;
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

/* The state letter of thread @tid of this process, from /proc. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	TEST_ASSERT(f, "%s", path);
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	TEST_ASSERT(p && p[1] == ' ', "cannot parse %s", path);
	return p[2];
}

struct halted_runner {
	struct kvm_vcpu *vcpu;
	_Atomic pid_t tid;
};

static void *run_halted(void *arg)
{
	struct halted_runner *hr = arg;

	atomic_store(&hr->tid, gettid());
	return run_until_signalled(hr->vcpu);
}

/*
 * Runs the vCPU of @t on its own thread until its guest has halted with
 * interrupts off and the thread sleeps in KVM_RUN, processing no request.
 */
static pthread_t run_until_halted(struct test_vm *t, struct halted_runner *hr)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	uint64_t deadline;
	pthread_t thread;

	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	hr->vcpu = t->vcpu;
	TEST_ASSERT(!pthread_create(&thread, NULL, run_halted, hr), "pthread_create");
	deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	while (!guest_var(t->vm, g_halted) || !atomic_load(&hr->tid) ||
	       thread_state(atomic_load(&hr->tid)) != 'S') {
		TEST_ASSERT(test_now_ns() < deadline, "the guest did not halt in %d s", PHASE_SECONDS);
		usleep(1000);
	}
	return thread;
}

/* The books closed, every callchain and stale answer in the stream. */
static void assert_books_closed(struct test_vm *t, const char *when, struct pvprof_vcpu_status *vs)
{
	pvprof_vcpu_status(t->vm, 1, 0, vs);
	TEST_ASSERT_EQ(vs->registered, 1);
	TEST_ASSERT(vs->notices == vs->callchains + pvprof_notice_losses(vs),
		    "%s: notices %llu != callchains %llu + stale/invalid/unanswered %llu", when,
		    (unsigned long long)vs->notices, (unsigned long long)vs->callchains,
		    (unsigned long long)pvprof_notice_losses(vs));
	pvprof_stream_read(t->stream_fd, &t->sc, false);
	TEST_ASSERT_EQ(t->sc.callchains, vs->callchains);
	TEST_ASSERT_EQ(t->sc.losses[PVPROF_LOSS_STALE], vs->losses[PVPROF_LOSS_STALE]);
}

/* Wakes the halted vCPU's thread out of KVM_RUN and frees the VM. */
static void end_halted(struct test_vm *t, pthread_t thread)
{
	TEST_ASSERT(!pthread_kill(thread, SIGUSR1), "pthread_kill");
	pthread_join(thread, NULL);
	vcpu_release(t->vcpu);
	kvm_vm_free(t->vm);
	munmap(t->slot_mem, SLOT_SIZE);
	close(t->stream_fd);
}

/*
 * DISABLE drains from its caller (spec pvprof-ctl-disable): the guest posts
 * its answers and halts with interrupts off, so its vCPU thread sleeps in
 * KVM_RUN and processes no request; DISABLE still brings every posted callchain
 * to the stream and closes the books.
 */
static void test_disable_drains_halted_vcpu(void)
{
	struct pvprof_ctl_enable slow = {
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_period = 10ULL * 1000 * 1000 * 1000,
	};
	struct halted_runner hr = { 0 };
	struct pvprof_vcpu_status vs;
	pthread_t thread;
	struct test_vm t;
	uint64_t posted;

	test_vm_start_guest(&t, 0, guest_code_post_and_halt, true);
	run_ticks(&t, notices_reach, 8, &vs);
	/* No sample (no drain on the vCPU's thread) between its answer and HLT. */
	pvprof_enable(t.vm, &slow);
	guest_var(t.vm, g_stop) = 1;
	thread = run_until_halted(&t, &hr);
	posted = guest_var(t.vm, g_posted);
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	TEST_ASSERT(posted > 0, "the guest answered no notice");
	TEST_ASSERT(vs.callchains + vs.losses[PVPROF_LOSS_STALE] < posted,
		    "the host drained the halted vCPU's %llu callchains before DISABLE",
		    (unsigned long long)posted);

	pvprof_disable(t.vm);
	assert_books_closed(&t, "after DISABLE", &vs);
	pvprof_print_books("disable_drains_halted_vcpu", &vs);
	end_halted(&t, thread);
}

/*
 * Answers to notices still unresolved at DISABLE, posted after it
 * (spec pvprof-callchain-drain): the guest answers them and halts, and no
 * sample's request and no return to user space follows; the exits on the way
 * (the HLT) drain them on the vCPU's thread.
 */
static void test_answers_after_disable_drained(void)
{
	struct halted_runner hr = { 0 };
	struct pvprof_vcpu_status vs;
	pthread_t thread;
	struct test_vm t;

	test_vm_start_guest(&t, 0, guest_code_post_and_halt, true);
	run_ticks(&t, notices_reach, 8, &vs);
	pvprof_disable(t.vm);
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	TEST_ASSERT(vs.notices > vs.callchains + pvprof_notice_losses(&vs),
		    "no notice outstanding at DISABLE: notices %llu, callchains %llu",
		    (unsigned long long)vs.notices, (unsigned long long)vs.callchains);
	guest_var(t.vm, g_stop) = 1;
	thread = run_until_halted(&t, &hr);
	TEST_ASSERT(guest_var(t.vm, g_posted) > 0, "the guest answered no notice");
	assert_books_closed(&t, "the vCPU halted after its answers", &vs);
	pvprof_print_books("answers_after_disable_drained", &vs);
	end_halted(&t, thread);
}

/* A reader blocked in read() while the VM goes away. */
struct blocked_reader {
	int fd;
	struct pvprof_stream_counts sc;
};

static void *read_to_eof(void *arg)
{
	struct blocked_reader *br = arg;

	pvprof_stream_read(br->fd, &br->sc, true);
	return NULL;
}

/*
 * Destroy the VM while sampling is on and the buffer registered: the
 * reader sees every callchain, LOSS entries that close the books (the
 * outstanding notices end unanswered), and then end of file.
 */
static void test_destroy_while_sampling(void)
{
	struct pvprof_vcpu_status vs;
	struct blocked_reader br = { 0 };
	pthread_t thread;
	struct test_vm t;
	uint64_t outstanding;

	test_vm_start(&t, 0);
	run_ticks(&t, callchains_reach, 20, &vs);
	br.fd = t.stream_fd;
	TEST_ASSERT(!pthread_create(&thread, NULL, read_to_eof, &br), "pthread_create");
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	TEST_ASSERT_EQ(vs.registered, 1);
	outstanding = vs.notices - vs.callchains - pvprof_notice_losses(&vs);
	vcpu_release(t.vcpu);
	kvm_vm_free(t.vm);
	munmap(t.slot_mem, SLOT_SIZE);
	pthread_join(thread, NULL);
	TEST_ASSERT(br.sc.eof, "no end of file");
	TEST_ASSERT_EQ(br.sc.callchains + vs.losses[PVPROF_LOSS_STREAM_OVERFLOW],
		       vs.callchains);
	TEST_ASSERT_EQ(br.sc.dropped, 1);
	TEST_ASSERT_EQ(br.sc.losses[PVPROF_LOSS_UNANSWERED],
		       vs.losses[PVPROF_LOSS_UNANSWERED] + outstanding);
	TEST_ASSERT(vs.notices == br.sc.callchains + br.sc.losses[PVPROF_LOSS_STREAM_OVERFLOW] +
		    br.sc.losses[PVPROF_LOSS_STALE] + br.sc.losses[PVPROF_LOSS_INVALID] +
		    br.sc.losses[PVPROF_LOSS_UNANSWERED],
		    "notices %llu do not balance with the stream's totals",
		    (unsigned long long)vs.notices);
	fprintf(stderr, "# measured: destroy_while_sampling: %llu notices, %llu callchains, %llu outstanding at destroy\n",
		(unsigned long long)vs.notices, (unsigned long long)br.sc.callchains,
		(unsigned long long)outstanding);
	close(br.fd);
}

/*
 * KSM's knobs, saved before the case changes them and restored on every
 * exit path: at exit() (assertions end the case with exit(1)) and from the
 * case timeout's SIGALRM, hence plain open/write (async-signal-safe).
 */
#define KSM_DIR		"/sys/kernel/mm/ksm/"
#define KSM_SLEEP_MS	"20"
#define KSM_PAGES	"256"
#define KSM_COMPACTIONS	3
/* Vcpu ticks between two compactions, so that they are spaced. */
#define KSM_COMPACT_TICKS 5
/* Identical pages the host writes so that KSM has something to merge. */
#define KSM_PATTERN_GPA	0x1000000ULL
#define KSM_PATTERN_PAGES 64

static const char *const ksm_knobs[] = { "sleep_millisecs", "pages_to_scan", "run" };
static char ksm_saved[ARRAY_SIZE(ksm_knobs)][32];
static volatile sig_atomic_t ksm_changed;

static int knob_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

static uint64_t knob_read(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	TEST_ASSERT(f, "cannot open %s", path);
	TEST_ASSERT(fscanf(f, "%llu", &v) == 1, "cannot parse %s", path);
	fclose(f);
	return v;
}

static void ksm_restore(void)
{
	unsigned int i;

	if (!ksm_changed)
		return;
	ksm_changed = 0;
	/* run=2 unmerges every page first; then the old values, run last. */
	knob_write(KSM_DIR "run", "2");
	for (i = 0; i < ARRAY_SIZE(ksm_knobs); i++) {
		char path[96] = KSM_DIR;

		strcat(path, ksm_knobs[i]);
		knob_write(path, ksm_saved[i]);
	}
}

static void ksm_restore_on_alarm(int sig)
{
	ksm_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void ksm_save_and_start(void)
{
	struct sigaction sa = { .sa_handler = ksm_restore_on_alarm };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ksm_knobs); i++) {
		char path[96] = KSM_DIR;
		FILE *f;

		strcat(path, ksm_knobs[i]);
		f = fopen(path, "r");
		TEST_ASSERT(f && fgets(ksm_saved[i], sizeof(ksm_saved[i]), f),
			    "cannot read %s", path);
		fclose(f);
	}
	TEST_ASSERT(!atexit(ksm_restore), "atexit");
	TEST_ASSERT(!sigaction(SIGALRM, &sa, NULL), "sigaction");
	ksm_changed = 1;
	/*
	 * A moderate rate: ksmd at sleep_millisecs=1 and 10000 pages per
	 * pass starved the only vCPU of a 1-CPU L1 (the earlier attempt hung).
	 */
	TEST_ASSERT(!knob_write(KSM_DIR "sleep_millisecs", KSM_SLEEP_MS) &&
		    !knob_write(KSM_DIR "pages_to_scan", KSM_PAGES) &&
		    !knob_write(KSM_DIR "run", "1"), "cannot start KSM");
}

struct compactor {
	_Atomic uint64_t ticks;	/* vCPU ticks so far, from the vCPU thread */
	atomic_bool stop;
	_Atomic unsigned int done;
	uint64_t ns;		/* time spent in compactions */
};

/*
 * KSM_COMPACTIONS compactions of all of L1's memory, each once the vCPU
 * has run KSM_COMPACT_TICKS more ticks: concurrent with a running vCPU,
 * never back to back (a tight loop starves the vCPU of a 1-CPU L1).
 */
static void *compact_spaced(void *arg)
{
	struct compactor *c = arg;
	uint64_t next = atomic_load(&c->ticks) + KSM_COMPACT_TICKS;

	while (atomic_load(&c->done) < KSM_COMPACTIONS && !atomic_load(&c->stop)) {
		uint64_t start;

		if (atomic_load(&c->ticks) < next) {
			usleep(1000);
			continue;
		}
		start = test_now_ns();
		TEST_ASSERT(!knob_write("/proc/sys/vm/compact_memory", "1"),
			    "writing /proc/sys/vm/compact_memory failed");
		c->ns += test_now_ns() - start;
		atomic_fetch_add(&c->done, 1);
		next = atomic_load(&c->ticks) + KSM_COMPACT_TICKS;
	}
	return NULL;
}

/*
 * KSM merging guest memory, the buffer's memslot included, and compaction
 * migrating it while sampling: the host's cached translations of the
 * buffer follow (MMU notifiers), its writes break a merged page's sharing
 * instead of landing in it, the guest keeps seeing the host's notices and
 * the books balance.
 */
static void test_ksm_and_compaction_while_sampling(void)
{
	uint64_t deadline, scans0, scans = 0, sharing = 0, max_sharing = 0;
	uint64_t callchains0, notices0, i;
	struct compactor comp = { 0 };
	struct pvprof_vcpu_status vs;
	pthread_t thread;
	struct test_vm t;

	/* The debug L1 is built without CONFIG_KSM: no ksm directory. */
	if (access(KSM_DIR "run", W_OK))
		test_skip("no writable " KSM_DIR "run: L1 kernel without KSM");
	if (access("/proc/sys/vm/compact_memory", W_OK))
		test_skip("no /proc/sys/vm/compact_memory: L1 kernel without compaction");
	test_vm_start(&t, 0);
	/* Pages KSM can merge, in both memslots (the buffer's tail pages). */
	for (i = 0; i < KSM_PATTERN_PAGES; i++)
		memset(addr_gva2hva(t.vm, KSM_PATTERN_GPA + i * PVPROF_PAGE_SIZE), 0x5a,
		       PVPROF_PAGE_SIZE);
	for (i = BUF_SIZE; i < SLOT_SIZE; i += PVPROF_PAGE_SIZE)
		memset(t.slot_mem + i, 0x5a, PVPROF_PAGE_SIZE);
	TEST_ASSERT(!madvise(t.vm->mem, GUEST_MEM_SIZE, MADV_MERGEABLE) &&
		    !madvise(t.slot_mem, SLOT_SIZE, MADV_MERGEABLE), "MADV_MERGEABLE");
	run_ticks(&t, callchains_reach, 10, &vs);
	callchains0 = vs.callchains;
	notices0 = vs.notices;

	ksm_save_and_start();
	scans0 = knob_read(KSM_DIR "full_scans");
	TEST_ASSERT(!pthread_create(&thread, NULL, compact_spaced, &comp), "pthread_create");
	/*
	 * Two more full scans: the first may have begun before our pages were
	 * mergeable, the second covers them all.
	 */
	deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	for (;;) {
		vcpu_run_expect_sync(t.vcpu, STAGE_TICK, NULL);
		atomic_fetch_add(&comp.ticks, 1);
		scans = knob_read(KSM_DIR "full_scans") - scans0;
		sharing = knob_read(KSM_DIR "pages_sharing");
		max_sharing = sharing > max_sharing ? sharing : max_sharing;
		if (scans >= 2 && max_sharing > 0 &&
		    atomic_load(&comp.done) == KSM_COMPACTIONS)
			break;
		if (test_now_ns() > deadline) {
			atomic_store(&comp.stop, true);
			pthread_join(thread, NULL);
			TEST_FAIL("in %d s: %llu full KSM scans, at most %llu pages sharing, %u compactions",
				  PHASE_SECONDS, (unsigned long long)scans,
				  (unsigned long long)max_sharing, atomic_load(&comp.done));
		}
	}
	pthread_join(thread, NULL);
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	fprintf(stderr, "# measured: ksm_compaction: %llu full scans, up to %llu pages sharing, %u compactions in %llu ms, %llu ticks; %llu notices and %llu callchains meanwhile\n",
		(unsigned long long)scans, (unsigned long long)max_sharing,
		atomic_load(&comp.done), (unsigned long long)(comp.ns / 1000000),
		(unsigned long long)atomic_load(&comp.ticks),
		(unsigned long long)(vs.notices - notices0),
		(unsigned long long)(vs.callchains - callchains0));
	TEST_ASSERT(vs.callchains > callchains0, "no callchain while KSM and compaction ran");
	/* Callchains still arrive afterwards, with KSM still merging. */
	run_ticks(&t, callchains_reach, vs.callchains + 20, &vs);
	ksm_restore();
	TEST_ASSERT_EQ(quiesce(&t, &vs), PVPROF_QUERY_REGISTERED);
	second_round_and_end(&t, "ksm_compaction");
}

static const struct test_case cases[] = {
	{ "reset_drops_registration", test_reset_drops_registration },
	{ "memslot_deleted_while_sampling", test_memslot_deleted_while_sampling },
	{ "memslot_moved_while_sampling", test_memslot_moved_while_sampling },
	{ "dirty_log_marks_buffer", test_dirty_log_marks_buffer },
	{ "dirty_ring_marks_buffer", test_dirty_ring_marks_buffer },
	{ "enable_disable_1000_while_running", test_enable_disable_1000_while_running },
	{ "disable_drains_halted_vcpu", test_disable_drains_halted_vcpu },
	{ "answers_after_disable_drained", test_answers_after_disable_drained },
	{ "destroy_while_sampling", test_destroy_while_sampling },
	{ "ksm_and_compaction_while_sampling", test_ksm_and_compaction_while_sampling },
};

int main(int argc, char **argv)
{
	return test_run_cases("lifecycle", cases, ARRAY_SIZE(cases), argc, argv);
}
