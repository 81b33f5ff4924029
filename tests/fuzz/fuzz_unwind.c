// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: kvm-pvprof's DWARF user-stack unwinder (unwind.c).
 *
 * The input is what a guest controls in a recording: the registers of a
 * struct pvprof_ustack, up to PVPROF_USTACK_MAX bytes of stack, and the
 * process's executable mappings, each naming one of a few fixed sets of
 * real unwind tables (unwind_input.h: the fixture of unwind-test built
 * -O2 -fomit-frame-pointer three ways, libc, ld.so, this program), loaded
 * once through the tool's own store.  With UI_F_MUTATE the input also
 * edits copies of those tables: truncated or dropped sections, garbage,
 * FDEs whose CIE pointer or pc_begin points anywhere (backwards, into
 * themselves), CFI programs whose CFA goes backwards or stands still,
 * whose expressions loop, whose return address needs no memory, and
 * .eh_frame_hdr tables out of order.
 *
 * What must hold, beyond "no crash" (ASan sees every read of the stack:
 * the snapshot and the frames array are allocated at their exact sizes):
 * - the walk ends (libFuzzer's -timeout), with at most max frames, at
 *   least one when ip != 0, frames[0] == ip, and "depth" exactly when the
 *   array is full;
 * - every frame it stepped from lies in a mapping that has tables: the
 *   unwinder never guessed a caller without CFI;
 * - "no-tables" only when the last frame really has none;
 * - the same sample gives the same frames on a fresh image and on the
 *   cached one, and with room for more frames the walk is the same but
 *   for frames past the old depth.
 */
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_input.h"

#ifndef FUZZ_UNWIND_FIXTURES
#error "FUZZ_UNWIND_FIXTURES: the directory of the fixtures the Makefile built"
#endif

#define FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz_unwind: %s:%d: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* Room for the deeper walk: more than a report ever gives (PVPROF_MAX_DEPTH). */
#define MAX_ROOM	255

static struct ui_sets sets;
static struct unwinder *u;
static bool verbose;		/* PVPROF_FUZZ_UNWIND_VERBOSE: print each walk */

/*
 * libdw 0.188 leaks its DWARF expression stack when an expression runs
 * out of steps (a DW_OP_bra loop): not ours.  The suppression must not
 * hide a leak of unwind.c, whose allocations happen in libdw's callbacks,
 * so allocation stacks keep only their first caller: a block leaks "in
 * libdw" only when libdw itself allocated it.  For whole stacks when
 * reproducing: ASAN_OPTIONS=malloc_context_size=30.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "malloc_context_size=2";
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

/* ------------------------------------------------------------------ */
/* Mappings                                                            */
/* ------------------------------------------------------------------ */

struct find_ctx {
	struct unwind_mapping maps[UI_MAPS_MAX];
	int nr;
	bool loose;
};

static const struct unwind_mapping *find_map(void *opaque, uint64_t addr)
{
	struct find_ctx *fc = opaque;
	int i;

	for (i = 0; i < fc->nr; i++)
		if (addr >= fc->maps[i].start && addr < fc->maps[i].end)
			return &fc->maps[i];
	/* A caller's lookup may be wrong: the unwinder checks the bounds itself. */
	if (fc->loose && fc->nr)
		return &fc->maps[(addr >> 4) % (uint64_t)fc->nr];
	return NULL;
}

/* The first mapping that holds @addr has tables: what the unwinder may step from. */
static bool has_tables(const struct find_ctx *fc, uint64_t addr)
{
	int i;

	for (i = 0; i < fc->nr; i++)
		if (addr >= fc->maps[i].start && addr < fc->maps[i].end)
			return fc->maps[i].tables != NULL;
	return false;
}

/* Some mapping that holds @addr has tables (a loose find may answer any). */
static bool in_tables(const struct find_ctx *fc, uint64_t addr)
{
	int i;

	for (i = 0; i < fc->nr; i++)
		if (addr >= fc->maps[i].start && addr < fc->maps[i].end &&
		    fc->maps[i].tables)
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Table edits                                                         */
/* ------------------------------------------------------------------ */

struct mut_set {
	bool used;
	uint8_t *buf[UI_SEC_NR];
	size_t len[UI_SEC_NR];
	uint64_t vaddr[UI_SEC_NR];
	struct unwind_tables t;
};

static struct mut_set muts[UI_NR_SETS];

/* Exact-size copies, so that ASan sees a read past a section's end. */
static void mut_get(int set)
{
	const struct unwind_tables *o = &sets.t[set];
	struct mut_set *m = &muts[set];
	const uint8_t *src[UI_SEC_NR] = { o->eh_frame_hdr, o->eh_frame, o->debug_frame };
	const size_t len[UI_SEC_NR] = { o->eh_frame_hdr_len, o->eh_frame_len, o->debug_frame_len };
	int s;

	if (m->used)
		return;
	m->used = true;
	m->vaddr[UI_SEC_HDR] = o->eh_frame_hdr_vaddr;
	m->vaddr[UI_SEC_EH] = o->eh_frame_vaddr;
	for (s = 0; s < UI_SEC_NR; s++) {
		m->len[s] = src[s] ? len[s] : 0;
		if (!m->len[s])
			continue;
		m->buf[s] = malloc(m->len[s]);
		FUZZ_CHECK(m->buf[s]);
		memcpy(m->buf[s], src[s], m->len[s]);
	}
}

static void mut_free(void)
{
	int i, s;

	for (i = 0; i < UI_NR_SETS; i++) {
		if (!muts[i].used)
			continue;
		/* The key is reused by the next input: its cached image must go. */
		unwinder_forget_tables(u, &muts[i].t);
		for (s = 0; s < UI_SEC_NR; s++)
			free(muts[i].buf[s]);
		memset(&muts[i], 0, sizeof(muts[i]));
	}
}

static void mut_tables(struct mut_set *m)
{
	m->t = (struct unwind_tables){
		.key = &m->t,
		.eh_frame_hdr = m->buf[UI_SEC_HDR],
		.eh_frame_hdr_len = m->len[UI_SEC_HDR],
		.eh_frame_hdr_vaddr = m->vaddr[UI_SEC_HDR],
		.eh_frame = m->buf[UI_SEC_EH],
		.eh_frame_len = m->len[UI_SEC_EH],
		.eh_frame_vaddr = m->vaddr[UI_SEC_EH],
		.debug_frame = m->buf[UI_SEC_DEBUG],
		.debug_frame_len = m->len[UI_SEC_DEBUG],
	};
}

static void resize(struct mut_set *m, int s, size_t len)
{
	uint8_t *p = NULL;

	if (len) {
		p = malloc(len);
		FUZZ_CHECK(p);
		memcpy(p, m->buf[s], len);
	}
	free(m->buf[s]);
	m->buf[s] = p;
	m->len[s] = len;
}

/* Records of .eh_frame (eh) or .debug_frame, parsed only as far as edits need. */
struct rec {
	size_t off, id_off, end;
	bool cie;
	bool cie_ok;
	size_t cie_off;
};

static bool rec_at(const uint8_t *b, size_t len, size_t off, bool eh, struct rec *r)
{
	uint32_t l, id;

	if (off > len || len - off < 8)
		return false;
	l = ui_get32(b + off);
	/* A terminator, or 64-bit DWARF (not written for x86-64): stop there. */
	if (l < 4 || l == 0xffffffffu || l > len - off - 4)
		return false;
	r->off = off;
	r->id_off = off + 4;
	r->end = off + 4 + l;
	id = ui_get32(b + r->id_off);
	r->cie = eh ? id == 0 : id == 0xffffffffu;
	if (eh) {
		r->cie_ok = id <= r->id_off;
		r->cie_off = r->id_off - id;
	} else {
		r->cie_ok = id < len;
		r->cie_off = id;
	}
	return true;
}

static bool uleb(const uint8_t *b, size_t end, size_t *p, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end) {
		uint8_t c = b[(*p)++];

		if (shift < 64)
			*v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00:
	case 0x04:
	case 0x0c:
		return 8;
	case 0x02:
	case 0x0a:
		return 2;
	case 0x03:
	case 0x0b:
		return 4;
	}
	return 0;
}

struct cie {
	bool valid;
	size_t off;
	uint8_t enc;		/* of its FDEs' pc_begin and pc_range */
	bool z;			/* its FDEs have augmentation data */
	size_t ins_off;
	struct rec r;
};

static bool cie_parse(const uint8_t *b, size_t len, size_t off, bool eh, struct cie *c)
{
	const char *aug;
	size_t p, q, aug_end, i;
	uint64_t v;
	uint8_t ver;

	memset(c, 0, sizeof(*c));
	c->off = off;
	if (!rec_at(b, len, off, eh, &c->r) || !c->r.cie)
		return false;
	p = c->r.id_off + 4;
	if (p >= c->r.end)
		return false;
	ver = b[p++];
	aug = (const char *)b + p;
	while (p < c->r.end && b[p])
		p++;
	if (p++ >= c->r.end)
		return false;
	if (!eh && ver >= 4)
		p += 2;		/* address_size, segment_selector_size */
	if (!uleb(b, c->r.end, &p, &v) || !uleb(b, c->r.end, &p, &v))
		return false;
	if (ver == 1)
		p++;
	else if (!uleb(b, c->r.end, &p, &v))
		return false;
	if (aug[0] == 'z') {
		c->z = true;
		if (!uleb(b, c->r.end, &p, &v) || v > c->r.end - p)
			return false;
		aug_end = p + v;
		q = p;
		for (i = 1; aug[i] && q < aug_end; i++) {
			if (aug[i] == 'R')
				c->enc = b[q++];
			else if (aug[i] == 'P')
				q += 1 + enc_size(b[q]);
			else if (aug[i] == 'L')
				q++;
			else if (aug[i] != 'S' && aug[i] != 'B')
				break;
		}
		p = aug_end;
	} else if (aug[0]) {
		return false;
	}
	c->ins_off = p;
	c->valid = p <= c->r.end;
	return c->valid;
}

struct fde {
	struct rec r;
	size_t pc_off, size, ins_off;
	uint64_t begin, range;
	size_t cie_off;
	size_t cie_ins_off, cie_end;
};

static uint64_t get_enc(const uint8_t *p, size_t size, uint8_t enc)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if ((enc & 0x08) && size < 8 && (v >> (8 * size - 1)) & 1)
		v |= ~0ULL << (8 * size);
	return v;
}

