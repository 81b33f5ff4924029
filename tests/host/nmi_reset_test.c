// SPDX-License-Identifier: GPL-2.0
/*
 * The NMI pvprof owes does not outlive KVM's copy of it (issue #29, bug 3).
 * pvprof owes an NMI from its injection until a delivery is attributed to
 * it; KVM_GET_VCPU_EVENTS leaves that NMI out of nmi.pending (a snapshot
 * must not carry it).  When KVM discards its pending NMIs (a reset, or the
 * VMM writing the vCPU's NMI state back), an NMI still owed would hide the
 * vCPU's next unrelated NMI from the VMM and claim it as pvprof's.
 *
 * The case leaves a pvprof NMI pending in KVM: the guest holds in its NMI
 * handler while samples wait, the VMM unmasks NMIs and re-injects an
 * exception (so the NMI cannot be delivered on the next entry), and a
 * signal cancels that entry after pvprof injected.  Then the VMM writes the NMI
 * state back with nothing pending, as QEMU does on reset and on loading a
 * snapshot, and queues an NMI of its own with KVM_NMI: KVM's own
 * KVM_GET_VCPU_EVENTS must report it pending.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_TICK = 1, STAGE_IN_NMI, STAGE_QUIESCED };

#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(16 * PVPROF_PAGE_SIZE)
#define TICK_CYCLES	(20ULL * 1000 * 1000)
#define PHASE_SECONDS	60
/* Ticks spent in the NMI handler while samples wait behind it. */
#define HELD_TICKS	5

static struct pvprof_guest_buf gbuf;
static volatile uint32_t g_stop, g_live, g_answer, g_hold, g_release;

static void guest_tick(uint32_t stage)
{
	uint64_t start = guest_rdtsc();

	while (guest_rdtsc() - start < TICK_CYCLES)
		__asm__ volatile("pause");
	GUEST_SYNC(stage);
}

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;

	if (g_hold) {
		g_hold = 0;
		while (!g_release)
			guest_tick(STAGE_IN_NMI);
		return;
	}
	if (g_live && g_answer)
		pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res);
}

static void guest_code(void)
{
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	g_live = 1;
	g_answer = 1;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	while (!g_stop)
		guest_tick(STAGE_TICK);
	g_live = 0;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC(STAGE_QUIESCED);
	GUEST_DONE();
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

/* KVM_RUN with SIGUSR1 pending and unblocked only inside it: it cancels the entry. */
static void run_cancelled_by_signal(struct kvm_vcpu *vcpu)
{
	struct {
		struct kvm_signal_mask hdr;
		uint8_t set[8];
	} run_mask = { .hdr.len = 8 };
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	struct timespec zero = { 0 };
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	TEST_ASSERT(!pthread_sigmask(SIG_BLOCK, &usr1, NULL), "pthread_sigmask");
	TEST_ASSERT(!pthread_kill(pthread_self(), SIGUSR1), "pthread_kill");
	vcpu_ioctl(vcpu, KVM_SET_SIGNAL_MASK, &run_mask);
	TEST_ASSERT(_vcpu_run(vcpu) == -1 && errno == EINTR,
		    "KVM_RUN with a signal pending did not end with EINTR");
	/* Take the signal back and run without a signal mask again. */
	TEST_ASSERT(sigtimedwait(&usr1, NULL, &zero) == SIGUSR1, "sigtimedwait");
	TEST_ASSERT(_vcpu_ioctl(vcpu, KVM_SET_SIGNAL_MASK, NULL) == 0,
		    "KVM_SET_SIGNAL_MASK(NULL)");
	TEST_ASSERT(!pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), "pthread_sigmask");
}

