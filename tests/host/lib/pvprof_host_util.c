// SPDX-License-Identifier: GPL-2.0
/*
 * Control plane, books and stream checks shared by the pvprof data-path
 * tests (see pvprof_host_util.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pvprof_host_util.h"
#include "core/host.h"
#include "core/callchain.h"
#include "core/stream.h"

int pvprof_ctl(struct kvm_vm *vm, unsigned long cmd, void *arg)
{
	return ioctl(vm->kvm_fd, cmd, arg) < 0 ? -errno : 0;
}

void pvprof_enable(struct kvm_vm *vm, struct pvprof_ctl_enable *en)
{
	int ret;

	en->vm_fd = vm->fd;
	ret = pvprof_ctl(vm, PVPROF_CTL_ENABLE, en);
	TEST_ASSERT(ret == 0, "PVPROF_CTL_ENABLE: %s", strerror(-ret));
}

void pvprof_disable(struct kvm_vm *vm)
{
	struct pvprof_ctl_vm arg = { .vm_fd = vm->fd };
	int ret = pvprof_ctl(vm, PVPROF_CTL_DISABLE, &arg);

	TEST_ASSERT(ret == 0, "PVPROF_CTL_DISABLE: %s", strerror(-ret));
}

void pvprof_vcpu_status(struct kvm_vm *vm, uint32_t nr_vcpus, uint32_t idx,
			struct pvprof_vcpu_status *vs)
{
	struct pvprof_vcpu_status all[8];
	struct pvprof_ctl_status cs = {
		.vm_fd = vm->fd,
		.nr_vcpus = nr_vcpus,
		.vcpus = (uint64_t)(uintptr_t)all,
	};
	int ret;

	TEST_ASSERT(nr_vcpus <= ARRAY_SIZE(all) && idx < nr_vcpus,
		    "vCPU %u of %u", idx, nr_vcpus);
	ret = pvprof_ctl(vm, PVPROF_CTL_STATUS, &cs);
	TEST_ASSERT(ret == 0, "PVPROF_CTL_STATUS: %s", strerror(-ret));
	TEST_ASSERT_EQ(cs.nr_vcpus, nr_vcpus);
	*vs = all[idx];
}

uint64_t pvprof_sample_losses(const struct pvprof_vcpu_status *vs)
{
	return vs->losses[PVPROF_LOSS_NOTICE_RING_FULL] +
	       vs->losses[PVPROF_LOSS_THROTTLED] +
	       vs->losses[PVPROF_LOSS_UNREGISTERED] +
	       vs->losses[PVPROF_LOSS_PROTECTED] +
	       vs->losses[PVPROF_LOSS_NESTED] +
	       vs->losses[PVPROF_LOSS_SMM] +
	       vs->losses[PVPROF_LOSS_BUFFER_GONE] +
	       vs->losses[PVPROF_LOSS_SLOT_BUSY];
}

uint64_t pvprof_notice_losses(const struct pvprof_vcpu_status *vs)
{
	return vs->losses[PVPROF_LOSS_STALE] + vs->losses[PVPROF_LOSS_INVALID] +
	       vs->losses[PVPROF_LOSS_UNANSWERED];
}

void pvprof_print_books(const char *label, const struct pvprof_vcpu_status *vs)
{
	char losses[512];
	size_t used = 0;
	unsigned int r;

	losses[0] = '\0';
	for (r = 0; r < PVPROF_LOSS_NR && used < sizeof(losses); r++) {
		if (!vs->losses[r])
			continue;
		used += snprintf(losses + used, sizeof(losses) - used, " %s %llu",
				 pvprof_loss_name(r),
				 (unsigned long long)vs->losses[r]);
	}
	fprintf(stderr, "# measured: %s: samples %llu, notices %llu, callchains %llu, nmis %llu; losses:%s\n",
		label, (unsigned long long)vs->samples,
		(unsigned long long)vs->notices, (unsigned long long)vs->callchains,
		(unsigned long long)vs->nmis, used ? losses : " none");
}

void pvprof_assert_books(const struct pvprof_vcpu_status *vs, const char *when)
{
	TEST_ASSERT(!vs->registered, "%s: the vCPU is still registered", when);
	TEST_ASSERT(vs->samples == vs->notices + pvprof_sample_losses(vs),
		    "%s: samples %llu != notices %llu + sample losses %llu", when,
		    (unsigned long long)vs->samples, (unsigned long long)vs->notices,
		    (unsigned long long)pvprof_sample_losses(vs));
	TEST_ASSERT(vs->notices == vs->callchains + pvprof_notice_losses(vs),
		    "%s: notices %llu != callchains %llu + stale/invalid/unanswered %llu",
		    when, (unsigned long long)vs->notices,
		    (unsigned long long)vs->callchains,
		    (unsigned long long)pvprof_notice_losses(vs));
}

int pvprof_stream_open(struct kvm_vm *vm)
{
	struct pvprof_ctl_vm arg = { .vm_fd = vm->fd };
	int fd = ioctl(vm->kvm_fd, PVPROF_CTL_STREAM, &arg);

	TEST_ASSERT(fd >= 0, "PVPROF_CTL_STREAM: %s", strerror(errno));
	TEST_ASSERT(fcntl(fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	return fd;
}

/* The queued copy must pass the callchain rules the host applied (9.3). */
static void check_callchain(struct pvprof_stream_counts *c,
			    const struct pvprof_st_view *v)
{
	static uint64_t copy[PVPROF_STREAM_MAX_ENTRY / 8];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)copy;
	uint32_t vcpu = v->hdr.vcpu_id;
	/* Any snapshot the host may ask for: the size asked is the test's. */
	struct pvprof_callchain_limits lim = {
		.max_depth = PVPROF_MAX_DEPTH,
		.ustack_size = PVPROF_USTACK_MAX,
		.notice_head = UINT64_MAX,
	};
	enum pvprof_reject why;

	TEST_ASSERT(vcpu < GUEST_MAX_VCPUS, "callchain of vCPU %u", vcpu);
	lim.answered_seq = c->vcpu_last_seq[vcpu];
	TEST_ASSERT(v->nr_frames <= PVPROF_MAX_DEPTH,
		    "callchain with %u frames", v->nr_frames);
	memset(copy, 0, sizeof(copy));
	memcpy(copy, v->raw + sizeof(struct pvprof_st_callchain) - sizeof(*chain),
	       v->u.callchain.chain.size);
	why = pvprof_callchain_validate(copy, sizeof(copy), &lim);
	TEST_ASSERT(why == PVPROF_REJ_NONE,
		    "the stream holds a callchain (seq %llu) the validator rejects: %s",
		    (unsigned long long)chain->seq, pvprof_reject_name(why));
	TEST_ASSERT(!(chain->flags & PVPROF_CHAIN_F_STALE), "stale callchain in the stream");
	c->last_seq = chain->seq;
	c->vcpu_last_seq[vcpu] = chain->seq;
	c->vcpu_callchains[vcpu]++;
	if (c->on_callchain)
		c->on_callchain(c->arg, v);
}

