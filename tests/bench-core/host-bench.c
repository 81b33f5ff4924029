// SPDX-License-Identifier: GPL-2.0
/*
 * bench-core's host path: what the pvprof KVM module does per callchain, on
 * the core's own code, in a tight loop on this machine's CPU.
 *
 * The per-sample sequence is the kernel's own, core/host_vcpu.c's: this file
 * supplies its operations (struct pvprof_host_ops) on an in-memory image of
 * the guest's buffer, as host-kvm/pvprof/sample.c does on the real vCPU and
 * tests/unit/sim.c on the model's.  pvprof_host_vcpu_drain() copies each
 * posted slot once out of the buffer, more slots for a callchain with a user
 * stack snapshot, validates and accounts it, and emits it: the encoder
 * (pvprof_st_put_callchain()) and the append to the reader's ring
 * (host-kvm/pvprof/stream.c's reader_copy_in()) as sample.c's emit does
 * them; pvprof_host_vcpu_work() is the whole pass before an entry (identity
 * check, notice, NMI gate, drain); pvprof_host_vcpu_nmi_delivery() the NMI's
 * delivery.  What is not here: the kernel's guest-memory accessors
 * (kvm_read_guest_offset_cached() is a copy_from_user() of the same bytes;
 * memcpy() here), the stream's spin lock and wake-up, ktime_get_ns(), and
 * the exits themselves.
 *
 * Three cases, each on frame-pointer callchains (20-40 frames, half of them
 * with kernel frames first) and on --call-graph dwarf callchains (the same
 * chains plus the user registers and an 8 KiB stack snapshot, 9 slots):
 *   validate_encode  pvprof_host_callchain() and pvprof_st_put_callchain() on
 *                    a callchain already copied: the core's own work, called
 *                    directly on purpose
 *   drain            per callchain, pvprof_host_vcpu_drain() with chain_tail
 *                    published, as a pass before an entry runs it
 *   sample           per sample, pvprof_host_vcpu_work() with a sample in
 *                    the slot (notice, NMI gate, and the drain of the
 *                    callchain that answered the previous sample), then
 *                    pvprof_host_vcpu_nmi_delivery()
 *
 * The guest's part (reading the notice, writing the callchain) is not
 * timed as work: its callchains are laid into the buffer once, and per
 * callchain the loop only stores the seq and moves the indices.  A snapshot
 * callchain spans 9 of the 60 slots of a 64 KiB buffer, so where each
 * callchain starts repeats every 3 laps: the bench keeps 3 images of the
 * buffer (more for variety), and its read operation serves each slot from
 * the image of its lap; header and notices live in image 0.
 *
 * usage: host-bench [--seconds S] [--reps N]
 * Prints one JSON object: for each case and mode, per repetition the
 * callchains done, the thread's CPU seconds and the wall seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/host_vcpu.h"
#include "core/callchain.h"
#include "core/stream.h"

#define READER_BUF_SIZE		(1U << 20)	/* host-kvm/pvprof/stream.c */
#define USTACK_SIZE		8192U		/* PVPROF_USTACK_DEFAULT */
#define MIN_DISTINCT		32U
#define MAX_IMAGES		64U
#define MAX_SPAN		16U

struct mode {
	const char *name;
	__u32 buf_size;		/* the guest driver's default for the mode */
	bool ustack;
};

static const struct mode modes[] = {
	{ "fp", 16384, false },
	{ "dwarf", 65536, true },
};

struct bench {
	const struct mode *mode;
	__u32 slots, span, images, distinct;
	/* Buffer images, one per lap of the period; header and notices in [0]. */
	__u8 *image[MAX_IMAGES];
	/* The same callchains, copied once, for validate_encode. */
	__u64 *copies;
	/* The vCPU as the host sequence sees it, and what it keeps. */
	struct pvprof_host_ring ring;
	struct pvprof_vcpu_acct acct;
	struct pvprof_host_work work;
	struct pvprof_published want;
	struct pvprof_host_vcpu view;
	/* The overflow handler's slot, and NMIs injected not yet delivered. */
	struct pvprof_sample slot;
	bool slot_full;
	__u32 nmis_queued;
	/* The next chain slot the read operation expects: its index, its image. */
	__u64 read_slot;
	__u32 read_j, read_img;
	__u64 posted;			/* callchains the guest posted */
	__u64 emitted;			/* callchains the host streamed */
	__u64 samples;			/* samples put in the slot */
	/* The stream entry, as struct pvprof_vcpu has it, and the reader's ring. */
	__u64 out[(PVPROF_STREAM_MAX_ENTRY + 7) / 8];
	__u8 *reader;
	__u64 reader_head;
	__u64 sink;
};

