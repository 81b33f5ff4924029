/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMs and vCPUs through /dev/kvm. Every helper has an asserting form that
 * fails the case with the ioctl's name and errno, and a raw form prefixed
 * with "_" that returns the ioctl's result for negative tests.
 */
#ifndef PVPROF_KVM_UTIL_H
#define PVPROF_KVM_UTIL_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "processor.h"
#include "test_util.h"
#include "ucall.h"

struct kvm_vm {
	int kvm_fd;
	int fd;
	/* Host mapping of guest physical memory [0, GUEST_MEM_SIZE). */
	uint8_t *mem;
	struct kvm_cpuid2 *cpuid;
	bool cpu_is_amd;
	/* vCPUs added so far: the next one gets this id. */
	uint32_t nr_vcpus;
};

struct kvm_vcpu {
	struct kvm_vm *vm;
	uint32_t id;
	int fd;
	struct kvm_run *run;
};

typedef void (*guest_code_t)(void);

int kvm_check_cap(long cap);

/*
 * A VM with one memslot holding GUEST_MEM_SIZE bytes at guest physical 0,
 * this program's image copied in at its own addresses, 64-bit long mode with
 * an identity map, and one vCPU that starts at @guest_code on the ring-0
 * stack with NMIs and exceptions routed to the guest's IDT.
 */
struct kvm_vm *vm_create_with_one_vcpu(struct kvm_vcpu **vcpu,
				       guest_code_t guest_code);
/*
 * The same in two steps, for tests that configure the VM before its vCPU
 * exists (e.g. KVM_CAP_DIRTY_LOG_RING): the VM with its memory and page
 * tables, then the vCPU. Up to GUEST_MAX_VCPUS vCPUs per VM, with ids 0, 1
 * in the order added; vCPU 0 starts on GUEST_STACK_TOP, vCPU 1 on
 * GUEST_STACK1_TOP. They share the TSS (only ring 3 code needs it, and
 * KVM_SET_SREGS loads TR without touching the descriptor's busy bit).
 */
struct kvm_vm *vm_create_barebones(void);
struct kvm_vcpu *vm_vcpu_add(struct kvm_vm *vm, guest_code_t guest_code);

/*
 * KVM_SET_USER_MEMORY_REGION for memslot @slot (0 is the library's):
 * create, move (same slot and size, new @gpa), change flags, or delete
 * (@size 0).
 */
void vm_memslot_set(struct kvm_vm *vm, uint32_t slot, uint32_t flags,
		    uint64_t gpa, uint64_t size, void *hva);

void kvm_vm_free(struct kvm_vm *vm);

/*
 * Unmap kvm_run and close the vCPU fd: both hold the VM alive, so a test
 * that wants the VM destroyed by kvm_vm_free() releases its vCPUs first.
 */
void vcpu_release(struct kvm_vcpu *vcpu);

/* The host address of guest address @gva; fails the case if unmapped. */
void *addr_gva2hva(struct kvm_vm *vm, uint64_t gva);

/*
 * The guest runs on a copy of this program's globals taken when the VM was
 * created; these copy one global either way (volatile is cast away: the
 * guest is not running while they copy).
 */
#define sync_global_to_guest(vm, g)					\
	memcpy(addr_gva2hva(vm, (uint64_t)&(g)), (const void *)&(g), sizeof(g))
#define sync_global_from_guest(vm, g)					\
	memcpy((void *)&(g), addr_gva2hva(vm, (uint64_t)&(g)), sizeof(g))
/* The guest's copy of global @g itself, to read or write in place. */
#define guest_var(vm, g)	(*(__typeof__(g) *)addr_gva2hva(vm, (uint64_t)&(g)))

int _kvm_ioctl(struct kvm_vm *vm, unsigned long cmd, void *arg);
int _vm_ioctl(struct kvm_vm *vm, unsigned long cmd, void *arg);
int _vcpu_ioctl(struct kvm_vcpu *vcpu, unsigned long cmd, void *arg);

#define __checked_ioctl(raw, obj, cmd, arg)				\
	do {								\
		int __ret = raw(obj, cmd, arg);				\
		TEST_ASSERT(__ret >= 0, "%s failed, rc: %d", #cmd,	\
			    __ret);					\
	} while (0)
#define kvm_ioctl(vm, cmd, arg)		__checked_ioctl(_kvm_ioctl, vm, cmd, arg)
#define vm_ioctl(vm, cmd, arg)		__checked_ioctl(_vm_ioctl, vm, cmd, arg)
#define vcpu_ioctl(vcpu, cmd, arg)	__checked_ioctl(_vcpu_ioctl, vcpu, cmd, arg)

int _vcpu_run(struct kvm_vcpu *vcpu);
void vcpu_run(struct kvm_vcpu *vcpu);

/* KVM_NMI: queue an NMI for the vCPU, delivered at its next entry. */
int _vcpu_nmi(struct kvm_vcpu *vcpu);
void vcpu_nmi(struct kvm_vcpu *vcpu);

void vcpu_regs_get(struct kvm_vcpu *vcpu, struct kvm_regs *regs);
void vcpu_regs_set(struct kvm_vcpu *vcpu, const struct kvm_regs *regs);
void vcpu_sregs_get(struct kvm_vcpu *vcpu, struct kvm_sregs *sregs);
void vcpu_sregs_set(struct kvm_vcpu *vcpu, const struct kvm_sregs *sregs);

/* Pass up to 6 integer arguments to the guest code (SysV registers). */
void vcpu_args_set(struct kvm_vcpu *vcpu, unsigned int nr_args, ...);

const char *exit_reason_str(uint32_t exit_reason);

/*
 * A per-VM counter from KVM's debugfs directory
 * /sys/kernel/debug/kvm/<pid>-<vm fd>/<name> (vCPU counters are summed over
 * the VM's vCPUs). Fails the case when it cannot be read.
 */
uint64_t vm_debugfs_stat(struct kvm_vm *vm, const char *name);

#endif
