// SPDX-License-Identifier: GPL-2.0
/*
 * Native test of the host tool's unwind-table store (unwind_tables.c): the
 * parts of a section in any order, missing, repeated, overlapping or
 * contradicting each other, hostile sizes, the memory cap, and (built with
 * -DROUND_TRIP and the agent's encoder) the sections of a real file sent
 * through the agent's encoder and reassembled, against objcopy.
 *
 *   unwind-tables-test [ELF_FILE]	(default /bin/ls, ROUND_TRIP only)
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sideband.h"
#include "host-kvm/tool/unwind_tables.h"

#define PART_MAX	(PVPROF_SIDEBAND_MAX_SIZE - sizeof(struct pvprof_sb_unwind))

static unsigned int passed, failed;

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (ok)
		passed++;
	else
		failed++;
}

/* One part: bytes [off, off + n) of a section whose byte i is pattern(i). */
struct part {
	uint8_t id;		/* build-id: 20 bytes of this value */
	uint16_t section;
	uint64_t vaddr;
	uint32_t size;
	uint32_t off;
	uint32_t n;
	uint8_t salt;		/* added to the pattern: other content */
};

static uint8_t pattern(uint32_t i)
{
	return (uint8_t)(i * 31 + (i >> 8));
}

static size_t encode(const struct part *p, uint8_t *buf)
{
	struct pvprof_sb_unwind *u = (struct pvprof_sb_unwind *)buf;
	uint32_t i;

	memset(buf, 0, sizeof(*u));
	u->hdr.type = PVPROF_SB_UNWIND;
	u->hdr.version = PVPROF_SIDEBAND_VERSION;
	u->hdr.size = sizeof(*u) + p->n;
	u->build_id.size = 20;
	memset(u->build_id.bytes, p->id, 20);
	u->vaddr = p->vaddr;
	u->section_size = p->size;
	u->offset = p->off;
	u->section = p->section;
	for (i = 0; i < p->n; i++)
		buf[sizeof(*u) + i] = pattern(p->off + i) + p->salt;
	return sizeof(*u) + p->n;
}

static int add(struct pvprof_unwind_tables *t, const struct part *p)
{
	uint8_t buf[PVPROF_SIDEBAND_MAX_SIZE];

	return pvprof_unwind_tables_add(t, buf, encode(p, buf));
}

static int find(struct pvprof_unwind_tables *t, uint8_t id, struct pvprof_unwind_set *set)
{
	uint8_t bid[20];

	memset(bid, id, sizeof(bid));
	return pvprof_unwind_tables_find(t, bid, sizeof(bid), set);
}

static bool section_is(const struct pvprof_unwind_section *s, uint32_t size, uint64_t vaddr)
{
	uint32_t i;

	if (!s->data || s->size != size || s->vaddr != vaddr)
		return false;
	for (i = 0; i < size; i++)
		if (s->data[i] != pattern(i))
			return false;
	return true;
}

static struct pvprof_unwind_tables_stats stats(struct pvprof_unwind_tables *t)
{
	struct pvprof_unwind_tables_stats st;

	pvprof_unwind_tables_stats(t, &st);
	return st;
}

#define EH	PVPROF_SB_UNWIND_EH_FRAME
#define HDR	PVPROF_SB_UNWIND_EH_FRAME_HDR
#define DBG	PVPROF_SB_UNWIND_DEBUG_FRAME

static void test_in_order(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	uint32_t size = 3 * PART_MAX - 5, off;
	bool ok = true;

	for (off = 0; off < size; off += PART_MAX) {
		struct part p = { 1, EH, 0x4000, size, off,
				  size - off < PART_MAX ? size - off : PART_MAX, 0 };

		ok = ok && add(t, &p) == 0;
	}
	ok = ok && add(t, &(struct part){ 1, HDR, 0x3000, 100, 0, 100, 0 }) == 0;
	ok = ok && add(t, &(struct part){ 1, DBG, 0, 7, 0, 7, 0 }) == 0;
	result(ok && find(t, 1, &set) == 3 && section_is(&set.eh_frame, size, 0x4000) &&
	       section_is(&set.eh_frame_hdr, 100, 0x3000) && section_is(&set.debug_frame, 7, 0),
	       "parts in order: three complete sections, byte-identical, with their vaddr");
	result(find(t, 2, &set) == 0 && !set.eh_frame.data && !set.eh_frame_hdr.size &&
	       !set.debug_frame.data && pvprof_unwind_tables_find(t, (uint8_t *)"\1", 1, &set) == 0,
	       "another build-id (or a prefix of this one) has no sections");
	result(stats(t).complete_sections == 3 && stats(t).parts == 5 && stats(t).build_ids == 1 &&
	       stats(t).bytes == size + 107,
	       "stats: 3 complete sections, 5 parts, 1 build-id, %llu bytes",
	       (unsigned long long)stats(t).bytes);
	pvprof_unwind_tables_free(t);
}