static __u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void die(const char *what)
{
	fprintf(stderr, "host-bench: %s\n", what);
	exit(2);
}

static void *zalloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

	if (!p)
		die("out of memory");
	memset(p, 0, n);
	return p;
}

static __u64 gcd(__u64 a, __u64 b)
{
	while (b) {
		__u64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * A callchain as the guest driver builds it (pvprof_callchain_init(),
 * _finish(), then the snapshot): 20-40 frames, half of the callchains interrupted in
 * kernel mode with 6-15 kernel frames before the user ones.
 */
static __u32 make_chain(struct pvprof_callchain *chain, bool ustack)
{
	__u32 depth = 20 + (__u32)(rnd() % 21), nr_kernel = 0, i;
	bool user = rnd() & 1;

	pvprof_callchain_init(chain, 1, user ? PVPROF_CHAIN_F_USER : 0);
	chain->time_ns = rnd() >> 8;
	chain->pid = chain->tid = 1000 + (__u32)(rnd() % 100);
	chain->exec_gen = 1;
	if (!user)
		nr_kernel = 6 + (__u32)(rnd() % 10);
	for (i = 0; i < depth; i++)
		pvprof_callchain_frames(chain)[i] = i < nr_kernel ?
				 0xffffffff81000000ULL + rnd() % 0x1000000 :
				 0x555555554000ULL + rnd() % 0x100000;
	chain->nr_kernel = (__u16)nr_kernel;
	chain->nr_user = (__u16)(depth - nr_kernel);
	pvprof_callchain_finish(chain, PVPROF_MAX_DEPTH);
	if (ustack) {
		struct pvprof_ustack *us = pvprof_callchain_ustack(chain);

		for (i = 0; i < PVPROF_UREG_NR; i++)
			us->regs[i] = rnd() % PVPROF_USER_HALF_END;
		us->regs[PVPROF_UREG_IP] = pvprof_callchain_frame(chain, nr_kernel);
		us->regs[PVPROF_UREG_SP] = 0x7ffffffde000ULL;
		us->size = USTACK_SIZE;
		for (i = 0; i < USTACK_SIZE / 8; i++)
			((__u64 *)pvprof_ustack_data(us))[i] = rnd();
		chain->flags |= PVPROF_CHAIN_F_USTACK;
		chain->size = (__u16)pvprof_callchain_ustack_bytes(depth, USTACK_SIZE);
	}
	return chain->size;
}

static struct pvprof_buf_header *hdr(struct bench *b)
{
	return (struct pvprof_buf_header *)b->image[0];
}

/*
 * The image holding chain slot @j of the ring.  The host sequence reads a
 * callchain's slots in order from chain_tail, and the next callchain from
 * where the last one ended, so the expected slot is tracked without a
 * division; a read anywhere else finds its lap from chain_tail (every read
 * of a callchain comes before chain_tail moves past it).
 */
static __u32 slot_image(struct bench *b, __u32 j)
{
	__u64 tail = b->ring.chain_tail;
	__u32 img;

	if (j != b->read_j || b->read_slot - tail >= b->slots) {
		b->read_slot = tail + (j + b->slots - tail % b->slots) % b->slots;
		b->read_j = j;
		b->read_img = (__u32)((b->read_slot / b->slots) % b->images);
	}
	if (b->read_slot >= b->posted * b->span)
		die("the host read a slot the guest did not post");
	img = b->read_img;
	b->read_slot++;
	if (++b->read_j == b->slots) {
		b->read_j = 0;
		b->read_img = img + 1 == b->images ? 0 : img + 1;
	}
	return img;
}

/* The host's operations (core/host_vcpu.h) on the buffer's images. */

static int op_refresh(void *ctx)
{
	(void)ctx;
	return 0;
}

/* kvm_read_guest_offset_cached(): a chain slot from the image of its lap. */
static int op_read(void *ctx, __u32 off, void *dst, __u32 len)
{
	struct bench *b = ctx;
	const __u8 *img = b->image[0];

	if ((__u64)off + len > b->mode->buf_size)
		die("a read past the buffer");
	if (off >= PVPROF_CHAIN_OFFSET) {
		if ((off - PVPROF_CHAIN_OFFSET) % PVPROF_CHAIN_SLOT_SIZE ||
		    len != PVPROF_CHAIN_SLOT_SIZE)
			die("a read of part of a chain slot");
		img = b->image[slot_image(b, (off - PVPROF_CHAIN_OFFSET) /
					     PVPROF_CHAIN_SLOT_SIZE)];
	}
	memcpy(dst, img + off, len);
	return 0;
}

/* The host writes the header and the notices, never the chain slots. */
static int op_write(void *ctx, __u32 off, const void *src, __u32 len)
{
	struct bench *b = ctx;

	if ((__u64)off + len > PVPROF_CHAIN_OFFSET)
		die("a write past the notices");
	memcpy(b->image[0] + off, src, len);
	return 0;
}

static __u64 *index_at(struct bench *b, __u32 off)
{
	if (off % 8 || off + 8 > PVPROF_HEADER_SIZE)
		die("an index outside the header");
	return (__u64 *)(b->image[0] + off);
}

static int op_load_index(void *ctx, __u32 off, __u64 *val)
{
	*val = pvprof_load_acquire(index_at(ctx, off));
	return 0;
}

static int op_store_index(void *ctx, __u32 off, __u64 val)
{
	pvprof_store_release(index_at(ctx, off), val);
	return 0;
}

static bool op_sample_pending(void *ctx)
{
	return ((struct bench *)ctx)->slot_full;
}

static bool op_take_sample(void *ctx, struct pvprof_sample *s)
{
	struct bench *b = ctx;

	if (!b->slot_full)
		return false;
	*s = b->slot;
	b->slot_full = false;
	return true;
}

/* The guest is never in its NMI handler when the host runs. */
static void op_nmi_state(void *ctx, bool *held, bool *masked)
{
	*held = ((struct bench *)ctx)->nmis_queued != 0;
	*masked = false;
}

static void op_inject_nmi(void *ctx)
{
	((struct bench *)ctx)->nmis_queued++;
}

static bool op_open_nmi_window(void *ctx)
{
	(void)ctx;
	die("the NMI gate asked for a window with the guest's NMIs unmasked");
	return false;
}

/* host-kvm/pvprof/stream.c's reader_copy_in(); the reader keeps up. */
static void reader_append(struct bench *b, const void *src, __u32 len)
{
	__u32 off = (__u32)(b->reader_head & (READER_BUF_SIZE - 1));
	__u32 first = len < READER_BUF_SIZE - off ? len : READER_BUF_SIZE - off;

	memcpy(b->reader + off, src, first);
	memcpy(b->reader, (const __u8 *)src + first, len - first);
	b->reader_head += len;
}

/* sample.c's emit: encode the stream entry, append it to the reader's ring. */
static bool op_emit(void *ctx, const struct pvprof_notice_facts *facts,
		    const struct pvprof_callchain *chain, __u32 slots)
{
	struct bench *b = ctx;
	__u32 len;

	(void)slots;
	len = pvprof_st_put_callchain(b->out, sizeof(b->out), 0, b->reader_head, facts, chain);
	if (!len)
		die("the encoder refused a callchain");
	reader_append(b, b->out, len);
	b->emitted++;
	return true;
}

static const struct pvprof_host_ops bench_ops = {
	.refresh		= op_refresh,
	.read			= op_read,
	.write			= op_write,
	.load_index		= op_load_index,
	.store_index		= op_store_index,
	.sample_pending		= op_sample_pending,
	.take_sample		= op_take_sample,
	.nmi_state		= op_nmi_state,
	.inject_nmi		= op_inject_nmi,
	.open_nmi_window	= op_open_nmi_window,
	.emit			= op_emit,
};

static void bench_init(struct bench *b, const struct mode *m)
{
	static __u64 chain_buf[MAX_SPAN * PVPROF_CHAIN_SLOT_SIZE / 8];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)chain_buf;
	struct pvprof_buf_header header;
	__u32 laps, i, k, slot_bytes;

	memset(b, 0, sizeof(*b));
	b->mode = m;
	b->slots = PVPROF_CHAIN_SLOTS(m->buf_size);
	b->span = m->ustack ? PVPROF_CHAIN_SPAN(pvprof_callchain_ustack_bytes(40, USTACK_SIZE)) : 1;
	if (PVPROF_CHAIN_SPAN(pvprof_callchain_ustack_bytes(20, USTACK_SIZE)) != b->span &&
	    m->ustack)
		die("callchains of different spans");
	/* Laps until callchain starts repeat, then periods up to MIN_DISTINCT callchains. */
	laps = b->span / (__u32)gcd(b->span, b->slots);
	b->images = laps;
	while (b->images * b->slots / b->span < MIN_DISTINCT)
		b->images += laps;
	if (b->images > MAX_IMAGES)
		die("too many images");
	b->distinct = b->images * b->slots / b->span;
	slot_bytes = b->span * PVPROF_CHAIN_SLOT_SIZE;
	b->copies = zalloc((size_t)b->distinct * slot_bytes);
	for (i = 0; i < b->images; i++)
		b->image[i] = zalloc(m->buf_size);
	b->reader = zalloc(READER_BUF_SIZE);
	for (i = 0; i < b->distinct; i++) {
		__u64 first = (__u64)i * b->span;

		memset(chain_buf, 0, sizeof(chain_buf));
		make_chain(chain, m->ustack);
		memcpy((__u8 *)b->copies + (size_t)i * slot_bytes, chain, slot_bytes);
		/* Slot by slot into the images, wrapping as the guest's copy does. */
		for (k = 0; k < b->span; k++) {
			__u64 s = first + k;
			__u8 *img = b->image[(s / b->slots) % b->images];

			memcpy(img + PVPROF_CHAIN_OFFSET + (s % b->slots) * PVPROF_CHAIN_SLOT_SIZE,
			       (__u8 *)chain_buf + k * PVPROF_CHAIN_SLOT_SIZE,
			       PVPROF_CHAIN_SLOT_SIZE);
		}
	}
	if (pvprof_host_ring_init(&b->ring, m->buf_size, 0, 0x1234) ||
	    PVPROF_CHAIN_SLOTS(m->buf_size) != b->slots)
		die("ring");
	/* REGISTER, as tests/unit/sim.c's sim_register() does it. */
	b->want.state = PVPROF_STATE_ACTIVE;
	b->want.event = PVPROF_EVENT_CPU_CLOCK;
	b->want.period = 250000;
	b->want.ustack_size = m->ustack ? USTACK_SIZE : 0;
	b->ring.ustack_size = b->want.ustack_size;
	pvprof_host_header_init(&header, &b->ring, b->want.state, b->want.event,
				b->want.period);
	memcpy(b->image[0], &header, 128);
	b->work.published = b->want;
	/* As sample.c's: room for every slot of the largest ring. */
	b->work.span_copy = zalloc((size_t)PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) *
				   PVPROF_CHAIN_SLOT_SIZE);
	b->view = (struct pvprof_host_vcpu){
		.ring = &b->ring, .acct = &b->acct, .work = &b->work,
		.registered = true, .ops = &bench_ops, .ctx = b,
	};
}

