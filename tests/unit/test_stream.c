// SPDX-License-Identifier: GPL-2.0
/*
 * Stream encoding and decoding: round trips per type, and a decoder that
 * refuses bad framing without reading past its buffer.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "runner.h"
#include "test_util.h"

static __u64 buf[PVPROF_STREAM_MAX_ENTRY / 8];

static struct pvprof_stream_hdr *hdr(void)
{
	return (struct pvprof_stream_hdr *)buf;
}

static enum pvprof_st_status decode(__u64 len, struct pvprof_st_view *v)
{
	return pvprof_st_decode(buf, len, v);
}

START_TEST(stream_roundtrip_hello)
{
	struct pvprof_st_view v;
	__u32 n = pvprof_st_put_hello(buf, sizeof(buf), 1234, 8);

	ck_assert_uint_eq(n, 40);
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_HELLO);
	ck_assert_uint_eq(v.hdr.size, 40);
	ck_assert_uint_eq(v.hdr.vcpu_id, ~0U);
	ck_assert_uint_eq(v.hdr.host_time_ns, 1234);
	ck_assert_uint_eq(v.u.hello.stream_version, PVPROF_STREAM_VERSION);
	ck_assert_uint_eq(v.u.hello.abi_version, PVPROF_ABI_VERSION);
	ck_assert_uint_eq(v.u.hello.nr_vcpus, 8);
}
END_TEST

START_TEST(stream_roundtrip_callchain)
{
	struct pvprof_notice_facts f = { .ip = KADDR(5), .guest_tsc = 99, .cpl = 0,
					 .event = PVPROF_EVENT_HW_CYCLES };
	struct test_slot slot;
	struct pvprof_st_view v;
	__u32 n, i;

	test_kernel_chain(&slot, 17, 7, 5);
	slot.chain.pid = 42;
	slot.chain.tid = 43;
	slot.chain.exec_gen = 3;
	slot.chain.time_ns = 555;
	n = pvprof_st_put_callchain(buf, sizeof(buf), 2, 1000, &f, &slot.chain);
	ck_assert_uint_eq(n, 88 + 8 * 12);
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_CALLCHAIN);
	ck_assert_uint_eq(v.hdr.vcpu_id, 2);
	ck_assert_uint_eq(v.u.callchain.notice_ip, KADDR(5));
	ck_assert_uint_eq(v.u.callchain.guest_tsc, 99);
	ck_assert_uint_eq(v.u.callchain.event, PVPROF_EVENT_HW_CYCLES);
	ck_assert_mem_eq(&v.u.callchain.chain, &slot.chain, sizeof(slot.chain));
	ck_assert_uint_eq(v.nr_frames, 12);
	for (i = 0; i < 12; i++)
		ck_assert_uint_eq(pvprof_st_frame(&v, i), pvprof_callchain_frame(&slot.chain, i));
	/* One byte short of room: nothing written. */
	ck_assert_uint_eq(pvprof_st_put_callchain(buf, n - 1, 2, 1000, &f, &slot.chain), 0);
}
END_TEST

START_TEST(stream_roundtrip_loss_and_vcpu)
{
	struct pvprof_st_view v;
	__u32 n;

	n = pvprof_st_put_loss(buf, sizeof(buf), 3, 7, PVPROF_LOSS_SLOT_BUSY, 1ULL << 40);
	ck_assert_uint_eq(n, 40);
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_LOSS);
	ck_assert_uint_eq(v.u.loss.reason, PVPROF_LOSS_SLOT_BUSY);
	ck_assert_uint_eq(v.u.loss.count, 1ULL << 40);
	ck_assert_uint_eq(pvprof_st_put_loss(buf, sizeof(buf), 3, 7, PVPROF_LOSS_NR, 1), 0);

	n = pvprof_st_put_vcpu(buf, sizeof(buf), 1, 8, PVPROF_VCPU_DROPPED, 65536,
			       0x7fff0000);
	ck_assert_uint_eq(n, 40);
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_VCPU);
	ck_assert_uint_eq(v.u.vcpu.event, PVPROF_VCPU_DROPPED);
	ck_assert_uint_eq(v.u.vcpu.size, 65536);
	ck_assert_uint_eq(v.u.vcpu.gpa, 0x7fff0000);
	ck_assert_uint_eq(pvprof_st_put_vcpu(buf, sizeof(buf), 1, 8, 0, 0, 0), 0);
	ck_assert_uint_eq(pvprof_st_put_vcpu(buf, 39, 1, 8, PVPROF_VCPU_REGISTERED, 0, 0), 0);
}
END_TEST

