// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of the whole cpu-clock data path: the guest registers a
 * buffer and answers pvprof NMIs with callchains built by the shared core
 * (core/guest.h), the host enables sampling on the test's own VM fd
 * through PVPROF_CTL_ENABLE, and the stream read back must hold exactly
 * the callchains the host accepted, with the counters balancing:
 *   samples == notices + sample losses
 *   notices == callchains + stale + invalid + unanswered (after UNREGISTER)
 * Destroying the VM ends the stream with end of file, after LOSS entries
 * that add up to the final loss counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "core/guest.h"
#include "core/callchain.h"
#include "core/stream.h"

enum { STAGE_REGISTERED = 1, STAGE_SAMPLED, STAGE_UNREGISTERED };

#define BUF_GPA		0x300000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
/* NMIs the guest waits for, and the spin bound that fails the case. */
#define TARGET_NMIS	100
#define SPIN_LIMIT	(4ULL << 30)

/* Handler runs that wait for the next notice (slow_handler_not_stale). */
#define SLOW_RUNS	40

static struct pvprof_guest_buf gbuf;
static volatile uint64_t guest_callchains, guest_stale, guest_nmis;
static bool slow_handler;		/* set by the guest before REGISTER */
static volatile uint64_t slow_runs, slow_timeouts;
/* The notices that arrived while a slow handler waited: sampled inside it. */
static uint64_t slow_seqs[SLOW_RUNS];

/*
 * A slow handler stays in the NMI handler until the host has written the
 * next sample's notice, as a long capture would.
 */
static void guest_wait_in_handler(void)
{
	const struct pvprof_buf_header *h = gbuf.hdr;
	uint64_t spins;

	for (spins = 0; spins < SPIN_LIMIT / 64; spins++) {
		uint64_t head = __atomic_load_n(&h->notice_head, __ATOMIC_ACQUIRE);

		if (head != h->notice_tail) {
			slow_seqs[slow_runs++] = head;
			return;
		}
		__asm__ volatile("pause");
	}
	slow_timeouts++;
}

static void guest_nmi_handler(struct ex_regs *regs)
{
	struct pvprof_nmi_result res = { 0 };

	if (pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res))
		guest_nmis++;
	guest_callchains += res.callchains;
	guest_stale += res.stale;
	if (slow_handler && slow_runs < SLOW_RUNS && !slow_timeouts)
		guest_wait_in_handler();
}

static void guest_code(void)
{
	uint64_t spins;

	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	GUEST_SYNC(STAGE_REGISTERED);
	for (spins = 0; guest_nmis < TARGET_NMIS && spins < SPIN_LIMIT; spins++)
		__asm__ volatile("pause");
	GUEST_SYNC_ARGS(STAGE_SAMPLED, guest_nmis, spins, 0);
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC_ARGS(STAGE_UNREGISTERED, guest_callchains, guest_stale, 0);
	GUEST_DONE();
}

static int ctl(int kvm_fd, unsigned long cmd, void *arg)
{
	return ioctl(kvm_fd, cmd, arg) < 0 ? -errno : 0;
}

static void status_get(int kvm_fd, int vm_fd, struct pvprof_ctl_status *cs,
		       struct pvprof_vcpu_status *vs)
{
	memset(cs, 0, sizeof(*cs));
	cs->vm_fd = vm_fd;
	cs->nr_vcpus = 1;
	cs->vcpus = (uint64_t)(uintptr_t)vs;
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_STATUS, cs), 0);
	TEST_ASSERT_EQ(cs->nr_vcpus, 1);
}

struct stream_counts {
	uint64_t hello, callchains, registered, unregistered, other;
	uint64_t last_seq, ip_matches;
	uint64_t losses[PVPROF_LOSS_NR];
};

