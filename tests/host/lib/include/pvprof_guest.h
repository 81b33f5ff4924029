/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest side of the pvprof transport (abi/pvprof.h): the KVM CPUID signature
 * and the hypercall, vmmcall on AMD and vmcall on Intel.
 */
#ifndef PVPROF_GUEST_H
#define PVPROF_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/pvprof.h"
#include "core/pvprof_core.h"
#include "core/callchain.h"
#include "processor.h"

#define KVM_CPUID_SIGNATURE	0x40000000

/* A hypercall with any number in rax (64-bit mode, the caller's CPL). */
static inline uint64_t guest_kvm_hypercall(uint64_t nr, uint64_t a0,
					   uint64_t a1, uint64_t a2,
					   uint64_t a3)
{
	uint64_t ret;

	if (guest_cpu_is_amd)
		__asm__ volatile("vmmcall"
				 : "=a"(ret)
				 : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3)
				 : "memory");
	else
		__asm__ volatile("vmcall"
				 : "=a"(ret)
				 : "a"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3)
				 : "memory");
	return ret;
}

/* The pvprof hypercall: rax = PVPROF_HC_NR, rbx = op, rcx/rdx/rsi = args. */
static inline int64_t pvprof_hypercall(uint64_t op, uint64_t a1, uint64_t a2,
				       uint64_t a3)
{
	return (int64_t)guest_kvm_hypercall(PVPROF_HC_NR, op, a1, a2, a3);
}

/* Is the hypervisor signature at CPUID 0x40000000 "KVMKVMKVM\0\0\0"? */
static inline bool guest_has_kvm_signature(void)
{
	uint32_t eax, ebx, ecx, edx;

	guest_cpuid(KVM_CPUID_SIGNATURE, 0, &eax, &ebx, &ecx, &edx);
	/* "KVMK" "VMKV" "M\0\0\0", little-endian. */
	return ebx == 0x4b4d564b && ecx == 0x564b4d56 && edx == 0x0000004d;
}

/*
 * The capture callback of the minimal guests (core/guest.h's
 * pvprof_capture_fn): one kernel-half frame derived from the interrupted
 * RIP, which a test can compare with the IP the host sampled.  @ctx is the
 * NMI's struct ex_regs.
 */
static inline void pvprof_guest_capture_rip(void *ctx, const struct pvprof_notice *n,
					    struct pvprof_callchain *chain, uint32_t max_frames)
{
	const struct ex_regs *regs = ctx;

	(void)n;
	(void)max_frames;
	pvprof_callchain_frames(chain)[0] = PVPROF_KERNEL_HALF_START + regs->rip;
	chain->nr_kernel = 1;
	chain->flags = PVPROF_CHAIN_F_KTHREAD;
}

#endif
