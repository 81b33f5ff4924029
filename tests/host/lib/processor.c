// SPDX-License-Identifier: GPL-2.0
/*
 * 64-bit long mode set up by the host, as the kernel's KVM selftests do in
 * lib/x86_64/processor.c: a flat GDT with ring-0, ring-3 and compatibility
 * code segments and a TSS, an IDT whose every vector enters the guest's
 * exception router, and an identity map of the first GiB.
 */
#include "kvm_util.h"

#define X86_CR0_PE		(1ULL << 0)
#define X86_CR0_MP		(1ULL << 1)
#define X86_CR0_ET		(1ULL << 4)
#define X86_CR0_NE		(1ULL << 5)
#define X86_CR0_WP		(1ULL << 16)
#define X86_CR0_PG		(1ULL << 31)
#define X86_CR4_PAE		(1ULL << 5)
#define X86_CR4_OSFXSR		(1ULL << 9)
#define X86_CR4_OSXMMEXCPT	(1ULL << 10)
#define EFER_LME		(1ULL << 8)
#define EFER_LMA		(1ULL << 10)

#define PTE_PRESENT		(1ULL << 0)
#define PTE_WRITABLE		(1ULL << 1)
#define PTE_USER		(1ULL << 2)
#define PTE_LARGE		(1ULL << 7)
#define PTE_TABLE		(PTE_PRESENT | PTE_WRITABLE | PTE_USER)

#define SEG_TYPE_DATA_RW	0x3	/* read/write, accessed */
#define SEG_TYPE_CODE_RX	0xb	/* execute/read, accessed */
#define SEG_TYPE_TSS64_BUSY	0xb
#define IDT_GATE_INTERRUPT	0xe
#define TSS_SIZE		104
#define TSS_RSP0_OFFSET		4
#define TSS_IOMAP_OFFSET	102
#define IDT_ENTRIES		256

/* Guest state, in the shared image; written by the host before the run. */
bool guest_cpu_is_amd;
guest_exception_handler_t guest_exception_handlers[IDT_ENTRIES];

/* Entry stubs of lib/handlers.S, one per vector. */
extern const uint64_t idt_handlers[IDT_ENTRIES];

void vm_install_exception_handler(struct kvm_vm *vm, unsigned int vector,
				  guest_exception_handler_t handler)
{
	guest_exception_handler_t *slot;

	TEST_ASSERT(vector < IDT_ENTRIES, "no vector %u", vector);
	slot = addr_gva2hva(vm, (uint64_t)&guest_exception_handlers[vector]);
	*slot = handler;
}

/* The guest's exception router, called by the entry stubs. */
void route_exception(struct ex_regs *regs);

void route_exception(struct ex_regs *regs)
{
	guest_exception_handler_t handler = guest_exception_handlers[regs->vector];

	if (handler) {
		handler(regs);
		return;
	}
	ucall_abort("unexpected exception in the guest (vector, rip)", __FILE__,
		    __LINE__, regs->vector, regs->rip);
}

static struct kvm_segment segment(uint16_t selector, uint8_t type, bool code64)
{
	return (struct kvm_segment) {
		.base = 0,
		.limit = 0xffffffff,
		.selector = selector,
		.type = type,
		.present = 1,
		.dpl = selector & 3,
		.db = !code64,
		.s = 1,
		.l = code64,
		.g = 1,
	};
}

static uint64_t gdt_descriptor(const struct kvm_segment *s)
{
	uint64_t limit = s->g ? s->limit >> 12 : s->limit;

	return (limit & 0xffff) |
	       (s->base & 0xffffff) << 16 |
	       (uint64_t)(s->type | s->s << 4 | s->dpl << 5 | s->present << 7) << 40 |
	       ((limit >> 16) & 0xf) << 48 |
	       (uint64_t)(s->avl | s->l << 1 | s->db << 2 | s->g << 3) << 52 |
	       ((s->base >> 24) & 0xff) << 56;
}

static struct kvm_segment tss_segment(void)
{
	return (struct kvm_segment) {
		.base = GUEST_TSS_GPA,
		.limit = TSS_SIZE - 1,
		.selector = TSS_SEL,
		.type = SEG_TYPE_TSS64_BUSY,
		.present = 1,
	};
}