/* Read every queued entry without blocking; check framing and order. */
static void stream_drain(int fd, struct stream_counts *c, bool until_eof)
{
	static uint8_t buf[64 * 1024];

	for (;;) {
		enum pvprof_st_status st;
		struct pvprof_st_iter it;
		struct pvprof_st_view v;
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0) {
			TEST_ASSERT(until_eof, "end of file while the VM exists");
			return;
		}
		if (n < 0) {
			TEST_ASSERT(errno == EAGAIN && !until_eof,
				    "stream read: %s", strerror(errno));
			return;
		}
		pvprof_st_iter_init(&it, buf, n);
		if (c->hello)
			it.entries = 1;	/* HELLO was in an earlier read */
		while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK) {
			switch (v.hdr.type) {
			case PVPROF_ST_HELLO:
				c->hello++;
				TEST_ASSERT_EQ(v.u.hello.nr_vcpus, 1);
				break;
			case PVPROF_ST_CALLCHAIN:
				c->callchains++;
				TEST_ASSERT(v.u.callchain.chain.seq > c->last_seq,
					    "callchain seq %llu after %llu",
					    (unsigned long long)v.u.callchain.chain.seq,
					    (unsigned long long)c->last_seq);
				c->last_seq = v.u.callchain.chain.seq;
				if (pvprof_st_frame(&v, 0) - PVPROF_KERNEL_HALF_START ==
				    v.u.callchain.notice_ip)
					c->ip_matches++;
				break;
			case PVPROF_ST_LOSS:
				c->losses[v.u.loss.reason] += v.u.loss.count;
				break;
			case PVPROF_ST_VCPU:
				if (v.u.vcpu.event == PVPROF_VCPU_REGISTERED) {
					TEST_ASSERT_EQ(v.u.vcpu.gpa, BUF_GPA);
					TEST_ASSERT_EQ(v.u.vcpu.size, BUF_SIZE);
					c->registered++;
				} else {
					c->unregistered++;
				}
				break;
			default:
				c->other++;
			}
		}
		TEST_ASSERT(st == PVPROF_ST_END, "stream framing: %s",
			    pvprof_st_status_name(st));
	}
}

static uint64_t sum(const __u64 *v, const unsigned int *idx, size_t n)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += v[idx[i]];
	return s;
}

static void test_cpu_clock_end_to_end(void)
{
	static const unsigned int sample_losses[] = {
		PVPROF_LOSS_NOTICE_RING_FULL, PVPROF_LOSS_THROTTLED,
		PVPROF_LOSS_UNREGISTERED, PVPROF_LOSS_PROTECTED,
		PVPROF_LOSS_NESTED, PVPROF_LOSS_SMM, PVPROF_LOSS_BUFFER_GONE,
		PVPROF_LOSS_SLOT_BUSY,
	};
	static const unsigned int notice_losses[] = {
		PVPROF_LOSS_STALE, PVPROF_LOSS_INVALID, PVPROF_LOSS_UNANSWERED,
	};
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000,
	};
	struct pvprof_ctl_vm vmarg = { 0 };
	struct stream_counts sc = { 0 };
	struct pvprof_ctl_status cs;
	struct pvprof_vcpu_status vs;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	uint64_t guest_cc, guest_st;
	int kvm_fd, stream_fd;
	unsigned int i;

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	TEST_ASSERT(kvm_fd >= 0, "open /dev/kvm: %s", strerror(errno));
	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	if (test_kvm_flavour() == KVM_FLAVOUR_STOCK) {
		/* Stock KVM: an unknown system ioctl. */
		en.vm_fd = vm->fd;
		TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
		goto out;
	}
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	vcpu_run_expect_sync(vcpu, STAGE_REGISTERED, &uc);

	vmarg.vm_fd = vm->fd;
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_STREAM, &vmarg), -ENOENT);
	en.vm_fd = vm->fd;
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_ENABLE, &en), 0);
	stream_fd = ioctl(kvm_fd, PVPROF_CTL_STREAM, &vmarg);
	TEST_ASSERT(stream_fd >= 0, "PVPROF_CTL_STREAM: %s", strerror(errno));
	TEST_ASSERT(fcntl(stream_fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	TEST_ASSERT(((struct pvprof_buf_header *)(vm->mem + BUF_GPA))->state ==
		    0, "state ACTIVE before the vCPU's next entry");

	vcpu_run_expect_sync(vcpu, STAGE_SAMPLED, &uc);
	TEST_ASSERT(uc.args[1] >= TARGET_NMIS,
		    "guest saw %llu pvprof NMIs in %llu spins, wanted %d",
		    (unsigned long long)uc.args[1],
		    (unsigned long long)uc.args[2], TARGET_NMIS);
	TEST_ASSERT_EQ(((struct pvprof_buf_header *)(vm->mem + BUF_GPA))->state,
		       PVPROF_STATE_ACTIVE);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_DISABLE, &vmarg), 0);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_DISABLE, &vmarg), -ENOENT);
	vcpu_run_expect_sync(vcpu, STAGE_UNREGISTERED, &uc);
	guest_cc = uc.args[1];
	guest_st = uc.args[2];
	vcpu_run_expect_done(vcpu);

	status_get(kvm_fd, vm->fd, &cs, &vs);
	TEST_ASSERT_EQ(vs.registered, 0);
	TEST_ASSERT_EQ(cs.flags & PVPROF_STATUS_F_ENABLED, 0);
	TEST_ASSERT(vs.samples == vs.notices + sum(vs.losses, sample_losses,
						   ARRAY_SIZE(sample_losses)),
		    "samples %llu != notices %llu + sample losses",
		    (unsigned long long)vs.samples, (unsigned long long)vs.notices);
	TEST_ASSERT(vs.notices == vs.callchains + sum(vs.losses, notice_losses,
						   ARRAY_SIZE(notice_losses)),
		    "notices %llu != callchains %llu + stale/invalid/unanswered",
		    (unsigned long long)vs.notices, (unsigned long long)vs.callchains);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_INVALID], 0);
	TEST_ASSERT_EQ(vs.callchains, guest_cc);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_STALE], guest_st);
	TEST_ASSERT(vs.nmis >= TARGET_NMIS, "nmis %llu",
		    (unsigned long long)vs.nmis);

	stream_drain(stream_fd, &sc, false);
	TEST_ASSERT_EQ(sc.hello, 1);
	TEST_ASSERT_EQ(sc.registered, 1);
	TEST_ASSERT_EQ(sc.unregistered, 1);
	TEST_ASSERT_EQ(sc.callchains, vs.callchains - vs.losses[PVPROF_LOSS_STREAM_OVERFLOW]);

	fprintf(stderr, "# measured: samples %llu = notices %llu + sample losses %llu (throttled %llu, slot busy %llu, ring full %llu); notices = callchains %llu + stale %llu + invalid %llu + unanswered %llu; nmis %llu; stream callchains %llu, notice IP = interrupted IP in %llu\n",
		(unsigned long long)vs.samples, (unsigned long long)vs.notices,
		(unsigned long long)sum(vs.losses, sample_losses, ARRAY_SIZE(sample_losses)),
		(unsigned long long)vs.losses[PVPROF_LOSS_THROTTLED],
		(unsigned long long)vs.losses[PVPROF_LOSS_SLOT_BUSY],
		(unsigned long long)vs.losses[PVPROF_LOSS_NOTICE_RING_FULL],
		(unsigned long long)vs.callchains,
		(unsigned long long)vs.losses[PVPROF_LOSS_STALE],
		(unsigned long long)vs.losses[PVPROF_LOSS_INVALID],
		(unsigned long long)vs.losses[PVPROF_LOSS_UNANSWERED],
		(unsigned long long)vs.nmis, (unsigned long long)sc.callchains,
		(unsigned long long)sc.ip_matches);

	/*
	 * The stream fd outlives the VM and then reads end of file.  The
	 * vCPU fd and its kvm_run mapping hold the VM too: release them.
	 */
	TEST_ASSERT(munmap(vcpu->run, ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) == 0,
		    "munmap kvm_run");
	close(vcpu->fd);
	kvm_vm_free(vm);
	TEST_ASSERT(fcntl(stream_fd, F_SETFL, 0) == 0, "blocking mode");
	stream_drain(stream_fd, &sc, true);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		TEST_ASSERT(sc.losses[i] == vs.losses[i],
			    "LOSS entries of reason %u add up to %llu, status says %llu",
			    i, (unsigned long long)sc.losses[i],
			    (unsigned long long)vs.losses[i]);
	close(stream_fd);
	close(kvm_fd);
	return;
