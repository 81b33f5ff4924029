/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86 long-mode guest environment: descriptor tables, exception routing,
 * CPUID, and the ways guest code changes mode (ring 3, compatibility mode).
 * Functions named guest_* run in the guest; the rest run on the host.
 */
#ifndef PVPROF_PROCESSOR_H
#define PVPROF_PROCESSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "guest_layout.h"

#define NMI_VECTOR	2
#define UD_VECTOR	6

/* Saved by the exception entry code (lib/handlers.S), lowest address first. */
struct ex_regs {
	uint64_t rax, rcx, rdx, rbx;
	uint64_t rbp, rsi, rdi;
	uint64_t r8, r9, r10, r11;
	uint64_t r12, r13, r14, r15;
	uint64_t vector;
	uint64_t error_code;
	/* The CPU's interrupt frame: where the guest was interrupted. */
	uint64_t rip;
	uint64_t cs;
	uint64_t rflags;
	uint64_t rsp;
	uint64_t ss;
};

typedef void (*guest_exception_handler_t)(struct ex_regs *regs);

struct kvm_vm;

/*
 * Route the guest's exception or NMI @vector to @handler (a guest function).
 * Vectors without a handler end the test with a guest abort naming the
 * vector and the RIP.
 */
void vm_install_exception_handler(struct kvm_vm *vm, unsigned int vector,
				  guest_exception_handler_t handler);

/* Host-side setup of a fresh VM's tables and vCPU state (kvm_util.c). */
void vm_setup_long_mode_tables(struct kvm_vm *vm);
struct kvm_sregs;
void vcpu_long_mode_sregs(struct kvm_sregs *sregs);

/* True when the guest's CPU vendor is AMD (or Hygon): vmmcall, not vmcall. */
extern bool guest_cpu_is_amd;

static inline void guest_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t *eax,
			       uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
	__asm__ volatile("cpuid"
			 : "=a"(*eax), "=b"(*ebx), "=c"(*ecx), "=d"(*edx)
			 : "a"(leaf), "c"(subleaf)
			 : "memory");
}

static inline uint64_t guest_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t guest_rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void guest_wrmsr(uint32_t msr, uint64_t val)
{
	__asm__ volatile("wrmsr"
			 : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
			 : "memory");
}

/* Continue at @fn in ring 3 (IOPL 3, so ucalls still work); never returns. */
void __attribute__((noreturn)) guest_enter_user_mode(void (*fn)(void));

/*
 * vmcall/vmmcall from a 32-bit compatibility-mode code segment, with the
 * 64-bit register values given (KVM must truncate them), back in 64-bit mode
 * before returning. Returns the full 64-bit rax after the call.
 */
uint64_t guest_hypercall_compat(uint64_t nr, uint64_t a0, uint64_t a1,
				uint64_t a2, uint64_t a3);

#endif
