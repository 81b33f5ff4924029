// SPDX-License-Identifier: GPL-2.0
/*
 * Platform self-test: an NMI that arrives while the guest's NMI handler runs
 * is held until that handler's IRET, then delivered before the interrupted
 * code executes another instruction.
 *
 * Scenario:
 *   1. The guest syncs; the host queues NMI 1 (KVM_NMI) and resumes it. KVM
 *      injects NMI 1 at the entry, so it interrupts the instruction after the
 *      ucall's "in": ucall_return_site.
 *   2. The handler syncs from inside NMI 1; the host queues NMI 2 and resumes.
 *      NMIs are blocked until IRET: the handler must not be re-entered.
 *   3. The handler returns. KVM intercepts the IRET, single-steps it, and
 *      injects NMI 2 right after it: NMI 2 must see the same interrupted RIP
 *      and RSP as NMI 1, i.e. the IRET's return site.
 */
#include "kvm_util.h"

enum {
	STAGE_READY = 1,
	STAGE_IN_FIRST_NMI,
};

#define NMIS_EXPECTED	2

/* Guest state, read back by the host after GUEST_DONE(). */
static volatile uint64_t nmi_count;
static volatile uint64_t nmi_depth;
static volatile uint64_t nmi_max_depth;
static uint64_t nmi_rip[NMIS_EXPECTED];
static uint64_t nmi_rsp[NMIS_EXPECTED];

static void guest_nmi_handler(struct ex_regs *regs)
{
	uint64_t n = nmi_count++;

	if (++nmi_depth > nmi_max_depth)
		nmi_max_depth = nmi_depth;
	if (n < NMIS_EXPECTED) {
		nmi_rip[n] = regs->rip;
		nmi_rsp[n] = regs->rsp;
	}
	if (n == 0)
		GUEST_SYNC(STAGE_IN_FIRST_NMI);
	nmi_depth--;
}

static void guest_code(void)
{
	GUEST_SYNC(STAGE_READY);
	/* Both NMIs ran before the ucall above returned. */
	GUEST_ASSERT_EQ(nmi_count, NMIS_EXPECTED);
	GUEST_DONE();
}

static void test_second_nmi_held_until_iret(void)
{
	uint64_t return_site = (uint64_t)(uintptr_t)ucall_return_site;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);

	vcpu_run_expect_sync(vcpu, STAGE_READY, NULL);
	vcpu_nmi(vcpu);
	vcpu_run_expect_sync(vcpu, STAGE_IN_FIRST_NMI, NULL);
	vcpu_nmi(vcpu);
	vcpu_run_expect_done(vcpu);

	sync_global_from_guest(vm, nmi_count);
	sync_global_from_guest(vm, nmi_max_depth);
	sync_global_from_guest(vm, nmi_rip);
	sync_global_from_guest(vm, nmi_rsp);
	kvm_vm_free(vm);

	TEST_ASSERT(nmi_count == NMIS_EXPECTED, "%llu NMIs handled, expected %d",
		    (unsigned long long)nmi_count, NMIS_EXPECTED);
	TEST_ASSERT(nmi_max_depth == 1,
		    "NMI handler re-entered (depth %llu): the second NMI was not held",
		    (unsigned long long)nmi_max_depth);
	TEST_ASSERT(nmi_rip[0] == return_site,
		    "NMI 1 interrupted rip %#llx, expected the ucall return site %#llx",
		    (unsigned long long)nmi_rip[0],
		    (unsigned long long)return_site);
	TEST_ASSERT(nmi_rip[1] == nmi_rip[0] && nmi_rsp[1] == nmi_rsp[0],
		    "NMI 2 interrupted rip %#llx rsp %#llx, expected NMI 1's IRET return site rip %#llx rsp %#llx",
		    (unsigned long long)nmi_rip[1],
		    (unsigned long long)nmi_rsp[1],
		    (unsigned long long)nmi_rip[0],
		    (unsigned long long)nmi_rsp[0]);
}

static const struct test_case cases[] = {
	{ "second_nmi_held_until_iret", test_second_nmi_held_until_iret },
};

int main(int argc, char **argv)
{
	return test_run_cases("nmi_held_until_iret", cases, ARRAY_SIZE(cases),
			      argc, argv);
}