out:
	kvm_vm_free(vm);
	close(kvm_fd);
}

/*
 * Runs the guest to its REGISTERED sync and enables 1 kHz cpu-clock
 * sampling.  Against stock KVM, REGISTER must fail with PVPROF_ENOSYS and
 * the guest then ends: false, nothing more to test.
 */
static bool sampling_started(int kvm_fd, struct kvm_vm *vm, struct kvm_vcpu *vcpu)
{
	struct pvprof_ctl_enable en = {
		.vm_fd = vm->fd,
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000,
	};
	struct ucall uc;

	vcpu_run_expect_sync(vcpu, STAGE_REGISTERED, &uc);
	if (test_kvm_flavour() == KVM_FLAVOUR_STOCK) {
		TEST_ASSERT_EQ(uc.args[1], -(uint64_t)PVPROF_ENOSYS);
		vcpu_run_expect_done(vcpu);
		return false;
	}
	TEST_ASSERT_EQ(uc.args[1], 0);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_ENABLE, &en), 0);
	return true;
}

static void guest_slow_handler_code(void)
{
	int64_t ret;
	uint64_t spins;

	slow_handler = true;
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	ret = pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0);
	GUEST_SYNC_ARGS(STAGE_REGISTERED, ret, 0, 0);
	if (ret)
		GUEST_DONE();
	for (spins = 0; slow_runs < SLOW_RUNS && !slow_timeouts && spins < SPIN_LIMIT; spins++)
		__asm__ volatile("pause");
	GUEST_SYNC_ARGS(STAGE_SAMPLED, slow_runs, slow_timeouts, 0);
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC_ARGS(STAGE_UNREGISTERED, guest_callchains, guest_stale, 0);
	GUEST_DONE();
}

/*
 * A sample taken while the guest is in its NMI handler becomes a notice that
 * no NMI can reach until the handler returns.  The host opens KVM's NMI
 * window for it (spec pvprof-host-sequence, step 6), so the next NMI arrives
 * right after the handler's IRET and answers that notice with its own stack.
 * Without the window it would wait for the next sample's exit and be answered
 * stale behind that sample's notice: every slow run would leave one stale
 * answer.
 */