/* The guest answers notice @seq: the seq into its first slot, then chain_head. */
static void guest_post(struct bench *b, __u64 seq)
{
	__u64 s = b->posted * b->span;
	__u8 *img = b->image[(s / b->slots) % b->images];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)
		(img + PVPROF_CHAIN_OFFSET + (s % b->slots) * PVPROF_CHAIN_SLOT_SIZE);

	chain->seq = seq;
	b->posted++;
	pvprof_store_release(&hdr(b)->chain_head, b->posted * b->span);
}

static __u64 one_validate_encode(struct bench *b, __u64 i)
{
	__u32 slot_bytes = b->span * PVPROF_CHAIN_SLOT_SIZE;
	struct pvprof_callchain *chain = (struct pvprof_callchain *)
		((__u8 *)b->copies + (size_t)(i % b->distinct) * slot_bytes);
	__u32 len;

	/* The notice it answers, without the notice's own work. */
	chain->seq = ++b->ring.notice_head;
	if (pvprof_host_callchain(&b->ring, &b->acct, chain, slot_bytes) != PVPROF_REJ_NONE)
		die("a callchain was refused");
	len = pvprof_st_put_callchain(b->out, sizeof(b->out), 0, i,
				      pvprof_host_notice_facts(&b->ring, chain->seq), chain);
	if (!len)
		die("the encoder refused a callchain");
	b->sink += len;
	return 1;
}