static void test_vmm_nmi_state_write_forgets_owed_nmi(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};
	uint64_t deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	struct kvm_vcpu_events ev;
	struct pvprof_vcpu_status vs, held;
	struct ucall uc;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint8_t *slot_mem;
	int i, stream_fd;

	TEST_REQUIRE(kvm_check_cap(KVM_CAP_VCPU_EVENTS));
	vm = vm_create_barebones();
	vcpu = vm_vcpu_add(vm, guest_code);
	slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE, slot_mem);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);

	/*
	 * The guest answers until it holds in an NMI handler, which leaves
	 * that NMI's notices unconsumed (a guest that answered none would
	 * soon get none: spec pvprof-host-sequence, step 5).
	 */
	do {
		TEST_ASSERT(test_now_ns() < deadline, "no pvprof NMI in %d s", PHASE_SECONDS);
		vcpu_run_expect_sync(vcpu, STAGE_TICK, NULL);
		pvprof_vcpu_status(vm, 1, 0, &vs);
	} while (vs.nmis < 1);
	guest_var(vm, g_hold) = 1;
	for (;;) {
		TEST_ASSERT(test_now_ns() < deadline, "no NMI held the guest in %d s",
			    PHASE_SECONDS);
		vcpu_run(vcpu);
		TEST_ASSERT(get_ucall(vcpu, &uc) == UCALL_SYNC, "guest did not tick");
		if (uc.args[0] == STAGE_IN_NMI)
			break;
	}
	/* Samples come and wait behind the handler. */
	for (i = 1; i < HELD_TICKS; i++)
		vcpu_run_expect_sync(vcpu, STAGE_IN_NMI, NULL);
	pvprof_vcpu_status(vm, 1, 0, &held);
	vcpu_ioctl(vcpu, KVM_GET_VCPU_EVENTS, &ev);
	TEST_ASSERT(ev.nmi.masked && !ev.nmi.pending,
		    "setup: the guest's NMI handler should mask NMIs (masked %u, pending %u)",
		    ev.nmi.masked, ev.nmi.pending);

	/*
	 * Unmasked but undeliverable on the next entry, which a signal
	 * cancels: an exception being re-injected goes first (KVM injects
	 * one event per entry).
	 */
	ev.nmi.masked = 0;
	ev.exception.injected = 1;
	ev.exception.nr = UD_VECTOR;
	ev.exception.has_error_code = 0;
	ev.flags = 0;
	vcpu_ioctl(vcpu, KVM_SET_VCPU_EVENTS, &ev);
	run_cancelled_by_signal(vcpu);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	TEST_ASSERT(vs.nmis == held.nmis + 1,
		    "setup: pvprof injected %llu NMIs on the cancelled entry, not 1",
		    (unsigned long long)(vs.nmis - held.nmis));
	vcpu_ioctl(vcpu, KVM_GET_VCPU_EVENTS, &ev);
	TEST_ASSERT(!ev.nmi.pending && !ev.nmi.injected && ev.exception.injected,
		    "setup: pvprof's NMI should be owed and pending behind the exception (pending %u, injected %u, exception %u)",
		    ev.nmi.pending, ev.nmi.injected, ev.exception.injected);

	/*
	 * The VMM writes the state back without the exception and with no
	 * NMI pending, the guest's handler still running.
	 */
	ev.exception.injected = 0;
	ev.nmi.pending = 0;
	ev.nmi.masked = 1;
	ev.flags = KVM_VCPUEVENT_VALID_NMI_PENDING;
	vcpu_ioctl(vcpu, KVM_SET_VCPU_EVENTS, &ev);
	/* ...and queues an NMI of its own, which KVM must report. */
	vcpu_nmi(vcpu);
	vcpu_ioctl(vcpu, KVM_GET_VCPU_EVENTS, &ev);
	TEST_ASSERT(ev.nmi.pending == 1,
		    "the VMM's own NMI is hidden from KVM_GET_VCPU_EVENTS: pvprof still owes the NMI KVM discarded");

	/* The guest leaves its handler and quiesces. */
	guest_var(vm, g_release) = 1;
	guest_var(vm, g_stop) = 1;
	pvprof_disable(vm);
	for (;;) {
		vcpu_run(vcpu);
		TEST_ASSERT(get_ucall(vcpu, &uc) == UCALL_SYNC,
			    "guest did not reach STAGE_QUIESCED");
		if (uc.args[0] == STAGE_QUIESCED)
			break;
	}
	pvprof_vcpu_status(vm, 1, 0, &vs);
	pvprof_assert_books(&vs, "quiesced");
	pvprof_print_books("vmm_nmi_state_write", &vs);
	vcpu_run_expect_done(vcpu);
	vcpu_release(vcpu);
	kvm_vm_free(vm);
	munmap(slot_mem, SLOT_SIZE);
	close(stream_fd);
}

static const struct test_case cases[] = {
	{ "vmm_nmi_state_write_forgets_owed_nmi",
	  test_vmm_nmi_state_write_forgets_owed_nmi },
};

int main(int argc, char **argv)
{
	return test_run_cases("nmi_reset", cases, ARRAY_SIZE(cases), argc, argv);
}