/*
 * The stream's callchains of a slow-handler run: each one whose notice
 * arrived while a handler waited (slow_seqs) must be marked as a sample of
 * pvprof's own NMI path (spec pvprof-own-nmi-samples).
 */
static void check_own_nmi_samples(int stream_fd)
{
	uint64_t answered = 0, marked = 0, unmarked = 0, other_marked = 0, folded = 0;
	struct pvprof_st_iter it = { 0 };
	struct pvprof_st_view v;
	static uint8_t buf[1 << 20];
	enum pvprof_st_status st;
	unsigned int i;
	ssize_t n;

	TEST_ASSERT(fcntl(stream_fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	while ((n = read(stream_fd, buf, sizeof(buf))) > 0) {
		pvprof_st_iter_feed(&it, buf, n);
		while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK) {
			bool own = v.u.callchain.sample_flags & PVPROF_ST_SAMPLE_F_OWN_NMI;
			bool in_wait = false;

			if (v.hdr.type != PVPROF_ST_CALLCHAIN)
				continue;
			folded += v.u.callchain.own_nmi_samples;
			for (i = 0; i < SLOW_RUNS; i++)
				in_wait |= slow_seqs[i] == v.u.callchain.chain.seq;
			if (!in_wait) {
				other_marked += own;
				continue;
			}
			answered++;
			marked += own;
			unmarked += !own;
		}
		TEST_ASSERT(st == PVPROF_ST_END, "stream framing: %s",
			    pvprof_st_status_name(st));
	}
	TEST_ASSERT(n < 0 && errno == EAGAIN, "stream read: %s", strerror(errno));
	fprintf(stderr, "# measured: of %llu callchains whose notice arrived in a waiting handler, %llu marked as pvprof's own NMI path; %llu other callchains marked, %llu samples folded\n",
		(unsigned long long)answered, (unsigned long long)marked,
		(unsigned long long)other_marked, (unsigned long long)folded);
	TEST_ASSERT(answered > 0, "no callchain answered a notice that arrived in a handler");
	TEST_ASSERT(!unmarked, "%llu of %llu samples taken inside pvprof's handler not marked",
		    (unsigned long long)unmarked, (unsigned long long)answered);
}

static void test_slow_handler_not_stale(void)
{
	struct pvprof_ctl_vm vmarg = { 0 };
	struct pvprof_ctl_status cs;
	struct pvprof_vcpu_status vs;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	uint64_t runs, stale;
	int kvm_fd, stream_fd;

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	TEST_ASSERT(kvm_fd >= 0, "open /dev/kvm: %s", strerror(errno));
	vm = vm_create_with_one_vcpu(&vcpu, guest_slow_handler_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	if (!sampling_started(kvm_fd, vm, vcpu))
		goto out;
	vmarg.vm_fd = vm->fd;
	stream_fd = ioctl(kvm_fd, PVPROF_CTL_STREAM, &vmarg);
	TEST_ASSERT(stream_fd >= 0, "PVPROF_CTL_STREAM: %s", strerror(errno));
	vcpu_run_expect_sync(vcpu, STAGE_SAMPLED, &uc);
	runs = uc.args[1];
	TEST_ASSERT(runs == SLOW_RUNS && !uc.args[2],
		    "%llu of %d handler runs saw the next notice arrive, %llu gave up waiting",
		    (unsigned long long)runs, SLOW_RUNS, (unsigned long long)uc.args[2]);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_DISABLE, &vmarg), 0);
	vcpu_run_expect_sync(vcpu, STAGE_UNREGISTERED, &uc);
	stale = uc.args[2];
	vcpu_run_expect_done(vcpu);
	status_get(kvm_fd, vm->fd, &cs, &vs);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_STALE], stale);
	TEST_ASSERT_EQ(vs.callchains, uc.args[1]);
	fprintf(stderr, "# measured: %llu handler runs waited for a notice; notices %llu = callchains %llu + stale %llu + unanswered %llu; slot busy %llu; nmis %llu\n",
		(unsigned long long)runs, (unsigned long long)vs.notices,
		(unsigned long long)vs.callchains, (unsigned long long)stale,
		(unsigned long long)vs.losses[PVPROF_LOSS_UNANSWERED],
		(unsigned long long)vs.losses[PVPROF_LOSS_SLOT_BUSY],
		(unsigned long long)vs.nmis);
	/*
	 * A second sample before the window's exit (the host is slow under
	 * nested emulation) still makes one stale; most runs must not.
	 */
	TEST_ASSERT(stale * 4 <= runs,
		    "%llu stale answers for %llu handler runs that saw a notice arrive",
		    (unsigned long long)stale, (unsigned long long)runs);
	sync_global_from_guest(vm, slow_seqs);
	check_own_nmi_samples(stream_fd);
	close(stream_fd);
