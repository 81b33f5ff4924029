// SPDX-License-Identifier: GPL-2.0
/*
 * bench-core's host path: what the pvprof KVM module does per callchain, on
 * the core's own code, in a tight loop on this machine's CPU.
 *
 * The loops follow host-kvm/pvprof/sample.c: pvprof_drain() copies each
 * posted slot once out of the guest's buffer, more slots for a callchain
 * with a user stack snapshot (pvprof_host_callchain_span()), validates and
 * accounts it (pvprof_host_callchain()), encodes the stream entry
 * (pvprof_st_put_callchain()) and appends it to the reader's ring
 * (host-kvm/pvprof/stream.c's reader_copy_in()); pvprof_notice() turns a
 * sample into a notice and rings the NMI gate.  What is not here: the
 * kernel's guest-memory accessors (kvm_read_guest_offset_cached() is a
 * copy_from_user() of the same bytes; memcpy() here), the stream's spin
 * lock and wake-up, ktime_get_ns(), and the exits themselves.
 *
 * Three cases, each on frame-pointer callchains (20-40 frames, half of them
 * with kernel frames first) and on --call-graph dwarf callchains (the same
 * chains plus the user registers and an 8 KiB stack snapshot, 9 slots):
 *   validate_encode  pvprof_host_callchain() and pvprof_st_put_callchain() on
 *                    a callchain already copied: the core's own work
 *   drain            per callchain, everything pvprof_drain() does
 *   sample           per sample, pvprof_notice()'s notice and NMI gate,
 *                    the NMI's delivery, then the drain of its callchain
 *
 * The guest's part (reading the notice, writing the callchain) is not
 * timed as work: its callchains are laid into the buffer once, and per
 * callchain the loop only stores the seq and moves the indices.  A snapshot callchain
 * spans 9 of the 60 slots of a 64 KiB buffer, so where each callchain starts
 * repeats every 3 laps: the loop keeps 3 images of the buffer (more for
 * variety) and reads each slot from the image of its lap.
 *
 * usage: host-bench [--seconds S] [--reps N]
 * Prints one JSON object: for each case and mode, per repetition the
 * callchains done, the thread's CPU seconds and the wall seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/host.h"
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
	struct pvprof_host_ring ring;
	struct pvprof_vcpu_acct acct;
	__u64 notice_tail, chain_head;	/* the guest's indices */
	__u64 posted;			/* callchains the guest posted */
	/* Host-private copy and stream entry, as struct pvprof_vcpu has. */
	__u64 copy[MAX_SPAN * PVPROF_CHAIN_SLOT_SIZE / 8];
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

static void bench_init(struct bench *b, const struct mode *m)
{
	static __u64 chain_buf[MAX_SPAN * PVPROF_CHAIN_SLOT_SIZE / 8];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)chain_buf;
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
	b->ring.ustack_size = m->ustack ? USTACK_SIZE : 0;
}

/* kvm_read_guest_offset_cached() of one slot, from the image of its lap. */
static void copy_slot(struct bench *b, __u32 k, void *dst)
{
	__u64 s = b->ring.chain_tail + k;
	const __u8 *img = b->image[(s / b->slots) % b->images];

	memcpy(dst, img + pvprof_host_callchain_slot_offset(&b->ring, k), PVPROF_CHAIN_SLOT_SIZE);
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
	pvprof_store_release(&b->chain_head, b->chain_head + b->span);
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

/* pvprof_drain(): returns the callchains queued to the stream. */
static __u32 drain(struct bench *b)
{
	__u32 n = pvprof_host_callchains_ready(&b->ring, &b->acct,
					    pvprof_load_acquire(&b->chain_head));
	__u32 done = 0;

	while (n) {
		const struct pvprof_callchain *chain = (const void *)b->copy;
		__u32 span, k, len;

		copy_slot(b, 0, b->copy);
		span = pvprof_host_callchain_span(&b->ring, b->copy, n);
		for (k = 1; k < span; k++)
			copy_slot(b, k, (__u8 *)b->copy + k * PVPROF_CHAIN_SLOT_SIZE);
		n -= span;
		if (pvprof_host_callchain(&b->ring, &b->acct, b->copy,
				       span * PVPROF_CHAIN_SLOT_SIZE) != PVPROF_REJ_NONE ||
		    (chain->flags & PVPROF_CHAIN_F_STALE))
			continue;
		len = pvprof_st_put_callchain(b->out, sizeof(b->out), 0, b->reader_head,
					      pvprof_host_notice_facts(&b->ring, chain->seq), chain);
		if (!len)
			die("the encoder refused a callchain");
		reader_append(b, b->out, len);
		done++;
	}
	return done;
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

static __u64 one_drain(struct bench *b, __u64 i)
{
	(void)i;
	guest_post(b, ++b->ring.notice_head);
	return drain(b);
}

/* pvprof_notice() with a sample in the slot, the delivery, the guest, the drain. */
static __u64 one_sample(struct bench *b, __u64 i)
{
	struct pvprof_sample s = { .ip = 0x555555554000ULL + (i & 0xffff), .cpl = 3,
				   .host_time_ns = i, .guest_tsc = 3 * i,
				   .event = PVPROF_EVENT_CPU_CLOCK, .period = 250000 };
	struct pvprof_buf_header *h = (struct pvprof_buf_header *)b->image[0];
	__u64 tail = pvprof_load_acquire(&b->notice_tail);
	struct pvprof_notice n;
	__u32 off;

	if (!pvprof_host_sample_waits(&b->ring, tail, false) &&
	    pvprof_host_notice_prepare(&b->ring, &b->acct, tail, &s, &n, &off)) {
		memcpy(b->image[0] + off, &n, sizeof(n));
		pvprof_store_release(&h->notice_head,
				     pvprof_host_notice_publish(&b->ring, &b->acct));
	}
	if (pvprof_host_nmi_gate(&b->ring, &b->acct, tail, false, false) == PVPROF_GATE_INJECT)
		PVPROF_WRITE_ONCE(h->nmi_head, b->ring.nmi_head);
	if (pvprof_host_nmi_delivery(&b->ring, false))
		PVPROF_WRITE_ONCE(h->nmi_delivered, b->ring.nmi_delivered);
	/* The guest reads the notice and answers it. */
	pvprof_store_release(&b->notice_tail, b->ring.notice_head);
	guest_post(b, b->ring.notice_head);
	return drain(b);
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
			for (i = 0; i < b.images; i++)
				free(b.image[i]);
			free(b.copies);
			free(b.reader);
		}
	}
	printf("\n}\n");
	return 0;
}
