// SPDX-License-Identifier: GPL-2.0
/*
 * VM, vCPU and memslot handling, the program image copy, and KVM's debugfs
 * counters.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_util.h"

#define KVM_DEV_PATH	"/dev/kvm"
#define MAX_CPUID_ENTRIES 256

static int open_kvm_dev(void)
{
	int fd = open(KVM_DEV_PATH, O_RDWR | O_CLOEXEC);

	TEST_ASSERT(fd >= 0, "cannot open %s: is KVM loaded in this host?",
		    KVM_DEV_PATH);
	TEST_ASSERT(ioctl(fd, KVM_GET_API_VERSION, NULL) == KVM_API_VERSION,
		    "unexpected KVM API version");
	return fd;
}

int kvm_check_cap(long cap)
{
	int fd = open_kvm_dev();
	int ret = ioctl(fd, KVM_CHECK_EXTENSION, cap);

	close(fd);
	TEST_ASSERT(ret >= 0, "KVM_CHECK_EXTENSION failed, rc: %d", ret);
	return ret;
}

int _kvm_ioctl(struct kvm_vm *vm, unsigned long cmd, void *arg)
{
	return ioctl(vm->kvm_fd, cmd, arg);
}

int _vm_ioctl(struct kvm_vm *vm, unsigned long cmd, void *arg)
{
	return ioctl(vm->fd, cmd, arg);
}

int _vcpu_ioctl(struct kvm_vcpu *vcpu, unsigned long cmd, void *arg)
{
	return ioctl(vcpu->fd, cmd, arg);
}

void *addr_gva2hva(struct kvm_vm *vm, uint64_t gva)
{
	TEST_ASSERT(gva < GUEST_MEM_SIZE,
		    "guest address %#llx is outside guest memory (%#x bytes)",
		    (unsigned long long)gva, GUEST_MEM_SIZE);
	return vm->mem + gva;
}

struct image_copy {
	struct kvm_vm *vm;
	bool done;
};

/*
 * Copy the main program's loaded segments (the first object the dynamic
 * linker reports) into guest memory at their own addresses.
 */
static int copy_program_segments(struct dl_phdr_info *info, size_t size,
				 void *data)
{
	struct image_copy *copy = data;
	int i;

	(void)size;
	if (copy->done)
		return 1;
	copy->done = true;
	TEST_ASSERT(info->dlpi_addr == 0,
		    "the test program must be linked with -no-pie (load bias %#lx)",
		    (unsigned long)info->dlpi_addr);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		TEST_ASSERT(ph->p_vaddr >= GUEST_IMAGE_MIN &&
			    ph->p_vaddr + ph->p_memsz <= GUEST_IMAGE_END,
			    "segment [%#lx, %#lx) does not fit the guest image area [%#x, %#x)",
			    (unsigned long)ph->p_vaddr,
			    (unsigned long)(ph->p_vaddr + ph->p_memsz),
			    GUEST_IMAGE_MIN, GUEST_IMAGE_END);
		memcpy(copy->vm->mem + ph->p_vaddr, (void *)ph->p_vaddr,
		       ph->p_memsz);
	}
	return 1;
}

static void vm_load_program_image(struct kvm_vm *vm)
{
	struct image_copy copy = { .vm = vm };

	dl_iterate_phdr(copy_program_segments, &copy);
	TEST_ASSERT(copy.done, "dl_iterate_phdr reported no program segments");
}

static struct kvm_cpuid2 *kvm_get_supported_cpuid(struct kvm_vm *vm)
{
	struct kvm_cpuid2 *cpuid;

	cpuid = calloc(1, sizeof(*cpuid) +
		       MAX_CPUID_ENTRIES * sizeof(struct kvm_cpuid_entry2));
	TEST_ASSERT(cpuid, "out of memory");
	cpuid->nent = MAX_CPUID_ENTRIES;
	kvm_ioctl(vm, KVM_GET_SUPPORTED_CPUID, cpuid);
	return cpuid;
}

static bool cpuid_vendor_is_amd(const struct kvm_cpuid2 *cpuid)
{
	uint32_t i;

	for (i = 0; i < cpuid->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		if (e->function != 0)
			continue;
		/* "AuthenticAMD" and "HygonGenuine", ebx first. */
		return (e->ebx == 0x68747541 && e->edx == 0x69746e65 &&
			e->ecx == 0x444d4163) ||
		       (e->ebx == 0x6f677948 && e->edx == 0x6e65476e &&
			e->ecx == 0x656e6975);
	}
	TEST_FAIL("KVM_GET_SUPPORTED_CPUID has no leaf 0");
}

