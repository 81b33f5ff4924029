// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling across CPUs (issue #4, spec pvprof-ordering and
 * spec pvprof-losses): the thread that runs a vCPU moved between L1 CPUs
 * while sampling, and a VM whose two vCPUs are registered and sampled
 * concurrently on two threads. Run in an L1 with two CPUs (run-configs.sh's
 * pvprof-epyc-smp2).
 *
 * Each vCPU's buffer is its own part of memslot 1; guest code knows which
 * vCPU it runs on from its stack (the library gives vCPU 1 its own stack,
 * and ring-0 NMIs stay on the interrupted stack), and checks that against
 * the index the host passed in rdi.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_TICK = 1, STAGE_QUIESCED };

#define NR_VCPUS	GUEST_MAX_VCPUS
#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(NR_VCPUS * BUF_SIZE)
#define TICK_CYCLES	(20ULL * 1000 * 1000)
#define PHASE_SECONDS	60
/* A second kernel frame naming the vCPU that wrote the callchain. */
#define VCPU_TAG(idx)	(PVPROF_KERNEL_HALF_START + 0x100000ULL * ((idx) + 1))
#define MIGRATIONS	200

static struct pvprof_guest_buf gbuf[NR_VCPUS];
static volatile uint32_t g_stop[NR_VCPUS], g_live[NR_VCPUS];

/* vCPU 1's stack lies above the image, vCPU 0's below it. */
static inline uint32_t guest_vcpu_idx(void)
{
	return (uint64_t)__builtin_frame_address(0) > GUEST_IMAGE_MIN;
}

/* The RIP frame, then a frame that names the vCPU that answered. */
static void capture(void *ctx, const struct pvprof_notice *n,
		    struct pvprof_callchain *chain, uint32_t max_frames)
{
	pvprof_guest_capture_rip(ctx, n, chain, max_frames);
	pvprof_callchain_frames(chain)[chain->nr_kernel++] = VCPU_TAG(guest_vcpu_idx());
}

static void guest_nmi(struct ex_regs *regs)
{
	uint32_t idx = guest_vcpu_idx();
	struct pvprof_nmi_result res;

	if (g_live[idx])
		pvprof_guest_nmi(&gbuf[idx], capture, regs, &res);
}

/* Register this vCPU's buffer, tick until told, unregister, done. */
static void guest_code(uint64_t idx)
{
	uint64_t gpa = BUF_GPA + idx * BUF_SIZE;

	GUEST_ASSERT_EQ(idx, guest_vcpu_idx());
	memset((void *)gpa, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf[idx], (void *)gpa, BUF_SIZE));
	/* Live before REGISTER returns: the first NMI may come right after. */
	g_live[idx] = 1;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, gpa, BUF_SIZE, 0), 0);
	while (!g_stop[idx]) {
		uint64_t start = guest_rdtsc();

		while (guest_rdtsc() - start < TICK_CYCLES)
			__asm__ volatile("pause");
		GUEST_SYNC(STAGE_TICK);
	}
	g_live[idx] = 0;
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC(STAGE_QUIESCED);
	GUEST_DONE();
}

struct smp_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu[NR_VCPUS];
	uint32_t nr_vcpus;
	uint8_t *slot_mem;
	int stream_fd;
	struct pvprof_stream_counts sc;
	uint64_t tag_mismatches;
};

/* Every callchain's tag frame must name the vCPU the stream says. */
static void check_tag(void *arg, const struct pvprof_st_view *v)
{
	struct smp_vm *s = arg;

	if (v->nr_frames < 2 || pvprof_st_frame(v, 1) != VCPU_TAG(v->hdr.vcpu_id))
		s->tag_mismatches++;
}