out:
	kvm_vm_free(vm);
	close(kvm_fd);
}

enum {
	STAGE_IRQ_A_START = 20, STAGE_IRQ_A_END, STAGE_IRQ_B_START,
	STAGE_IRQ_B_END, STAGE_IRQ_DELIVERED,
};

/*
 * Rounds of the two phases, interleaved so that the host's own interrupts,
 * which come in bursts on a slow debug kernel, fall on both alike; pvprof
 * NMIs per phase and round, after a few to warm up.
 */
#define ROUNDS			10
#define ROUND_NMIS		20
#define WARMUP_NMIS		10
#define TIMER_VECTOR		0xec

#define MSR_IA32_APICBASE	0x1b
#define APICBASE_X2APIC		(1ULL << 10)
#define APICBASE_ENABLE		(1ULL << 11)
/* x2APIC registers: MSR 0x800 + (xAPIC offset >> 4). */
#define X2APIC_EOI		0x80b
#define X2APIC_SPIV		0x80f
#define X2APIC_IRR(vector)	(0x820 + (vector) / 32)
#define X2APIC_LVTT		0x832
#define X2APIC_TMICT		0x838
#define X2APIC_TDCR		0x83e

static volatile uint64_t timer_irqs;

static void guest_timer_handler(struct ex_regs *regs)
{
	(void)regs;
	timer_irqs++;
	guest_wrmsr(X2APIC_EOI, 0);
}

static void guest_wait_nmis(uint64_t n)
{
	uint64_t end = guest_nmis + n, spins;

	for (spins = 0; guest_nmis < end && spins < SPIN_LIMIT; spins++)
		__asm__ volatile("pause");
}

/* A one-shot LAPIC timer interrupt, pending in the IRR while IF is clear. */
static bool guest_make_timer_irq_pending(void)
{
	uint64_t spins;

	guest_wrmsr(MSR_IA32_APICBASE, guest_rdmsr(MSR_IA32_APICBASE) |
		    APICBASE_ENABLE | APICBASE_X2APIC);
	guest_wrmsr(X2APIC_SPIV, 0x100 | 0xff);
	guest_wrmsr(X2APIC_TDCR, 0xb);			/* divide by 1 */
	guest_wrmsr(X2APIC_LVTT, TIMER_VECTOR);		/* one-shot */
	guest_wrmsr(X2APIC_TMICT, 1);
	for (spins = 0; spins < SPIN_LIMIT / 64; spins++)
		if (guest_rdmsr(X2APIC_IRR(TIMER_VECTOR)) & (1U << (TIMER_VECTOR % 32)))
			return true;
	return false;
}

/*
 * Interrupts are disabled outside the STI that ends each round (the test
 * VM starts with IF clear): phase A takes pvprof NMIs with nothing else
 * due, phase B with the timer interrupt pending the whole time.
 */
static void guest_irq_behind_nmi_code(void)
{
	unsigned int round;
	int64_t ret;

	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	ret = pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0);
	GUEST_SYNC_ARGS(STAGE_REGISTERED, ret, 0, 0);
	if (ret)
		GUEST_DONE();
	guest_wait_nmis(WARMUP_NMIS);
	for (round = 0; round < ROUNDS; round++) {
		GUEST_SYNC_ARGS(STAGE_IRQ_A_START, guest_nmis, timer_irqs, 0);
		guest_wait_nmis(ROUND_NMIS);
		GUEST_SYNC_ARGS(STAGE_IRQ_A_END, guest_nmis, timer_irqs, 0);
		GUEST_ASSERT(guest_make_timer_irq_pending());
		GUEST_SYNC_ARGS(STAGE_IRQ_B_START, guest_nmis, timer_irqs, 0);
		guest_wait_nmis(ROUND_NMIS);
		GUEST_SYNC_ARGS(STAGE_IRQ_B_END, guest_nmis, timer_irqs, 0);
		__asm__ volatile("sti; nop; cli" ::: "memory");
	}
	GUEST_SYNC_ARGS(STAGE_IRQ_DELIVERED, timer_irqs, 0, 0);
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_DONE();
}

struct phase_counters {
	uint64_t nmis;		/* the guest's count of pvprof NMIs */
	uint64_t irq_exits;
	uint64_t irq_window_exits;
};

static struct phase_counters phase_read(struct kvm_vm *vm, const struct ucall *uc)
{
	return (struct phase_counters) {
		.nmis = uc->args[1],
		.irq_exits = vm_debugfs_stat(vm, "irq_exits"),
		.irq_window_exits = vm_debugfs_stat(vm, "irq_window_exits"),
	};
}