static void test_out_of_order(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	static const uint32_t order[] = { 3, 0, 4, 2, 1 };
	uint32_t size = 4 * PART_MAX + 9, i;
	bool ok = true, early = false;

	for (i = 0; i < 5; i++) {
		uint32_t off = order[i] * PART_MAX;
		struct part p = { 1, EH, 0x1000, size, off,
				  size - off < PART_MAX ? size - off : PART_MAX, 0 };

		ok = ok && add(t, &p) == 0;
		if (i < 4 && find(t, 1, &set))
			early = true;
	}
	result(ok && !early, "parts out of order: no section before the last part");
	result(find(t, 1, &set) == 1 && section_is(&set.eh_frame, size, 0x1000),
	       "parts out of order: complete and byte-identical after the last");
	pvprof_unwind_tables_free(t);
}

static void test_missing(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	uint32_t size = 3 * PART_MAX;

	add(t, &(struct part){ 1, EH, 0x1000, size, 0, PART_MAX, 0 });
	add(t, &(struct part){ 1, EH, 0x1000, size, 2 * PART_MAX, PART_MAX, 0 });
	/* All but one byte of the middle part. */
	add(t, &(struct part){ 1, EH, 0x1000, size, PART_MAX, PART_MAX - 1, 0 });
	result(find(t, 1, &set) == 0 && !set.eh_frame.data && !set.eh_frame.size,
	       "a missing byte: the section is not handed out");
	result(stats(t).incomplete_sections == 1 && stats(t).complete_sections == 0,
	       "a missing byte: counted as one incomplete section");
	add(t, &(struct part){ 1, EH, 0x1000, size, 2 * PART_MAX - 1, 1, 0 });
	result(find(t, 1, &set) == 1 && section_is(&set.eh_frame, size, 0x1000) &&
	       stats(t).incomplete_sections == 0,
	       "the missing byte arrives: complete");
	pvprof_unwind_tables_free(t);
}

static void test_duplicates(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	uint32_t size = 2 * PART_MAX;
	int r1, r2, r3, r4;

	r1 = add(t, &(struct part){ 1, EH, 0x1000, size, 0, PART_MAX, 0 });
	r2 = add(t, &(struct part){ 1, EH, 0x1000, size, 0, PART_MAX, 0 });
	/* Inside what arrived, with other bytes: ignored, the first copy wins. */
	r3 = add(t, &(struct part){ 1, EH, 0x1000, size, 10, 100, 0x55 });
	result(r1 == 0 && r2 == 1 && r3 == 1 && stats(t).duplicate_parts == 2 &&
	       stats(t).bytes == PART_MAX,
	       "a repeated part and a part inside it: ignored, no bytes added");
	/* Straddles the arrived half and the missing one: only the new bytes count. */
	r4 = add(t, &(struct part){ 1, EH, 0x1000, size, PART_MAX - 50, 100, 0x55 });
	add(t, &(struct part){ 1, EH, 0x1000, size, PART_MAX + 50, PART_MAX - 50, 0 });
	find(t, 1, &set);
	result(r4 == 0 && set.eh_frame.data && set.eh_frame.size == size &&
	       set.eh_frame.data[PART_MAX - 1] == pattern(PART_MAX - 1) &&
	       set.eh_frame.data[PART_MAX] == (uint8_t)(pattern(PART_MAX) + 0x55),
	       "an overlapping part adds only the bytes that had not arrived");
	/* The agent republishes: everything again. */
	r1 = add(t, &(struct part){ 1, EH, 0x1000, size, 0, PART_MAX, 0 });
	result(r1 == 1 && find(t, 1, &set) == 1 && stats(t).bytes == size,
	       "a part of a complete section: ignored, section unchanged");
	pvprof_unwind_tables_free(t);
}