static void smp_vm_start(struct smp_vm *s, uint32_t nr_vcpus)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->nr_vcpus = nr_vcpus;
	s->vm = vm_create_barebones();
	for (i = 0; i < nr_vcpus; i++) {
		s->vcpu[i] = vm_vcpu_add(s->vm, (guest_code_t)guest_code);
		TEST_ASSERT_EQ(s->vcpu[i]->id, i);
		vcpu_args_set(s->vcpu[i], 1, (uint64_t)i);
	}
	s->slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(s->slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(s->vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE, s->slot_mem);
	vm_install_exception_handler(s->vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(s->vm, &en);
	s->stream_fd = pvprof_stream_open(s->vm);
	s->sc.on_callchain = check_tag;
	s->sc.arg = s;
}

/* After every vCPU reported STAGE_QUIESCED: books, stream, teardown. */
static void smp_vm_end(struct smp_vm *s, const char *name)
{
	struct pvprof_vcpu_status vs[NR_VCPUS];
	char label[64];
	uint32_t i, r;

	pvprof_disable(s->vm);
	for (i = 0; i < s->nr_vcpus; i++) {
		pvprof_vcpu_status(s->vm, s->nr_vcpus, i, &vs[i]);
		TEST_ASSERT_EQ(vs[i].vcpu_id, i);
		snprintf(label, sizeof(label), "%s vCPU %u", name, i);
		pvprof_assert_books(&vs[i], label);
		pvprof_print_books(label, &vs[i]);
		TEST_ASSERT(vs[i].callchains >= 20, "vCPU %u: only %llu callchains", i,
			    (unsigned long long)vs[i].callchains);
		vcpu_run_expect_done(s->vcpu[i]);
		vcpu_release(s->vcpu[i]);
	}
	kvm_vm_free(s->vm);
	munmap(s->slot_mem, SLOT_SIZE);
	pvprof_stream_read(s->stream_fd, &s->sc, true);
	close(s->stream_fd);
	for (i = 0; i < s->nr_vcpus; i++)
		TEST_ASSERT(s->sc.vcpu_callchains[i] +
			    vs[i].losses[PVPROF_LOSS_STREAM_OVERFLOW] == vs[i].callchains,
			    "vCPU %u: %llu callchains in the stream + %llu overflow != %llu accepted",
			    i, (unsigned long long)s->sc.vcpu_callchains[i],
			    (unsigned long long)vs[i].losses[PVPROF_LOSS_STREAM_OVERFLOW],
			    (unsigned long long)vs[i].callchains);
	for (r = 0; r < PVPROF_LOSS_NR; r++) {
		uint64_t sum = 0;

		for (i = 0; i < s->nr_vcpus; i++)
			sum += vs[i].losses[r];
		TEST_ASSERT(s->sc.losses[r] == sum,
			    "LOSS entries of reason %u add up to %llu, STATUS says %llu",
			    r, (unsigned long long)s->sc.losses[r], (unsigned long long)sum);
	}
	TEST_ASSERT(s->tag_mismatches == 0,
		    "%llu callchains carry another vCPU's tag than their header's vcpu_id",
		    (unsigned long long)s->tag_mismatches);
}

/* Run @vcpu until it reports STAGE_QUIESCED (after g_stop). */
static uint64_t run_to_quiesced(struct kvm_vcpu *vcpu)
{
	uint64_t ticks = 0;
	struct ucall uc;

	for (;;) {
		vcpu_run(vcpu);
		if (get_ucall(vcpu, &uc) != UCALL_SYNC)
			fail_unexpected_ucall(vcpu, &uc, "GUEST_SYNC");
		if (uc.args[0] == STAGE_QUIESCED)
			return ticks;
		if (uc.args[0] != STAGE_TICK)
			fail_unexpected_ucall(vcpu, &uc, "GUEST_SYNC(TICK or QUIESCED)");
		ticks++;
	}
}

static void move_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	TEST_ASSERT(!sched_setaffinity(0, sizeof(set), &set), "sched_setaffinity to CPU %d",
		    cpu);
}

/*
 * The thread running the vCPU moved between CPU 0 and CPU 1 between ticks
 * (spec pvprof-ctl-enable: the sampling event follows the vCPU to its new
 * CPU, and the vCPU's request path runs wherever the thread is): samples and
 * callchains keep arriving across the moves, and the books balance.
 */
