// SPDX-License-Identifier: GPL-2.0
/*
 * Sideband: the hypercall's range rules, the framing check and the payload
 * rules of every type, and the symbol-chunk encoder and decoder.
 */
#include <stdio.h>

#include "runner.h"
#include "test_util.h"

START_TEST(sideband_range_rules)
{
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 16), 0);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 4096), 0);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1ff0, 16), 0);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 15), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 0), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, 4097), -PVPROF_E2BIG);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1000, ~0ULL), -PVPROF_E2BIG);
	/* Crossing into the next page. */
	ck_assert_int_eq(pvprof_sideband_range_check(0x1ff1, 16), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(0x1008, 4096), -PVPROF_EINVAL);
	ck_assert_int_eq(pvprof_sideband_range_check(~0ULL - 7, 16), -PVPROF_EINVAL);
}
END_TEST

/* The budgets refill by the second and saturate, however long the pause. */
START_TEST(sideband_budget_refill)
{
	const __u64 rate = PVPROF_SIDEBAND_DEFAULT_RATE;
	const __u64 sec = 1000000000ULL;

	ck_assert_uint_eq(pvprof_budget_refill(0, 0, rate), 0);
	ck_assert_uint_eq(pvprof_budget_refill(0, sec / 4, rate), rate / 4);
	ck_assert_uint_eq(pvprof_budget_refill(rate / 2, sec / 4, rate), rate / 2 + rate / 4);
	ck_assert_uint_eq(pvprof_budget_refill(rate - 1, sec, rate), rate);
	ck_assert_uint_eq(pvprof_budget_refill(0, sec, rate), rate);
	/*
	 * 2^46 ns (19.5 hours) times the rate (2^18) is 2^64: a product
	 * taken first would wrap to 0 and leave a VM idle that long with no
	 * budget at all.
	 */
	ck_assert_uint_eq(pvprof_budget_refill(0, 1ULL << 46, rate), rate);
	ck_assert_uint_eq(pvprof_budget_refill(0, (1ULL << 46) + 1, rate), rate);
	ck_assert_uint_eq(pvprof_budget_refill(0, ~0ULL, rate), rate);
	/* The registration budget: whole REGISTERs only. */
	ck_assert_uint_eq(pvprof_budget_refill(0, sec / 16 - 1, PVPROF_REGISTER_RATE), 0);
	ck_assert_uint_eq(pvprof_budget_refill(0, sec / 16, PVPROF_REGISTER_RATE), 1);
	ck_assert_uint_eq(pvprof_budget_refill(3, 2 * sec, PVPROF_REGISTER_RATE),
			  PVPROF_REGISTER_RATE);
}
END_TEST

START_TEST(sideband_header_rules)
{
	__u8 msg[PVPROF_SIDEBAND_MAX_SIZE + 8] = { 0 };
	struct pvprof_sideband_hdr *sb = (void *)msg;
	unsigned int t;

	sb->version = PVPROF_SIDEBAND_VERSION;
	for (t = PVPROF_SB_KERNEL; t <= PVPROF_SB_TYPE_MAX; t++) {
		sb->type = t;
		sb->size = 100;
		ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_OK);
	}
	ck_assert_int_eq(pvprof_sideband_check(msg, 15), PVPROF_SB_SHORT);
	sb->size = PVPROF_SIDEBAND_MAX_SIZE + 8;
	ck_assert_int_eq(pvprof_sideband_check(msg, sb->size), PVPROF_SB_LONG);
	sb->size = 100;
	ck_assert_int_eq(pvprof_sideband_check(msg, 99), PVPROF_SB_BAD_SIZE);
	sb->type = 0;
	ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_BAD_TYPE);
	sb->type = PVPROF_SB_TYPE_MAX + 1;
	ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_BAD_TYPE);
	sb->type = PVPROF_SB_MMAP;
	sb->version = 2;
	ck_assert_int_eq(pvprof_sideband_check(msg, 100), PVPROF_SB_BAD_VERSION);
	ck_assert_str_eq(pvprof_sb_error_name(PVPROF_SB_BAD_VERSION), "bad_version");
	ck_assert_str_eq(pvprof_sb_error_name(PVPROF_SB_ERR_NR), "unknown");
}
END_TEST

