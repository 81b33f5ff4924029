// SPDX-License-Identifier: GPL-2.0
/*
 * ucall, as in the kernel's KVM selftests: the guest executes "in" from
 * UCALL_PORT with rdi pointing to a struct ucall on its stack; the host reads
 * it from guest memory when it sees that KVM_EXIT_IO.
 */
#include <stdio.h>

#include "kvm_util.h"

/*
 * noinline and noclone: exactly one copy of the "in", so that
 * ucall_return_site names the one place every ucall resumes at.
 */
void __attribute__((noinline, noclone)) ucall(const struct ucall *uc)
{
	__asm__ volatile("in %%dx, %%al\n\t"
			 ".globl ucall_return_site\n"
			 "ucall_return_site:"
			 : : "d"(UCALL_PORT), "D"(uc) : "rax", "memory");
}

void ucall_abort(const char *expr, const char *file, uint64_t line,
		 uint64_t a, uint64_t b)
{
	const struct ucall uc = {
		.cmd = UCALL_ABORT,
		.args = { a, b },
		.expr = expr,
		.file = file,
		.line = line,
	};

	/* The host never resumes a guest that aborted. */
	for (;;)
		ucall(&uc);
}

void guest_code_returned_abort(void);

void guest_code_returned_abort(void)
{
	GUEST_FAIL("guest code returned without GUEST_DONE()");
}

uint64_t get_ucall(struct kvm_vcpu *vcpu, struct ucall *uc)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;

	if (uc)
		memset(uc, 0, sizeof(*uc));
	if (run->exit_reason != KVM_EXIT_IO || run->io.port != UCALL_PORT ||
	    run->io.direction != KVM_EXIT_IO_IN)
		return UCALL_NONE;
	vcpu_regs_get(vcpu, &regs);
	if (uc) {
		memcpy(uc, addr_gva2hva(vcpu->vm, regs.rdi), sizeof(*uc));
		return uc->cmd;
	}
	return ((struct ucall *)addr_gva2hva(vcpu->vm, regs.rdi))->cmd;
}

static void __attribute__((noreturn))
fail_unexpected_exit(struct kvm_vcpu *vcpu, const char *expected)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;
	char detail[160] = "";

	vcpu_regs_get(vcpu, &regs);
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		snprintf(detail, sizeof(detail), " (port %#x, %s)", run->io.port,
			 run->io.direction == KVM_EXIT_IO_IN ? "in" : "out");
		break;
	case KVM_EXIT_MMIO:
		snprintf(detail, sizeof(detail), " (address %#llx)",
			 (unsigned long long)run->mmio.phys_addr);
		break;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(detail, sizeof(detail), " (hardware reason %#llx)",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		snprintf(detail, sizeof(detail), " (suberror %u)",
			 run->internal.suberror);
		break;
	}
	TEST_FAIL("expected %s, got exit %s%s at rip %#llx", expected,
		  exit_reason_str(run->exit_reason), detail,
		  (unsigned long long)regs.rip);
}

void fail_unexpected_ucall(struct kvm_vcpu *vcpu, const struct ucall *uc,
			   const char *expected)
{
	switch (uc->cmd) {
	case UCALL_ABORT:
		/* The strings live in the image, at the same host addresses. */
		TEST_FAIL("guest assertion failed at %s:%llu: %s (%#llx, %#llx)",
			  uc->file, (unsigned long long)uc->line, uc->expr,
			  (unsigned long long)uc->args[0],
			  (unsigned long long)uc->args[1]);
	case UCALL_SYNC:
		TEST_FAIL("expected %s, got GUEST_SYNC(%llu)", expected,
			  (unsigned long long)uc->args[0]);
	case UCALL_DONE:
		TEST_FAIL("expected %s, got GUEST_DONE()", expected);
	default:
		fail_unexpected_exit(vcpu, expected);
	}
}

void vcpu_run_expect_sync(struct kvm_vcpu *vcpu, uint64_t stage,
			  struct ucall *uc)
{
	struct ucall local;
	char expected[48];

	if (!uc)
		uc = &local;
	snprintf(expected, sizeof(expected), "GUEST_SYNC(%llu)",
		 (unsigned long long)stage);
	vcpu_run(vcpu);
	if (get_ucall(vcpu, uc) != UCALL_SYNC || uc->args[0] != stage)
		fail_unexpected_ucall(vcpu, uc, expected);
}

void vcpu_run_expect_done(struct kvm_vcpu *vcpu)
{
	struct ucall uc;

	vcpu_run(vcpu);
	if (get_ucall(vcpu, &uc) != UCALL_DONE)
		fail_unexpected_ucall(vcpu, &uc, "GUEST_DONE()");
}