static void setup_gdt_and_tss(struct kvm_vm *vm)
{
	uint64_t *gdt = addr_gva2hva(vm, GUEST_GDT_GPA);
	uint8_t *tss = addr_gva2hva(vm, GUEST_TSS_GPA);
	struct kvm_segment s;
	uint64_t rsp0 = GUEST_RSP0_TOP;
	uint16_t iomap = TSS_SIZE;	/* no I/O bitmap: IOPL decides */

	s = segment(KERNEL_CS, SEG_TYPE_CODE_RX, true);
	gdt[KERNEL_CS >> 3] = gdt_descriptor(&s);
	s = segment(KERNEL_DS, SEG_TYPE_DATA_RW, false);
	gdt[KERNEL_DS >> 3] = gdt_descriptor(&s);
	s = segment(USER_CS, SEG_TYPE_CODE_RX, true);
	gdt[USER_CS >> 3] = gdt_descriptor(&s);
	s = segment(USER_DS, SEG_TYPE_DATA_RW, false);
	gdt[USER_DS >> 3] = gdt_descriptor(&s);
	s = segment(KERNEL_CS32, SEG_TYPE_CODE_RX, false);
	gdt[KERNEL_CS32 >> 3] = gdt_descriptor(&s);
	s = tss_segment();
	gdt[TSS_SEL >> 3] = gdt_descriptor(&s);
	gdt[(TSS_SEL >> 3) + 1] = 0;	/* base bits 32..63 */

	memset(tss, 0, TSS_SIZE);
	memcpy(tss + TSS_RSP0_OFFSET, &rsp0, sizeof(rsp0));
	memcpy(tss + TSS_IOMAP_OFFSET, &iomap, sizeof(iomap));
}

static void setup_idt(struct kvm_vm *vm)
{
	uint64_t *idt = addr_gva2hva(vm, GUEST_IDT_GPA);
	unsigned int v;

	for (v = 0; v < IDT_ENTRIES; v++) {
		uint64_t off = idt_handlers[v];

		idt[2 * v] = (off & 0xffff) | (uint64_t)KERNEL_CS << 16 |
			     (uint64_t)(IDT_GATE_INTERRUPT | 0x80) << 40 |
			     ((off >> 16) & 0xffff) << 48;
		idt[2 * v + 1] = off >> 32;
	}
}

static void setup_identity_map(struct kvm_vm *vm)
{
	uint64_t *pml4 = addr_gva2hva(vm, GUEST_PML4_GPA);
	uint64_t *pdpt = addr_gva2hva(vm, GUEST_PDPT_GPA);
	uint64_t *pd = addr_gva2hva(vm, GUEST_PD_GPA);
	uint64_t i;

	/* User-accessible everywhere, so ring-3 code can run the same image. */
	pml4[0] = GUEST_PDPT_GPA | PTE_TABLE;
	pdpt[0] = GUEST_PD_GPA | PTE_TABLE;
	for (i = 0; i < GUEST_MAPPED_SIZE / (2 << 20); i++)
		pd[i] = (i << 21) | PTE_TABLE | PTE_LARGE;
}

void vm_setup_long_mode_tables(struct kvm_vm *vm)
{
	setup_gdt_and_tss(vm);
	setup_idt(vm);
	setup_identity_map(vm);
}

void vcpu_long_mode_sregs(struct kvm_sregs *sregs)
{
	sregs->cr0 = X86_CR0_PE | X86_CR0_MP | X86_CR0_ET | X86_CR0_NE |
		     X86_CR0_WP | X86_CR0_PG;
	sregs->cr3 = GUEST_PML4_GPA;
	sregs->cr4 = X86_CR4_PAE | X86_CR4_OSFXSR | X86_CR4_OSXMMEXCPT;
	sregs->efer = EFER_LME | EFER_LMA;

	sregs->gdt.base = GUEST_GDT_GPA;
	sregs->gdt.limit = GDT_ENTRIES * 8 - 1;
	sregs->idt.base = GUEST_IDT_GPA;
	sregs->idt.limit = IDT_ENTRIES * 16 - 1;

	sregs->cs = segment(KERNEL_CS, SEG_TYPE_CODE_RX, true);
	sregs->ds = segment(KERNEL_DS, SEG_TYPE_DATA_RW, false);
	sregs->es = sregs->ds;
	sregs->ss = sregs->ds;
	sregs->fs = sregs->ds;
	sregs->gs = sregs->ds;
	sregs->tr = tss_segment();
	memset(&sregs->ldt, 0, sizeof(sregs->ldt));
	sregs->ldt.unusable = 1;
}