/* A pass's drain of the callchain the guest just posted. */
static __u64 one_drain(struct bench *b, __u64 i)
{
	__u64 emitted = b->emitted;

	(void)i;
	guest_post(b, ++b->ring.notice_head);
	if (pvprof_host_vcpu_drain(&b->view, true))
		die("the drain failed");
	return b->emitted - emitted;
}

/*
 * A sample in the slot, the pass before the entry (which drains the
 * callchain answering the previous sample), the NMI's delivery, then the
 * guest's handler: it reads the notices and answers the last one.
 */
static __u64 one_sample(struct bench *b, __u64 i)
{
	struct pvprof_buf_header *h = hdr(b);
	__u64 emitted = b->emitted, head;

	b->slot = (struct pvprof_sample){ .ip = 0x555555554000ULL + (i & 0xffff), .cpl = 3,
					  .host_time_ns = i, .guest_tsc = 3 * i,
					  .event = PVPROF_EVENT_CPU_CLOCK, .period = 250000 };
	b->slot_full = true;
	b->samples++;
	if (pvprof_host_vcpu_work(&b->view, &b->want))
		die("the host sequence dropped the registration");
	if (!b->nmis_queued)
		return b->emitted - emitted;
	b->nmis_queued--;
	if (pvprof_host_vcpu_nmi_delivery(&b->view, b->nmis_queued != 0) <= 0)
		return b->emitted - emitted;
	head = pvprof_load_acquire(&h->notice_head);
	if (head != pvprof_load_acquire(&h->notice_tail)) {
		pvprof_store_release(&h->notice_tail, head);
		guest_post(b, head);
	}
	return b->emitted - emitted;
}

