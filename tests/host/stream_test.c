// SPDX-License-Identifier: GPL-2.0
/*
 * Stream fd semantics (spec pvprof-ctl-stream and spec pvprof-stream):
 * several readers of one VM, a reader that never reads, readers that close
 * early, poll() and end of file when the VM is destroyed.
 *
 * The guest registers and answers pvprof NMIs with the deepest callchains
 * (1048-byte stream entries), so a reader's 1 MiB buffer overflows after
 * about 1000 of them.  Two readers read after every batch and must get the
 * very same entries in the same order, every accepted callchain, and LOSS
 * callchains adding up to the VM's losses; a third never reads until the VM
 * is gone and must get the first entries, then LOSS entries that count
 * exactly the callchain entries it missed, while the VM itself loses nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "core/guest.h"
#include "core/stream.h"

enum { STAGE_REGISTERED = 1, STAGE_BATCH, STAGE_SAMPLED };

#define BUF_GPA		0x300000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
/* NMIs per batch (the readers read between batches), and in all. */
#define BATCH_NMIS	100
#define TARGET_NMIS	1600
#define SPIN_LIMIT	(16ULL << 30)
/* A reader's buffer (host-kvm/pvprof/stream.c), for the overflow bound. */
#define READER_BUF	(1U << 20)
#define DEEPEST_ENTRY	(sizeof(struct pvprof_st_callchain) + 8 * PVPROF_MAX_DEPTH)

static struct pvprof_guest_buf gbuf;
static volatile uint64_t guest_nmis;

/* As deep as the callchain allows, so few callchains fill a reader. */
static void capture(void *ctx, const struct pvprof_notice *n,
		    struct pvprof_callchain *chain, uint32_t max_frames)
{
	const struct ex_regs *regs = ctx;
	uint32_t i;

	(void)n;
	for (i = 0; i < max_frames; i++)
		pvprof_callchain_frames(chain)[i] = PVPROF_KERNEL_HALF_START + regs->rip + i;
	chain->nr_kernel = max_frames;
	chain->flags = PVPROF_CHAIN_F_KTHREAD;
}

static void guest_nmi_handler(struct ex_regs *regs)
{
	struct pvprof_nmi_result res = { 0 };

	if (pvprof_guest_nmi(&gbuf, capture, regs, &res))
		guest_nmis++;
}

/* Stays registered: the VM's destruction ends the registration. */
static void guest_code(void)
{
	uint64_t spins = 0, next = BATCH_NMIS;

	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	GUEST_SYNC(STAGE_REGISTERED);
	while (guest_nmis < TARGET_NMIS && spins < SPIN_LIMIT) {
		__asm__ volatile("pause");
		spins++;
		if (guest_nmis >= next) {
			GUEST_SYNC_ARGS(STAGE_BATCH, guest_nmis, spins, 0);
			next += BATCH_NMIS;
		}
	}
	GUEST_SYNC_ARGS(STAGE_SAMPLED, guest_nmis, spins, 0);
	for (;;)
		__asm__ volatile("hlt");
}

static int ctl(int kvm_fd, unsigned long cmd, void *arg)
{
	return ioctl(kvm_fd, cmd, arg) < 0 ? -errno : 0;
}