/* @cache keeps the last CIE parsed: FDEs share few CIEs. */
static bool fde_parse(const uint8_t *b, size_t len, uint64_t vaddr, size_t off, bool eh,
		      struct cie *cache, struct fde *f)
{
	uint64_t v;
	size_t p;

	if (!rec_at(b, len, off, eh, &f->r) || f->r.cie || !f->r.cie_ok)
		return false;
	if ((cache->off != f->r.cie_off || !cache->valid) &&
	    !cie_parse(b, len, f->r.cie_off, eh, cache))
		return false;
	f->size = eh ? enc_size(cache->enc) : 8;
	p = f->r.id_off + 4;
	if (!f->size || f->r.end - p < 2 * f->size)
		return false;
	f->pc_off = p;
	f->begin = get_enc(b + p, f->size, eh ? cache->enc : 0);
	if (eh && (cache->enc & 0x70) == 0x10)
		f->begin += vaddr + p;
	f->range = get_enc(b + p + f->size, f->size, 0);
	p += 2 * f->size;
	if (cache->z && (!uleb(b, f->r.end, &p, &v) || v > f->r.end - p))
		return false;
	if (cache->z)
		p += v;
	f->ins_off = p;
	f->cie_off = f->r.cie_off;
	f->cie_ins_off = cache->ins_off;
	f->cie_end = cache->r.end;
	return true;
}

