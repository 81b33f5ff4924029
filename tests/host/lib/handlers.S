/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest entry code: the IDT stubs and exception frame (as in the kernel's
 * KVM selftests, lib/x86_64/handlers.S), and the mode changes guest C code
 * cannot express: ring 3 entry and a compatibility-mode hypercall.
 */
#include "guest_layout.h"

	.text
handle_exception:
	push %r15
	push %r14
	push %r13
	push %r12
	push %r11
	push %r10
	push %r9
	push %r8
	push %rdi
	push %rsi
	push %rbp
	push %rbx
	push %rdx
	push %rcx
	push %rax
	/* 16-byte aligned here: 5 frame words, error code, vector, 15 GPRs. */
	mov %rsp, %rdi
	call route_exception
	pop %rax
	pop %rcx
	pop %rdx
	pop %rbx
	pop %rbp
	pop %rsi
	pop %rdi
	pop %r8
	pop %r9
	pop %r10
	pop %r11
	pop %r12
	pop %r13
	pop %r14
	pop %r15
	/* Drop the vector and the error code. */
	add $16, %rsp
	iretq

	.pushsection .rodata
	.globl idt_handlers
	.balign 8
idt_handlers:
	.popsection

/* One stub per vector; vectors without a CPU error code push a zero. */
.macro HANDLERS has_error from to
	vector = \from
	.rept \to - \from + 1
	.balign 8
666:
	.pushsection .rodata
	.quad 666b
	.popsection
	.if ! \has_error
	pushq $0
	.endif
	pushq $vector
	jmp handle_exception
	vector = vector + 1
	.endr
.endm

	HANDLERS has_error=0 from=0  to=7
	HANDLERS has_error=1 from=8  to=8
	HANDLERS has_error=0 from=9  to=9
	HANDLERS has_error=1 from=10 to=14
	HANDLERS has_error=0 from=15 to=16
	HANDLERS has_error=1 from=17 to=17
	HANDLERS has_error=0 from=18 to=255

/* void guest_enter_user_mode(void (*fn)(void)) */
	.globl guest_enter_user_mode
guest_enter_user_mode:
	pushq $USER_DS
	pushq $(GUEST_USER_STACK_TOP - 8)
	pushq $(X86_EFLAGS_FIXED | X86_EFLAGS_IOPL3)
	pushq $USER_CS
	pushq %rdi
	iretq

/*
 * uint64_t guest_hypercall_compat(nr, a0, a1, a2, a3)
 * In: rdi = nr, rsi = a0, rdx = a1, rcx = a2, r8 = a3.
 * Hypercall registers: rax = nr, rbx = a0, rcx = a1, rdx = a2, rsi = a3.
 */
	.globl guest_hypercall_compat
guest_hypercall_compat:
	push %rbx
	mov %rdi, %rax
	mov %rsi, %rbx
	mov %rcx, %r9
	mov %rdx, %rcx
	mov %r9, %rdx
	mov %r8, %rsi
	pushq $KERNEL_CS32
	lea compat_vmcall(%rip), %r10
	cmpb $0, guest_cpu_is_amd(%rip)
	je 1f
	lea compat_vmmcall(%rip), %r10
1:	push %r10
	lretq

	.code32
compat_vmmcall:
	vmmcall
	ljmp $KERNEL_CS, $compat_back
compat_vmcall:
	vmcall
	ljmp $KERNEL_CS, $compat_back
	.code64

compat_back:
	pop %rbx
	ret

/*
 * Guest code is entered with this as its return address: returning instead
 * of calling GUEST_DONE() is a test bug, reported as a guest abort.
 */
	.globl guest_code_returned
guest_code_returned:
	and $-16, %rsp
	call guest_code_returned_abort
	ud2

	.section .note.GNU-stack, "", %progbits
