// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's own single-step survives pvprof's NMIs (issue #29, bug 5).
 * SVM without vNMI opens KVM's NMI window, once the guest's NMI handler
 * has hit its IRET intercept, by single-stepping over the IRET; the #DB
 * that ends the step is not reflected, and TF is then restored as the
 * handler had it (clear), not as the IRET popped it: code that the guest
 * single-steps itself (ptrace, kprobes, a debugger stub) stops stepping.
 * Stock KVM only opens that window with a second NMI pending; pvprof must
 * not open it for notices waiting behind a handler.
 *
 * The guest single-steps a counted loop (SINGLE_STEPS iterations of two
 * instructions) with its own #DB handler counting the traps, while pvprof
 * samples it at 10 kHz and its NMI handler, after answering, spins long
 * enough for samples to land behind it.  The oracle is the loop's own
 * construction: every instruction of it traps.
 *
 * A reproducer of an open bug (README.md): `make -C tests/host
 * run-reproducers` runs it; it fails on this platform.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_STEPPED = 1 };

#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(16 * PVPROF_PAGE_SIZE)
#define SINGLE_STEPS	3000ULL
#define HANDLER_CYCLES	(2ULL * 1000 * 1000)
#define EFLAGS_TF	0x100ULL

static struct pvprof_guest_buf gbuf;
static volatile uint64_t g_traps, g_nmis_stepping, g_nmis;

static void guest_db(struct ex_regs *regs)
{
	(void)regs;
	g_traps++;
}

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;
	uint64_t start;

	g_nmis++;
	if (regs->rflags & EFLAGS_TF)
		g_nmis_stepping++;
	pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res);
	/* Samples land while the handler runs: their notices wait for it. */
	start = guest_rdtsc();
	while (guest_rdtsc() - start < HANDLER_CYCLES)
		__asm__ volatile("pause");
}

/* SINGLE_STEPS iterations of dec/jnz with TF set: 2 traps each. */
static void guest_stepped_loop(void)
{
	uint64_t n = SINGLE_STEPS;

	__asm__ volatile("pushfq\n\t"
			 "orq $0x100, (%%rsp)\n\t"
			 "popfq\n\t"
			 "1: decq %0\n\t"
			 "jnz 1b\n\t"
			 "pushfq\n\t"
			 "andq $~0x100, (%%rsp)\n\t"
			 "popfq"
			 : "+r"(n) : : "cc", "memory");
}

static void guest_code(void)
{
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	guest_stepped_loop();
	GUEST_SYNC_ARGS(STAGE_STEPPED, g_traps, g_nmis_stepping, g_nmis);
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_DONE();
}

static void test_single_step_kept_under_sampling(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = PVPROF_MAX_FREQ,
	};
	struct pvprof_vcpu_status vs;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint8_t *slot_mem;
	struct ucall uc;
	int stream_fd;

	vm = vm_create_barebones();
	vcpu = vm_vcpu_add(vm, guest_code);
	slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE, slot_mem);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	vm_install_exception_handler(vm, DB_VECTOR, guest_db);
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);

	vcpu_run_expect_sync(vcpu, STAGE_STEPPED, &uc);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	fprintf(stderr, "# measured: %llu single-step traps for %llu stepped instructions; %llu NMIs, %llu of them in stepped code; pvprof nmis %llu\n",
		(unsigned long long)uc.args[1], 2 * SINGLE_STEPS,
		(unsigned long long)uc.args[3], (unsigned long long)uc.args[2],
		(unsigned long long)vs.nmis);
	TEST_ASSERT(uc.args[2] >= 1,
		    "no NMI interrupted the stepped loop: the case did not run");
	TEST_ASSERT(uc.args[1] >= 2 * SINGLE_STEPS,
		    "the guest's single-step stopped after %llu of %llu traps: an NMI window cleared its TF",
		    (unsigned long long)uc.args[1], 2 * SINGLE_STEPS);
	pvprof_disable(vm);
	vcpu_run_expect_done(vcpu);
	vcpu_release(vcpu);
	kvm_vm_free(vm);
	munmap(slot_mem, SLOT_SIZE);
	close(stream_fd);
}

static const struct test_case cases[] = {
	{ "single_step_kept_under_sampling", test_single_step_kept_under_sampling },
};

int main(int argc, char **argv)
{
	return test_run_cases("single_step", cases, ARRAY_SIZE(cases), argc, argv);
}