static double now(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct rep {
	__u64 callchains;
	double cpu, wall;
};

static struct rep run(struct bench *b, __u64 (*one)(struct bench *, __u64), double seconds)
{
	double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC), c1;
	struct rep r = { 0 };
	__u64 i = 0;

	do {
		__u32 k;

		for (k = 0; k < 4096; k++, i++)
			r.callchains += one(b, i);
		c1 = now(CLOCK_THREAD_CPUTIME_ID);
	} while (c1 - c0 < seconds);
	r.cpu = c1 - c0;
	r.wall = now(CLOCK_MONOTONIC) - w0;
	return r;
}

static const struct {
	const char *name;
	__u64 (*one)(struct bench *, __u64);
} cases[] = {
	{ "validate_encode", one_validate_encode },
	{ "drain", one_drain },
	{ "sample", one_sample },
};

static __u64 rejected(const struct pvprof_vcpu_acct *acct)
{
	__u64 n = 0;
	unsigned int i;

	for (i = PVPROF_REJ_NONE + 1; i < PVPROF_REJ_NR; i++)
		n += acct->rejects[i];
	return n;
}

int main(int argc, char **argv)
{
	double seconds = 0.5;
	unsigned int reps = 5, c, m, i;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seconds") && a + 1 < argc)
			seconds = atof(argv[++a]);
		else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
			reps = (unsigned int)atoi(argv[++a]);
		else
			die("usage: host-bench [--seconds S] [--reps N]");
	}
	if (!reps || seconds <= 0)
		die("--reps and --seconds must be positive");
	printf("{");
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			static struct bench b;
			__u64 total = 0;

			bench_init(&b, &modes[m]);
			run(&b, cases[c].one, seconds / 4);	/* warm-up */
			printf("%s\n \"%s_%s\": {\"span\": %u, \"slots\": %u, \"distinct\": %u, \"reps\": [",
			       m || c ? "," : "", cases[c].name, modes[m].name, b.span, b.slots,
			       b.distinct);
			for (i = 0; i < reps; i++) {
				struct rep r = run(&b, cases[c].one, seconds);

				total += r.callchains;
				/* "records": the key run.py and the results have always read. */
				printf("%s{\"records\": %llu, \"cpu_s\": %.6f, \"wall_s\": %.6f}",
				       i ? ", " : "", (unsigned long long)r.callchains, r.cpu, r.wall);
			}
			/* Every callchain accepted and streamed, nothing lost on the way. */
			printf("], \"records\": %llu, \"accepted\": %llu, \"rejected\": %llu, "
			       "\"lost\": %llu}", (unsigned long long)total,
			       (unsigned long long)b.acct.callchains,
			       (unsigned long long)rejected(&b.acct),
			       (unsigned long long)(pvprof_acct_sample_losses(&b.acct) +
						    pvprof_acct_notice_outcomes(&b.acct) -
						    b.acct.callchains));
			fflush(stdout);
			if (b.acct.callchains < total || rejected(&b.acct))
				die("callchains were refused or not counted");
			/* The sample case's last callchain waits for a next pass. */
			if (b.posted - b.emitted > (cases[c].one == one_sample))
				die("posted callchains were not streamed");
			/* Each sample: its notice, a pvprof NMI, its delivery attributed. */
			if (b.acct.notices != b.samples || b.acct.nmis != b.samples ||
			    b.ring.nmi_delivered != b.samples)
				die("samples without their notice, NMI or delivery");
			for (i = 0; i < b.images; i++)
				free(b.image[i]);
			free(b.copies);
			free(b.reader);
			free(b.work.span_copy);
		}
	}
	printf("\n}\n");
	return 0;
}
