// SPDX-License-Identifier: GPL-2.0
/*
 * What pvprof costs KVM's exits (issue #29, item 6), counted by the
 * kernel's own kprobe hit counts:
 * - while no VM has pvprof state, KVM's exits and runs do not enter pvprof
 *   at all: pvprof_vcpu_find(), which every per-exit hook used to call, is
 *   not hit over a plain VM's 1000 exits (and is hit over a pvprof VM's,
 *   so the probe works), nor after that VM is gone;
 * - a VM with pvprof state finds its vCPU's state without walking the
 *   table of VMs: pvprof_vm_find() (never inlined) is hit on fewer than
 *   one exit in ten.
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
#define GROUP		"pvprof_static_key"

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

static const char *const probed[] = { "pvprof_vcpu_find", "pvprof_vm_find" };

static void probes_remove(void)
{
	char line[160];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(probed); i++) {
		snprintf(line, sizeof(line), "events/" GROUP "/%s/enable", probed[i]);
		tracefs_write(line, "0", false);
		snprintf(line, sizeof(line), "-:" GROUP "/%s\n", probed[i]);
		tracefs_write("kprobe_events", line, true);
	}
}

/* Enabled kprobes on the functions in probed[] in kvm.ko; removed at exit. */
static void probes_add(void)
{
	char line[160];
	struct stat st;
	unsigned int i;

	if (stat(TRACEFS "/kprobe_events", &st))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	TEST_REQUIRE(!stat(TRACEFS "/kprobe_events", &st));
	probes_remove();
	atexit(probes_remove);
	for (i = 0; i < ARRAY_SIZE(probed); i++) {
		snprintf(line, sizeof(line), "p:" GROUP "/%s kvm:%s\n", probed[i], probed[i]);
		TEST_ASSERT(!tracefs_write("kprobe_events", line, true),
			    "cannot place a kprobe on kvm:%s", probed[i]);
		snprintf(line, sizeof(line), "events/" GROUP "/%s/enable", probed[i]);
		TEST_ASSERT(!tracefs_write(line, "1", false), "cannot enable %s", line);
	}
}

/* The hit count of the probe on @fn, from kprobe_profile. */
static uint64_t probe_hits(const char *fn)
{
	unsigned long long hits = 0, missed;
	char line[256], name[128];
	FILE *f = fopen(TRACEFS "/kprobe_profile", "r");
	bool found = false;

	TEST_ASSERT(f, "kprobe_profile");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %llu %llu", name, &hits, &missed) == 3 &&
		    !strcmp(name, fn)) {
			found = true;
			break;
		}
	fclose(f);
	TEST_ASSERT(found, "the probe on %s is not in kprobe_profile", fn);
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
	before = probe_hits("pvprof_vcpu_find");
	for (i = 0; i < EXITS; i++)
		vcpu_run_expect_sync(vcpu, STAGE_EXIT, NULL);
	vcpu_run_expect_done(vcpu);
	vcpu_release(vcpu);
	kvm_vm_free(vm);
	return probe_hits("pvprof_vcpu_find") - before;
}

static void test_plain_vms_skip_pvprof(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000,
	};
	uint64_t plain, with_pvprof, table_walks, after;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint64_t before, walks_before;
	int i;

	probes_add();
	plain = hits_over_plain_vm();

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	pvprof_enable(vm, &en);
	/* The first runs make the vCPU's state and look it up once. */
	for (i = 0; i < 10; i++)
		vcpu_run_expect_sync(vcpu, STAGE_EXIT, NULL);
	before = probe_hits("pvprof_vcpu_find");
	walks_before = probe_hits("pvprof_vm_find");
	for (i = 10; i < EXITS; i++)
		vcpu_run_expect_sync(vcpu, STAGE_EXIT, NULL);
	with_pvprof = probe_hits("pvprof_vcpu_find") - before;
	table_walks = probe_hits("pvprof_vm_find") - walks_before;
	vcpu_run_expect_done(vcpu);
	pvprof_disable(vm);
	vcpu_release(vcpu);
	kvm_vm_free(vm);

	after = hits_over_plain_vm();
	fprintf(stderr, "# measured: pvprof_vcpu_find() hits: %llu over a plain VM's %d exits, %llu over %d exits of a VM with pvprof (%llu walks of the VM table), %llu over the plain VM's %d after it\n",
		(unsigned long long)plain, EXITS, (unsigned long long)with_pvprof,
		EXITS - 10, (unsigned long long)table_walks,
		(unsigned long long)after, EXITS);
	TEST_ASSERT(with_pvprof >= EXITS - 10,
		    "the probe missed a pvprof VM's exits (%llu hits)",
		    (unsigned long long)with_pvprof);
	TEST_ASSERT(plain == 0 && after == 0,
		    "a VM without pvprof state entered pvprof on its exits (%llu, then %llu hits)",
		    (unsigned long long)plain, (unsigned long long)after);
	TEST_ASSERT(table_walks * 10 < EXITS - 10,
		    "a VM with pvprof state walked the VM table %llu times in %d exits",
		    (unsigned long long)table_walks, EXITS - 10);
}

static const struct test_case cases[] = {
	{ "plain_vms_skip_pvprof", test_plain_vms_skip_pvprof },
};

int main(int argc, char **argv)
{
	return test_run_cases("static_key", cases, ARRAY_SIZE(cases), argc, argv);
}
