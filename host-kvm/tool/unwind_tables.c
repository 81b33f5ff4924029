// SPDX-License-Identifier: GPL-2.0
/*
 * The store of guest unwind tables (see unwind_tables.h).
 *
 * A section being assembled is a sorted array of disjoint pieces, each
 * holding bytes that arrived; a part only adds the ranges no piece covers
 * yet (the first copy of a byte wins, so a repeated part changes nothing).
 * The section's buffer is allocated when the last byte arrives: a hostile
 * section_size of 16 MiB costs nothing until 16 MiB were sent.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/sideband.h"
#include "hash.h"
#include "unwind.h"
#include "unwind_tables.h"

#define NSEC		(PVPROF_SB_UNWIND_SECTION_MAX + 1)
/*
 * The agent splits the largest section into 4178 parts; anything far more
 * fragmented than that is an attack on the piece array, not a section.
 */
#define PIECES_MAX	16384U
#define BUCKETS_MIN	64U

enum sec_state {
	SEC_EMPTY,
	SEC_PARTIAL,
	SEC_COMPLETE,
	SEC_INVALID,
};

struct piece {
	uint32_t off;
	uint32_t len;
	uint8_t data[];
};

struct section {
	enum sec_state state;
	uint32_t size;		/* section_size of the first part */
	uint64_t vaddr;		/* vaddr of the first part */
	uint32_t covered;	/* bytes that arrived (SEC_PARTIAL) */
	uint32_t nr;		/* pieces */
	uint32_t cap;
	struct piece **pieces;	/* sorted by off, disjoint */
	uint8_t *data;		/* SEC_COMPLETE: size bytes */
};

struct entry {
	struct entry *next;
	uint64_t hash;
	uint8_t id_size;
	uint8_t id[PVPROF_SB_BUILD_ID_MAX];
	struct section sec[NSEC];
};

struct pvprof_unwind_tables {
	struct entry **buckets;
	size_t nr_buckets;	/* a power of two */
	size_t nr_entries;
	uint64_t max_bytes;
	uint64_t bytes;
	uint64_t parts;
	uint64_t duplicate_parts;
	uint64_t invalid_parts;
	uint64_t over_limit_parts;
};

/**
 * pvprof_unwind_tables_new() - an empty store
 * @max_bytes: cap on the bytes it holds; 0 for
 *	PVPROF_UNWIND_TABLES_DEFAULT_MAX
 *
 * Return: the store, or NULL when out of memory.
 */
