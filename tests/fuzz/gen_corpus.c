// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzzers' seed corpus: well-formed inputs of every kind and a
 * few that break one rule each, so the fuzzers start next to every branch.
 *
 *   gen_corpus RECORD_DIR STREAM_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record.h"
#include "core/stream.h"

static const char *record_dir, *stream_dir;

static void write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gen_corpus: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Host state prefix, then the slot: see fuzz_record.c. */
static void record_seed(const char *name, __u8 max_depth, __u16 answered, __u8 ahead,
			const struct pvprof_record *rec, __u32 len)
{
	static __u8 buf[4 + PVPROF_RECORD_SLOTS(16384) * PVPROF_RECORD_SLOT_SIZE];

	buf[0] = max_depth;
	buf[1] = answered & 0xff;
	buf[2] = answered >> 8;
	buf[3] = ahead;
	memcpy(buf + 4, rec, len);
	write_file(record_dir, name, buf, 4 + len);
}

static void fill(struct pvprof_record *rec, __u64 seq, __u32 flags, __u32 nk, __u32 nu)
{
	__u32 i;

	pvprof_record_init(rec, seq, flags);
	rec->pid = 1234;
	rec->tid = 1235;
	rec->time_ns = 1000000;
	rec->nr_kernel = nk;
	rec->nr_user = nu;
	for (i = 0; i < nk; i++)
		rec->frames[i] = 0xffffffff81000000ULL + 0x40 * i;
	for (; i < nk + nu; i++)
		rec->frames[i] = 0x0000555555554000ULL + 0x40 * i;
	pvprof_record_finish(rec, PVPROF_MAX_DEPTH);
}

/* A syscall's record with 1500 bytes of user stack: two slots. */
static void ustack_seed(void)
{
	static __u64 span[2 * PVPROF_RECORD_SLOT_SIZE / 8];
	struct pvprof_record *rec = (struct pvprof_record *)span;
	struct pvprof_ustack *us;
	__u32 i;

	fill(rec, 11, 0, 2, 2);
	us = pvprof_record_ustack(rec);
	us->regs[PVPROF_UREG_IP] = rec->frames[2];
	us->regs[PVPROF_UREG_SP] = 0x00007ffffffde000ULL;
	us->size = 1500;
	for (i = 0; i < us->size; i++)
		us->data[i] = (__u8)i;
	rec->flags |= PVPROF_REC_F_USTACK;
	rec->size = pvprof_record_ustack_bytes(4, us->size);
	/* Top bit of the first byte: the host asks for 8192 bytes. */
	record_seed("ustack_two_slots", 0x80, 10, 1, rec, sizeof(span));
}

static void records(void)
{
	__u64 slot[PVPROF_RECORD_SLOT_SIZE / 8];
	struct pvprof_record *rec = (struct pvprof_record *)slot;

	fill(rec, 11, 0, 6, 4);
	record_seed("kernel_syscall", 0, 10, 3, rec, rec->size);
	fill(rec, 11, PVPROF_REC_F_USER, 0, 8);
	record_seed("user", 32, 10, 1, rec, rec->size);
	fill(rec, 300, PVPROF_REC_F_KTHREAD | PVPROF_REC_F_TRUNCATED, 3, 0);
	record_seed("kthread_whole_slot", 0, 299, 5, rec, sizeof(slot));
	fill(rec, 11, PVPROF_REC_F_STALE, 0, 0);
	record_seed("stale", 0, 10, 2, rec, rec->size);
	fill(rec, 11, PVPROF_REC_F_USER | PVPROF_REC_F_COMPAT, 0, PVPROF_MAX_DEPTH);
	record_seed("user_max_depth", 0, 10, 1, rec, rec->size);
	fill(rec, 11, 0, 4, 0);
	record_seed("too_deep", 3, 10, 1, rec, rec->size);
	fill(rec, 10, 0, 1, 0);
	record_seed("seq_old", 0, 10, 1, rec, rec->size);
	fill(rec, 12, 0, 1, 0);
	record_seed("seq_future", 0, 10, 1, rec, rec->size);
	fill(rec, 11, 0, 2, 2);
	rec->frames[3] = 0xffff800000000000ULL;
	record_seed("user_frame_range", 0, 10, 1, rec, rec->size);
	fill(rec, 11, 0, 2, 0);
	rec->size += 8;
	record_seed("size_mismatch", 0, 10, 1, rec, rec->size);
	ustack_seed();
}

static void streams(void)
{
	static __u8 buf[65536];
	__u64 slot[PVPROF_RECORD_SLOT_SIZE / 8];
	struct pvprof_record *rec = (struct pvprof_record *)slot;
	struct pvprof_notice_facts f = { .ip = 0xffffffff81000000ULL, .guest_tsc = 5,
					 .event = PVPROF_EVENT_CPU_CLOCK };
	__u8 msg[16 + 29];
	struct pvprof_sideband_hdr *sb = (struct pvprof_sideband_hdr *)msg;
	size_t len = 0, one;
	unsigned int i;

	memset(msg, 'a', sizeof(msg));
	sb->type = PVPROF_SB_MODULE;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = sizeof(msg);
	sb->time_ns = 77;

	len += pvprof_st_put_hello(buf + len, sizeof(buf) - len, 1, 2);
	write_file(stream_dir, "hello", buf, len);
	len += pvprof_st_put_vcpu(buf + len, sizeof(buf) - len, 0, 2,
				  PVPROF_VCPU_REGISTERED, 16384, 0x12340000);
	fill(rec, 1, 0, 5, 3);
	len += pvprof_st_put_callchain(buf + len, sizeof(buf) - len, 0, 3, &f, rec);
	fill(rec, 2, PVPROF_REC_F_USER, 0, 7);
	len += pvprof_st_put_callchain(buf + len, sizeof(buf) - len, 1, 4, &f, rec);
	for (i = 0; i < PVPROF_LOSS_NR; i += 3)
		len += pvprof_st_put_loss(buf + len, sizeof(buf) - len, 0, 5, i, i + 1);
	len += pvprof_st_put_sideband(buf + len, sizeof(buf) - len, 1, 6, msg, sizeof(msg));
	len += pvprof_st_put_vcpu(buf + len, sizeof(buf) - len, 1, 7,
				  PVPROF_VCPU_DROPPED, 16384, 0x12340000);
	write_file(stream_dir, "every_type", buf, len);

	/* A newer host's type, skipped by size. */
	one = pvprof_st_put_hello(buf, sizeof(buf), 1, 1);
	memset(buf + one, 0, 48);
	((struct pvprof_stream_hdr *)(buf + one))->type = 77;
	((struct pvprof_stream_hdr *)(buf + one))->size = 48;
	write_file(stream_dir, "unknown_type", buf, one + 48);

	/* The deepest callchain, cut one byte short. */
	one = pvprof_st_put_hello(buf, sizeof(buf), 1, 1);
	fill(rec, 9, 0, 60, 60);
	len = one + pvprof_st_put_callchain(buf + one, sizeof(buf) - one, 0, 3, &f, rec);
	write_file(stream_dir, "deep_truncated", buf, len - 1);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s RECORD_DIR STREAM_DIR\n", argv[0]);
		return 2;
	}
	record_dir = argv[1];
	stream_dir = argv[2];
	records();
	streams();
	return 0;
}
