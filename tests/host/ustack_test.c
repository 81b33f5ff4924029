// SPDX-License-Identifier: GPL-2.0
/*
 * User stack snapshots (spec pvprof-callchain-drain and spec pvprof-ustack):
 * callchains that span slots, wrapping at the ring's end, reach the stream byte
 * for byte; the host asks for them only while ENABLE says so; a guest that
 * attaches more than the host asked for has the callchain rejected, counted as
 * invalid.
 *
 * The guest answers every notice as a user-mode sample whose "user stack"
 * is a pattern of its own memory, with the notice's seq in its first 8
 * bytes; the oracle is that construction.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_REGISTERED = 1, STAGE_SAMPLED };

#define BUF_GPA		0x300000ULL
#define BUF_SIZE	PVPROF_BUF_MAX_SIZE
/* Callchains the guest answers per stage. */
#define STAGE_NMIS	150
#define SPIN_LIMIT	(16ULL << 30)
#define FAKE_IP		0x401000ULL
#define FAKE_SP		0x7ffffff00000ULL
/* More than the host asks for in the first stage: the host's size cuts it. */
#define FAKE_STACK	6000
#define ASKED		4096

static struct pvprof_guest_buf gbuf;
static uint64_t scratch[PVPROF_CHAIN_SLOTS(BUF_SIZE) / 2 * PVPROF_CHAIN_SLOT_SIZE / 8];
static uint8_t fake_stack[FAKE_STACK];
static volatile uint64_t guest_nmis;

static uint8_t pattern(uint32_t i)
{
	return (uint8_t)(i * 31 + 7);
}

static void capture(void *ctx, const struct pvprof_notice *n,
		    struct pvprof_callchain *chain, uint32_t max_frames)
{
	(void)ctx;
	(void)n;
	(void)max_frames;
	chain->flags = PVPROF_CHAIN_F_USER;
	chain->pid = chain->tid = 42;
	chain->nr_user = 2;
	pvprof_callchain_frames(chain)[0] = FAKE_IP;
	pvprof_callchain_frames(chain)[1] = FAKE_IP + 0x40;
}

static int snapshot(void *ctx, const struct pvprof_callchain *chain, __u64 *regs,
		    __u8 *data, __u32 max)
{
	uint32_t n = max < FAKE_STACK ? max : FAKE_STACK;

	(void)ctx;
	regs[PVPROF_UREG_IP] = pvprof_callchain_frame(chain, 0);
	regs[PVPROF_UREG_SP] = FAKE_SP;
	regs[PVPROF_UREG_R15] = 15;
	memcpy(data, fake_stack, n);
	memcpy(data, &chain->seq, sizeof(chain->seq));
	return (int)n;
}

static void guest_nmi_handler(struct ex_regs *regs)
{
	struct pvprof_nmi_result res = { 0 };

	if (pvprof_guest_nmi(&gbuf, capture, regs, &res))
		guest_nmis++;
}

/*
 * Three stages of STAGE_NMIS answered notices each; before the third the
 * guest raises the ustack_size in its own copy of the header, as a guest
 * that ignores the host's would.
 */
static void guest_code(void)
{
	struct pvprof_buf_header *h = (void *)BUF_GPA;
	uint64_t spins = 0, stage;
	uint32_t i;

	for (i = 0; i < FAKE_STACK; i++)
		fake_stack[i] = pattern(i);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	pvprof_guest_set_ustack(&gbuf, snapshot, scratch, sizeof(scratch));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	GUEST_SYNC(STAGE_REGISTERED);
	for (stage = 1; stage <= 3; stage++) {
		uint64_t until = guest_nmis + STAGE_NMIS;

		if (stage == 3)
			*(volatile uint32_t *)&h->ustack_size = PVPROF_USTACK_MAX;
		while (guest_nmis < until && spins < SPIN_LIMIT) {
			__asm__ volatile("pause");
			spins++;
		}
		GUEST_SYNC_ARGS(STAGE_SAMPLED, stage, guest_nmis, spins);
	}
	for (;;)
		__asm__ volatile("hlt");
}

struct seen {
	uint64_t callchains, snapshots, intact, plain;
	uint32_t sizes_wrong;
};

static void check_callchain(void *arg, const struct pvprof_st_view *v)
{
	struct seen *s = arg;
	uint64_t seq;
	uint32_t i;
	bool ok;

	s->callchains++;
	if (!v->ustack_data) {
		s->plain++;
		return;
	}
	s->snapshots++;
	if (v->ustack_size != ASKED)
		s->sizes_wrong++;
	memcpy(&seq, v->ustack_data, sizeof(seq));
	ok = seq == v->u.callchain.chain.seq &&
	     v->ustack_regs[PVPROF_UREG_SP] == FAKE_SP &&
	     v->ustack_regs[PVPROF_UREG_R15] == 15 &&
	     v->ustack_regs[PVPROF_UREG_IP] == pvprof_st_frame(v, 0);
	for (i = sizeof(seq); ok && i < v->ustack_size; i++)
		ok = v->ustack_data[i] == pattern(i);
	s->intact += ok;
}

