// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of the control plane's checks (spec pvprof-ctl and
 * spec pvprof-exposure): the error of every common check, ENABLE's argument
 * checks, exposure seen from the guest's PROBE, the capability check as an
 * unprivileged user, and a stream read into a buffer too small for an entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "abi/pvprof_ctl.h"

enum { STAGE_PROBE = 1 };

static void guest_probe_forever(void)
{
	for (;;)
		GUEST_SYNC_ARGS(STAGE_PROBE,
				pvprof_hypercall(PVPROF_OP_PROBE, PVPROF_ABI_VERSION, 0, 0),
				0, 0);
}

static int ctl(int kvm_fd, unsigned long cmd, void *arg)
{
	return ioctl(kvm_fd, cmd, arg) < 0 ? -errno : 0;
}

struct setup {
	int kvm_fd;
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
};

static bool setup(struct setup *s)
{
	struct pvprof_ctl_status cs = { .vm_fd = -1 };

	s->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	TEST_ASSERT(s->kvm_fd >= 0, "open /dev/kvm: %s", strerror(errno));
	s->vm = vm_create_with_one_vcpu(&s->vcpu, guest_probe_forever);
	/* Detection as the spec describes it: EINVAL means no pvprof. */
	if (test_kvm_flavour() == KVM_FLAVOUR_STOCK) {
		TEST_ASSERT_EQ(ctl(s->kvm_fd, PVPROF_CTL_STATUS, &cs), -EINVAL);
		return false;
	}
	TEST_ASSERT_EQ(ctl(s->kvm_fd, PVPROF_CTL_STATUS, &cs), -EBADF);
	return true;
}

static void teardown(struct setup *s)
{
	kvm_vm_free(s->vm);
	close(s->kvm_fd);
}

static void test_common_checks(void)
{
	struct pvprof_ctl_enable en = { .event = PVPROF_EVENT_CPU_CLOCK,
					.sample_period = 1000000 };
	struct pvprof_ctl_vm vmarg = { 0 };
	struct setup s;

	if (!setup(&s))
		goto out;
	/* An open fd that is not a VM fd. */
	en.vm_fd = s.kvm_fd;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, (void *)8), -EFAULT);

	en.vm_fd = s.vm->fd;
	vmarg.vm_fd = s.vm->fd;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_DISABLE, &vmarg), -ENOENT);
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_STREAM, &vmarg), -ENOENT);
	en.reserved1[1] = 1;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.reserved1[1] = 0;
	en.event = PVPROF_EVENT_MAX + 1;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.event = PVPROF_EVENT_CPU_CLOCK;
	en.sample_period = 1000;	/* below 1e9 / PVPROF_MAX_FREQ ns */
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.flags = PVPROF_ENABLE_F_FREQ;
	en.sample_period = 0;
	en.sample_freq = PVPROF_MAX_FREQ + 1;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.sample_freq = 0;
	en.max_depth = PVPROF_MAX_DEPTH + 1;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.max_depth = 0;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), 0);
	vmarg.flags = 1;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_DISABLE, &vmarg), -EINVAL);
	vmarg.flags = 0;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_DISABLE, &vmarg), 0);
out:
	teardown(&s);
}

static uint64_t guest_probe(struct setup *s)
{
	struct ucall uc;

	vcpu_run_expect_sync(s->vcpu, STAGE_PROBE, &uc);
	return uc.args[1];
}

static uint32_t status_flags(struct setup *s)
{
	struct pvprof_ctl_status cs = { .vm_fd = s->vm->fd };

	TEST_ASSERT_EQ(ctl(s->kvm_fd, PVPROF_CTL_STATUS, &cs), 0);
	TEST_ASSERT_EQ(cs.nr_vcpus, 1);
	return cs.flags;
}

