// SPDX-License-Identifier: GPL-2.0
/*
 * VMs that never use pvprof pay nothing for it (issue #29, item 6): while
 * no VM has pvprof state, KVM's exits and runs do not enter pvprof at all.
 * The oracle is the kernel's own kprobe hit count on pvprof_vcpu_find(),
 * which every per-exit hook used to call: a plain VM's 1000 exits must not
 * hit it; a VM with pvprof state must (the probe works); after that VM is
 * gone the plain VM's exits must not hit it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"

enum { STAGE_EXIT = 1 };

#define EXITS		1000
#define TRACEFS		"/sys/kernel/tracing"
#define PROBE		"pvprof_static_key/find"

static void guest_code(void)
{
	int i;

	for (i = 0; i < EXITS; i++)
		GUEST_SYNC(STAGE_EXIT);
	GUEST_DONE();
}

static int tracefs_write(const char *file, const char *text, bool append)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -errno : 0;
}

static void probe_remove(void)
{
	tracefs_write("events/pvprof_static_key/find/enable", "0", false);
	tracefs_write("kprobe_events", "-:" PROBE "\n", true);
}

/* A kprobe on pvprof_vcpu_find() in kvm.ko, enabled; removed at exit. */
static void probe_add(void)
{
	struct stat st;

	if (stat(TRACEFS "/kprobe_events", &st))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	TEST_REQUIRE(!stat(TRACEFS "/kprobe_events", &st));
	probe_remove();
	TEST_ASSERT(!tracefs_write("kprobe_events", "p:" PROBE " kvm:pvprof_vcpu_find\n", true),
		    "cannot place a kprobe on kvm:pvprof_vcpu_find");
	atexit(probe_remove);
	TEST_ASSERT(!tracefs_write("events/pvprof_static_key/find/enable", "1", false),
		    "cannot enable the kprobe");
}

/* The probe's hit count, from kprobe_profile. */
static uint64_t probe_hits(void)
{
	unsigned long long hits = 0, missed;
	char line[256], name[128];
	FILE *f = fopen(TRACEFS "/kprobe_profile", "r");
	bool found = false;

	TEST_ASSERT(f, "kprobe_profile");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %llu %llu", name, &hits, &missed) == 3 &&
		    !strcmp(name, "find")) {
			found = true;
			break;
		}
	fclose(f);
	TEST_ASSERT(found, "the probe is not in kprobe_profile");
	return hits;
}

/* Hits of the probe while a plain VM exits EXITS times to user space. */
static uint64_t hits_over_plain_vm(void)
{
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint64_t before;
	int i;

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	before = probe_hits();
	for (i = 0; i < EXITS; i++)
		vcpu_run_expect_sync(vcpu, STAGE_EXIT, NULL);
	vcpu_run_expect_done(vcpu);
	vcpu_release(vcpu);
	kvm_vm_free(vm);
	return probe_hits() - before;
}

static void test_plain_vms_skip_pvprof(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000,
	};
	uint64_t plain, with_pvprof, after;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint64_t before;
	int i;

	probe_add();
	plain = hits_over_plain_vm();

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	pvprof_enable(vm, &en);
	before = probe_hits();
	for (i = 0; i < 100; i++)
		vcpu_run_expect_sync(vcpu, STAGE_EXIT, NULL);
	with_pvprof = probe_hits() - before;
	pvprof_disable(vm);
	vcpu_release(vcpu);
	kvm_vm_free(vm);

	after = hits_over_plain_vm();
	fprintf(stderr, "# measured: pvprof_vcpu_find() hits: %llu over a plain VM's %d exits, %llu over 100 exits of a VM with pvprof, %llu over the plain VM's %d after it\n",
		(unsigned long long)plain, EXITS, (unsigned long long)with_pvprof,
		(unsigned long long)after, EXITS);
	TEST_ASSERT(with_pvprof >= 100, "the probe missed a pvprof VM's exits (%llu hits)",
		    (unsigned long long)with_pvprof);
	TEST_ASSERT(plain == 0 && after == 0,
		    "a VM without pvprof state entered pvprof on its exits (%llu, then %llu hits)",
		    (unsigned long long)plain, (unsigned long long)after);
}

static const struct test_case cases[] = {
	{ "plain_vms_skip_pvprof", test_plain_vms_skip_pvprof },
};

int main(int argc, char **argv)
{
	return test_run_cases("static_key", cases, ARRAY_SIZE(cases), argc, argv);
}