static void run_stage(struct kvm_vcpu *vcpu, uint64_t stage)
{
	struct ucall uc;

	vcpu_run_expect_sync(vcpu, STAGE_SAMPLED, &uc);
	TEST_ASSERT_EQ(uc.args[1], stage);
	TEST_ASSERT(uc.args[3] < SPIN_LIMIT, "stage %llu: the guest answered %llu NMIs in all before its spin limit",
		    (unsigned long long)stage, (unsigned long long)uc.args[2]);
}

static void read_stage(int fd, struct pvprof_stream_counts *sc, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	sc->on_callchain = check_callchain;
	sc->arg = s;
	pvprof_stream_read(fd, sc, false);
}

static void test_snapshots_asked_streamed_and_bounded(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000,
		.ustack_size = ASKED,
	};
	struct pvprof_stream_counts sc = { 0 };
	struct pvprof_vcpu_status vs;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	struct seen s;
	uint64_t invalid;
	int fd;

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	vcpu_run_expect_sync(vcpu, STAGE_REGISTERED, &uc);

	/* ENABLE's own bounds (spec pvprof-ctl-enable). */
	en.vm_fd = vm->fd;
	en.ustack_size = PVPROF_USTACK_MAX + 8;
	TEST_ASSERT_EQ(pvprof_ctl(vm, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.ustack_size = ASKED + 4;
	TEST_ASSERT_EQ(pvprof_ctl(vm, PVPROF_CTL_ENABLE, &en), -EINVAL);
	en.ustack_size = ASKED;
	pvprof_enable(vm, &en);
	fd = pvprof_stream_open(vm);

	/* 1: every callchain carries the snapshot, cut to what was asked. */
	run_stage(vcpu, 1);
	read_stage(fd, &sc, &s);
	fprintf(stderr, "# measured: asked %u: %llu callchains, %llu with a snapshot, %llu intact\n",
		ASKED, (unsigned long long)s.callchains, (unsigned long long)s.snapshots,
		(unsigned long long)s.intact);
	TEST_ASSERT(s.callchains >= STAGE_NMIS / 2, "only %llu callchains",
		    (unsigned long long)s.callchains);
	TEST_ASSERT(s.snapshots == s.callchains && s.intact == s.snapshots &&
		    !s.sizes_wrong,
		    "%llu callchains: %llu with a snapshot, %llu intact, %u of the wrong size",
		    (unsigned long long)s.callchains, (unsigned long long)s.snapshots,
		    (unsigned long long)s.intact, s.sizes_wrong);
	/* Every callchain the host accepted reached the stream whole. */
	pvprof_vcpu_status(vm, 1, 0, &vs);
	TEST_ASSERT_EQ(vs.callchains, s.callchains);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_INVALID], 0);

	/* 2: asked for none, the guest sends none, and nothing is rejected. */
	en.ustack_size = 0;
	pvprof_enable(vm, &en);
	run_stage(vcpu, 2);
	read_stage(fd, &sc, &s);
	fprintf(stderr, "# measured: asked 0: %llu callchains, %llu with a snapshot\n",
		(unsigned long long)s.callchains, (unsigned long long)s.snapshots);
	TEST_ASSERT(s.callchains >= STAGE_NMIS / 2 && !s.snapshots,
		    "%llu callchains, %llu with a snapshot, after ENABLE asked for none",
		    (unsigned long long)s.callchains, (unsigned long long)s.snapshots);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_INVALID], 0);

	/* 3: a guest that sends more than asked has each such callchain rejected. */
	en.ustack_size = ASKED;
	pvprof_enable(vm, &en);
	invalid = vs.losses[PVPROF_LOSS_INVALID];
	run_stage(vcpu, 3);
	read_stage(fd, &sc, &s);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	fprintf(stderr, "# measured: oversized: %llu callchains streamed, %llu notices invalid\n",
		(unsigned long long)s.callchains,
		(unsigned long long)(vs.losses[PVPROF_LOSS_INVALID] - invalid));
	TEST_ASSERT(!s.snapshots || !s.sizes_wrong,
		    "%u oversized snapshots reached the stream", s.sizes_wrong);
	TEST_ASSERT(vs.losses[PVPROF_LOSS_INVALID] - invalid >= STAGE_NMIS / 2,
		    "only %llu of %u oversized callchains rejected",
		    (unsigned long long)(vs.losses[PVPROF_LOSS_INVALID] - invalid), STAGE_NMIS);
	kvm_vm_free(vm);
	close(fd);
}

static const struct test_case cases[] = {
	{ "snapshots_asked_streamed_and_bounded", test_snapshots_asked_streamed_and_bounded },
};

int main(int argc, char **argv)
{
	return test_run_cases("ustack", cases, ARRAY_SIZE(cases), argc, argv);
}