/* The FDE that covers ELF address @a, else FDE number @a % n: a walk of all. */
static bool fde_scan(const uint8_t *b, size_t len, uint64_t vaddr, bool eh, uint32_t a,
		     struct fde *out)
{
	struct cie cache = { 0 };
	struct rec r;
	struct fde f;
	size_t off, n = 0, pass, want = 0;

	for (pass = 0; pass < 2; pass++) {
		for (off = 0; rec_at(b, len, off, eh, &r); off = r.end) {
			if (!fde_parse(b, len, vaddr, off, eh, &cache, &f))
				continue;
			if (pass == 0 && a >= f.begin && a - f.begin < f.range) {
				*out = f;
				return true;
			}
			if (pass == 1 && n++ == want) {
				*out = f;
				return true;
			}
			n += pass == 0;
		}
		if (!n)
			return false;
		want = a % n;
		n = 0;
	}
	return false;
}

/*
 * The FDEs of the original sections, by address: libc's and this
 * program's have thousands, and a walk of all of them per edit was most
 * of an input's time.
 */
struct fde_index {
	size_t nr;
	struct fde_at {
		uint64_t begin, range;
		size_t off;
	} *at;
};

static struct fde_index fde_index[UI_NR_SETS][UI_SEC_NR];

static int fde_at_cmp(const void *x, const void *y)
{
	const struct fde_at *a = x, *b = y;

	return (a->begin > b->begin) - (a->begin < b->begin);
}