static void sb_hdr(void *msg, __u16 type, __u32 size)
{
	struct pvprof_sideband_hdr *sb = msg;

	sb->type = type;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = size;
	sb->time_ns = 1;
}

#define PAYLOAD(msg) pvprof_sideband_payload_check(&(msg), sizeof(msg))

START_TEST(sideband_fixed_payloads)
{
	struct pvprof_sb_kernel k = { 0 };
	struct pvprof_sb_module m = { 0 };
	struct pvprof_sb_process p = { 0 };
	struct pvprof_sb_exit x = { 0 };
	struct pvprof_sb_agent a = { 0 };

	sb_hdr(&k, PVPROF_SB_KERNEL, sizeof(k));
	k.stext = KADDR(0);
	k.etext = KADDR(0x1000);
	k.build_id.size = 20;
	memset(k.build_id.bytes, 0xab, 20);
	strcpy(k.release, "6.1.0-56-amd64");
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_OK);
	k.release[20] = 'x';	/* a byte after the terminator */
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_BAD_STRING);
	k.release[20] = 0;
	memset(k.release, 'r', sizeof(k.release));	/* no NUL at all is fine */
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_OK);
	k.build_id.bytes[25] = 1;
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_BAD_BUILD_ID);
	k.build_id.bytes[25] = 0;
	k.build_id.size = 33;
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_BAD_BUILD_ID);
	k.build_id.size = 20;
	k.etext = k.stext;
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_BAD_RANGE);
	k.etext = KADDR(0x1000);
	k.reserved0 = 1;
	ck_assert_int_eq(PAYLOAD(k), PVPROF_SB_BAD_RESERVED);
	k.reserved0 = 0;
	k.hdr.size = sizeof(k) - 8;
	ck_assert_int_eq(pvprof_sideband_payload_check(&k, sizeof(k) - 8),
			 PVPROF_SB_BAD_LENGTH);

	sb_hdr(&m, PVPROF_SB_MODULE, sizeof(m));
	m.base = KADDR(0x10000000);
	m.size = 0x3000;
	strcpy(m.name, "pvprof_guest");
	ck_assert_int_eq(PAYLOAD(m), PVPROF_SB_OK);
	m.base = UADDR(0);
	ck_assert_int_eq(PAYLOAD(m), PVPROF_SB_BAD_RANGE);
	m.base = ~0ULL - 0x1000;
	ck_assert_int_eq(PAYLOAD(m), PVPROF_SB_BAD_RANGE);
	m.base = KADDR(0x10000000);
	memset(m.name, 0, sizeof(m.name));
	ck_assert_int_eq(PAYLOAD(m), PVPROF_SB_BAD_STRING);

	sb_hdr(&p, PVPROF_SB_PROCESS, sizeof(p));
	p.pid = 42;
	p.exec_gen = 3;
	strcpy(p.comm, "demo");
	ck_assert_int_eq(PAYLOAD(p), PVPROF_SB_OK);
	p.flags = PVPROF_SB_PROC_F_FORK;
	ck_assert_int_eq(PAYLOAD(p), PVPROF_SB_BAD_RANGE);	/* fork without parent */
	p.parent_pid = 1;
	ck_assert_int_eq(PAYLOAD(p), PVPROF_SB_OK);
	p.flags = 2;
	ck_assert_int_eq(PAYLOAD(p), PVPROF_SB_BAD_RESERVED);
	p.flags = 0;
	ck_assert_int_eq(PAYLOAD(p), PVPROF_SB_BAD_RANGE);	/* parent without fork */
	p.parent_pid = 0;
	p.pid = 0;
	ck_assert_int_eq(PAYLOAD(p), PVPROF_SB_BAD_RANGE);

	sb_hdr(&x, PVPROF_SB_EXIT, sizeof(x));
	x.pid = 7;
	ck_assert_int_eq(PAYLOAD(x), PVPROF_SB_OK);
	sb_hdr(&a, PVPROF_SB_AGENT, sizeof(a));
	ck_assert_int_eq(PAYLOAD(a), PVPROF_SB_OK);
	ck_assert_int_eq(pvprof_sideband_payload_check(&a, 8), PVPROF_SB_SHORT);
}
END_TEST

