// SPDX-License-Identifier: GPL-2.0
/*
 * A VMM with one minimal guest for 'kvm-pvprof record' tests in L1
 * (tests/nested-record.sh), built on tests/host's library.
 *
 * The guest registers a pvprof buffer and spins in spin_inner() called from
 * spin_outer() called from guest_code(), forever.  Each time it sees
 * sampling become active (PVPROF_STATE_ACTIVE in its buffer) it publishes
 * through the sideband what the host tool needs to name it, as the guest
 * agent does: KERNEL, KSYMS with its own functions as kernel symbols, and
 * PROCESS pid 77 "rec-guest".  Its NMI
 * handler answers every notice with a three-frame kernel callchain:
 * the interrupted IP, spin_outer and guest_code (in the kernel half).
 *
 * The host prints "ready PID" once the guest is registered, runs the vCPU
 * until its stdin reaches end of file, then prints what the guest counted
 * ("guest: nmis N callchains N sideband_rounds N") and exits, destroying
 * the VM.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "core/guest.h"
#include "core/sideband.h"

enum { STAGE_REGISTERED = 1, STAGE_ALIVE };

#define BUF_GPA		0x300000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define GUEST_PID	77
#define GUEST_COMM	"rec-guest"
#define SPINS		(1U << 18)
#define KADDR(p)	(PVPROF_KERNEL_HALF_START + (uint64_t)(uintptr_t)(p))

extern char __executable_start[], etext[];

static struct pvprof_guest_buf gbuf;
static volatile uint64_t guest_nmis, guest_callchains;

/* Sideband messages, one page each (a message may not cross a page). */
static uint8_t sb_msgs[3][PVPROF_PAGE_SIZE] __attribute__((aligned(PVPROF_PAGE_SIZE)));
static uint32_t sb_lens[3];

void spin_outer(void);
void spin_inner(void);
static void guest_code(void);

static void capture(void *ctx, const struct pvprof_notice *n,
		    struct pvprof_callchain *chain, uint32_t max_frames)
{
	const struct ex_regs *regs = ctx;
	const uint64_t frames[] = {
		KADDR(regs->rip), KADDR(spin_outer) + 8, KADDR(guest_code) + 8,
	};
	uint32_t i, nr = max_frames < 3 ? max_frames : 3;

	(void)n;
	for (i = 0; i < nr; i++)
		pvprof_callchain_frames(chain)[i] = frames[i];
	chain->nr_kernel = (uint16_t)nr;
	chain->pid = GUEST_PID;
	chain->tid = GUEST_PID;
	chain->exec_gen = 1;
	chain->flags = PVPROF_CHAIN_F_KTHREAD;
}

static void guest_nmi_handler(struct ex_regs *regs)
{
	struct pvprof_nmi_result res = { 0 };

	if (pvprof_guest_nmi(&gbuf, capture, regs, &res))
		guest_nmis++;
	guest_callchains += res.callchains;
}

__attribute__((noinline)) void spin_inner(void)
{
	uint32_t i;

	for (i = 0; i < SPINS; i++)
		__asm__ volatile("pause");
}

__attribute__((noinline)) void spin_outer(void)
{
	spin_inner();
	__asm__ volatile("" ::: "memory");
}

/* What the host tool needs to name this guest, sent each time sampling starts. */
static void send_sideband(void)
{
	int i;

	for (i = 0; i < 3; i++)
		GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_SIDEBAND,
						 (uint64_t)(uintptr_t)sb_msgs[i], sb_lens[i], 0), 0);
}

static void guest_code(void)
{
	volatile struct pvprof_buf_header *h = (void *)BUF_GPA;
	uint64_t rounds = 0;
	bool was_active = false;

	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	GUEST_SYNC(STAGE_REGISTERED);
	for (;;) {
		bool active = h->state & PVPROF_STATE_ACTIVE;

		/* Like the agent: a recorder only gets sideband sent while it samples. */
		if (active && !was_active) {
			send_sideband();
			rounds++;
		}
		was_active = active;
		spin_outer();
		GUEST_SYNC_ARGS(STAGE_ALIVE, guest_nmis, guest_callchains, rounds);
	}
}

static void sb_header(void *msg, uint16_t type, uint32_t size)
{
	struct pvprof_sideband_hdr *sb = msg;

	sb->type = type;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = size;
	sb->time_ns = 0;
}

/* The guest's own functions as its "kernel" symbols, in address order. */
static void build_sideband(void)
{
	struct { uint64_t addr; const char *name; } syms[] = {
		{ KADDR(guest_code), "guest_code" },
		{ KADDR(spin_outer), "spin_outer" },
		{ KADDR(spin_inner), "spin_inner" },
		{ KADDR(guest_nmi_handler), "guest_nmi_handler" },
	};
	struct pvprof_sb_kernel *k = (void *)sb_msgs[0];
	struct pvprof_sb_ksyms *ks = (void *)sb_msgs[1];
	struct pvprof_sb_process *p = (void *)sb_msgs[2];
	struct pvprof_sb_sym_writer w;
	unsigned int i, j;

	for (i = 0; i < 4; i++)
		for (j = i + 1; j < 4; j++)
			if (syms[j].addr < syms[i].addr) {
				__typeof__(syms[0]) t = syms[i];

				syms[i] = syms[j];
				syms[j] = t;
			}
	k->stext = KADDR(__executable_start);
	k->etext = KADDR(etext);
	k->nr_syms = 4;
	strcpy(k->release, "record-guest");
	sb_header(k, PVPROF_SB_KERNEL, sizeof(*k));
	sb_lens[0] = sizeof(*k);

	pvprof_sb_sym_writer_init(&w, ks, sizeof(*ks), PVPROF_PAGE_SIZE, false, syms[0].addr);
	for (i = 0; i < 4; i++)
		TEST_ASSERT(!pvprof_sb_sym_put(&w, syms[i].addr, 0, syms[i].name,
					       strlen(syms[i].name)), "symbol %s", syms[i].name);
	ks->first = syms[0].addr;
	ks->nr = (uint16_t)w.nr;
	sb_header(ks, PVPROF_SB_KSYMS, w.len);
	sb_lens[1] = w.len;

	p->pid = GUEST_PID;
	p->exec_gen = 1;
	memcpy(p->comm, GUEST_COMM, sizeof(GUEST_COMM));
	sb_header(p, PVPROF_SB_PROCESS, sizeof(*p));
	sb_lens[2] = sizeof(*p);

	for (i = 0; i < 3; i++)
		TEST_ASSERT(pvprof_sideband_payload_check(sb_msgs[i], sb_lens[i]) == PVPROF_SB_OK,
			    "sideband message %u breaks the payload rules", i);
}

static bool stdin_closed(void)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	return read(STDIN_FILENO, &c, 1) <= 0;
}

int main(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	build_sideband();
	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	vcpu_run_expect_sync(vcpu, STAGE_REGISTERED, &uc);
	printf("ready %d\n", (int)getpid());
	while (!stdin_closed()) {
		vcpu_run(vcpu);
		TEST_ASSERT(get_ucall(vcpu, &uc) == UCALL_SYNC && uc.args[0] == STAGE_ALIVE,
			    "unexpected exit from the guest (ucall %llu)",
			    (unsigned long long)uc.cmd);
	}
	printf("guest: nmis %llu callchains %llu sideband_rounds %llu\n",
	       (unsigned long long)uc.args[1], (unsigned long long)uc.args[2],
	       (unsigned long long)uc.args[3]);
	kvm_vm_free(vm);
	return 0;
}
