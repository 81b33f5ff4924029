// SPDX-License-Identifier: GPL-2.0
/*
 * A guest that stops reading notices (a crash kernel without the driver, a
 * hung driver) is not sent one NMI per sample (issue #29, item 7).  After 8
 * pvprof NMIs in a row that left the guest's notice_tail where it was, the
 * host injects only every 64th and counts the rest in STATUS's nmis_withheld
 * (spec pvprof-host-sequence, step 5); once the guest reads a notice again,
 * every sample gets its NMI.
 *
 * The oracle is the guest's own count of the NMIs it took, against the
 * samples the host took meanwhile.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_TICK = 1, STAGE_QUIESCED };

#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(16 * PVPROF_PAGE_SIZE)
#define TICK_CYCLES	(20ULL * 1000 * 1000)
#define PHASE_SECONDS	120
#define SILENT_SAMPLES	400

static struct pvprof_guest_buf gbuf;
static volatile uint32_t g_stop, g_answer;
static volatile uint64_t g_nmis;

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;

	g_nmis++;
	if (g_answer)
		pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res);
}

static void guest_code(void)
{
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	while (!g_stop) {
		uint64_t start = guest_rdtsc();

		while (guest_rdtsc() - start < TICK_CYCLES)
			__asm__ volatile("pause");
		GUEST_SYNC(STAGE_TICK);
	}
	g_answer = 0;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC(STAGE_QUIESCED);
	GUEST_DONE();
}

/* Ticks until @done (or fail after PHASE_SECONDS). */
static void run_ticks(struct kvm_vm *vm, struct kvm_vcpu *vcpu,
		      bool (*done)(const struct pvprof_vcpu_status *, uint64_t),
		      uint64_t arg, struct pvprof_vcpu_status *vs)
{
	uint64_t deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;

	for (;;) {
		vcpu_run_expect_sync(vcpu, STAGE_TICK, NULL);
		pvprof_vcpu_status(vm, 1, 0, vs);
		if (done(vs, arg))
			return;
		if (test_now_ns() > deadline) {
			pvprof_print_books("at the deadline", vs);
			TEST_FAIL("condition not reached in %d s", PHASE_SECONDS);
		}
	}
}

static bool samples_reach(const struct pvprof_vcpu_status *vs, uint64_t n)
{
	return vs->samples >= n;
}

static bool callchains_reach(const struct pvprof_vcpu_status *vs, uint64_t n)
{
	return vs->callchains >= n;
}

static void test_silent_guest_gets_few_nmis(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};
	struct pvprof_vcpu_status vs, silent;
	uint64_t guest_nmis;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint8_t *slot_mem;
	int stream_fd;

	vm = vm_create_barebones();
	vcpu = vm_vcpu_add(vm, guest_code);
	slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE, slot_mem);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);

	/* Silent: the guest takes its NMIs and reads nothing. */
	run_ticks(vm, vcpu, samples_reach, SILENT_SAMPLES, &silent);
	guest_nmis = guest_var(vm, g_nmis);
	fprintf(stderr, "# measured: silent guest: %llu samples, %llu notices, %llu pvprof NMIs (%llu taken by the guest), %u withheld\n",
		(unsigned long long)silent.samples, (unsigned long long)silent.notices,
		(unsigned long long)silent.nmis, (unsigned long long)guest_nmis,
		silent.nmis_withheld);
	TEST_ASSERT(guest_nmis == silent.nmis,
		    "the guest took %llu NMIs, the host injected %llu",
		    (unsigned long long)guest_nmis, (unsigned long long)silent.nmis);
	TEST_ASSERT(silent.nmis <= 8 + silent.samples / 64 + 1,
		    "a guest that reads no notice got %llu NMIs for %llu samples",
		    (unsigned long long)silent.nmis, (unsigned long long)silent.samples);
	TEST_ASSERT(silent.nmis_withheld > 0, "no NMI counted as withheld");

	/* The guest reads again: the next probe NMI is answered, then all. */
	guest_var(vm, g_answer) = 1;
	run_ticks(vm, vcpu, callchains_reach, silent.callchains + 50, &vs);
	fprintf(stderr, "# measured: answering again: %llu more samples, %llu more NMIs, %llu callchains\n",
		(unsigned long long)(vs.samples - silent.samples),
		(unsigned long long)(vs.nmis - silent.nmis),
		(unsigned long long)vs.callchains);

	guest_var(vm, g_stop) = 1;
	pvprof_disable(vm);
	vcpu_run_expect_sync(vcpu, STAGE_QUIESCED, NULL);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	pvprof_assert_books(&vs, "quiesced");
	pvprof_print_books("silent_guest", &vs);
	vcpu_run_expect_done(vcpu);
	vcpu_release(vcpu);
	kvm_vm_free(vm);
	munmap(slot_mem, SLOT_SIZE);
	close(stream_fd);
}

static const struct test_case cases[] = {
	{ "silent_guest_gets_few_nmis", test_silent_guest_gets_few_nmis },
};

int main(int argc, char **argv)
{
	return test_run_cases("silent_guest", cases, ARRAY_SIZE(cases), argc, argv);
}