START_TEST(sideband_mmap_payload)
{
	__u8 buf[sizeof(struct pvprof_sb_mmap) + PVPROF_SB_NAME_MAX + 1] = { 0 };
	struct pvprof_sb_mmap *m = (void *)buf;
	char *mpath = (char *)(m + 1);
	static const char path[] = "/usr/bin/demo";
	__u32 len = sizeof(*m) + sizeof(path) - 1;

	sb_hdr(m, PVPROF_SB_MMAP, len);
	m->pid = 9;
	m->start = UADDR(0x1000);
	m->len = 0x2000;
	m->pgoff = 0x1000;
	m->vaddr = 0x1000;
	m->path_len = sizeof(path) - 1;
	memcpy(mpath, path, m->path_len);
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_OK);
	mpath[3] = 0;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_STRING);
	mpath[3] = 'r';
	m->path_len++;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_LENGTH);
	m->path_len--;
	m->start += 8;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_RANGE);
	m->start = PVPROF_USER_HALF_END - 0x1000;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_RANGE);
	m->start = UADDR(0x1000);
	m->len = 0;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_RANGE);
	m->len = 0x2000;
	m->reserved1 = 1;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_RESERVED);
	m->reserved1 = 0;
	/* The longest path fits a message; one more byte is refused. */
	m->path_len = PVPROF_SB_NAME_MAX;
	memset(mpath, 'p', PVPROF_SB_NAME_MAX + 1);
	len = sizeof(*m) + PVPROF_SB_NAME_MAX;
	m->hdr.size = len;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_OK);
	m->path_len++;
	m->hdr.size = ++len;
	ck_assert_int_eq(pvprof_sideband_payload_check(buf, len), PVPROF_SB_BAD_LENGTH);
}
END_TEST

/* Names front-coded against each other, addresses as deltas, sizes too. */
START_TEST(sideband_symbol_round_trip)
{
	static const char *names[] = {
		"do_syscall_64", "do_syscall_x", "do_sys_open", "do_sys_open",
		"x", "__x64_sys_read",
	};
	__u8 msg[PVPROF_SIDEBAND_MAX_SIZE] = { 0 };
	struct pvprof_sb_elf_syms *e = (void *)msg;
	struct pvprof_sb_sym_writer w;
	struct pvprof_sb_sym_iter it;
	char longname[PVPROF_SB_NAME_MAX + 2];
	__u64 addr = 0x1000;
	unsigned int i;

	pvprof_sb_sym_writer_init(&w, msg, sizeof(*e), sizeof(msg), true, addr);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(pvprof_sb_sym_put(&w, addr + i * 300, i * 7, names[i],
						   strlen(names[i])), 0);
	memset(longname, 'n', sizeof(longname));
	ck_assert_int_eq(pvprof_sb_sym_put(&w, ~0ULL, 1, longname, PVPROF_SB_NAME_MAX), 0);
	ck_assert_int_eq(pvprof_sb_sym_put(&w, ~0ULL, 1, longname,
					   PVPROF_SB_NAME_MAX + 1), -2);
	ck_assert_int_eq(pvprof_sb_sym_put(&w, 5, 1, "early", 5), -2);
	ck_assert_int_eq(pvprof_sb_sym_put(&w, ~0ULL, 1, "a\0b", 3), -2);
	sb_hdr(e, PVPROF_SB_ELF_SYMS, w.len);
	e->build_id.size = 4;
	memset(e->build_id.bytes, 1, 4);
	e->first = 0x1000;
	e->nr = w.nr;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, w.len), PVPROF_SB_OK);

	pvprof_sb_sym_iter_init(&it, msg, w.len);
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(pvprof_sb_sym_next(&it), 1);
		ck_assert_uint_eq(it.addr, addr + i * 300);
		ck_assert_uint_eq(it.size, i * 7);
		ck_assert_str_eq(it.name, names[i]);
	}
	ck_assert_int_eq(pvprof_sb_sym_next(&it), 1);
	ck_assert_uint_eq(it.addr, ~0ULL);
	ck_assert_uint_eq(it.name_len, PVPROF_SB_NAME_MAX);
	ck_assert_int_eq(pvprof_sb_sym_next(&it), 0);

	/* One entry too many claimed, one too few, a trailing byte. */
	e->nr = w.nr + 1;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, w.len), PVPROF_SB_BAD_SYMBOLS);
	e->nr = w.nr - 1;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, w.len), PVPROF_SB_BAD_SYMBOLS);
	e->nr = 0;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, w.len), PVPROF_SB_BAD_SYMBOLS);
	e->nr = w.nr;
	e->hdr.size = w.len + 1;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, w.len + 1), PVPROF_SB_BAD_SYMBOLS);
	e->hdr.size = w.len;
	e->build_id.size = 0;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, w.len), PVPROF_SB_BAD_BUILD_ID);
}
END_TEST