static int stream_open(int kvm_fd, int vm_fd)
{
	struct pvprof_ctl_vm arg = { .vm_fd = vm_fd };
	int fd = ioctl(kvm_fd, PVPROF_CTL_STREAM, &arg);

	TEST_ASSERT(fd >= 0, "PVPROF_CTL_STREAM: %s", strerror(errno));
	TEST_ASSERT(fcntl(fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	return fd;
}

/* Everything one reader read, HELLO included. */
struct capture_buf {
	uint8_t *data;
	size_t len, cap;
	bool eof;
};

/* Reads what is queued (or to end of file); returns the bytes read. */
static size_t reader_drain(int fd, struct capture_buf *c)
{
	static uint8_t buf[64 * 1024];
	size_t total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (c->len + n > c->cap) {
			c->cap = (c->len + n) * 2;
			c->data = realloc(c->data, c->cap);
			TEST_ASSERT(c->data, "out of memory");
		}
		memcpy(c->data + c->len, buf, n);
		c->len += n;
		total += n;
	}
	if (n == 0)
		c->eof = true;
	else
		TEST_ASSERT(errno == EAGAIN, "stream read: %s", strerror(errno));
	return total;
}

struct books {
	uint64_t hello, callchains, registered, dropped, other;
	uint64_t losses[PVPROF_LOSS_NR];
	uint64_t sideband_missed;
	uint64_t *seqs;			/* callchain seqs, in stream order */
};

/* Decodes a reader's whole stream, checking the framing; fills @b. */
static void books_of(const struct capture_buf *c, struct books *b)
{
	enum pvprof_st_status st;
	struct pvprof_st_iter it;
	struct pvprof_st_view v;

	memset(b, 0, sizeof(*b));
	b->seqs = calloc(c->len / sizeof(struct pvprof_st_callchain) + 1,
			 sizeof(*b->seqs));
	TEST_ASSERT(b->seqs, "out of memory");
	pvprof_st_iter_init(&it, c->data, c->len);
	while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK) {
		switch (v.hdr.type) {
		case PVPROF_ST_HELLO:
			b->hello++;
			break;
		case PVPROF_ST_CALLCHAIN:
			b->seqs[b->callchains++] = v.u.callchain.chain.seq;
			break;
		case PVPROF_ST_LOSS:
			if (v.hdr.vcpu_id == ~0U)
				b->sideband_missed += v.u.loss.count;
			else
				b->losses[v.u.loss.reason] += v.u.loss.count;
			break;
		case PVPROF_ST_VCPU:
			if (v.u.vcpu.event == PVPROF_VCPU_REGISTERED)
				b->registered++;
			else if (v.u.vcpu.event == PVPROF_VCPU_DROPPED)
				b->dropped++;
			else
				b->other++;
			break;
		default:
			b->other++;
		}
	}
	TEST_ASSERT(st == PVPROF_ST_END, "stream framing: %s at byte %llu",
		    pvprof_st_status_name(st), (unsigned long long)it.pos);
}

/* Clears every entry's host_time_ns: the HELLO and snapshot times differ. */
static void strip_times(struct capture_buf *c)
{
	size_t pos = 0;

	while (pos + sizeof(struct pvprof_stream_hdr) <= c->len) {
		struct pvprof_stream_hdr *h = (void *)(c->data + pos);

		h->host_time_ns = 0;
		pos += h->size;
	}
}

/*
 * The VM's losses once it is destroyed, from its status just before: the
 * notices still outstanding become unanswered, and a sample still pending
 * in the slot (at most one) may be counted unregistered.
 */
static void final_losses(const struct pvprof_vcpu_status *vs, uint64_t *final)
{
	const uint64_t *l = (const uint64_t *)vs->losses;
	uint64_t outstanding, pending;

	outstanding = vs->notices - vs->callchains - l[PVPROF_LOSS_STALE] -
		      l[PVPROF_LOSS_INVALID] - l[PVPROF_LOSS_UNANSWERED];
	pending = vs->samples - vs->notices - l[PVPROF_LOSS_NOTICE_RING_FULL] -
		  l[PVPROF_LOSS_THROTTLED] - l[PVPROF_LOSS_UNREGISTERED] -
		  l[PVPROF_LOSS_PROTECTED] - l[PVPROF_LOSS_NESTED] -
		  l[PVPROF_LOSS_SMM] - l[PVPROF_LOSS_BUFFER_GONE] -
		  l[PVPROF_LOSS_SLOT_BUSY];
	TEST_ASSERT(pending <= 1, "%llu samples pending", (unsigned long long)pending);
	memcpy(final, l, PVPROF_LOSS_NR * sizeof(*final));
	final[PVPROF_LOSS_UNANSWERED] += outstanding;
	final[PVPROF_LOSS_UNREGISTERED] += pending;
}