struct pvprof_unwind_tables *pvprof_unwind_tables_new(uint64_t max_bytes)
{
	struct pvprof_unwind_tables *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->buckets = calloc(BUCKETS_MIN, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	t->nr_buckets = BUCKETS_MIN;
	t->max_bytes = max_bytes ? max_bytes : PVPROF_UNWIND_TABLES_DEFAULT_MAX;
	return t;
}

static void section_clear(struct pvprof_unwind_tables *t, struct section *s)
{
	uint32_t i;

	for (i = 0; i < s->nr; i++) {
		t->bytes -= s->pieces[i]->len;
		free(s->pieces[i]);
	}
	free(s->pieces);
	s->pieces = NULL;
	s->nr = 0;
	s->cap = 0;
	s->covered = 0;
	if (s->data) {
		t->bytes -= s->size;
		free(s->data);
		s->data = NULL;
	}
}

/**
 * pvprof_unwind_tables_free() - free a store and every section it handed out
 * @t: the store, or NULL
 */
void pvprof_unwind_tables_free(struct pvprof_unwind_tables *t)
{
	struct entry *e, *next;
	size_t b;
	int s;

	if (!t)
		return;
	for (b = 0; b < t->nr_buckets; b++) {
		for (e = t->buckets[b]; e; e = next) {
			next = e->next;
			for (s = 0; s < NSEC; s++)
				section_clear(t, &e->sec[s]);
			free(e);
		}
	}
	free(t->buckets);
	free(t);
}

static struct entry *lookup(const struct pvprof_unwind_tables *t, const uint8_t *id,
			    size_t size, uint64_t h)
{
	struct entry *e;

	for (e = t->buckets[h & (t->nr_buckets - 1)]; e; e = e->next)
		if (e->hash == h && e->id_size == size && !memcmp(e->id, id, size))
			return e;
	return NULL;
}

/* Keep chains short; a failed grow only costs speed. */
static void maybe_grow(struct pvprof_unwind_tables *t)
{
	size_t n = t->nr_buckets * 2, b;
	struct entry **nb, *e, *next;

	if (t->nr_entries < t->nr_buckets)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	for (b = 0; b < t->nr_buckets; b++) {
		for (e = t->buckets[b]; e; e = next) {
			next = e->next;
			e->next = nb[e->hash & (n - 1)];
			nb[e->hash & (n - 1)] = e;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->nr_buckets = n;
}

static struct entry *get_entry(struct pvprof_unwind_tables *t,
			       const struct pvprof_sb_build_id *id)
{
	uint64_t h = hash_bytes(id->bytes, id->size, HASH_INIT);
	struct entry *e = lookup(t, id->bytes, id->size, h);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->hash = h;
	e->id_size = id->size;
	memcpy(e->id, id->bytes, id->size);
	maybe_grow(t);
	e->next = t->buckets[h & (t->nr_buckets - 1)];
	t->buckets[h & (t->nr_buckets - 1)] = e;
	t->nr_entries++;
	return e;
}

/* First piece that ends after @off. */
static uint32_t first_after(const struct section *s, uint32_t off)
{
	uint32_t lo = 0, hi = s->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->pieces[mid]->off + s->pieces[mid]->len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Walk the ranges of [a, b) that no piece covers; with @insert, fill each
 * with a new piece from @src (the part's bytes, starting at a).  Counts the
 * gaps (with @insert: those filled) and their bytes.  Insertion needs room
 * in the array for every gap beforehand.
 */
static bool walk_gaps(struct section *s, uint32_t a, uint32_t b, const uint8_t *src,
		      bool insert, uint32_t *gaps, uint32_t *gap_bytes)
{
	uint32_t i = first_after(s, a), cur = a;

	*gaps = 0;
	*gap_bytes = 0;
	while (cur < b) {
		struct piece *p;
		uint32_t end;

		if (i < s->nr && s->pieces[i]->off <= cur) {
			end = s->pieces[i]->off + s->pieces[i]->len;
			if (end > cur)
				cur = end;
			i++;
			continue;
		}
		end = i < s->nr && s->pieces[i]->off < b ? s->pieces[i]->off : b;
		if (insert) {
			p = malloc(sizeof(*p) + (end - cur));
			if (!p)
				return false;
			p->off = cur;
			p->len = end - cur;
			memcpy(p->data, src + (cur - a), p->len);
			memmove(s->pieces + i + 1, s->pieces + i,
				(s->nr - i) * sizeof(*s->pieces));
			s->pieces[i++] = p;
			s->nr++;
		}
		(*gaps)++;
		*gap_bytes += end - cur;
		cur = end;
	}
	return true;
}

static void invalidate(struct pvprof_unwind_tables *t, struct section *s)
{
	section_clear(t, s);
	s->state = SEC_INVALID;
}

/* All bytes are there: one buffer in place of the pieces. */
static bool assemble(struct pvprof_unwind_tables *t, struct section *s)
{
	uint8_t *data = malloc(s->size);
	uint32_t i;

	if (!data)
		return false;
	for (i = 0; i < s->nr; i++)
		memcpy(data + s->pieces[i]->off, s->pieces[i]->data, s->pieces[i]->len);
	section_clear(t, s);
	s->data = data;
	t->bytes += s->size;
	s->state = SEC_COMPLETE;
	return true;
}

static int refuse(struct pvprof_unwind_tables *t)
{
	t->invalid_parts++;
	return -1;
}

/**
 * pvprof_unwind_tables_add() - take in one PVPROF_SB_UNWIND message
 * @t: the store
 * @msg: the message as the guest sent it (framing and payload unchecked)
 * @len: its length
 *
 * Return: 0 when the part brought new bytes, 1 when all its bytes had
 * arrived already (ignored), -1 when it was refused and counted: it broke
 * the payload rules or is not an UNWIND message, its section_size or vaddr
 * disagrees with an earlier part of its section (the section becomes
 * invalid for good), its section is invalid, or the store is full.
 */
int pvprof_unwind_tables_add(struct pvprof_unwind_tables *t, const void *msg, size_t len)
{
	struct pvprof_sb_unwind u;
	struct section *s;
	struct entry *e;
	uint32_t n, gaps, gap_bytes;
	const uint8_t *src;
	bool ok;

	/* The type first: the payload check passes shorter types too. */
	if (pvprof_sideband_payload_check(msg, len) != PVPROF_SB_OK)
		return refuse(t);
	memcpy(&u.hdr, msg, sizeof(u.hdr));
	if (u.hdr.type != PVPROF_SB_UNWIND)
		return refuse(t);
	memcpy(&u, msg, sizeof(u));
	n = (uint32_t)(len - sizeof(u));
	src = (const uint8_t *)msg + sizeof(u);
	e = get_entry(t, &u.build_id);
	if (!e)
		return refuse(t);
	s = &e->sec[u.section];
	if (s->state == SEC_INVALID)
		return refuse(t);
	if (s->state == SEC_EMPTY) {
		s->size = u.section_size;
		s->vaddr = u.vaddr;
		s->state = SEC_PARTIAL;
	} else if (s->size != u.section_size || s->vaddr != u.vaddr) {
		invalidate(t, s);
		return refuse(t);
	}
	if (s->state == SEC_COMPLETE) {
		t->duplicate_parts++;
		return 1;
	}
	walk_gaps(s, u.offset, u.offset + n, src, false, &gaps, &gap_bytes);
	if (!gaps) {
		t->duplicate_parts++;
		return 1;
	}
	if (s->nr + gaps > PIECES_MAX) {
		invalidate(t, s);
		return refuse(t);
	}
	if (t->bytes + gap_bytes > t->max_bytes ||
	    (s->covered + gap_bytes == s->size &&
	     t->bytes + gap_bytes + s->size > t->max_bytes)) {
		t->over_limit_parts++;
		return -1;
	}
	if (s->nr + gaps > s->cap) {
		uint32_t cap = s->cap ? s->cap : 16;
		struct piece **p;

		while (cap < s->nr + gaps)
			cap *= 2;
		p = realloc(s->pieces, cap * sizeof(*p));
		if (!p)
			return refuse(t);
		s->pieces = p;
		s->cap = cap;
	}
	ok = walk_gaps(s, u.offset, u.offset + n, src, true, &gaps, &gap_bytes);
	/* Pieces filled before running out of memory are right: keep them. */
	s->covered += gap_bytes;
	t->bytes += gap_bytes;
	if (!ok)
		return refuse(t);
	t->parts++;
	if (s->covered == s->size && !assemble(t, s))
		return refuse(t);
	return 0;
}

static void fill(const struct section *s, struct pvprof_unwind_section *out)
{
	if (s->state != SEC_COMPLETE)
		return;
	out->data = s->data;
	out->size = s->size;
	out->vaddr = s->vaddr;
}

/**
 * pvprof_unwind_tables_find() - the complete sections of one ELF file
 * @t: the store
 * @build_id: its build-id bytes
 * @build_id_size: their number, 1..32
 * @out: filled in; a section that is absent, incomplete or invalid has
 *	data NULL and size 0
 *
 * Return: the number of complete sections (0..3).
 */
int pvprof_unwind_tables_find(const struct pvprof_unwind_tables *t,
			      const uint8_t *build_id, size_t build_id_size,
			      struct pvprof_unwind_set *out)
{
	const struct entry *e = NULL;

	memset(out, 0, sizeof(*out));
	if (build_id_size && build_id_size <= PVPROF_SB_BUILD_ID_MAX)
		e = lookup(t, build_id, build_id_size,
			   hash_bytes(build_id, build_id_size, HASH_INIT));
	if (!e)
		return 0;
	fill(&e->sec[PVPROF_SB_UNWIND_EH_FRAME_HDR], &out->eh_frame_hdr);
	fill(&e->sec[PVPROF_SB_UNWIND_EH_FRAME], &out->eh_frame);
	fill(&e->sec[PVPROF_SB_UNWIND_DEBUG_FRAME], &out->debug_frame);
	return !!out->eh_frame_hdr.data + !!out->eh_frame.data + !!out->debug_frame.data;
}

/**
 * pvprof_unwind_tables_get() - the complete sections of one ELF file, as
 *	the unwinder takes them (unwind.h)
 * @t: the store
 * @build_id: its build-id bytes
 * @build_id_size: their number, 1..32
 * @key: the key the unwinder caches its image of these tables under
 * @out: filled in; a section that is absent, incomplete or invalid is NULL
 *
 * Return: true when .eh_frame or .debug_frame is complete, which the
 * unwinder needs.
 */
bool pvprof_unwind_tables_get(const struct pvprof_unwind_tables *t,
			      const uint8_t *build_id, size_t build_id_size,
			      const void *key, struct unwind_tables *out)
{
	struct pvprof_unwind_set set;

	pvprof_unwind_tables_find(t, build_id, build_id_size, &set);
	*out = (struct unwind_tables){
		.key = key,
		.eh_frame_hdr = set.eh_frame_hdr.data,
		.eh_frame_hdr_len = set.eh_frame_hdr.size,
		.eh_frame_hdr_vaddr = set.eh_frame_hdr.vaddr,
		.eh_frame = set.eh_frame.data,
		.eh_frame_len = set.eh_frame.size,
		.eh_frame_vaddr = set.eh_frame.vaddr,
		.debug_frame = set.debug_frame.data,
		.debug_frame_len = set.debug_frame.size,
	};
	return set.eh_frame.data || set.debug_frame.data;
}

/**
 * pvprof_unwind_tables_stats() - counters for the report
 * @t: the store
 * @st: filled in
 */
void pvprof_unwind_tables_stats(const struct pvprof_unwind_tables *t,
				struct pvprof_unwind_tables_stats *st)
{
	const struct entry *e;
	size_t b;
	int s;

	memset(st, 0, sizeof(*st));
	st->parts = t->parts;
	st->duplicate_parts = t->duplicate_parts;
	st->invalid_parts = t->invalid_parts;
	st->over_limit_parts = t->over_limit_parts;
	st->bytes = t->bytes;
	for (b = 0; b < t->nr_buckets; b++) {
		for (e = t->buckets[b]; e; e = e->next) {
			bool any = false;

			for (s = 1; s < NSEC; s++) {
				switch (e->sec[s].state) {
				case SEC_EMPTY:
					continue;
				case SEC_PARTIAL:
					st->incomplete_sections++;
					break;
				case SEC_COMPLETE:
					st->complete_sections++;
					break;
				case SEC_INVALID:
					st->invalid_sections++;
					break;
				}
				any = true;
			}
			st->build_ids += any;
		}
	}
}