/* Kernel chunks: upper-half addresses, address overflow, bad LEB128. */
START_TEST(sideband_ksyms_rules)
{
	__u8 msg[PVPROF_SIDEBAND_MAX_SIZE] = { 0 };
	struct pvprof_sb_ksyms *k = (void *)msg;
	__u8 *d = msg + sizeof(*k);
	unsigned int i;

	sb_hdr(k, PVPROF_SB_KSYMS, sizeof(*k) + 4);
	k->first = KADDR(0);
	k->nr = 1;
	d[0] = 0x10;	/* delta */
	d[1] = 0;	/* prefix */
	d[2] = 1;	/* suffix */
	d[3] = 'f';
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 4), PVPROF_SB_OK);
	strcpy(k->module, "ext4");
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 4), PVPROF_SB_OK);
	d[1] = 1;	/* a prefix longer than the (empty) previous name */
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 4),
			 PVPROF_SB_BAD_SYMBOLS);
	d[1] = 0;
	d[2] = 0;	/* an empty name */
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 4),
			 PVPROF_SB_BAD_SYMBOLS);
	d[2] = 1;
	k->first = UADDR(0);
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 4), PVPROF_SB_BAD_RANGE);
	/* A delta that runs past 2^64. */
	k->first = ~0ULL - 4;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 4),
			 PVPROF_SB_BAD_SYMBOLS);
	/* An eleven-byte LEB128, and a ten-byte one above 2^64. */
	k->first = KADDR(0);
	for (i = 0; i < 10; i++)
		d[i] = 0x80;
	d[10] = 0;
	d[11] = 0;
	d[12] = 1;
	d[13] = 'f';
	k->hdr.size = sizeof(*k) + 14;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 14),
			 PVPROF_SB_BAD_SYMBOLS);
	d[9] = 0x02;
	k->hdr.size = sizeof(*k) + 13;
	memmove(d + 10, d + 11, 3);
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 13),
			 PVPROF_SB_BAD_SYMBOLS);
	k->reserved1 = 1;
	ck_assert_int_eq(pvprof_sideband_payload_check(msg, sizeof(*k) + 13),
			 PVPROF_SB_BAD_RESERVED);
}
END_TEST

