// SPDX-License-Identifier: GPL-2.0
/*
 * Platform self-test: detection of pvprof from a minimal guest.
 *
 * The guest finds KVM's CPUID signature, then issues the pvprof hypercall.
 * Which answer is right depends on the KVM the runner loaded (PVPROF_KVM):
 * stock KVM answers every pvprof call with -KVM_ENOSYS, pvprof's KVM answers
 * the probe with the ABI version and its features. A pvprof answer on the
 * stock run, or -KVM_ENOSYS on the pvprof run, fails.
 */
#include <stdio.h>

#include "kvm_util.h"
#include "pvprof_guest.h"

#define KVM_HC_VAPIC_POLL_IRQ	1

enum { STAGE_RESULT = 1 };

static uint64_t errno_ret(uint64_t code)
{
	return -code;
}

/* Issue one 64-bit hypercall from ring 0 with the host's arguments. */
static void guest_hypercall_and_report(uint64_t nr, uint64_t a0, uint64_t a1,
				       uint64_t a2, uint64_t a3)
{
	GUEST_SYNC_ARGS(STAGE_RESULT, guest_kvm_hypercall(nr, a0, a1, a2, a3),
			0, 0);
	GUEST_DONE();
}

static uint64_t hypercall_result(uint64_t nr, uint64_t a0, uint64_t a1,
				 uint64_t a2, uint64_t a3)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	vm = vm_create_with_one_vcpu(&vcpu,
				     (guest_code_t)guest_hypercall_and_report);
	vcpu_args_set(vcpu, 5, nr, a0, a1, a2, a3);
	vcpu_run_expect_sync(vcpu, STAGE_RESULT, &uc);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);
	return uc.args[1];
}

static uint64_t pvprof_result(uint64_t op, uint64_t a1, uint64_t a2,
			      uint64_t a3)
{
	return hypercall_result(PVPROF_HC_NR, op, a1, a2, a3);
}

/* On stock KVM every pvprof call must fail as an unknown hypercall. */
static bool expect_enosys_on_stock(uint64_t ret)
{
	if (test_kvm_flavour() != KVM_FLAVOUR_STOCK)
		return false;
	TEST_ASSERT(ret == errno_ret(PVPROF_ENOSYS),
		    "stock KVM must answer -KVM_ENOSYS (%#llx), got %#llx",
		    (unsigned long long)errno_ret(PVPROF_ENOSYS),
		    (unsigned long long)ret);
	return true;
}

static void assert_probe_answer(uint64_t ret, uint32_t version)
{
	TEST_ASSERT(ret != errno_ret(PVPROF_ENOSYS),
		    "pvprof KVM is loaded but the probe got -KVM_ENOSYS");
	TEST_ASSERT((int64_t)ret >= 0, "probe failed with -%lld",
		    -(long long)ret);
	TEST_ASSERT(PVPROF_PROBE_VERSION(ret) == version,
		    "probe answered version %u, expected %u (raw %#llx)",
		    PVPROF_PROBE_VERSION(ret), version,
		    (unsigned long long)ret);
	TEST_ASSERT(!(PVPROF_PROBE_FEATURES(ret) & ~PVPROF_FEAT_ALL),
		    "probe answered unknown feature bits %#x",
		    PVPROF_PROBE_FEATURES(ret));
	TEST_ASSERT((ret >> 48) == 0, "probe set reserved bits 48..63: %#llx",
		    (unsigned long long)ret);
}

static void guest_check_signature(void)
{
	GUEST_ASSERT(guest_has_kvm_signature());
	GUEST_DONE();
}

static void test_kvm_signature(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	vm = vm_create_with_one_vcpu(&vcpu, guest_check_signature);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);
}

static void test_probe_answer(void)
{
	uint64_t ret = pvprof_result(PVPROF_OP_PROBE, PVPROF_ABI_VERSION, 0, 0);

	if (expect_enosys_on_stock(ret))
		return;
	assert_probe_answer(ret, PVPROF_ABI_VERSION);
	fprintf(stderr, "probe: version %u, features %#x\n",
		PVPROF_PROBE_VERSION(ret), PVPROF_PROBE_FEATURES(ret));
}

static void test_probe_newer_guest_gets_v1(void)
{
	uint64_t ret = pvprof_result(PVPROF_OP_PROBE, PVPROF_ABI_VERSION + 1,
				     0, 0);

	if (expect_enosys_on_stock(ret))
		return;
	assert_probe_answer(ret, PVPROF_ABI_VERSION);
}

static void test_probe_version_zero_einval(void)
{
	uint64_t ret = pvprof_result(PVPROF_OP_PROBE, 0, 0, 0);

	if (expect_enosys_on_stock(ret))
		return;
	TEST_ASSERT_EQ(ret, errno_ret(PVPROF_EINVAL));
}

