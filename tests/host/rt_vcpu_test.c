// SPDX-License-Identifier: GPL-2.0
/*
 * A real-time vCPU thread never spins on pvprof's lock (issue #29, bug 2).
 * DISABLE holds a vCPU's pvprof lock across perf's event release and reads
 * of guest memory; the vCPU thread only trylocks it before an entry.  A
 * request that raised itself again on a busy lock would cancel every
 * entry until the lock came free, and a SCHED_FIFO vCPU thread on the
 * holder's CPU would never let the holder run: a livelock.
 *
 * Here the vCPU thread is SCHED_FIFO on CPU 0 beside the thread that
 * DISABLEs and ENABLEs in a loop, with real-time throttling off (as on
 * hosts that pin vCPU threads to isolated CPUs), and sleeps a millisecond
 * between short guest ticks so that it wakes while DISABLE holds the lock.
 * A KVM_RUN that makes no progress for WATCHDOG_SECONDS is ended by a timer
 * signal (KVM_RUN returns EINTR; its guest tick takes milliseconds): the
 * livelock.  The oracle is that signal and the guest's own ticks.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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

#define BUF_SLOT	1
#define BUF_GPA		0x2000000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
#define SLOT_SIZE	(16 * PVPROF_PAGE_SIZE)
#define TICK_CYCLES	(2ULL * 1000 * 1000)
#define TICKS		400
#define WATCHDOG_SECONDS 30
#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"

static struct pvprof_guest_buf gbuf;
static volatile uint32_t g_stop, g_live;

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;

	if (g_live)
		pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res);
}

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

static char rt_runtime_saved[32];

static void rt_runtime_write(const char *val)
{
	FILE *f = fopen(RT_RUNTIME, "w");

	if (!f)
		return;
	fputs(val, f);
	fclose(f);
}

static void rt_runtime_restore(void)
{
	if (rt_runtime_saved[0])
		rt_runtime_write(rt_runtime_saved);
}

/* Real-time throttling off until the program exits (whatever way). */
static void rt_throttling_off(void)
{
	FILE *f = fopen(RT_RUNTIME, "r");

	TEST_REQUIRE(f);
	TEST_ASSERT(fgets(rt_runtime_saved, sizeof(rt_runtime_saved), f), RT_RUNTIME);
	fclose(f);
	atexit(rt_runtime_restore);
	rt_runtime_write("-1");
}

static void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	TEST_ASSERT(!sched_setaffinity(0, sizeof(set), &set), "sched_setaffinity");
}

static void on_watchdog(int sig)
{
	(void)sig;
}

struct rt_vcpu {
	struct kvm_vcpu *vcpu;
	atomic_bool done;
	atomic_uint_fast64_t ticks;
	bool spun;
};

static void *run_rt_vcpu(void *arg)
{
	struct sched_param prio = { .sched_priority = 10 };
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SIGUSR1 };
	struct itimerspec arm = { .it_value.tv_sec = WATCHDOG_SECONDS };
	struct itimerspec disarm = { 0 };
	struct timespec nap = { .tv_nsec = 1000000 };
	struct rt_vcpu *rv = arg;
	struct ucall uc;
	timer_t timer;
	int i;

	pin_to_cpu0();
	TEST_ASSERT(!pthread_setschedparam(pthread_self(), SCHED_FIFO, &prio),
		    "SCHED_FIFO");
	sev._sigev_un._tid = gettid();
	TEST_ASSERT(!timer_create(CLOCK_MONOTONIC, &sev, &timer), "timer_create");
	for (i = 0; i < TICKS; i++) {
		int r;

		TEST_ASSERT(!timer_settime(timer, 0, &arm, NULL), "timer_settime");
		r = _vcpu_run(rv->vcpu);
		TEST_ASSERT(!timer_settime(timer, 0, &disarm, NULL), "timer_settime");
		if (r == -1 && errno == EINTR) {
			rv->spun = true;
			break;
		}
		TEST_ASSERT(!r && get_ucall(rv->vcpu, &uc) == UCALL_SYNC &&
			    uc.args[0] == STAGE_TICK, "vCPU did not tick");
		atomic_fetch_add(&rv->ticks, 1);
		nanosleep(&nap, NULL);
	}
	timer_delete(timer);
	atomic_store(&rv->done, true);
	return NULL;
}

static void test_rt_vcpu_beside_disable(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};
	struct sigaction sa = { .sa_handler = on_watchdog };
	struct pvprof_vcpu_status vs;
	struct rt_vcpu rv = { 0 };
	uint64_t pairs = 0;
	pthread_t thread;
	struct kvm_vm *vm;
	uint8_t *slot_mem;
	int stream_fd;

	rt_throttling_off();
	pin_to_cpu0();
	TEST_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	vm = vm_create_barebones();
	rv.vcpu = vm_vcpu_add(vm, guest_code);
	slot_mem = mmap(NULL, SLOT_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(slot_mem != MAP_FAILED, "mmap");
	vm_memslot_set(vm, BUF_SLOT, 0, BUF_GPA, SLOT_SIZE, slot_mem);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);

	TEST_ASSERT(!pthread_create(&thread, NULL, run_rt_vcpu, &rv), "pthread_create");
	while (!atomic_load(&rv.done)) {
		pvprof_disable(vm);
		pvprof_enable(vm, &en);
		pairs++;
	}
	pthread_join(thread, NULL);
	rt_runtime_restore();
	fprintf(stderr, "# measured: %llu DISABLE+ENABLE pairs beside %llu SCHED_FIFO vCPU ticks\n",
		(unsigned long long)pairs, (unsigned long long)atomic_load(&rv.ticks));
	TEST_ASSERT(!rv.spun,
		    "KVM_RUN of the SCHED_FIFO vCPU made no progress for %d s beside DISABLE (after %llu ticks): its entries were cancelled while the lock was busy",
		    WATCHDOG_SECONDS, (unsigned long long)atomic_load(&rv.ticks));

	guest_var(vm, g_stop) = 1;
	pvprof_disable(vm);
	vcpu_run_expect_sync(rv.vcpu, STAGE_QUIESCED, NULL);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	pvprof_assert_books(&vs, "quiesced");
	pvprof_print_books("rt_vcpu_beside_disable", &vs);
	vcpu_run_expect_done(rv.vcpu);
	vcpu_release(rv.vcpu);
	kvm_vm_free(vm);
	munmap(slot_mem, SLOT_SIZE);
	close(stream_fd);
}

static const struct test_case cases[] = {
	{ "rt_vcpu_beside_disable", test_rt_vcpu_beside_disable },
};

int main(int argc, char **argv)
{
	return test_run_cases("rt_vcpu", cases, ARRAY_SIZE(cases), argc, argv);
}