START_TEST(stream_roundtrip_sideband)
{
	__u8 msg[16 + 21];
	struct pvprof_sideband_hdr *sb = (void *)msg;
	struct pvprof_st_view v;
	__u32 n, i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (__u8)i;
	sb->type = PVPROF_SB_PROCESS;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = sizeof(msg);
	memset(buf, 0xee, sizeof(buf));
	n = pvprof_st_put_sideband(buf, sizeof(buf), 0, 9, msg, sizeof(msg));
	ck_assert_uint_eq(n, 24 + 40);		/* 24 + 37 rounded up to 8 */
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_SIDEBAND);
	ck_assert_uint_eq(v.sb_len, sizeof(msg));
	ck_assert_mem_eq(v.sb_msg, msg, sizeof(msg));
	ck_assert_uint_eq(v.u.sideband.sb.type, PVPROF_SB_PROCESS);
	/* Padding is zero, not whatever was in the buffer. */
	for (i = 24 + sizeof(msg); i < n; i++)
		ck_assert_uint_eq(((__u8 *)buf)[i], 0);
	/* A message whose own framing is wrong is not encoded. */
	sb->size = sizeof(msg) + 1;
	ck_assert_uint_eq(pvprof_st_put_sideband(buf, sizeof(buf), 0, 9, msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(stream_decode_truncated_every_prefix)
{
	struct test_slot slot;
	struct pvprof_notice_facts f = { .ip = KADDR(0) };
	struct pvprof_st_view v;
	__u32 n, len;

	test_kernel_chain(&slot, 1, 3, 3);
	n = pvprof_st_put_callchain(buf, sizeof(buf), 0, 0, &f, &slot.chain);
	ck_assert_int_eq(decode(0, &v), PVPROF_ST_END);
	for (len = 1; len < n; len++)
		ck_assert_msg(decode(len, &v) == PVPROF_ST_TRUNCATED, "len %u", len);
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
}
END_TEST

START_TEST(stream_decode_bad_sizes)
{
	struct pvprof_st_view v;

	pvprof_st_put_loss(buf, sizeof(buf), 0, 0, 0, 1);
	hdr()->size = 16;
	ck_assert_int_eq(decode(sizeof(buf), &v), PVPROF_ST_SMALL);
	hdr()->size = 0;
	ck_assert_int_eq(decode(sizeof(buf), &v), PVPROF_ST_SMALL);
	hdr()->size = 44;
	ck_assert_int_eq(decode(sizeof(buf), &v), PVPROF_ST_MISALIGNED);
	hdr()->size = PVPROF_STREAM_MAX_ENTRY + 8;
	ck_assert_int_eq(decode(sizeof(buf), &v), PVPROF_ST_LARGE);
	hdr()->size = 0xfffffff8;
	ck_assert_int_eq(decode(sizeof(buf), &v), PVPROF_ST_LARGE);
	/* Well framed, wrong for the type. */
	hdr()->size = 48;
	ck_assert_int_eq(decode(sizeof(buf), &v), PVPROF_ST_BAD_SIZE);
}
END_TEST

START_TEST(stream_decode_reserved_and_fields)
{
	struct pvprof_st_view v;
	struct pvprof_st_hello *hello = (void *)buf;
	struct pvprof_st_loss *loss = (void *)buf;

	pvprof_st_put_hello(buf, sizeof(buf), 0, 1);
	hdr()->flags = 1;
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_RESERVED);
	hdr()->flags = 0;
	hdr()->reserved0 = 1;
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_RESERVED);
	hdr()->reserved0 = 0;
	hello->stream_version = PVPROF_STREAM_VERSION + 1;
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_BAD_FIELD);
	hello->stream_version = 0;
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_BAD_FIELD);
	hello->stream_version = 1;	/* version 1 recordings stay readable */
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_OK);

	pvprof_st_put_loss(buf, sizeof(buf), 0, 0, 0, 1);
	loss->reason = PVPROF_LOSS_NR;
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_BAD_FIELD);
	loss->reason = 0;
	loss->reserved0 = 5;
	ck_assert_int_eq(decode(40, &v), PVPROF_ST_RESERVED);
}
END_TEST

START_TEST(stream_decode_callchain_inconsistent)
{
	struct pvprof_notice_facts f = { .ip = KADDR(0) };
	struct pvprof_st_callchain *c = (void *)buf;
	struct test_slot slot;
	struct pvprof_st_view v;
	__u32 n;

	test_kernel_chain(&slot, 1, 2, 2);
	n = pvprof_st_put_callchain(buf, sizeof(buf), 0, 0, &f, &slot.chain);
	c->chain.nr_user = 3;		/* one frame more than the size holds */
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_SIZE);
	c->chain.nr_user = 2;
	c->chain.size += 8;		/* callchain size disagrees with the counts */
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_SIZE);
	c->chain.size -= 8;
	c->hdr.size = 80;		/* shorter than the fixed part */
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_SIZE);
	c->hdr.size = n;
	c->chain.flags = PVPROF_CHAIN_F_ALL + 1;
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_FIELD);
	c->chain.flags = PVPROF_CHAIN_F_USTACK;	/* no room for a snapshot */
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_SIZE);
	c->chain.flags = 0;
	c->sample_flags = PVPROF_ST_SAMPLE_F_ALL + 1;
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_FIELD);
	c->sample_flags = 0;
	c->chain.reserved0 = 1;
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_RESERVED);
	c->chain.reserved0 = 0;
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
}
END_TEST