static void test_conflicts(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	int r;

	add(t, &(struct part){ 1, EH, 0x1000, 200, 0, 100, 0 });
	r = add(t, &(struct part){ 1, EH, 0x1000, 300, 100, 100, 0 });
	add(t, &(struct part){ 1, EH, 0x1000, 200, 100, 100, 0 });
	result(r == -1 && find(t, 1, &set) == 0 && stats(t).invalid_sections == 1 &&
	       stats(t).invalid_parts == 2 && stats(t).bytes == 0,
	       "another section_size: the section is invalid for good, its bytes freed");

	add(t, &(struct part){ 2, HDR, 0x1000, 200, 0, 100, 0 });
	r = add(t, &(struct part){ 2, HDR, 0x2000, 200, 100, 100, 0 });
	result(r == -1 && find(t, 2, &set) == 0 && stats(t).invalid_sections == 2,
	       "another vaddr: the section is invalid");

	add(t, &(struct part){ 3, DBG, 0, 50, 0, 50, 0 });
	add(t, &(struct part){ 3, EH, 0x10, 50, 0, 50, 0 });
	r = add(t, &(struct part){ 3, DBG, 0, 60, 0, 50, 0 });
	result(r == -1 && find(t, 3, &set) == 1 && !set.debug_frame.data &&
	       section_is(&set.eh_frame, 50, 0x10),
	       "a conflict with a complete section invalidates it, not its neighbours");
	pvprof_unwind_tables_free(t);
}

static void test_refused(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	uint8_t buf[PVPROF_SIDEBAND_MAX_SIZE];
	struct part p = { 1, EH, 0x1000, 200, 0, 100, 0 };
	size_t len = encode(&p, buf);
	struct pvprof_sb_agent a;
	bool ok;

	((struct pvprof_sb_unwind *)buf)->reserved1 = 1;
	ok = pvprof_unwind_tables_add(t, buf, len) == -1;
	encode(&p, buf);
	ok = ok && pvprof_unwind_tables_add(t, buf, len - 1) == -1;	/* framing */
	p.off = 150;	/* past the section's end */
	len = encode(&p, buf);
	ok = ok && pvprof_unwind_tables_add(t, buf, len) == -1;
	memset(&a, 0, sizeof(a));
	a.hdr.type = PVPROF_SB_AGENT;
	a.hdr.version = PVPROF_SIDEBAND_VERSION;
	a.hdr.size = sizeof(a);
	ok = ok && pvprof_unwind_tables_add(t, &a, sizeof(a)) == -1;
	result(ok && stats(t).invalid_parts == 4 && stats(t).build_ids == 0,
	       "messages breaking the payload rules, or not UNWIND, are refused and counted");
	pvprof_unwind_tables_free(t);
}

static void test_hostile_sizes(void)
{
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	unsigned int i;
	bool ok = true;

	/*
	 * 200 files each claiming a 16 MiB section and sending a byte at its
	 * end: a store that sized buffers by the claim would hold 3.2 GiB.
	 */
	for (i = 0; i < 200; i++) {
		struct part p = { (uint8_t)(i + 1), (uint16_t)(1 + i % 3),
				  i % 3 == 2 ? 0 : 0x1000, PVPROF_SB_UNWIND_MAX_SIZE,
				  PVPROF_SB_UNWIND_MAX_SIZE - 1 - i, 1, 0 };

		ok = ok && add(t, &p) == 0;
	}
	result(ok && stats(t).bytes == 200 && stats(t).incomplete_sections == 200 &&
	       find(t, 1, &set) == 0,
	       "200 parts claiming 16 MiB sections: %llu bytes held, all incomplete",
	       (unsigned long long)stats(t).bytes);
	pvprof_unwind_tables_free(t);

	/* The cap: complete sections and pieces together. */
	t = pvprof_unwind_tables_new(10000);
	ok = add(t, &(struct part){ 1, EH, 0x1000, 3000, 0, 3000, 0 }) == 0;
	ok = ok && add(t, &(struct part){ 2, EH, 0x1000, 8000, 0, 3000, 0 }) == 0;
	/* Completing needs the 8000-byte buffer besides the pieces: over the cap. */
	ok = ok && add(t, &(struct part){ 2, EH, 0x1000, 8000, 3000, 3000, 0 }) == 0;
	ok = ok && add(t, &(struct part){ 2, EH, 0x1000, 8000, 6000, 2000, 0 }) == -1;
	result(ok && stats(t).over_limit_parts == 1 && stats(t).bytes == 9000 &&
	       find(t, 1, &set) == 1 && find(t, 2, &set) == 0,
	       "the store's cap: a part that would exceed it is dropped and counted");
	pvprof_unwind_tables_free(t);

	/* Every other byte on its own: more pieces than any real section has. */
	t = pvprof_unwind_tables_new(0);
	ok = true;
	for (i = 0; i < 20000 && ok; i++)
		ok = add(t, &(struct part){ 1, EH, 0x1000, 40000, 2 * i, 1, 0 }) == 0;
	result(!ok && i > 16000 && stats(t).invalid_sections == 1 && stats(t).bytes == 0,
	       "a section fragmented into %u pieces is invalid, its memory freed", i - 1);
	pvprof_unwind_tables_free(t);
}

