// SPDX-License-Identifier: GPL-2.0
/*
 * vCPUs created while vCPU 0 of the VM is registered and sampled (issue
 * #29, bug 1).  kvm_arch_vcpu_create() resets the new vCPU before KVM has
 * given it its index, which is still 0 then, and KVM_CREATE_VCPU's error
 * path (a duplicate id: EEXIST) destroys that half-made vCPU: pvprof's
 * reset and destroy hooks must not take vCPU 0's state for the new one's.
 *
 * - a second vCPU added to the sampled VM (hotplug) leaves vCPU 0
 *   registered, without a DROPPED event, and still sampled;
 * - KVM_CREATE_VCPU failing 200 times while vCPU 0 ticks on its own thread
 *   leaves vCPU 0's state alone: still registered, sampled, books balanced
 *   (on the debug kernel, KASAN watches for the use after free).
 *
 * The oracle is KVM's own answer (EEXIST), STATUS and the stream's vCPU
 * events; the guest's own REGISTER is the only one of the run.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_TICK = 1, STAGE_QUIESCED };

#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(16 * PVPROF_PAGE_SIZE)
#define TICK_CYCLES	(20ULL * 1000 * 1000)
#define PHASE_SECONDS	60
#define FAILED_CREATES	200

static struct pvprof_guest_buf gbuf;
static volatile uint32_t g_stop, g_live;

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;

	if (g_live)
		pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res);
}

/* vCPU 0: register, tick until told, unregister. */
static void guest_code(void)
{
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	g_live = 1;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	while (!g_stop) {
		uint64_t start = guest_rdtsc();

		while (guest_rdtsc() - start < TICK_CYCLES)
			__asm__ volatile("pause");
		GUEST_SYNC(STAGE_TICK);
	}
	g_live = 0;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC(STAGE_QUIESCED);
	GUEST_DONE();
}

/* The added vCPU never registers. */
static void guest_idle(void)
{
	GUEST_DONE();
}

struct test_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu0;
	uint32_t nr_vcpus;
	uint8_t *slot_mem;
	int stream_fd;
	struct pvprof_stream_counts sc;
};