static void test_probe_unused_arg_einval(void)
{
	uint64_t ret = pvprof_result(PVPROF_OP_PROBE, PVPROF_ABI_VERSION, 0, 1);

	if (expect_enosys_on_stock(ret))
		return;
	TEST_ASSERT_EQ(ret, errno_ret(PVPROF_EINVAL));
}

static void test_unknown_op_eopnotsupp(void)
{
	uint64_t next_op = pvprof_result(PVPROF_OP_MAX + 1, 0, 0, 0);
	/* Only the low bits naming PROBE: the op must be compared in full. */
	uint64_t wide_op = pvprof_result((1ULL << 32) | PVPROF_OP_PROBE,
					 PVPROF_ABI_VERSION, 0, 0);

	if (expect_enosys_on_stock(next_op) && expect_enosys_on_stock(wide_op))
		return;
	TEST_ASSERT_EQ(next_op, errno_ret(PVPROF_EOPNOTSUPP));
	TEST_ASSERT_EQ(wide_op, errno_ret(PVPROF_EOPNOTSUPP));
}

/* KVM's own hypercalls keep working next to pvprof's. */
static void test_kvm_hypercall_still_answered(void)
{
	TEST_ASSERT_EQ(hypercall_result(KVM_HC_VAPIC_POLL_IRQ, 0, 0, 0, 0), 0);
}

/*
 * Outside 64-bit mode KVM truncates the number, the arguments and the result
 * to 32 bits. The upper halves carry garbage that must be ignored: on pvprof
 * KVM this is a valid probe, on stock KVM eax holds -KVM_ENOSYS.
 */
#define UPPER_GARBAGE	0xdead000000000000ULL

static void guest_probe_compat(void)
{
	uint64_t probe64 = pvprof_hypercall(PVPROF_OP_PROBE, PVPROF_ABI_VERSION,
					    0, 0);
	uint64_t probe32 = guest_hypercall_compat(UPPER_GARBAGE | PVPROF_HC_NR,
						  UPPER_GARBAGE | PVPROF_OP_PROBE,
						  UPPER_GARBAGE | PVPROF_ABI_VERSION,
						  UPPER_GARBAGE, UPPER_GARBAGE);

	GUEST_SYNC_ARGS(STAGE_RESULT, probe64, probe32, 0);
	GUEST_DONE();
}

static void test_probe_compat_mode_truncation(void)
{
	uint64_t probe64, probe32;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	vm = vm_create_with_one_vcpu(&vcpu, guest_probe_compat);
	vcpu_run_expect_sync(vcpu, STAGE_RESULT, &uc);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);
	probe64 = uc.args[1];
	probe32 = uc.args[2];

	if (test_kvm_flavour() == KVM_FLAVOUR_STOCK) {
		TEST_ASSERT(probe32 == (uint32_t)errno_ret(PVPROF_ENOSYS),
			    "compatibility-mode call on stock KVM: expected rax %#x, got %#llx",
			    (uint32_t)errno_ret(PVPROF_ENOSYS),
			    (unsigned long long)probe32);
		return;
	}
	assert_probe_answer(probe64, PVPROF_ABI_VERSION);
	TEST_ASSERT(probe32 == (uint32_t)probe64,
		    "compatibility-mode probe: expected rax %#x, got %#llx",
		    (uint32_t)probe64, (unsigned long long)probe32);
}

/* KVM refuses hypercalls from CPL 3 with -KVM_EPERM before pvprof sees them. */
static void guest_user_probe(void)
{
	GUEST_SYNC_ARGS(STAGE_RESULT,
			pvprof_hypercall(PVPROF_OP_PROBE, PVPROF_ABI_VERSION,
					 0, 0),
			0, 0);
	GUEST_DONE();
}

static void guest_probe_from_ring3(void)
{
	guest_enter_user_mode(guest_user_probe);
}

static void test_hypercall_cpl3_eperm(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	vm = vm_create_with_one_vcpu(&vcpu, guest_probe_from_ring3);
	vcpu_run_expect_sync(vcpu, STAGE_RESULT, &uc);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);
	TEST_ASSERT_EQ(uc.args[1], errno_ret(PVPROF_EPERM));
}

static const struct test_case cases[] = {
	{ "kvm_signature", test_kvm_signature },
	{ "probe_answer", test_probe_answer },
	{ "probe_newer_guest_gets_v1", test_probe_newer_guest_gets_v1 },
	{ "probe_version_zero_einval", test_probe_version_zero_einval },
	{ "probe_unused_arg_einval", test_probe_unused_arg_einval },
	{ "unknown_op_eopnotsupp", test_unknown_op_eopnotsupp },
	{ "kvm_hypercall_still_answered", test_kvm_hypercall_still_answered },
	{ "probe_compat_mode_truncation", test_probe_compat_mode_truncation },
	{ "hypercall_cpl3_eperm", test_hypercall_cpl3_eperm },
};

int main(int argc, char **argv)
{
	return test_run_cases("probe", cases, ARRAY_SIZE(cases), argc, argv);
}