/*
 * Runs one phase from its start sync to its end sync and adds what it
 * took to @sum.  The timer interrupts delivered so far must be one per
 * round before this one.
 */
static void phase_run(struct kvm_vcpu *vcpu, unsigned int start_stage,
		      unsigned int round, struct phase_counters *sum)
{
	struct phase_counters start, end;
	struct ucall uc;

	vcpu_run_expect_sync(vcpu, start_stage, &uc);
	start = phase_read(vcpu->vm, &uc);
	TEST_ASSERT_EQ(uc.args[2], round);
	vcpu_run_expect_sync(vcpu, start_stage + 1, &uc);
	end = phase_read(vcpu->vm, &uc);
	TEST_ASSERT_EQ(uc.args[2], round);
	sum->nmis += end.nmis - start.nmis;
	sum->irq_exits += end.irq_exits - start.irq_exits;
	sum->irq_window_exits += end.irq_window_exits - start.irq_window_exits;
}

#define IRQ_WAITS_PARAM	"/sys/module/kvm/parameters/pvprof_irq_waits_for_nmi"

static int irq_waits_param(int set)
{
	FILE *f = fopen(IRQ_WAITS_PARAM, "r+");
	int old;

	TEST_ASSERT(f, "cannot open %s: %s", IRQ_WAITS_PARAM, strerror(errno));
	TEST_ASSERT(fscanf(f, "%d", &old) == 1, "cannot read %s", IRQ_WAITS_PARAM);
	rewind(f);
	TEST_ASSERT(fprintf(f, "%d", set) > 0 && fclose(f) == 0, "cannot write %s",
		    IRQ_WAITS_PARAM);
	return old;
}

/* CPUID's hypervisor bit, as the kernel shows it. */
static bool host_runs_under_hypervisor(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool found = false;

	TEST_ASSERT(f, "/proc/cpuinfo: %s", strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "flags", 5) && strstr(line, " hypervisor");
	fclose(f);
	return found;
}

enum irq_rule { IRQ_IMMEDIATE_EXIT, IRQ_WAITS_FOR_WINDOW };

/*
 * An interrupt due on an entry that injects an NMI cannot be injected on
 * that entry.  Stock KVM forces an immediate exit for it, which finds the
 * guest in its NMI handler with IF clear and only opens the interrupt
 * window.  pvprof can open the window at once (spec pvprof-host-sequence,
 * at delivery; kvm.pvprof_irq_waits_for_nmi): with an interrupt pending
 * behind IF=0 all through phase B, its NMIs then cost no more interrupt
 * exits than phase A's (one per sample, the host timer's, plus the host's
 * own interrupts), where stock KVM's rule costs one more per NMI.  The
 * interrupt is delivered when the guest sets IF, once per round.  Runs
 * with the parameter at @param and expects @rule.
 */
static void irq_behind_nmi(int param, enum irq_rule rule)
{
	struct phase_counters a = { 0 }, b = { 0 };
	struct pvprof_ctl_vm vmarg = { 0 };
	unsigned int round;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	bool stock = test_kvm_flavour() == KVM_FLAVOUR_STOCK;
	int kvm_fd, saved = 0;
	bool waited;

	/* Stock KVM has no such parameter: the case only checks REGISTER fails. */
	if (!stock)
		saved = irq_waits_param(param);
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	TEST_ASSERT(kvm_fd >= 0, "open /dev/kvm: %s", strerror(errno));
	vm = vm_create_barebones();
	TEST_ASSERT(!ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0), "KVM_CREATE_IRQCHIP: %s",
		    strerror(errno));
	vcpu = vm_vcpu_add(vm, guest_irq_behind_nmi_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	vm_install_exception_handler(vm, TIMER_VECTOR, guest_timer_handler);
	if (!sampling_started(kvm_fd, vm, vcpu))
		goto out;
	vmarg.vm_fd = vm->fd;

	for (round = 0; round < ROUNDS; round++) {
		phase_run(vcpu, STAGE_IRQ_A_START, round, &a);
		phase_run(vcpu, STAGE_IRQ_B_START, round, &b);
	}
	vcpu_run_expect_sync(vcpu, STAGE_IRQ_DELIVERED, &uc);
	TEST_ASSERT(uc.args[1] == ROUNDS, "%llu timer interrupts after %d STIs",
		    (unsigned long long)uc.args[1], ROUNDS);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_DISABLE, &vmarg), 0);
	vcpu_run_expect_done(vcpu);

	fprintf(stderr, "# measured with pvprof_irq_waits_for_nmi=%d: %d rounds; phase A (nothing due): %llu NMIs, %llu interrupt exits; phase B (an interrupt due): %llu NMIs, %llu interrupt exits, %llu interrupt-window exits\n",
		param, ROUNDS, (unsigned long long)a.nmis, (unsigned long long)a.irq_exits,
		(unsigned long long)b.nmis, (unsigned long long)b.irq_exits,
		(unsigned long long)b.irq_window_exits);
	TEST_ASSERT(a.nmis >= ROUNDS * ROUND_NMIS && b.nmis >= ROUNDS * ROUND_NMIS,
		    "phases took %llu and %llu NMIs, wanted %d each",
		    (unsigned long long)a.nmis, (unsigned long long)b.nmis,
		    ROUNDS * ROUND_NMIS);
	/* With IF clear the window never opens during phase B. */
	TEST_ASSERT_EQ(b.irq_window_exits, 0);
	/* Waiting: per NMI, phase B's interrupt exits exceed phase A's by under 0.5. */
	waited = 2 * b.irq_exits * a.nmis < 2 * a.irq_exits * b.nmis + a.nmis * b.nmis;
	TEST_ASSERT(waited == (rule == IRQ_WAITS_FOR_WINDOW),
		    "expected %s; interrupt exits per NMI: %llu/%llu with an interrupt due, %llu/%llu without",
		    rule == IRQ_WAITS_FOR_WINDOW ? "no exit per NMI for the interrupt" :
		    "KVM's immediate exit per NMI",
		    (unsigned long long)b.irq_exits, (unsigned long long)b.nmis,
		    (unsigned long long)a.irq_exits, (unsigned long long)a.nmis);