static void fde_index_build(struct fde_index *ix, const uint8_t *b, size_t len,
			    uint64_t vaddr, bool eh)
{
	struct cie cache = { 0 };
	struct rec r;
	struct fde f;
	size_t off;

	for (off = 0; rec_at(b, len, off, eh, &r); off = r.end)
		ix->nr += fde_parse(b, len, vaddr, off, eh, &cache, &f);
	ix->at = calloc(ix->nr ? ix->nr : 1, sizeof(*ix->at));
	FUZZ_CHECK(ix->at);
	ix->nr = 0;
	for (off = 0; rec_at(b, len, off, eh, &r); off = r.end)
		if (fde_parse(b, len, vaddr, off, eh, &cache, &f))
			ix->at[ix->nr++] = (struct fde_at){ f.begin, f.range, f.r.off };
	qsort(ix->at, ix->nr, sizeof(*ix->at), fde_at_cmp);
}

/*
 * As fde_scan(), through the index while the FDE it names is still one
 * there (the section's own vaddr, no earlier edit moved it).
 */
static bool fde_find(const struct fde_index *ix, const uint8_t *b, size_t len,
		     uint64_t vaddr, bool eh, uint32_t a, struct fde *out)
{
	struct cie cache = { 0 };
	size_t lo = 0, hi = ix->nr, pick;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->at[mid].begin <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && a - ix->at[lo - 1].begin < ix->at[lo - 1].range)
		pick = lo - 1;
	else if (ix->nr)
		pick = a % ix->nr;
	else
		return fde_scan(b, len, vaddr, eh, a, out);
	if (fde_parse(b, len, vaddr, ix->at[pick].off, eh, &cache, out) &&
	    out->begin == ix->at[pick].begin && out->range == ix->at[pick].range)
		return true;
	return fde_scan(b, len, vaddr, eh, a, out);
}

static size_t put_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n] = v & 0x7f;
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static size_t put_sleb(uint8_t *p, int64_t v)
{
	size_t n = 0;
	bool more = true;

	while (more) {
		uint8_t c = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40)));
		p[n++] = c | (more ? 0x80 : 0);
	}
	return n;
}

/*
 * In DWARF for x86-64 rsp is 7, rbp 6, r12 12, the return address 16, and
 * the CIEs of gcc and the fixtures factor offsets by -8: 0x0c 7 8 is
 * DW_CFA_def_cfa rsp+8, 0x90 1 is DW_CFA_offset r16 at CFA-8.
 */

/*
 * CFI programs written over an FDE's (or CIE's) instructions.  @b is a
 * parameter the input chose.  Returns the bytes written (at most 512).
 */
