// SPDX-License-Identifier: GPL-2.0
/*
 * Self-test of the test framework: a guest failure must reach the host as a
 * failure with the guest's file and line, exceptions must be routed to the
 * handlers tests install (also from ring 3, through the TSS stack), and the
 * raw helpers must return errors instead of asserting. If any of this broke,
 * the platform self-tests could pass without checking anything.
 */
#include <string.h>

#include "kvm_util.h"

#define UD2_LENGTH	2

/* Guest state, read back by the host. */
static uint64_t guest_assert_line;
static volatile uint64_t ud_count;
static uint64_t ud_cs;
static uint64_t ud_handler_stack;

extern const char guest_ud2_site[];

static void __attribute__((noinline, noclone)) guest_ud2(void)
{
	__asm__ volatile(".globl guest_ud2_site\n"
			 "guest_ud2_site: ud2");
}

static void expect_abort(struct kvm_vcpu *vcpu, struct ucall *uc)
{
	vcpu_run(vcpu);
	TEST_ASSERT(get_ucall(vcpu, uc) == UCALL_ABORT,
		    "expected a guest abort, got exit %s / ucall %llu",
		    exit_reason_str(vcpu->run->exit_reason),
		    (unsigned long long)uc->cmd);
}

static void guest_failing_assert(void)
{
	volatile uint64_t one = 1;

	guest_assert_line = __LINE__; GUEST_ASSERT_EQ(one, 2);
	GUEST_DONE();
}

static void test_guest_assert_reports_file_line(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	vm = vm_create_with_one_vcpu(&vcpu, guest_failing_assert);
	expect_abort(vcpu, &uc);
	sync_global_from_guest(vm, guest_assert_line);
	kvm_vm_free(vm);

	TEST_ASSERT(!strcmp(uc.file, __FILE__), "abort names file %s", uc.file);
	TEST_ASSERT_EQ(uc.line, guest_assert_line);
	TEST_ASSERT(!strcmp(uc.expr, "one == 2"), "abort names expression %s",
		    uc.expr);
	TEST_ASSERT_EQ(uc.args[0], 1);
	TEST_ASSERT_EQ(uc.args[1], 2);
}

static void guest_unexpected_exception(void)
{
	guest_ud2();
	GUEST_DONE();
}

static void test_unexpected_exception_aborts(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	vm = vm_create_with_one_vcpu(&vcpu, guest_unexpected_exception);
	expect_abort(vcpu, &uc);
	kvm_vm_free(vm);
	TEST_ASSERT_EQ(uc.args[0], UD_VECTOR);
	TEST_ASSERT_EQ(uc.args[1], (uintptr_t)guest_ud2_site);
}

static void guest_returns(void)
{
}

static void test_guest_code_return_aborts(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	vm = vm_create_with_one_vcpu(&vcpu, guest_returns);
	expect_abort(vcpu, &uc);
	kvm_vm_free(vm);
	TEST_ASSERT(strstr(uc.expr, "returned without GUEST_DONE"),
		    "abort says \"%s\"", uc.expr);
}

static void guest_ud_handler(struct ex_regs *regs)
{
	uint64_t stack_marker = 0;

	ud_count++;
	ud_cs = regs->cs;
	ud_handler_stack = (uint64_t)(uintptr_t)&stack_marker;
	regs->rip += UD2_LENGTH;
}

static void guest_ud2_then_done(void)
{
	guest_ud2();
	GUEST_ASSERT_EQ(ud_count, 1);
	GUEST_DONE();
}

static void test_exception_handler_routed(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	vm = vm_create_with_one_vcpu(&vcpu, guest_ud2_then_done);
	vm_install_exception_handler(vm, UD_VECTOR, guest_ud_handler);
	vcpu_run_expect_done(vcpu);
	sync_global_from_guest(vm, ud_cs);
	kvm_vm_free(vm);
	TEST_ASSERT_EQ(ud_cs, KERNEL_CS);
}

static void guest_ud2_in_ring3(void)
{
	guest_enter_user_mode(guest_ud2_then_done);
}

/* An exception in ring 3 runs its handler on the TSS's rsp0 stack. */
static void test_ring3_exception_uses_rsp0_stack(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	vm = vm_create_with_one_vcpu(&vcpu, guest_ud2_in_ring3);
	vm_install_exception_handler(vm, UD_VECTOR, guest_ud_handler);
	vcpu_run_expect_done(vcpu);
	sync_global_from_guest(vm, ud_cs);
	sync_global_from_guest(vm, ud_handler_stack);
	kvm_vm_free(vm);
	TEST_ASSERT_EQ(ud_cs, USER_CS);
	TEST_ASSERT(ud_handler_stack < GUEST_RSP0_TOP &&
		    ud_handler_stack > GUEST_RSP0_TOP - 0x10000,
		    "handler stack %#llx is not just below rsp0 %#x",
		    (unsigned long long)ud_handler_stack, GUEST_RSP0_TOP);
}

static void guest_done(void)
{
	GUEST_DONE();
}

/* Raw helpers hand KVM's error back; the asserting ones would fail here. */
static void test_raw_helpers_return_errors(void)
{
	struct kvm_userspace_memory_region unaligned = {
		.slot = 1,
		.guest_phys_addr = GUEST_MEM_SIZE + 1,
		.memory_size = 4096,
	};
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	int ret;

	vm = vm_create_with_one_vcpu(&vcpu, guest_done);
	unaligned.userspace_addr = (uint64_t)(uintptr_t)vm->mem;
	ret = _vm_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &unaligned);
	TEST_ASSERT(ret == -1 && errno == EINVAL,
		    "unaligned memslot: expected EINVAL, got %d", ret);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);
}

static const struct test_case cases[] = {
	{ "guest_assert_reports_file_line", test_guest_assert_reports_file_line },
	{ "unexpected_exception_aborts", test_unexpected_exception_aborts },
	{ "guest_code_return_aborts", test_guest_code_return_aborts },
	{ "exception_handler_routed", test_exception_handler_routed },
	{ "ring3_exception_uses_rsp0_stack", test_ring3_exception_uses_rsp0_stack },
	{ "raw_helpers_return_errors", test_raw_helpers_return_errors },
};

int main(int argc, char **argv)
{
	return test_run_cases("framework", cases, ARRAY_SIZE(cases), argc,
			      argv);
}