static void count_entry(struct pvprof_stream_counts *c,
			 const struct pvprof_st_view *v)
{
	switch (v->hdr.type) {
	case PVPROF_ST_HELLO:
		c->hello++;
		break;
	case PVPROF_ST_CALLCHAIN:
		check_callchain(c, v);
		c->callchains++;
		break;
	case PVPROF_ST_LOSS:
		TEST_ASSERT(v->u.loss.reason < PVPROF_LOSS_NR, "loss reason %u",
			    v->u.loss.reason);
		c->losses[v->u.loss.reason] += v->u.loss.count;
		break;
	case PVPROF_ST_VCPU:
		switch (v->u.vcpu.event) {
		case PVPROF_VCPU_REGISTERED:
			c->registered++;
			c->last_seq = 0;
			if (v->hdr.vcpu_id < GUEST_MAX_VCPUS)
				c->vcpu_last_seq[v->hdr.vcpu_id] = 0;
			break;
		case PVPROF_VCPU_UNREGISTERED:
			c->unregistered++;
			break;
		case PVPROF_VCPU_DROPPED:
			c->dropped++;
			break;
		default:
			TEST_FAIL("vCPU event %u", v->u.vcpu.event);
		}
		break;
	default:
		c->other++;
	}
}

void pvprof_stream_read(int fd, struct pvprof_stream_counts *c, bool until_eof)
{
	static uint8_t buf[256 * 1024];

	if (until_eof)
		TEST_ASSERT(fcntl(fd, F_SETFL, 0) == 0, "blocking mode");
	for (;;) {
		enum pvprof_st_status st;
		struct pvprof_st_iter it;
		struct pvprof_st_view v;
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0) {
			TEST_ASSERT(until_eof, "end of file while the VM exists");
			c->eof = true;
			return;
		}
		if (n < 0) {
			TEST_ASSERT(errno == EAGAIN && !until_eof,
				    "stream read: %s", strerror(errno));
			return;
		}
		pvprof_st_iter_init(&it, buf, n);
		if (c->hello)
			it.entries = 1;	/* HELLO came in an earlier read */
		while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK)
			count_entry(c, &v);
		TEST_ASSERT(st == PVPROF_ST_END, "stream framing: %s",
			    pvprof_st_status_name(st));
	}
}