static size_t cfi_program(uint8_t *p, unsigned int k, uint32_t b)
{
	size_t n = 0, i;

	switch (k % UI_NR_PROGRAMS) {
	case 0:		/* a leaf: CFA = rsp + 8 */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 1:		/* CFA = rsp - 8: the caller's frame below the callee's */
		p[n++] = 0x12; p[n++] = 7; p[n++] = 0x01;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 2:		/* CFA = rsp: the stack does not move */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 0;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 3:		/* frame pointer: CFA = rbp + 16 */
		p[n++] = 0x0c; p[n++] = 6; p[n++] = 16;
		p[n++] = 0x86; p[n++] = 2;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 4:		/* the return address is the constant b: no memory read */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x16; p[n++] = 16;
		i = put_uleb(p + n + 2, b);
		p[n++] = (uint8_t)(1 + i);
		p[n++] = 0x10;	/* DW_OP_constu */
		n += i;
		break;
	case 5:		/* a CFA expression that jumps to itself (DW_OP_skip -3) */
		p[n++] = 0x0f; p[n++] = 3;
		p[n++] = 0x2f; p[n++] = 0xfd; p[n++] = 0xff;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 6:		/* a CFA expression that grows its stack, then dereferences */
		i = 1 + b % 200;
		p[n++] = 0x0f;
		n += put_uleb(p + n, i + 2);
		p[n++] = 0x77; p[n++] = 0;	/* DW_OP_breg7 0 */
		while (i-- > 1)
			p[n++] = 0x12;		/* DW_OP_dup */
		p[n++] = 0x06;			/* DW_OP_deref */
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 7:		/* unbalanced remember/restore state */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		for (i = 0; i < 1 + b % 40; i++)
			p[n++] = 0x0a;
		for (i = 0; i < 1 + (b >> 8) % 60; i++)
			p[n++] = 0x0b;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 8:		/* CFA = rsp + a huge offset: wraps */
		p[n++] = 0x0c; p[n++] = 7;
		n += put_uleb(p + n, 0xfffffffffffff000ULL | b);
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 9:		/* the return address is undefined: the outermost frame */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x07; p[n++] = 16;
		break;
	case 10:	/* the return address keeps its value */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x08; p[n++] = 16;
		break;
	case 11:	/* CFA = r12 + b: from a register the guest set */
		p[n++] = 0x0c; p[n++] = 12;
		n += put_uleb(p + n, b);
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 12:	/* the return address is rbp's value; CFA grows by 16 */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 16;
		p[n++] = 0x09; p[n++] = 16; p[n++] = 6;
		break;
	case 13:	/* the return address at rsp + (int32)b: anywhere */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x10; p[n++] = 16;
		i = put_sleb(p + n + 2, (int32_t)b);
		p[n++] = (uint8_t)(1 + i);
		p[n++] = 0x77;			/* DW_OP_breg7 */
		n += i;
		break;
	case 14:	/* rows: the CFA offset changes every instruction */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x90; p[n++] = 1;
		for (i = 0; i < 1 + b % 32; i++) {
			p[n++] = 0x41;			/* DW_CFA_advance_loc 1 */
			p[n++] = 0x0e;			/* DW_CFA_def_cfa_offset */
			n += put_uleb(p + n, 16 + 8 * i);
		}
		break;
	case 15:	/* registers that do not exist */
		p[n++] = 0x0c;
		n += put_uleb(p + n, b % 4096);
		p[n++] = 8;
		p[n++] = 0x05;				/* DW_CFA_offset_extended */
		n += put_uleb(p + n, b >> 12);
		p[n++] = 1;
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 16:	/* a CFA expression that loops on a true condition */
		p[n++] = 0x0f; p[n++] = 4;
		p[n++] = 0x31;				/* DW_OP_lit1 */
		p[n++] = 0x28; p[n++] = 0xfc; p[n++] = 0xff;	/* DW_OP_bra -4 */
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 17:	/* the CFA defined through itself */
		p[n++] = 0x0f; p[n++] = 1; p[n++] = 0x9c;	/* DW_OP_call_frame_cfa */
		p[n++] = 0x90; p[n++] = 1;
		break;
	case 18:	/* the return address is the pc: the same frame, sp + 8 each */
		p[n++] = 0x0c; p[n++] = 7; p[n++] = 8;
		p[n++] = 0x16; p[n++] = 16; p[n++] = 2;
		p[n++] = 0x80; p[n++] = 0;		/* DW_OP_breg16 0 */
		break;
	}
	return n;
}

/*
 * Writes a program at @ins of the record at [@off, @end): a longer one
 * grows the record over what follows it, a shorter one is padded with
 * DW_CFA_nop.
 */
static void write_program(uint8_t *b, size_t len, size_t off, size_t ins, size_t end,
			  unsigned int k, uint32_t param)
{
	uint8_t prog[600];
	size_t n = cfi_program(prog, k, param);

	if (ins > len || n > len - ins)
		n = ins <= len ? len - ins : 0;
	memcpy(b + ins, prog, n);
	if (ins + n > end) {
		end = ins + n;
		ui_put32(b + off, (uint32_t)(end - off - 4));
	} else {
		memset(b + ins + n, 0, end - ins - n);
	}
}