out:
	kvm_vm_free(vm);
	close(kvm_fd);
	if (!stock)
		irq_waits_param(saved);
}

static void test_irq_behind_nmi_waits_for_window(void)
{
	irq_behind_nmi(1, IRQ_WAITS_FOR_WINDOW);
}

static void test_irq_behind_nmi_immediate_exit(void)
{
	irq_behind_nmi(0, IRQ_IMMEDIATE_EXIT);
}

/* The default: the window on hardware, KVM's immediate exit under a hypervisor. */
static void test_irq_behind_nmi_default(void)
{
	bool nested = host_runs_under_hypervisor();

	fprintf(stderr, "# this host %s CPUID's hypervisor bit\n", nested ? "has" : "lacks");
	irq_behind_nmi(-1, nested ? IRQ_IMMEDIATE_EXIT : IRQ_WAITS_FOR_WINDOW);
}

enum { STAGE_SB_DISABLED = 10, STAGE_SB_DONE };

/* Sideband messages live in free guest RAM past the sample buffer. */
#define SB_GPA		0x340000ULL
#define SB_SMALL	32

static int64_t sideband(uint64_t gpa, uint64_t len)
{
	return pvprof_hypercall(PVPROF_OP_SIDEBAND, gpa, len, 0);
}

static void guest_sideband(void)
{
	struct pvprof_sideband_hdr *h = (void *)SB_GPA;
	uint64_t accepted = 0, limited = 0, i;

	h->type = PVPROF_SB_PROCESS;
	h->version = PVPROF_SIDEBAND_VERSION;
	h->size = SB_SMALL;
	/* Not enabled: accepted and discarded. */
	GUEST_SYNC_ARGS(STAGE_SB_DISABLED, sideband(SB_GPA, SB_SMALL), 0, 0);

	GUEST_ASSERT_EQ(sideband(SB_GPA, SB_SMALL), 0);
	GUEST_ASSERT_EQ(sideband(SB_GPA, PVPROF_SIDEBAND_MAX_SIZE + 1),
			-(int64_t)PVPROF_E2BIG);
	GUEST_ASSERT_EQ(sideband(SB_GPA, 8), -(int64_t)PVPROF_EINVAL);
	GUEST_ASSERT_EQ(sideband(SB_GPA + PVPROF_PAGE_SIZE - 16, SB_SMALL),
			-(int64_t)PVPROF_EINVAL);
	GUEST_ASSERT_EQ(sideband(GUEST_MEM_SIZE, SB_SMALL),
			-(int64_t)PVPROF_EFAULT);
	h->version = PVPROF_SIDEBAND_VERSION + 1;
	GUEST_ASSERT_EQ(sideband(SB_GPA, SB_SMALL), -(int64_t)PVPROF_EINVAL);
	h->version = PVPROF_SIDEBAND_VERSION;

	/* Full pages until the budget of one second runs out. */
	h->size = PVPROF_SIDEBAND_MAX_SIZE;
	for (i = 0; i < 2 * PVPROF_SIDEBAND_DEFAULT_RATE / PVPROF_SIDEBAND_MAX_SIZE; i++) {
		int64_t ret = sideband(SB_GPA, PVPROF_SIDEBAND_MAX_SIZE);

		if (ret) {
			GUEST_ASSERT_EQ(ret, -(int64_t)PVPROF_ERATELIMIT);
			limited++;
			break;
		}
		accepted++;
	}
	GUEST_SYNC_ARGS(STAGE_SB_DONE, accepted, limited, 0);
	GUEST_DONE();
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void test_sideband(void)
{
	struct pvprof_ctl_enable en = {
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_period = 10 * 1000 * 1000,
	};
	struct pvprof_ctl_vm vmarg = { 0 };
	static uint8_t buf[1 << 20];
	struct pvprof_ctl_status cs;
	struct pvprof_vcpu_status vs;
	uint64_t accepted, entries = 0, bytes = 0;
	uint64_t start_ns, elapsed_ns, refill_pages;
	struct pvprof_st_iter it;
	struct pvprof_st_view v;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	int kvm_fd, stream_fd;
	ssize_t n;

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	TEST_ASSERT(kvm_fd >= 0, "open /dev/kvm: %s", strerror(errno));
	vm = vm_create_with_one_vcpu(&vcpu, guest_sideband);
	start_ns = monotonic_ns();
	vcpu_run_expect_sync(vcpu, STAGE_SB_DISABLED, &uc);
	if (test_kvm_flavour() == KVM_FLAVOUR_STOCK) {
		TEST_ASSERT_EQ(uc.args[1], -(uint64_t)PVPROF_ENOSYS);
		goto out;
	}
	TEST_ASSERT_EQ(uc.args[1], 0);

	en.vm_fd = vm->fd;
	vmarg.vm_fd = vm->fd;
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_ENABLE, &en), 0);
	stream_fd = ioctl(kvm_fd, PVPROF_CTL_STREAM, &vmarg);
	TEST_ASSERT(stream_fd >= 0, "PVPROF_CTL_STREAM: %s", strerror(errno));
	vcpu_run_expect_sync(vcpu, STAGE_SB_DONE, &uc);
	elapsed_ns = monotonic_ns() - start_ns;
	accepted = uc.args[1];
	TEST_ASSERT_EQ(uc.args[2], 1);
	/*
	 * One second of budget, less the small message, plus what the bucket
	 * refilled while the burst ran: that depends on how fast this
	 * (emulated, possibly debug) machine is, so it is measured, not assumed.
	 */
	refill_pages = (elapsed_ns * PVPROF_SIDEBAND_DEFAULT_RATE / 1000000000ULL +
			PVPROF_SIDEBAND_MAX_SIZE - 1) / PVPROF_SIDEBAND_MAX_SIZE;
	TEST_ASSERT(accepted >= PVPROF_SIDEBAND_DEFAULT_RATE / PVPROF_SIDEBAND_MAX_SIZE - 2 &&
		    accepted <= PVPROF_SIDEBAND_DEFAULT_RATE / PVPROF_SIDEBAND_MAX_SIZE +
				refill_pages + 1,
		    "%llu full pages accepted from a budget of %u bytes/s in %llu ms",
		    (unsigned long long)accepted, PVPROF_SIDEBAND_DEFAULT_RATE,
		    (unsigned long long)(elapsed_ns / 1000000));
	vcpu_run_expect_done(vcpu);

	status_get(kvm_fd, vm->fd, &cs, &vs);
	TEST_ASSERT_EQ(cs.sideband_bytes,
		       SB_SMALL + accepted * PVPROF_SIDEBAND_MAX_SIZE);
	/* E2BIG, two EINVAL framing, EFAULT, bad version, one rate limit. */
	TEST_ASSERT_EQ(cs.sideband_refused, 6);

	TEST_ASSERT(fcntl(stream_fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	while ((n = read(stream_fd, buf, sizeof(buf))) > 0) {
		enum pvprof_st_status st;

		pvprof_st_iter_init(&it, buf, n);
		if (entries)
			it.entries = 1;
		while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK) {
			entries++;
			if (v.hdr.type != PVPROF_ST_SIDEBAND)
				continue;
			bytes += v.sb_len;
		}
		TEST_ASSERT(st == PVPROF_ST_END, "stream framing: %s",
			    pvprof_st_status_name(st));
	}
	TEST_ASSERT(n < 0 && errno == EAGAIN, "stream read: %s", strerror(errno));
	TEST_ASSERT_EQ(bytes, cs.sideband_bytes);
	close(stream_fd);
out:
	kvm_vm_free(vm);
	close(kvm_fd);
}

static const struct test_case cases[] = {
	{ "cpu_clock_end_to_end", test_cpu_clock_end_to_end },
	{ "slow_handler_not_stale", test_slow_handler_not_stale },
	{ "irq_behind_nmi_waits_for_window", test_irq_behind_nmi_waits_for_window },
	{ "irq_behind_nmi_immediate_exit", test_irq_behind_nmi_immediate_exit },
	{ "irq_behind_nmi_default", test_irq_behind_nmi_default },
	{ "sideband", test_sideband },
};

int main(int argc, char **argv)
{
	return test_run_cases("sample", cases, ARRAY_SIZE(cases), argc, argv);
}