static void vm_add_memory(struct kvm_vm *vm)
{
	struct kvm_userspace_memory_region region;

	vm->mem = mmap(NULL, GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	TEST_ASSERT(vm->mem != MAP_FAILED, "mmap of guest memory failed");
	region = (struct kvm_userspace_memory_region) {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = GUEST_MEM_SIZE,
		.userspace_addr = (uint64_t)(uintptr_t)vm->mem,
	};
	vm_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region);
}

/* Where guest code lands if it returns instead of calling GUEST_DONE(). */
extern const char guest_code_returned[];

struct kvm_vcpu *vm_vcpu_add(struct kvm_vm *vm, guest_code_t guest_code)
{
	struct kvm_vcpu *vcpu = calloc(1, sizeof(*vcpu));
	static const uint64_t stack_tops[GUEST_MAX_VCPUS] = {
		GUEST_STACK_TOP, GUEST_STACK1_TOP,
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	uint64_t *stack, stack_top;
	int mmap_size;

	TEST_ASSERT(vcpu, "out of memory");
	TEST_ASSERT(vm->nr_vcpus < GUEST_MAX_VCPUS, "at most %d vCPUs per VM",
		    GUEST_MAX_VCPUS);
	vcpu->vm = vm;
	vcpu->id = vm->nr_vcpus++;
	stack_top = stack_tops[vcpu->id];
	vcpu->fd = _vm_ioctl(vm, KVM_CREATE_VCPU, (void *)(uintptr_t)vcpu->id);
	TEST_ASSERT(vcpu->fd >= 0, "KVM_CREATE_VCPU failed, rc: %d", vcpu->fd);
	mmap_size = _kvm_ioctl(vm, KVM_GET_VCPU_MMAP_SIZE, NULL);
	TEST_ASSERT(mmap_size >= (int)sizeof(struct kvm_run),
		    "KVM_GET_VCPU_MMAP_SIZE returned %d", mmap_size);
	vcpu->run = mmap(NULL, mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vcpu->fd, 0);
	TEST_ASSERT(vcpu->run != MAP_FAILED, "mmap of kvm_run failed");

	/* Before the sregs: KVM refuses EFER.LME without CPUID.LM. */
	vcpu_ioctl(vcpu, KVM_SET_CPUID2, vm->cpuid);

	vcpu_sregs_get(vcpu, &sregs);
	vcpu_long_mode_sregs(&sregs);
	vcpu_sregs_set(vcpu, &sregs);

	/* Entered as if called: the return address is a trap for "returned". */
	stack = addr_gva2hva(vm, stack_top - 8);
	*stack = (uint64_t)(uintptr_t)guest_code_returned;
	memset(&regs, 0, sizeof(regs));
	regs.rip = (uint64_t)(uintptr_t)guest_code;
	regs.rsp = stack_top - 8;
	regs.rflags = X86_EFLAGS_FIXED;
	vcpu_regs_set(vcpu, &regs);
	return vcpu;
}

struct kvm_vm *vm_create_with_one_vcpu(struct kvm_vcpu **vcpu,
				       guest_code_t guest_code)
{
	struct kvm_vm *vm = vm_create_barebones();

	*vcpu = vm_vcpu_add(vm, guest_code);
	return vm;
}

void vm_memslot_set(struct kvm_vm *vm, uint32_t slot, uint32_t flags,
		    uint64_t gpa, uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region region = {
		.slot = slot,
		.flags = flags,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uint64_t)(uintptr_t)hva,
	};

	vm_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region);
}

struct kvm_vm *vm_create_barebones(void)
{
	struct kvm_vm *vm = calloc(1, sizeof(*vm));

	TEST_ASSERT(vm, "out of memory");
	vm->kvm_fd = open_kvm_dev();
	vm->fd = _kvm_ioctl(vm, KVM_CREATE_VM, NULL);
	TEST_ASSERT(vm->fd >= 0, "KVM_CREATE_VM failed, rc: %d", vm->fd);
	vm_add_memory(vm);
	vm_load_program_image(vm);

	vm->cpuid = kvm_get_supported_cpuid(vm);
	vm->cpu_is_amd = cpuid_vendor_is_amd(vm->cpuid);
	guest_cpu_is_amd = vm->cpu_is_amd;
	sync_global_to_guest(vm, guest_cpu_is_amd);

	vm_setup_long_mode_tables(vm);
	return vm;
}

