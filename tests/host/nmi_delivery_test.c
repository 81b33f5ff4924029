// SPDX-License-Identifier: GPL-2.0
/*
 * Platform self-test: how KVM delivers NMIs queued with KVM_NMI, the facts
 * pvprof's NMI protocol is built on.
 *
 * - An NMI that arrives while the guest's NMI handler runs is held until the
 *   handler's IRET, then delivered before the interrupted code executes
 *   another instruction. KVM injects an NMI queued between two runs at the
 *   entry, so it interrupts the instruction after the ucall's "in"
 *   (ucall_return_site); KVM intercepts the handler's IRET, single-steps it
 *   and injects the held NMI: it must see the same interrupted RIP and RSP,
 *   i.e. the IRET's return site, and the handler must never be re-entered.
 * - KVM merges queued NMIs: at most two pending, or one while an NMI is
 *   being handled (process_nmi()). The surplus is dropped, not delayed.
 */
#include "kvm_util.h"

enum {
	STAGE_READY = 1,
	STAGE_IN_FIRST_NMI,
	STAGE_AFTER_NMIS,
};

#define NMIS_SAVED	4

/* Guest state. */
static bool sync_in_first_nmi;		/* set by the host */
static volatile uint64_t nmi_count;
static volatile uint64_t nmi_depth;
static volatile uint64_t nmi_max_depth;
static uint64_t nmi_rip[NMIS_SAVED];
static uint64_t nmi_rsp[NMIS_SAVED];

static void guest_nmi_handler(struct ex_regs *regs)
{
	uint64_t n = nmi_count++;

	if (++nmi_depth > nmi_max_depth)
		nmi_max_depth = nmi_depth;
	if (n < NMIS_SAVED) {
		nmi_rip[n] = regs->rip;
		nmi_rsp[n] = regs->rsp;
	}
	if (n == 0 && sync_in_first_nmi)
		GUEST_SYNC(STAGE_IN_FIRST_NMI);
	nmi_depth--;
}

static void guest_code(void)
{
	GUEST_SYNC(STAGE_READY);
	GUEST_SYNC_ARGS(STAGE_AFTER_NMIS, nmi_count, nmi_max_depth, 0);
	GUEST_DONE();
}

struct nmi_outcome {
	uint64_t count;
	uint64_t rip[NMIS_SAVED];
	uint64_t rsp[NMIS_SAVED];
};

static void queue_nmis(struct kvm_vcpu *vcpu, unsigned int nr)
{
	while (nr--)
		vcpu_nmi(vcpu);
}

/*
 * Queue @at_ready NMIs when the guest is ready and, if @in_handler is not
 * zero, that many more while the first NMI's handler runs. Require that
 * nothing is left pending once the guest reports back.
 */
static struct nmi_outcome run_scenario(unsigned int at_ready,
				       unsigned int in_handler)
{
	struct kvm_vcpu_events events;
	struct nmi_outcome out;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	TEST_REQUIRE(kvm_check_cap(KVM_CAP_VCPU_EVENTS));
	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	sync_in_first_nmi = in_handler != 0;
	sync_global_to_guest(vm, sync_in_first_nmi);

	vcpu_run_expect_sync(vcpu, STAGE_READY, NULL);
	queue_nmis(vcpu, at_ready);
	if (in_handler) {
		vcpu_run_expect_sync(vcpu, STAGE_IN_FIRST_NMI, NULL);
		queue_nmis(vcpu, in_handler);
	}
	vcpu_run_expect_sync(vcpu, STAGE_AFTER_NMIS, &uc);
	vcpu_ioctl(vcpu, KVM_GET_VCPU_EVENTS, &events);
	TEST_ASSERT(!events.nmi.pending && !events.nmi.injected,
		    "NMI still pending (%u) or injected (%u) after the guest went on",
		    events.nmi.pending, events.nmi.injected);
	vcpu_run_expect_done(vcpu);

	sync_global_from_guest(vm, nmi_count);
	sync_global_from_guest(vm, nmi_max_depth);
	sync_global_from_guest(vm, nmi_rip);
	sync_global_from_guest(vm, nmi_rsp);
	kvm_vm_free(vm);

	TEST_ASSERT(nmi_count == uc.args[1],
		    "an NMI arrived after the guest reported %llu (now %llu)",
		    (unsigned long long)uc.args[1],
		    (unsigned long long)nmi_count);
	TEST_ASSERT(nmi_max_depth == 1,
		    "NMI handler re-entered (depth %llu): an NMI was not held",
		    (unsigned long long)nmi_max_depth);
	out.count = nmi_count;
	memcpy(out.rip, nmi_rip, sizeof(out.rip));
	memcpy(out.rsp, nmi_rsp, sizeof(out.rsp));
	return out;
}

static void assert_second_nmi_at_iret_return_site(const struct nmi_outcome *o)
{
	uint64_t return_site = (uint64_t)(uintptr_t)ucall_return_site;

	TEST_ASSERT(o->rip[0] == return_site,
		    "NMI 1 interrupted rip %#llx, expected the ucall return site %#llx",
		    (unsigned long long)o->rip[0],
		    (unsigned long long)return_site);
	TEST_ASSERT(o->rip[1] == o->rip[0] && o->rsp[1] == o->rsp[0],
		    "NMI 2 interrupted rip %#llx rsp %#llx, expected NMI 1's IRET return site rip %#llx rsp %#llx",
		    (unsigned long long)o->rip[1],
		    (unsigned long long)o->rsp[1],
		    (unsigned long long)o->rip[0],
		    (unsigned long long)o->rsp[0]);
}

static void test_second_nmi_held_until_iret(void)
{
	struct nmi_outcome o = run_scenario(1, 1);

	TEST_ASSERT_EQ(o.count, 2);
	assert_second_nmi_at_iret_return_site(&o);
}

/* While one NMI is handled KVM keeps one more pending: two become one. */
static void test_nmis_during_handler_merge_to_one(void)
{
	struct nmi_outcome o = run_scenario(1, 2);

	TEST_ASSERT(o.count == 2,
		    "%llu NMIs delivered for 1 + 2 queued during the handler, expected 2",
		    (unsigned long long)o.count);
	assert_second_nmi_at_iret_return_site(&o);
}

static void test_two_queued_nmis_both_delivered(void)
{
	struct nmi_outcome o = run_scenario(2, 0);

	TEST_ASSERT_EQ(o.count, 2);
	assert_second_nmi_at_iret_return_site(&o);
}

/* KVM keeps at most two NMIs pending: the third queued one is dropped. */
static void test_three_queued_nmis_deliver_two(void)
{
	struct nmi_outcome o = run_scenario(3, 0);

	TEST_ASSERT(o.count == 2, "%llu NMIs delivered for 3 queued, expected 2",
		    (unsigned long long)o.count);
	assert_second_nmi_at_iret_return_site(&o);
}

static const struct test_case cases[] = {
	{ "second_nmi_held_until_iret", test_second_nmi_held_until_iret },
	{ "nmis_during_handler_merge_to_one", test_nmis_during_handler_merge_to_one },
	{ "two_queued_nmis_both_delivered", test_two_queued_nmis_both_delivered },
	{ "three_queued_nmis_deliver_two", test_three_queued_nmis_deliver_two },
};

int main(int argc, char **argv)
{
	return test_run_cases("nmi_delivery", cases, ARRAY_SIZE(cases), argc,
			      argv);
}