static void test_vm_start(struct test_vm *t)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};

	memset(t, 0, sizeof(*t));
	t->vm = vm_create_barebones();
	t->vcpu0 = vm_vcpu_add(t->vm, guest_code);
	t->nr_vcpus = 1;
	t->slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(t->slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(t->vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE, t->slot_mem);
	vm_install_exception_handler(t->vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(t->vm, &en);
	t->stream_fd = pvprof_stream_open(t->vm);
}

/* vCPU 0 ticks until its callchains reach @n (or fail after PHASE_SECONDS). */
static void ticks_until_callchains(struct test_vm *t, uint64_t n,
				struct pvprof_vcpu_status *vs)
{
	uint64_t deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;

	for (;;) {
		vcpu_run_expect_sync(t->vcpu0, STAGE_TICK, NULL);
		pvprof_vcpu_status(t->vm, t->nr_vcpus, 0, vs);
		TEST_ASSERT(vs->registered, "vCPU 0 lost its registration");
		if (vs->callchains >= n)
			return;
		if (test_now_ns() > deadline) {
			pvprof_print_books("at the deadline", vs);
			TEST_FAIL("vCPU 0 reached %llu of %llu callchains in %d s",
				  (unsigned long long)vs->callchains,
				  (unsigned long long)n, PHASE_SECONDS);
		}
	}
}

/* Quiesce vCPU 0, balance its books, check the stream, free the VM. */
static void test_vm_end(struct test_vm *t, const char *name)
{
	struct pvprof_vcpu_status vs;

	guest_var(t->vm, g_stop) = 1;
	pvprof_disable(t->vm);
	vcpu_run_expect_sync(t->vcpu0, STAGE_QUIESCED, NULL);
	pvprof_vcpu_status(t->vm, t->nr_vcpus, 0, &vs);
	pvprof_assert_books(&vs, "quiesced");
	pvprof_print_books(name, &vs);
	vcpu_run_expect_done(t->vcpu0);
	vcpu_release(t->vcpu0);
	kvm_vm_free(t->vm);
	munmap(t->slot_mem, SLOT_SIZE);
	pvprof_stream_read(t->stream_fd, &t->sc, true);
	close(t->stream_fd);
	TEST_ASSERT_EQ(t->sc.callchains + vs.losses[PVPROF_LOSS_STREAM_OVERFLOW],
		       vs.callchains);
	/* One registration, ended by the guest itself. */
	TEST_ASSERT_EQ(t->sc.registered, 1);
	TEST_ASSERT_EQ(t->sc.unregistered, 1);
	TEST_ASSERT_EQ(t->sc.dropped, 0);
}

static void test_vcpu_added_keeps_vcpu0(void)
{
	struct pvprof_vcpu_status vs, vs1;
	struct kvm_vcpu *vcpu1;
	struct test_vm t;

	test_vm_start(&t);
	ticks_until_callchains(&t, 10, &vs);
	vcpu1 = vm_vcpu_add(t.vm, guest_idle);
	t.nr_vcpus = 2;
	pvprof_vcpu_status(t.vm, 2, 0, &vs);
	TEST_ASSERT(vs.registered,
		    "adding vCPU 1 dropped vCPU 0's registration");
	pvprof_vcpu_status(t.vm, 2, 1, &vs1);
	TEST_ASSERT_EQ(vs1.registered, 0);
	TEST_ASSERT_EQ(vs1.vcpu_id, 1);
	/* vCPU 1 runs once (its own state, no registration)... */
	vcpu_run_expect_done(vcpu1);
	/* ...and vCPU 0 goes on being sampled. */
	ticks_until_callchains(&t, vs.callchains + 20, &vs);
	vcpu_release(vcpu1);
	test_vm_end(&t, "vcpu_added_keeps_vcpu0");
}

struct ticker {
	struct test_vm *t;
	atomic_bool stop;
	atomic_uint_fast64_t ticks;
};

static void *run_ticker(void *arg)
{
	struct ticker *tk = arg;

	while (!atomic_load(&tk->stop)) {
		vcpu_run_expect_sync(tk->t->vcpu0, STAGE_TICK, NULL);
		atomic_fetch_add(&tk->ticks, 1);
	}
	return NULL;
}

static void test_failed_create_keeps_vcpu0(void)
{
	struct pvprof_vcpu_status vs, before;
	struct ticker tk = { 0 };
	pthread_t thread;
	struct test_vm t;
	int i;

	test_vm_start(&t);
	ticks_until_callchains(&t, 10, &before);
	tk.t = &t;
	TEST_ASSERT(!pthread_create(&thread, NULL, run_ticker, &tk), "pthread_create");
	for (i = 0; i < FAILED_CREATES; i++) {
		int fd = ioctl(t.vm->fd, KVM_CREATE_VCPU, 0UL);

		TEST_ASSERT(fd < 0 && errno == EEXIST,
			    "KVM_CREATE_VCPU of a duplicate id 0 gave %d (%s), not EEXIST",
			    fd, fd < 0 ? strerror(errno) : "a vCPU");
		if (i % 20 == 19)
			sched_yield();
	}
	atomic_store(&tk.stop, true);
	pthread_join(thread, NULL);
	fprintf(stderr, "# measured: %d failed KVM_CREATE_VCPU over %llu vCPU 0 ticks\n",
		FAILED_CREATES, (unsigned long long)atomic_load(&tk.ticks));
	pvprof_vcpu_status(t.vm, 1, 0, &vs);
	TEST_ASSERT(vs.registered,
		    "failed KVM_CREATE_VCPU calls ended vCPU 0's registration");
	TEST_ASSERT(vs.samples >= before.samples,
		    "vCPU 0's books went back from %llu to %llu samples: its state was replaced",
		    (unsigned long long)before.samples, (unsigned long long)vs.samples);
	ticks_until_callchains(&t, vs.callchains + 20, &vs);
	test_vm_end(&t, "failed_create_keeps_vcpu0");
}

static const struct test_case cases[] = {
	{ "vcpu_added_keeps_vcpu0", test_vcpu_added_keeps_vcpu0 },
	{ "failed_create_keeps_vcpu0", test_failed_create_keeps_vcpu0 },
};

int main(int argc, char **argv)
{
	return test_run_cases("vcpu_create", cases, ARRAY_SIZE(cases), argc, argv);
}
