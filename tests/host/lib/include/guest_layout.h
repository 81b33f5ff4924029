/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest physical (= guest virtual, identity-mapped) memory map of a test VM,
 * and the GDT selectors. Shared by C and assembly, so only #defines here.
 *
 * The test program is linked non-PIE at 0x400000, and its loaded segments are
 * copied to the same guest addresses: guest functions and globals are used at
 * their host addresses.
 */
#ifndef PVPROF_GUEST_LAYOUT_H
#define PVPROF_GUEST_LAYOUT_H

#define GUEST_GDT_GPA		0x1000
#define GUEST_IDT_GPA		0x2000
#define GUEST_TSS_GPA		0x3000
#define GUEST_PML4_GPA		0x4000
#define GUEST_PDPT_GPA		0x5000
#define GUEST_PD_GPA		0x6000
/* Stack the CPU switches to (TSS.rsp0) on an exception or NMI in ring 3. */
#define GUEST_RSP0_TOP		0x180000
/* Ring-0 stack the guest code starts on. */
#define GUEST_STACK_TOP		0x200000
#define GUEST_USER_STACK_TOP	0x300000
/* The program image must lie in [GUEST_IMAGE_MIN, GUEST_MEM_SIZE). */
#define GUEST_IMAGE_MIN		0x400000
#define GUEST_MEM_SIZE		(32 << 20)
/*
 * Ring-0 stack of a second vCPU: the last MiB of guest memory, above the
 * image (tests place their buffers from 0x300000 up). Guest exceptions and
 * NMIs in ring 0 stay on the interrupted stack, so the stack address also
 * tells guest code which vCPU it runs on.
 */
#define GUEST_STACK1_TOP	GUEST_MEM_SIZE
#define GUEST_IMAGE_END		(GUEST_STACK1_TOP - (1 << 20))
#define GUEST_MAX_VCPUS		2
/* Identity map of the first GiB with 2 MiB pages (one page directory). */
#define GUEST_MAPPED_SIZE	(1 << 30)

#define KERNEL_CS		0x08
#define KERNEL_DS		0x10
#define USER_CS			(0x18 | 3)
#define USER_DS			(0x20 | 3)
#define KERNEL_CS32		0x28	/* compatibility mode (L=0, D=1) */
#define TSS_SEL			0x30	/* 16-byte descriptor: 0x30 and 0x38 */
#define GDT_ENTRIES		8

#define X86_EFLAGS_FIXED	0x2
#define X86_EFLAGS_IOPL3	0x3000

#define UCALL_PORT		0x1000

#endif