/* The sample's own-NMI facts reach the stream entry as the host kept them. */
START_TEST(stream_callchain_own_nmi_facts)
{
	struct pvprof_notice_facts f = { .ip = KADDR(0),
					 .sample_flags = PVPROF_ST_SAMPLE_F_OWN_NMI,
					 .own_nmi_samples = 3 };
	struct test_slot slot;
	struct pvprof_st_view v;
	__u32 n;

	test_kernel_chain(&slot, 1, 2, 2);
	n = pvprof_st_put_callchain(buf, sizeof(buf), 0, 0, &f, &slot.chain);
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.u.callchain.sample_flags, PVPROF_ST_SAMPLE_F_OWN_NMI);
	ck_assert_uint_eq(v.u.callchain.own_nmi_samples, 3);
}
END_TEST

START_TEST(stream_decode_sideband_inconsistent)
{
	__u8 msg[32] = { 0 };
	struct pvprof_sideband_hdr *sb = (void *)msg;
	struct pvprof_st_sideband *r = (void *)buf;
	struct pvprof_st_view v;
	__u32 n;

	sb->type = PVPROF_SB_KERNEL;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = sizeof(msg);
	n = pvprof_st_put_sideband(buf, sizeof(buf), 0, 0, msg, sizeof(msg));
	ck_assert_uint_eq(n, 56);
	r->sb.size = 33;		/* needs a 64-byte entry */
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_SIZE);
	r->sb.size = 0xffffffff;
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_SIZE);
	r->sb.size = 32;
	r->sb.type = 0;
	ck_assert_int_eq(decode(n, &v), PVPROF_ST_BAD_FIELD);
}
END_TEST

START_TEST(stream_iter_walks_and_skips_unknown)
{
	struct pvprof_st_iter it;
	struct pvprof_st_view v;
	__u8 *p = (__u8 *)buf;
	__u32 len = 0;
	struct pvprof_stream_hdr unknown = { .type = 200, .size = 48 };

	len += pvprof_st_put_hello(p + len, sizeof(buf) - len, 0, 1);
	memcpy(p + len, &unknown, sizeof(unknown));
	memset(p + len + sizeof(unknown), 0x77, 48 - sizeof(unknown));
	len += 48;
	len += pvprof_st_put_loss(p + len, sizeof(buf) - len, 0, 0, 1, 2);
	pvprof_st_iter_init(&it, buf, len);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_HELLO);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, 200);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_LOSS);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_END);
	ck_assert_uint_eq(it.entries, 3);
	ck_assert_uint_eq(it.pos, len);
}
END_TEST

START_TEST(stream_iter_needs_hello_and_stops_on_error)
{
	struct pvprof_st_iter it;
	struct pvprof_st_view v;
	__u8 *p = (__u8 *)buf;
	__u32 len;

	len = pvprof_st_put_loss(buf, sizeof(buf), 0, 0, 1, 2);
	pvprof_st_iter_init(&it, buf, len);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_NO_HELLO);

	len = pvprof_st_put_hello(buf, sizeof(buf), 0, 1);
	len += pvprof_st_put_loss(p + len, sizeof(buf) - len, 0, 0, 1, 2);
	((struct pvprof_stream_hdr *)(p + 40))->size = 41;
	len += pvprof_st_put_loss(p + len, sizeof(buf) - len, 0, 0, 1, 2);
	pvprof_st_iter_init(&it, buf, len);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_MISALIGNED);
	/* Framing is lost: the error sticks, the valid entry after it is not read. */
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_MISALIGNED);
	ck_assert_uint_eq(it.pos, 40);
}
END_TEST