START_TEST(sideband_uleb128)
{
	static const __u64 values[] = { 0, 1, 127, 128, 16383, 16384, 1ULL << 63, ~0ULL };
	__u8 msg[PVPROF_SIDEBAND_MAX_SIZE] = { 0 };
	struct pvprof_sb_ksyms *k = (void *)msg;
	__u8 *d = msg + sizeof(*k);
	struct pvprof_sb_sym_iter it;
	unsigned int i, n;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		n = pvprof_sb_put_uleb128(d, values[i]);
		ck_assert_uint_le(n, PVPROF_SB_ULEB128_MAX);
		d[n] = 0;
		d[n + 1] = 1;
		d[n + 2] = 'g';
		sb_hdr(k, PVPROF_SB_KSYMS, sizeof(*k) + n + 3);
		k->first = 0;
		k->nr = 1;
		pvprof_sb_sym_iter_init(&it, msg, sizeof(*k) + n + 3);
		ck_assert_int_eq(pvprof_sb_sym_next(&it), 1);
		ck_assert_uint_eq(it.addr, values[i]);
		ck_assert_int_eq(pvprof_sb_sym_next(&it), 0);
	}
	/* The iterator refuses other types outright. */
	k->hdr.type = PVPROF_SB_MODULE;
	pvprof_sb_sym_iter_init(&it, msg, sizeof(*k) + 4);
	ck_assert_int_eq(pvprof_sb_sym_next(&it), -1);
}
END_TEST

/*
 * UNWIND: a valid part of @n data bytes at the end of a 10000-byte
 * .eh_frame; each test below breaks one rule of it.
 */
static __u32 unwind_msg(__u8 *buf, __u32 n)
{
	struct pvprof_sb_unwind *u = (void *)buf;
	__u8 *data = (__u8 *)(u + 1);
	__u32 i;

	memset(buf, 0, PVPROF_SIDEBAND_MAX_SIZE);
	sb_hdr(u, PVPROF_SB_UNWIND, sizeof(*u) + n);
	u->build_id.size = 20;
	memset(u->build_id.bytes, 0xab, 20);
	u->vaddr = 0x2040;
	u->section_size = 10000;
	u->offset = 10000 - n;
	u->section = PVPROF_SB_UNWIND_EH_FRAME;
	for (i = 0; i < n; i++)
		data[i] = (__u8)i;
	return sizeof(*u) + n;
}

#define UNWIND_CHECK(buf, len) pvprof_sideband_payload_check(buf, len)

START_TEST(sideband_unwind_accepted)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len;

	len = unwind_msg(buf, 1);
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	len = unwind_msg(buf, PVPROF_SIDEBAND_MAX_SIZE - sizeof(*u));
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	/* The whole section in one part, the largest section, every section. */
	u->offset = 0;
	u->section_size = len - sizeof(*u);
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	u->section_size = PVPROF_SB_UNWIND_MAX_SIZE;
	u->offset = PVPROF_SB_UNWIND_MAX_SIZE - (len - sizeof(*u));
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	u->section = PVPROF_SB_UNWIND_EH_FRAME_HDR;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	u->section = PVPROF_SB_UNWIND_DEBUG_FRAME;
	u->vaddr = 0;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	u->build_id.size = PVPROF_SB_BUILD_ID_MAX;
	memset(u->build_id.bytes, 0xcd, PVPROF_SB_BUILD_ID_MAX);
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
}
END_TEST

/* Size 80 + n with n >= 1. */
START_TEST(sideband_unwind_length)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;

	unwind_msg(buf, 1);
	u->hdr.size = sizeof(*u);
	ck_assert_int_eq(UNWIND_CHECK(buf, sizeof(*u)), PVPROF_SB_BAD_LENGTH);
	u->hdr.size = sizeof(*u) - 1;
	ck_assert_int_eq(UNWIND_CHECK(buf, sizeof(*u) - 1), PVPROF_SB_BAD_LENGTH);
	u->hdr.size = 16;
	ck_assert_int_eq(UNWIND_CHECK(buf, 16), PVPROF_SB_BAD_LENGTH);
}
END_TEST