#ifdef ROUND_TRIP
#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include "guest-agent/pvprofd.h"

struct msgs {
	uint8_t (*m)[PVPROF_SIDEBAND_MAX_SIZE];
	size_t *len;
	size_t nr, cap;
};

static void keep(void *ctx, const void *msg, size_t len)
{
	struct msgs *v = ctx;

	if (v->nr == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->m = realloc(v->m, v->cap * sizeof(*v->m));
		v->len = realloc(v->len, v->cap * sizeof(*v->len));
		if (!v->m || !v->len)
			exit(2);
	}
	memcpy(v->m[v->nr], msg, len);
	v->len[v->nr++] = len;
}

static bool same_as_objcopy(const char *file, const char *name,
			    const struct pvprof_unwind_section *s)
{
	char dir[] = "/tmp/unwind-tables-test.XXXXXX", cmd[4096], out[256];
	bool same = false;
	uint8_t *ref;
	FILE *f;
	long n;

	if (!s->data || !mkdtemp(dir))
		return false;
	snprintf(out, sizeof(out), "%s/section", dir);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --decompress-debug-sections --dump-section '%s=%s' '%s' '%s/junk'",
		 name, out, file, dir);
	if (!system(cmd) && (f = fopen(out, "rb"))) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		ref = malloc(n ? n : 1);
		same = ref && fread(ref, 1, n, f) == (size_t)n && n == s->size &&
		       !memcmp(ref, s->data, n);
		free(ref);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		same = false;
	return same;
}

static void test_round_trip(const char *file)
{
	struct pvprof_sb_build_id id = { .size = 20 };
	struct pvprof_unwind_tables *t = pvprof_unwind_tables_new(0);
	struct pvprof_unwind_set set;
	struct msgs v = { 0 };
	size_t i, j;
	bool ok = true;
	int n, fd = open(file, O_RDONLY);
	Elf *elf;

	memset(id.bytes, 1, 20);
	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!elf) {
		result(false, "round trip: open %s", file);
		return;
	}
	unwind_messages(elf, &id, keep, &v);
	elf_end(elf);
	close(fd);
	/* Last part first, the rest interleaved, then everything again. */
	for (i = v.nr; i-- > 0; )
		if (i % 2)
			ok = ok && pvprof_unwind_tables_add(t, v.m[i], v.len[i]) == 0;
	for (j = 0; j < v.nr; j++)
		if (!(j % 2))
			ok = ok && pvprof_unwind_tables_add(t, v.m[j], v.len[j]) == 0;
	for (j = 0; j < v.nr; j++)
		ok = ok && pvprof_unwind_tables_add(t, v.m[j], v.len[j]) == 1;
	result(ok && v.nr > 2, "round trip %s: %zu parts from the agent's encoder, shuffled, "
	       "then repeated", file, v.nr);
	n = find(t, 1, &set);
	result(n >= 2 && same_as_objcopy(file, ".eh_frame", &set.eh_frame) &&
	       same_as_objcopy(file, ".eh_frame_hdr", &set.eh_frame_hdr),
	       "round trip %s: .eh_frame (%u bytes) and .eh_frame_hdr (%u) equal objcopy's",
	       file, set.eh_frame.size, set.eh_frame_hdr.size);
	free(v.m);
	free(v.len);
	pvprof_unwind_tables_free(t);
}
#endif

int main(int argc, char **argv)
{
	test_in_order();
	test_out_of_order();
	test_missing();
	test_duplicates();
	test_conflicts();
	test_refused();
	test_hostile_sizes();
#ifdef ROUND_TRIP
	test_round_trip(argc > 1 ? argv[1] : "/bin/ls");
#else
	(void)argc;
	(void)argv;
#endif
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