static void apply_op(const uint8_t *op)
{
	unsigned int kind = op[0] % UI_OP_NR, set = op[1] % UI_NR_SETS, s = op[2] % UI_SEC_NR;
	uint8_t arg = op[3];
	uint32_t a = ui_get32(op + 4), b = ui_get32(op + 8);
	struct mut_set *m;
	struct fde f;
	uint64_t seed;
	size_t i, n, count;
	bool eh;

	if (!sets.have[set])
		return;
	mut_get((int)set);
	m = &muts[set];
	/* The FDE edits are for .eh_frame and .debug_frame, the rest for any. */
	if (kind >= UI_OP_FDE_CIE && kind <= UI_OP_LENGTH && s == UI_SEC_HDR)
		s = UI_SEC_EH;
	if (kind >= UI_OP_HDR_SWAP)
		s = UI_SEC_HDR;
	eh = s == UI_SEC_EH;
	if (!m->buf[s] && kind != UI_OP_VADDR)
		return;
	switch (kind) {
	case UI_OP_TRUNCATE:
		resize(m, (int)s, a % (m->len[s] + 1));
		break;
	case UI_OP_POKE:
		i = a % m->len[s];
		n = m->len[s] - i < 4 ? m->len[s] - i : 4;
		memcpy(m->buf[s] + i, &b, n);
		break;
	case UI_OP_GARBAGE:
		seed = b | 1ULL << 32;
		for (i = a % m->len[s], n = 0; i < m->len[s] && n <= arg; i++, n++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			m->buf[s][i] = (uint8_t)seed;
		}
		break;
	case UI_OP_DROP:
		resize(m, (int)s, 0);
		break;
	case UI_OP_VADDR:
		m->vaddr[s] += (uint64_t)(int64_t)(int32_t)a;
		break;
	case UI_OP_FDE_CIE:
	case UI_OP_FDE_PC:
	case UI_OP_FDE_PROG:
	case UI_OP_CIE_PROG:
	case UI_OP_LENGTH:
		if (!fde_find(&fde_index[set][s], m->buf[s], m->len[s], m->vaddr[s], eh, a, &f))
			return;
		if (kind == UI_OP_FDE_CIE)
			ui_put32(m->buf[s] + f.r.id_off, b);
		else if (kind == UI_OP_FDE_PC)
			ui_put32(m->buf[s] + f.pc_off, ui_get32(m->buf[s] + f.pc_off) + b);
		else if (kind == UI_OP_FDE_PROG)
			write_program(m->buf[s], m->len[s], f.r.off, f.ins_off, f.r.end, arg, b);
		else if (kind == UI_OP_CIE_PROG)
			write_program(m->buf[s], m->len[s], f.cie_off, f.cie_ins_off, f.cie_end,
				      arg, b);
		else
			ui_put32(m->buf[s] + f.r.off, b);
		break;
	case UI_OP_HDR_SWAP:
		if (m->len[s] < 12)
			return;
		count = ui_get32(m->buf[s] + 8);
		if (count > (m->len[s] - 12) / 8)
			count = (m->len[s] - 12) / 8;
		if (count < 2)
			return;
		{
			uint8_t *x = m->buf[s] + 12 + 8 * (a % count);
			uint8_t *y = m->buf[s] + 12 + 8 * (b % count);
			uint8_t tmp[8];

			memcpy(tmp, x, 8);
			memcpy(x, y, 8);
			memcpy(y, tmp, 8);
		}
		break;
	case UI_OP_HDR_FIELD:
		if (m->len[s] >= 12)
			ui_put32(m->buf[s] + (arg & 1 ? 8 : 4), b);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Walks and what must hold of them                                    */
/* ------------------------------------------------------------------ */

struct walk {
	uint64_t *frames;
	int n;
	enum unwind_end end;
};

/* The image every input's walks share; forgotten after each input. */
static char image;

static void walk(const struct find_ctx *fc, const struct unwind_sample *s, int max,
		 struct walk *w)
{
	uint64_t ip = s->regs[UNWIND_REG_IP];
	int k;

	/* Exactly max entries: a frame written past them is an ASan report. */
	w->frames = malloc(max ? (size_t)max * sizeof(*w->frames) : 1);
	FUZZ_CHECK(w->frames);
	w->end = (enum unwind_end)-1;
	w->n = unwind_sample(u, &image, find_map, (void *)fc, s, w->frames, max, &w->end);
	if (verbose) {
		fprintf(stderr, "fuzz_unwind: room %d: %d frames, end %s:", max, w->n,
			unwind_end_name(w->end));
		for (k = 0; k < w->n && k < max; k++)
			fprintf(stderr, " %" PRIx64, w->frames[k]);
		fprintf(stderr, "\n");
	}

	FUZZ_CHECK(w->end >= UNWIND_END_OUTERMOST && w->end <= UNWIND_END_ERROR);
	FUZZ_CHECK(w->n >= 0 && w->n <= max);
	if (!max || !ip) {
		FUZZ_CHECK(w->n == 0 && w->end == UNWIND_END_ERROR);
		return;
	}
	FUZZ_CHECK(w->n >= 1 && w->frames[0] == ip);
	FUZZ_CHECK((w->end == UNWIND_END_DEPTH) == (w->n == max));
	/*
	 * Each frame the walk stepped from was looked up at its pc (frame 0,
	 * or one a signal frame interrupted) or at the byte before its
	 * return address: that has to be code with tables.
	 */
	for (k = 0; k < w->n - 1; k++)
		FUZZ_CHECK(in_tables(fc, w->frames[k]) || in_tables(fc, w->frames[k] - 1));
	if (w->end == UNWIND_END_NO_TABLES && !fc->loose)
		FUZZ_CHECK(!has_tables(fc, w->frames[w->n - 1]) ||
			   !has_tables(fc, w->frames[w->n - 1] - 1));
}

static void walk_free(struct walk *w)
{
	free(w->frames);
}

static void same_walk(const struct walk *a, const struct walk *b)
{
	FUZZ_CHECK(a->n == b->n && a->end == b->end);
	FUZZ_CHECK(!memcmp(a->frames, b->frames, (size_t)a->n * sizeof(*a->frames)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct find_ctx fc = { 0 };
	struct unwind_sample s;
	struct ui_input in;
	struct walk first, again, deeper;
	uint8_t *stack;
	size_t i;

	if (!ui_parse(data, size, &in))
		return 0;
	for (i = 0; i < in.nr_ops; i++)
		apply_op(in.ops + i * UI_OP_SIZE);
	for (i = 0; i < UI_NR_SETS; i++)
		if (muts[i].used)
			mut_tables(&muts[i]);
	fc.nr = in.nr_maps;
	fc.loose = in.flags & UI_F_LOOSE_FIND;
	for (i = 0; i < (size_t)in.nr_maps; i++) {
		const struct ui_map *m = &in.maps[i];
		const struct unwind_tables *t = NULL;

		if (m->set < UI_NR_SETS && sets.have[m->set])
			t = muts[m->set].used ? &muts[m->set].t : &sets.t[m->set];
		fc.maps[i] = (struct unwind_mapping){
			.start = m->start, .end = m->end, .vaddr = m->vaddr, .tables = t,
			.name = m->set < UI_NR_SETS ? ui_set_names[m->set] : NULL,
		};
	}
	/* Its own allocation, exactly its size: the input's bytes go on after it. */
	stack = NULL;
	if (in.stack_len) {
		stack = malloc(in.stack_len);
		FUZZ_CHECK(stack);
		memcpy(stack, in.stack, in.stack_len);
	}
	memcpy(s.regs, in.regs, sizeof(s.regs));
	s.stack = stack;
	s.stack_len = in.stack_len;

	walk(&fc, &s, in.max, &first);		/* a new image */
	walk(&fc, &s, in.max, &again);		/* the cached one */
	same_walk(&first, &again);
	if (in.max < MAX_ROOM) {
		walk(&fc, &s, MAX_ROOM, &deeper);
		/* No room at all is a full array too: it says nothing of the chain. */
		if (first.end == UNWIND_END_DEPTH || !in.max) {
			FUZZ_CHECK(deeper.n >= first.n);
			FUZZ_CHECK(!memcmp(first.frames, deeper.frames,
					   (size_t)first.n * sizeof(*first.frames)));
		} else {
			same_walk(&first, &deeper);
		}
		walk_free(&deeper);
	}
	walk_free(&first);
	walk_free(&again);

	/* The mappings change with the next input: so does the image. */
	unwinder_forget(u, &image);
	mut_free();
	free(stack);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Start: the tables, and a check that they unwind this very program  */
/* ------------------------------------------------------------------ */

static uint64_t self_regs[UNWIND_NR_REGS];

/* rip and rsp of one instruction boundary, as tests/unwind/fixture.c takes them. */
#define CAPTURE()							\
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"			\
			 "mov %%rax, 0(%0)\n\t"			\
			 "mov %%rsp, 8(%0)\n\t"			\
			 "mov %%rbp, 16(%0)\n\t"			\
			 "mov %%rbx, 24(%0)\n\t"			\
			 "mov %%r12, 32(%0)\n\t"			\
			 "mov %%r13, 40(%0)\n\t"			\
			 "mov %%r14, 48(%0)\n\t"			\
			 "mov %%r15, 56(%0)"				\
			 : : "r" (self_regs) : "rax", "memory")

/* Our callers' frames hold ASan redzones: read them unchecked, byte by byte. */
__attribute__((no_sanitize("address"), noinline))
static void copy_stack(uint8_t *dst, uint64_t sp, size_t len)
{
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;
	size_t i;

	for (i = 0; i < len; i++)
		dst[i] = src[i];
}

static int self_maps(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_ctx *fc = arg;
	const char *name = info->dlpi_name[0] ? info->dlpi_name : sets.path[UI_SET_SELF];
	int set = ui_set_of_path(&sets, name), i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && fc->nr < UI_MAPS_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		fc->maps[fc->nr++] = (struct unwind_mapping){
			.start = info->dlpi_addr + ph->p_vaddr,
			.end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz,
			.vaddr = ph->p_vaddr,
			.tables = set >= 0 && sets.have[set] ? &sets.t[set] : NULL,
			.name = name,
		};
	}
	return 0;
}

/* The top of the stack mapping that holds @sp. */
static uint64_t stack_top(uint64_t sp)
{
	char line[4096];
	uint64_t start, end, top = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 &&
		    sp >= start && sp < end)
			top = end;
	if (f)
		fclose(f);
	return top;
}

/*
 * The whole chain from here to _start, through this program's and libc's
 * tables as the store gave them back: proof that the sets are real and
 * right before any input is judged against them.
 */
__attribute__((noinline))
static void self_check(void)
{
	struct find_ctx fc = { 0 };
	struct unwind_sample s;
	uint64_t frames[64], top;
	enum unwind_end end;
	uint8_t *stack;
	size_t len;
	int n, k;

	CAPTURE();
	top = stack_top(self_regs[UNWIND_REG_SP]);
	FUZZ_CHECK(top > self_regs[UNWIND_REG_SP]);
	len = top - self_regs[UNWIND_REG_SP];
	if (len > (1u << 20))
		len = 1u << 20;
	stack = malloc(len);
	FUZZ_CHECK(stack);
	copy_stack(stack, self_regs[UNWIND_REG_SP], len);
	dl_iterate_phdr(self_maps, &fc);
	memcpy(s.regs, self_regs, sizeof(s.regs));
	s.stack = stack;
	s.stack_len = len;
	n = unwind_sample(u, &fc, find_map, &fc, &s, frames, 64, &end);
	fprintf(stderr, "fuzz_unwind: this program unwinds to %d frames, end %s\n", n,
		unwind_end_name(end));
	/* self_check, LLVMFuzzerInitialize, FuzzerDriver, main, libc, _start. */
	FUZZ_CHECK(n >= 6 && end == UNWIND_END_OUTERMOST);
	for (k = 0; k < n; k++)
		FUZZ_CHECK(in_tables(&fc, frames[k] - (k > 0)));
	unwinder_forget(u, &fc);
	free(stack);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int i;

	(void)argc;
	(void)argv;
	verbose = getenv("PVPROF_FUZZ_UNWIND_VERBOSE") != NULL;
	if (ui_sets_load(&sets, FUZZ_UNWIND_FIXTURES) != UI_NR_SETS) {
		fprintf(stderr, "fuzz_unwind: missing unwind tables:");
		for (i = 0; i < UI_NR_SETS; i++)
			if (!sets.have[i])
				fprintf(stderr, " %s (%s)", ui_set_names[i], sets.path[i]);
		fprintf(stderr, "; 'make -C tests/fuzz build' builds the fixtures\n");
		abort();
	}
	for (i = 0; i < UI_NR_SETS; i++) {
		const struct unwind_tables *t = &sets.t[i];

		fde_index_build(&fde_index[i][UI_SEC_EH], t->eh_frame, t->eh_frame_len,
				t->eh_frame_vaddr, true);
		fde_index_build(&fde_index[i][UI_SEC_DEBUG], t->debug_frame,
				t->debug_frame_len, 0, false);
	}
	u = unwinder_new();
	FUZZ_CHECK(u);
	self_check();
	return 0;
}
