// SPDX-License-Identifier: GPL-2.0
/*
 * REGISTER is bounded per vCPU (issue #29, item 8; spec pvprof-op-register,
 * check 4): a guest that registers and unregisters in a loop gets
 * -PVPROF_ERATELIMIT once it has registered PVPROF_REGISTER_RATE times
 * within a second, and its VM's stream carries only the registrations
 * that succeeded; a second later it registers again.
 *
 * The oracle is the guest's own count of REGISTER answers and the stream's
 * vCPU events.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"

enum { STAGE_LOOPED = 1, STAGE_AGAIN };

#define BUF_GPA		0x1800000ULL
#define BUF_SIZE	(2 * PVPROF_PAGE_SIZE)
#define ATTEMPTS	200

static void guest_code(void)
{
	uint64_t ok = 0, limited = 0, other = 0;
	int64_t r;
	int i;

	for (i = 0; i < ATTEMPTS; i++) {
		memset((void *)BUF_GPA, 0, BUF_SIZE);
		r = pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0);
		if (!r) {
			ok++;
			GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
		} else if (r == -PVPROF_ERATELIMIT) {
			limited++;
		} else {
			other++;
		}
	}
	GUEST_SYNC_ARGS(STAGE_LOOPED, ok, limited, other);
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	r = pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0);
	GUEST_SYNC_ARGS(STAGE_AGAIN, r, 0, 0);
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_DONE();
}

static void test_register_loop_is_bounded(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 100,
	};
	struct timespec pause = { .tv_sec = 1, .tv_nsec = 100000000 };
	struct pvprof_stream_counts sc = { 0 };
	struct kvm_vcpu *vcpu;
	uint64_t ok, start_ns, elapsed_ns, bound;
	struct kvm_vm *vm;
	struct ucall uc;
	int stream_fd;

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	/* A stream, and no sampling: this guest has no NMI handler. */
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);
	pvprof_disable(vm);

	start_ns = test_now_ns();
	vcpu_run_expect_sync(vcpu, STAGE_LOOPED, &uc);
	elapsed_ns = test_now_ns() - start_ns;
	ok = uc.args[1];
	bound = PVPROF_REGISTER_RATE + PVPROF_REGISTER_RATE * elapsed_ns / 1000000000ULL + 1;
	fprintf(stderr, "# measured: %d REGISTERs in %llu ms: %llu accepted, %llu over the budget, %llu other errors\n",
		ATTEMPTS, (unsigned long long)(elapsed_ns / 1000000),
		(unsigned long long)ok, (unsigned long long)uc.args[2],
		(unsigned long long)uc.args[3]);
	TEST_ASSERT_EQ(uc.args[3], 0);
	TEST_ASSERT(ok >= PVPROF_REGISTER_RATE && ok <= bound,
		    "%llu REGISTERs accepted in %llu ms, expected %u to %llu",
		    (unsigned long long)ok, (unsigned long long)(elapsed_ns / 1000000),
		    PVPROF_REGISTER_RATE, (unsigned long long)bound);
	pvprof_stream_read(stream_fd, &sc, false);
	TEST_ASSERT(sc.registered == ok && sc.unregistered == ok,
		    "the stream has %llu REGISTERED and %llu UNREGISTERED events for %llu registrations",
		    (unsigned long long)sc.registered, (unsigned long long)sc.unregistered,
		    (unsigned long long)ok);

	/* A second later the budget is back. */
	nanosleep(&pause, NULL);
	vcpu_run_expect_sync(vcpu, STAGE_AGAIN, &uc);
	TEST_ASSERT_EQ(uc.args[1], 0);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);
	close(stream_fd);
}

static const struct test_case cases[] = {
	{ "register_loop_is_bounded", test_register_loop_is_bounded },
};

int main(int argc, char **argv)
{
	return test_run_cases("register_rate", cases, ARRAY_SIZE(cases), argc, argv);
}