static void test_expose_hides_probe(void)
{
	struct pvprof_ctl_expose ex = { 0 };
	struct setup s;

	if (!setup(&s))
		goto out;
	ex.vm_fd = s.vm->fd;
	TEST_ASSERT((int64_t)guest_probe(&s) >= 0, "PROBE failed while visible");
	TEST_ASSERT_EQ(status_flags(&s) & PVPROF_STATUS_F_HIDDEN, 0);

	ex.mode = PVPROF_EXPOSE_HIDDEN + 1;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_EXPOSE, &ex), -EINVAL);
	ex.mode = PVPROF_EXPOSE_HIDDEN;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_EXPOSE, &ex), 0);
	TEST_ASSERT_EQ(guest_probe(&s), -(uint64_t)PVPROF_ENOSYS);
	TEST_ASSERT(status_flags(&s) & PVPROF_STATUS_F_HIDDEN, "F_HIDDEN not set");

	ex.mode = PVPROF_EXPOSE_DEFAULT;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_EXPOSE, &ex), 0);
	TEST_ASSERT((int64_t)guest_probe(&s) >= 0, "PROBE failed after DEFAULT");
out:
	teardown(&s);
}

/* Without CAP_PERFMON or CAP_SYS_ADMIN every pvprof ioctl is EPERM. */
static void test_unprivileged_eperm(void)
{
	struct pvprof_ctl_status cs;
	struct setup s;
	int status;
	pid_t pid;

	if (!setup(&s))
		goto out;
	cs = (struct pvprof_ctl_status){ .vm_fd = s.vm->fd };
	pid = fork();
	TEST_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(ctl(s.kvm_fd, PVPROF_CTL_STATUS, &cs) == -EPERM ? 0 : 1);
	}
	TEST_ASSERT(waitpid(pid, &status, 0) == pid, "waitpid");
	TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "unprivileged STATUS: child status %#x (1: not EPERM, 2: setresuid failed)",
		    status);
out:
	teardown(&s);
}

static void test_stream_small_read_einval(void)
{
	struct pvprof_ctl_enable en = { .event = PVPROF_EVENT_CPU_CLOCK,
					.sample_period = 1000000 };
	struct pvprof_ctl_vm vmarg = { 0 };
	uint8_t buf[PVPROF_STREAM_MAX_ENTRY];
	struct setup s;
	int fd;

	if (!setup(&s))
		goto out;
	en.vm_fd = s.vm->fd;
	vmarg.vm_fd = s.vm->fd;
	TEST_ASSERT_EQ(ctl(s.kvm_fd, PVPROF_CTL_ENABLE, &en), 0);
	fd = ioctl(s.kvm_fd, PVPROF_CTL_STREAM, &vmarg);
	TEST_ASSERT(fd >= 0, "PVPROF_CTL_STREAM: %s", strerror(errno));
	TEST_ASSERT(read(fd, buf, 8) < 0 && errno == EINVAL,
		    "8-byte read of a stream: expected EINVAL");
	TEST_ASSERT_EQ(read(fd, buf, sizeof(buf)), sizeof(struct pvprof_st_hello));
	TEST_ASSERT(fcntl(fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	TEST_ASSERT(read(fd, buf, sizeof(buf)) < 0 && errno == EAGAIN,
		    "empty stream: expected EAGAIN");
	/* Closing the reader lets the next one attach. */
	close(fd);
	fd = ioctl(s.kvm_fd, PVPROF_CTL_STREAM, &vmarg);
	TEST_ASSERT(fd >= 0, "second PVPROF_CTL_STREAM: %s", strerror(errno));
	close(fd);
out:
	teardown(&s);
}

static const struct test_case cases[] = {
	{ "common_checks", test_common_checks },
	{ "expose_hides_probe", test_expose_hides_probe },
	{ "unprivileged_eperm", test_unprivileged_eperm },
	{ "stream_small_read_einval", test_stream_small_read_einval },
};

int main(int argc, char **argv)
{
	return test_run_cases("ctl", cases, ARRAY_SIZE(cases), argc, argv);
}