/* A non-empty, clean build-id. */
START_TEST(sideband_unwind_build_id)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len = unwind_msg(buf, 8);

	u->build_id.size = 0;
	memset(u->build_id.bytes, 0, sizeof(u->build_id.bytes));
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_BUILD_ID);
	len = unwind_msg(buf, 8);
	u->build_id.size = PVPROF_SB_BUILD_ID_MAX + 1;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_BUILD_ID);
	len = unwind_msg(buf, 8);
	u->build_id.bytes[20] = 1;	/* past size */
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_BUILD_ID);
	len = unwind_msg(buf, 8);
	u->build_id.reserved0[3] = 1;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_BUILD_ID);
}
END_TEST

/* section in 1..PVPROF_SB_UNWIND_SECTION_MAX. */
START_TEST(sideband_unwind_section)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len = unwind_msg(buf, 8);

	u->section = 0;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->section = PVPROF_SB_UNWIND_SECTION_MAX + 1;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->section = 0xffff;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
}
END_TEST

/* 0 < section_size <= PVPROF_SB_UNWIND_MAX_SIZE. */
START_TEST(sideband_unwind_section_size)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len = unwind_msg(buf, 8);

	u->offset = 0;
	u->section_size = 0;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->section_size = PVPROF_SB_UNWIND_MAX_SIZE + 1;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->section_size = ~0U;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
}
END_TEST

/* offset + n <= section_size, where the sum would wrap in 32 bits. */
START_TEST(sideband_unwind_offset)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len = unwind_msg(buf, 8);

	u->offset = 10000 - 7;	/* one byte past the end */
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->offset = 10000;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->offset = ~0U - 3;	/* offset + 8 wraps to 4 in 32 bits */
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->offset = ~0U;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	/* A part longer than its whole section. */
	u->offset = 0;
	u->section_size = 7;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
}
END_TEST

/* .debug_frame is not loaded: vaddr 0. */
START_TEST(sideband_unwind_debug_frame_vaddr)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len = unwind_msg(buf, 8);

	u->section = PVPROF_SB_UNWIND_DEBUG_FRAME;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->vaddr = 1ULL << 63;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RANGE);
	u->vaddr = 0;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	/* The loaded sections may sit anywhere, 0 included. */
	u->section = PVPROF_SB_UNWIND_EH_FRAME_HDR;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
	u->vaddr = ~0ULL;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_OK);
}
END_TEST

START_TEST(sideband_unwind_reserved)
{
	__u8 buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind *u = (void *)buf;
	__u32 len = unwind_msg(buf, 8);

	u->reserved0 = 1;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RESERVED);
	u->reserved0 = 0;
	u->reserved1 = 0x80000000U;
	ck_assert_int_eq(UNWIND_CHECK(buf, len), PVPROF_SB_BAD_RESERVED);
}
END_TEST

Suite *sideband_suite(void)
{
	Suite *s = suite_create("sideband");

	PVPROF_ADD_TEST(s, sideband_range_rules);
	PVPROF_ADD_TEST(s, sideband_budget_refill);
	PVPROF_ADD_TEST(s, sideband_header_rules);
	PVPROF_ADD_TEST(s, sideband_fixed_payloads);
	PVPROF_ADD_TEST(s, sideband_mmap_payload);
	PVPROF_ADD_TEST(s, sideband_symbol_round_trip);
	PVPROF_ADD_TEST(s, sideband_ksyms_rules);
	PVPROF_ADD_TEST(s, sideband_uleb128);
	PVPROF_ADD_TEST(s, sideband_unwind_accepted);
	PVPROF_ADD_TEST(s, sideband_unwind_length);
	PVPROF_ADD_TEST(s, sideband_unwind_build_id);
	PVPROF_ADD_TEST(s, sideband_unwind_section);
	PVPROF_ADD_TEST(s, sideband_unwind_section_size);
	PVPROF_ADD_TEST(s, sideband_unwind_offset);
	PVPROF_ADD_TEST(s, sideband_unwind_debug_frame_vaddr);
	PVPROF_ADD_TEST(s, sideband_unwind_reserved);
	return s;
}