static void test_vcpu_thread_migrates(void)
{
	uint64_t deadline, stalled = 0, on_wrong_cpu = 0, last_callchains = 0, last_samples = 0;
	struct pvprof_vcpu_status vs;
	struct smp_vm s;
	unsigned int i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		test_skip("needs 2 online L1 CPUs, %ld online", sysconf(_SC_NPROCESSORS_ONLN));
	smp_vm_start(&s, 1);
	deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	for (i = 0; i < MIGRATIONS; i++) {
		move_to_cpu(i % 2);
		if (sched_getcpu() != (int)(i % 2))
			on_wrong_cpu++;
		vcpu_run_expect_sync(s.vcpu[0], STAGE_TICK, NULL);
		/*
		 * Every 20 moves, samples (the event followed the thread) and
		 * callchains (the guest saw the notices) must have grown.
		 */
		if (i % 20 == 19) {
			pvprof_vcpu_status(s.vm, 1, 0, &vs);
			if (vs.samples <= last_samples || vs.callchains <= last_callchains)
				stalled++;
			last_samples = vs.samples;
			last_callchains = vs.callchains;
			pvprof_stream_read(s.stream_fd, &s.sc, false);
		}
		TEST_ASSERT(test_now_ns() < deadline, "%u moves in %d s", i, PHASE_SECONDS);
	}
	pvprof_vcpu_status(s.vm, 1, 0, &vs);
	fprintf(stderr, "# measured: vcpu_thread_migrates: %u moves, %llu samples, %llu callchains, %llu windows of 20 moves without a sample or callchain, %llu times not on the target CPU\n",
		MIGRATIONS, (unsigned long long)vs.samples, (unsigned long long)vs.callchains,
		(unsigned long long)stalled, (unsigned long long)on_wrong_cpu);
	TEST_ASSERT_EQ(on_wrong_cpu, 0);
	TEST_ASSERT(stalled == 0, "samples or callchains stopped for %llu windows of 20 moves",
		    (unsigned long long)stalled);
	guest_var(s.vm, g_stop[0]) = 1;
	run_to_quiesced(s.vcpu[0]);
	smp_vm_end(&s, "vcpu_thread_migrates");
}

struct runner {
	struct kvm_vcpu *vcpu;
	uint64_t ticks;
};

static void *run_vcpu(void *arg)
{
	struct runner *r = arg;

	r->ticks = run_to_quiesced(r->vcpu);
	return NULL;
}

static bool all_callchains_reach(struct smp_vm *s, uint64_t n)
{
	struct pvprof_vcpu_status vs;
	uint32_t i;

	for (i = 0; i < s->nr_vcpus; i++) {
		pvprof_vcpu_status(s->vm, s->nr_vcpus, i, &vs);
		if (vs.callchains < n)
			return false;
	}
	return true;
}

/*
 * Two vCPUs of one VM, each registered with its own buffer, run on two
 * threads at once: each has its own books, which balance, and every
 * callchain in the stream carries the id of the vCPU that wrote it.
 */
static void test_two_vcpus_concurrently(void)
{
	struct runner r[NR_VCPUS];
	pthread_t thread[NR_VCPUS];
	uint64_t deadline;
	struct smp_vm s;
	uint32_t i;

	smp_vm_start(&s, NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		r[i] = (struct runner){ .vcpu = s.vcpu[i] };
		TEST_ASSERT(!pthread_create(&thread[i], NULL, run_vcpu, &r[i]),
			    "pthread_create");
	}
	deadline = test_now_ns() + PHASE_SECONDS * 1000000000ULL;
	/* Poll STATUS (and drain the stream) until both vCPUs have callchains. */
	while (!all_callchains_reach(&s, 50)) {
		pvprof_stream_read(s.stream_fd, &s.sc, false);
		if (test_now_ns() > deadline) {
			for (i = 0; i < NR_VCPUS; i++)
				guest_var(s.vm, g_stop[i]) = 1;
			TEST_FAIL("both vCPUs did not reach 50 callchains in %d s (stream: %llu and %llu)",
				  PHASE_SECONDS,
				  (unsigned long long)s.sc.vcpu_callchains[0],
				  (unsigned long long)s.sc.vcpu_callchains[1]);
		}
		usleep(10000);
	}
	for (i = 0; i < NR_VCPUS; i++)
		guest_var(s.vm, g_stop[i]) = 1;
	for (i = 0; i < NR_VCPUS; i++)
		pthread_join(thread[i], NULL);
	fprintf(stderr, "# measured: two_vcpus_concurrently: %llu and %llu ticks\n",
		(unsigned long long)r[0].ticks, (unsigned long long)r[1].ticks);
	smp_vm_end(&s, "two_vcpus_concurrently");
	fprintf(stderr, "# measured: two_vcpus_concurrently: stream callchains by vCPU %llu and %llu, all tagged with their own vCPU\n",
		(unsigned long long)s.sc.vcpu_callchains[0],
		(unsigned long long)s.sc.vcpu_callchains[1]);
}

static const struct test_case cases[] = {
	{ "vcpu_thread_migrates", test_vcpu_thread_migrates },
	{ "two_vcpus_concurrently", test_two_vcpus_concurrently },
};

int main(int argc, char **argv)
{
	return test_run_cases("smp", cases, ARRAY_SIZE(cases), argc, argv);
}