START_TEST(stream_iter_feed_goes_on_with_the_stream)
{
	struct pvprof_st_iter it = { 0 };
	struct pvprof_st_view v;
	__u8 *p = (__u8 *)buf;
	__u32 first, len;

	/* A zeroed iterator is a fresh one: the stream's first entry is HELLO. */
	first = pvprof_st_put_loss(buf, sizeof(buf), 0, 0, 1, 2);
	pvprof_st_iter_feed(&it, buf, first);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_NO_HELLO);

	/* Two pieces of one stream: HELLO is the first piece's only. */
	first = pvprof_st_put_hello(buf, sizeof(buf), 0, 1);
	first += pvprof_st_put_loss(p + first, sizeof(buf) - first, 0, 0, 1, 2);
	len = first + pvprof_st_put_loss(p + first, sizeof(buf) - first, 0, 0, 3, 4);
	pvprof_st_iter_init(&it, buf, first);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_END);
	pvprof_st_iter_feed(&it, p + first, len - first);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.u.loss.reason, 3);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_END);
	ck_assert_uint_eq(it.entries, 3);
	ck_assert_uint_eq(it.pos, len - first);

	/*
	 * An error sticks within its piece; the next piece starts at an entry,
	 * where framing is known again.
	 */
	((struct pvprof_stream_hdr *)(p + first))->size = 41;
	pvprof_st_iter_init(&it, buf, first);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	pvprof_st_iter_feed(&it, p + first, len - first);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_MISALIGNED);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_MISALIGNED);
	ck_assert_uint_eq(it.pos, 0);
	pvprof_st_iter_feed(&it, p + 40, first - 40);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(v.hdr.type, PVPROF_ST_LOSS);
	ck_assert_int_eq(pvprof_st_iter_next(&it, &v), PVPROF_ST_END);
	ck_assert_uint_eq(it.entries, 3);
}
END_TEST

START_TEST(stream_decoder_stays_in_bounds)
{
	/*
	 * Entries placed so that they end exactly at a page followed by an
	 * inaccessible page: any read past the buffer faults.
	 */
	long page = sysconf(_SC_PAGESIZE);
	__u8 *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pvprof_notice_facts f = { .ip = KADDR(0) };
	struct pvprof_st_view v;
	struct test_slot slot;
	__u8 entry[PVPROF_STREAM_MAX_ENTRY];
	__u32 n, len;

	ck_assert_ptr_ne(map, MAP_FAILED);
	ck_assert_int_eq(mprotect(map + page, page, PROT_NONE), 0);
	test_kernel_chain(&slot, 1, 60, 60);
	n = pvprof_st_put_callchain(entry, sizeof(entry), 0, 0, &f, &slot.chain);
	ck_assert_uint_eq(n, 88 + 960);
	for (len = 0; len <= n; len++) {
		memcpy(map + page - len, entry, len);
		ck_assert_int_eq(pvprof_st_decode(map + page - len, len, &v),
				 len == n ? PVPROF_ST_OK :
				 len ? PVPROF_ST_TRUNCATED : PVPROF_ST_END);
	}
	/* An odd address: the decoder does not assume alignment. */
	memcpy(map + page - n - 1, entry, n);
	ck_assert_int_eq(pvprof_st_decode(map + page - n - 1, n, &v), PVPROF_ST_OK);
	ck_assert_uint_eq(pvprof_st_frame(&v, 119), pvprof_callchain_frame(&slot.chain, 119));
	munmap(map, 2 * page);
}
END_TEST

START_TEST(stream_status_names)
{
	unsigned int i, j;

	for (i = 0; i < PVPROF_ST_STATUS_NR; i++) {
		ck_assert_str_ne(pvprof_st_status_name(i), "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(pvprof_st_status_name(i), pvprof_st_status_name(j));
	}
	ck_assert_str_eq(pvprof_st_status_name(PVPROF_ST_STATUS_NR), "unknown");
}
END_TEST

Suite *stream_suite(void)
{
	Suite *s = suite_create("stream");

	PVPROF_ADD_TEST(s, stream_roundtrip_hello);
	PVPROF_ADD_TEST(s, stream_roundtrip_callchain);
	PVPROF_ADD_TEST(s, stream_roundtrip_loss_and_vcpu);
	PVPROF_ADD_TEST(s, stream_roundtrip_sideband);
	PVPROF_ADD_TEST(s, stream_decode_truncated_every_prefix);
	PVPROF_ADD_TEST(s, stream_decode_bad_sizes);
	PVPROF_ADD_TEST(s, stream_decode_reserved_and_fields);
	PVPROF_ADD_TEST(s, stream_decode_callchain_inconsistent);
	PVPROF_ADD_TEST(s, stream_callchain_own_nmi_facts);
	PVPROF_ADD_TEST(s, stream_decode_sideband_inconsistent);
	PVPROF_ADD_TEST(s, stream_iter_walks_and_skips_unknown);
	PVPROF_ADD_TEST(s, stream_iter_needs_hello_and_stops_on_error);
	PVPROF_ADD_TEST(s, stream_iter_feed_goes_on_with_the_stream);
	PVPROF_ADD_TEST(s, stream_decoder_stays_in_bounds);
	PVPROF_ADD_TEST(s, stream_status_names);
	return s;
}