void kvm_vm_free(struct kvm_vm *vm)
{
	close(vm->fd);
	close(vm->kvm_fd);
	munmap(vm->mem, GUEST_MEM_SIZE);
	free(vm->cpuid);
	free(vm);
}

void vcpu_release(struct kvm_vcpu *vcpu)
{
	int mmap_size = ioctl(vcpu->vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, NULL);

	TEST_ASSERT(munmap(vcpu->run, mmap_size) == 0, "munmap of kvm_run failed");
	close(vcpu->fd);
	free(vcpu);
}

int _vcpu_run(struct kvm_vcpu *vcpu)
{
	return ioctl(vcpu->fd, KVM_RUN, NULL);
}

void vcpu_run(struct kvm_vcpu *vcpu)
{
	int ret = _vcpu_run(vcpu);

	TEST_ASSERT(ret == 0, "KVM_RUN failed, rc: %d", ret);
}

int _vcpu_nmi(struct kvm_vcpu *vcpu)
{
	return ioctl(vcpu->fd, KVM_NMI, NULL);
}

void vcpu_nmi(struct kvm_vcpu *vcpu)
{
	int ret = _vcpu_nmi(vcpu);

	TEST_ASSERT(ret == 0, "KVM_NMI failed, rc: %d", ret);
}

void vcpu_regs_get(struct kvm_vcpu *vcpu, struct kvm_regs *regs)
{
	vcpu_ioctl(vcpu, KVM_GET_REGS, regs);
}

void vcpu_regs_set(struct kvm_vcpu *vcpu, const struct kvm_regs *regs)
{
	vcpu_ioctl(vcpu, KVM_SET_REGS, (void *)regs);
}

void vcpu_sregs_get(struct kvm_vcpu *vcpu, struct kvm_sregs *sregs)
{
	vcpu_ioctl(vcpu, KVM_GET_SREGS, sregs);
}

void vcpu_sregs_set(struct kvm_vcpu *vcpu, const struct kvm_sregs *sregs)
{
	vcpu_ioctl(vcpu, KVM_SET_SREGS, (void *)sregs);
}

void vcpu_args_set(struct kvm_vcpu *vcpu, unsigned int nr_args, ...)
{
	struct kvm_regs regs;
	unsigned long long *slots[] = {
		&regs.rdi, &regs.rsi, &regs.rdx, &regs.rcx, &regs.r8, &regs.r9,
	};
	va_list ap;
	unsigned int i;

	TEST_ASSERT(nr_args <= ARRAY_SIZE(slots),
		    "at most %zu guest arguments, got %u", ARRAY_SIZE(slots),
		    nr_args);
	vcpu_regs_get(vcpu, &regs);
	va_start(ap, nr_args);
	for (i = 0; i < nr_args; i++)
		*slots[i] = va_arg(ap, uint64_t);
	va_end(ap);
	vcpu_regs_set(vcpu, &regs);
}

const char *exit_reason_str(uint32_t exit_reason)
{
	static const char *const names[] = {
		[KVM_EXIT_UNKNOWN] = "UNKNOWN",
		[KVM_EXIT_EXCEPTION] = "EXCEPTION",
		[KVM_EXIT_IO] = "IO",
		[KVM_EXIT_HYPERCALL] = "HYPERCALL",
		[KVM_EXIT_DEBUG] = "DEBUG",
		[KVM_EXIT_HLT] = "HLT",
		[KVM_EXIT_MMIO] = "MMIO",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
		[KVM_EXIT_SHUTDOWN] = "SHUTDOWN (triple fault)",
		[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
		[KVM_EXIT_INTR] = "INTR",
		[KVM_EXIT_SET_TPR] = "SET_TPR",
		[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
		[KVM_EXIT_NMI] = "NMI",
		[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
		[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
		[KVM_EXIT_X86_RDMSR] = "X86_RDMSR",
		[KVM_EXIT_X86_WRMSR] = "X86_WRMSR",
	};

	if (exit_reason < ARRAY_SIZE(names) && names[exit_reason])
		return names[exit_reason];
	return "(unnamed)";
}

uint64_t vm_debugfs_stat(struct kvm_vm *vm, const char *name)
{
	unsigned long long value;
	char path[128];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/%s",
		 (int)getpid(), vm->fd, name);
	f = fopen(path, "r");
	TEST_ASSERT(f, "cannot open KVM counter %s (debugfs mounted at /sys/kernel/debug?)",
		    path);
	n = fscanf(f, "%llu", &value);
	fclose(f);
	TEST_ASSERT(n == 1, "cannot parse KVM counter %s", path);
	return value;
}