static short poll_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	TEST_ASSERT(poll(&p, 1, 0) >= 0, "poll: %s", strerror(errno));
	return p.revents;
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_several_readers(void)
{
	struct pvprof_ctl_enable en = {
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 2000,
	};
	struct capture_buf a = { 0 }, b = { 0 }, never = { 0 }, early = { 0 };
	struct pvprof_ctl_status cs = { 0 };
	struct pvprof_vcpu_status vs;
	struct books ba, bb, bn;
	uint64_t final[PVPROF_LOSS_NR];
	int kvm_fd, fd_a, fd_b, fd_never, fd_early, spare[PVPROF_STREAM_MAX_READERS];
	int nr_spare = 0, i, extra;
	struct pvprof_ctl_vm vmarg = { 0 };
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint64_t batches = 0, start_ms, guest_ms;
	struct ucall uc;
	short ev;

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	TEST_ASSERT(kvm_fd >= 0, "open /dev/kvm: %s", strerror(errno));
	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	if (test_kvm_flavour() == KVM_FLAVOUR_STOCK) {
		vmarg.vm_fd = vm->fd;
		TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_STREAM, &vmarg), -EINVAL);
		kvm_vm_free(vm);
		close(kvm_fd);
		return;
	}
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	vcpu_run_expect_sync(vcpu, STAGE_REGISTERED, &uc);

	en.vm_fd = vm->fd;
	vmarg.vm_fd = vm->fd;
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_ENABLE, &en), 0);
	fd_a = stream_open(kvm_fd, vm->fd);
	fd_b = stream_open(kvm_fd, vm->fd);
	fd_never = stream_open(kvm_fd, vm->fd);
	fd_early = stream_open(kvm_fd, vm->fd);
	/* Up to the limit, then EBUSY; closing one makes room again. */
	for (extra = 4; extra < PVPROF_STREAM_MAX_READERS; extra++)
		spare[nr_spare++] = stream_open(kvm_fd, vm->fd);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_STREAM, &vmarg), -EBUSY);

	/* HELLO and the registration snapshot are there before any sample. */
	TEST_ASSERT_EQ(poll_now(fd_a), POLLIN);
	reader_drain(fd_a, &a);
	TEST_ASSERT_EQ(a.len, sizeof(struct pvprof_st_hello) +
			      sizeof(struct pvprof_st_vcpu));
	TEST_ASSERT_EQ(poll_now(fd_a), 0);

	start_ms = monotonic_ms();
	for (;;) {
		vcpu_run(vcpu);
		if (get_ucall(vcpu, &uc) != UCALL_SYNC)
			TEST_ASSERT(false, "unexpected ucall %llu",
				    (unsigned long long)uc.cmd);
		if (uc.args[0] == STAGE_SAMPLED)
			break;
		TEST_ASSERT_EQ(uc.args[0], STAGE_BATCH);
		reader_drain(fd_a, &a);
		reader_drain(fd_b, &b);
		if (++batches == 2) {
			/* Close readers that have entries queued, unread or half read. */
			reader_drain(fd_early, &early);
			TEST_ASSERT(early.len > 0, "early reader read nothing");
			close(fd_early);
			for (i = 0; i < nr_spare; i++)
				close(spare[i]);
			spare[0] = stream_open(kvm_fd, vm->fd);
			close(spare[0]);
		}
	}
	guest_ms = monotonic_ms() - start_ms;
	TEST_ASSERT(uc.args[1] >= TARGET_NMIS,
		    "guest saw %llu pvprof NMIs in %llu spins, wanted %d",
		    (unsigned long long)uc.args[1],
		    (unsigned long long)uc.args[2], TARGET_NMIS);
	reader_drain(fd_a, &a);
	reader_drain(fd_b, &b);
	TEST_ASSERT_EQ(poll_now(fd_a), 0);
	TEST_ASSERT(!a.eof && !b.eof, "end of file while the VM exists");

	cs.vm_fd = vm->fd;
	cs.nr_vcpus = 1;
	cs.vcpus = (uint64_t)(uintptr_t)&vs;
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_STATUS, &cs), 0);
	TEST_ASSERT_EQ(ctl(kvm_fd, PVPROF_CTL_DISABLE, &vmarg), 0);

	/* Destroying the VM ends the registration: DROPPED, then end of file. */
	TEST_ASSERT(munmap(vcpu->run, ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) == 0,
		    "munmap kvm_run");
	close(vcpu->fd);
	kvm_vm_free(vm);
	ev = poll_now(fd_a);
	TEST_ASSERT(ev == POLLIN, "poll after destroy, entries left: revents %#x", ev);
	reader_drain(fd_a, &a);
	TEST_ASSERT(a.eof, "no end of file after the VM was destroyed");
	ev = poll_now(fd_a);
	TEST_ASSERT(ev == (POLLIN | POLLHUP), "poll at end of file: revents %#x", ev);
	reader_drain(fd_b, &b);
	TEST_ASSERT(b.eof, "second reader: no end of file");
	reader_drain(fd_never, &never);
	TEST_ASSERT(never.eof, "the reader that never read: no end of file");

	/* The vCPU state, read before DISABLE, is final: nothing ran since. */
	books_of(&a, &ba);
	books_of(&b, &bb);
	books_of(&never, &bn);
	TEST_ASSERT(ba.hello == 1 && ba.registered == 1 && ba.dropped == 1,
		    "reader A: hello %llu, registered %llu, dropped %llu",
		    (unsigned long long)ba.hello, (unsigned long long)ba.registered,
		    (unsigned long long)ba.dropped);
	TEST_ASSERT_EQ(vs.losses[PVPROF_LOSS_STREAM_OVERFLOW], 0);
	TEST_ASSERT_EQ(ba.callchains, vs.callchains);
	final_losses(&vs, final);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		TEST_ASSERT(ba.losses[i] == final[i] ||
			    (i == PVPROF_LOSS_UNREGISTERED && ba.losses[i] == final[i] - 1),
			    "reader A: LOSS entries of reason %d add up to %llu, the VM lost %llu",
			    i, (unsigned long long)ba.losses[i],
			    (unsigned long long)final[i]);

	/* Same entries, same order: byte for byte but for the queueing times. */
	strip_times(&a);
	strip_times(&b);
	TEST_ASSERT(a.len == b.len && !memcmp(a.data, b.data, a.len),
		    "readers A and B differ (%zu and %zu bytes)", a.len, b.len);

	/* The reader that never read: a prefix, then exactly what it missed. */
	TEST_ASSERT(bn.losses[PVPROF_LOSS_STREAM_OVERFLOW] > 0,
		    "the reader that never read missed nothing (%llu callchains)",
		    (unsigned long long)bn.callchains);
	TEST_ASSERT_EQ(bn.callchains + bn.losses[PVPROF_LOSS_STREAM_OVERFLOW],
		       vs.callchains);
	TEST_ASSERT(bn.callchains * DEEPEST_ENTRY <= READER_BUF,
		    "%llu callchains in a reader that never read",
		    (unsigned long long)bn.callchains);
	TEST_ASSERT(!memcmp(bn.seqs, ba.seqs, bn.callchains * sizeof(*bn.seqs)),
		    "the reader that never read got other callchains than reader A");
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		TEST_ASSERT(i == PVPROF_LOSS_STREAM_OVERFLOW || bn.losses[i] == ba.losses[i],
			    "never-read reader: LOSS of reason %d add up to %llu, reader A's to %llu",
			    i, (unsigned long long)bn.losses[i],
			    (unsigned long long)ba.losses[i]);
	TEST_ASSERT(bn.registered == 1 && bn.dropped == 1,
		    "never-read reader: registered %llu, dropped %llu",
		    (unsigned long long)bn.registered, (unsigned long long)bn.dropped);

	fprintf(stderr, "# measured: %llu NMIs, %llu callchains in %llu ms; readers A and B got all %llu (%zu bytes each); the reader that never read got %llu and was told it missed %llu\n",
		(unsigned long long)uc.args[1], (unsigned long long)vs.callchains,
		(unsigned long long)guest_ms, (unsigned long long)ba.callchains,
		a.len, (unsigned long long)bn.callchains,
		(unsigned long long)bn.losses[PVPROF_LOSS_STREAM_OVERFLOW]);
	free(ba.seqs);
	free(bb.seqs);
	free(bn.seqs);
	free(a.data);
	free(b.data);
	free(never.data);
	free(early.data);
	close(fd_a);
	close(fd_b);
	close(fd_never);
	close(kvm_fd);
}

static const struct test_case cases[] = {
	{ "several_readers", test_several_readers },
};

int main(int argc, char **argv)
{
	return test_run_cases("stream", cases, ARRAY_SIZE(cases), argc, argv);
}
