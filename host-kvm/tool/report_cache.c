// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report and script: a cache of what frames resolved to.
 *
 * A profile is a few thousand distinct addresses sampled again and again:
 * a frame costs the resolver a search for the process image, its mapping,
 * the ELF image's symbols (or the kernel's), and report a label, two
 * interned strings and a function lookup on top.  Here the answer to one
 * frame is kept in an open-addressing table keyed by what the answer is a
 * function of: the kind of frame (kernel; user; a user return address
 * found by unwinding, named at address - 1), the address and, for user
 * frames, the pid and exec_gen.  The profile keeps its function for the
 * frame in the entry too (report_frame_info.tag), so that a frame seen
 * before costs one lookup.
 *
 * The stream changes what an address means: an exec, an mmap at an
 * address used before, a kernel laid out anew, tables that arrive late.
 * Each entry carries the resolver's generation for its kind
 * (report_resolver.generation, pvprof_symbolizer_generation()) from when
 * it was filled; an entry of another generation is resolved anew, as if it
 * were not there.  So every answer is the one the resolver would give at
 * that point of the stream, and every output the same as without the
 * cache.  A resolver without a generation is asked every time.
 *
 * The table holds at most CACHE_MAX_SLOTS / 2 entries (about 7 MB): when
 * it would hold more, the entries of old generations are dropped, and all
 * of them when that is not enough.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "report_cache.h"
#include "report_unwind.h"

#define CACHE_MIN_SLOTS		1024U
#define CACHE_MAX_SLOTS		(1U << 17)

enum cache_kind {
	KIND_EMPTY,		/* a free slot */
	KIND_KERNEL,		/* a kernel frame: the address alone */
	KIND_USER,		/* a user frame, named at its address */
	KIND_RETURN,		/* an unwound return address, named at address - 1 */
};

/* What an entry holds so far. */
#define HAVE_SYM	(1U << 0)
#define HAVE_CODE	(1U << 1)

struct cache_entry {
	uint64_t addr;
	uint32_t pid, exec_gen;		/* 0 for kernel frames */
	uint64_t gen;			/* the resolver's for the kind, when filled */
	uint8_t kind;			/* enum cache_kind */
	uint8_t have;			/* HAVE_* */
	int8_t user_code;		/* with HAVE_CODE: report_resolver.user_code's */
	struct report_frame_info info;	/* with HAVE_SYM */
};

struct report_cache {
	const struct report_resolver *res;
	bool enabled;			/* @res has a generation */
	struct cache_entry *v;
	uint32_t size;			/* slots, a power of two; 0 before the first */
	uint32_t used;			/* slots not KIND_EMPTY, at most half */
	struct report_frame_info scratch;	/* the answer when nothing is kept */
};

/**
 * report_cache_new() - an empty cache of a resolver's answers
 * @res: the resolver, or NULL (raw addresses); it must outlive the cache.
 *	Without report_resolver.generation nothing is kept.
 *
 * One cache per walk over a recording: the tags it keeps are the walk's.
 * Return: the cache, NULL when out of memory.
 */
struct report_cache *report_cache_new(const struct report_resolver *res)
{
	struct report_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->res = res;
	c->enabled = res && res->generation;
	return c;
}

/**
 * report_cache_free() - release a cache
 * @c: the cache, or NULL
 */
void report_cache_free(struct report_cache *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

static uint64_t cache_gen(const struct report_cache *c, uint8_t kind)
{
	return c->res->generation(c->res->ctx, kind == KIND_KERNEL);
}

static uint64_t cache_hash(uint8_t kind, uint32_t pid, uint32_t exec_gen, uint64_t addr)
{
	uint64_t key[2] = { addr, (uint64_t)pid << 32 | exec_gen };

	return hash_words(key, sizeof(key)) ^ kind;
}

/*
 * A table with room for one more entry: the current generations' entries
 * rehashed into one at most a quarter full, or an empty one when they
 * would fill more than that of the largest.  False when out of memory.
 */
static bool cache_rebuild(struct report_cache *c)
{
	uint64_t gen_kernel = 0, gen_user = 0;
	uint32_t live = 0, size, i;
	struct cache_entry *v;

	if (c->size) {
		gen_kernel = cache_gen(c, KIND_KERNEL);
		gen_user = cache_gen(c, KIND_USER);
	}
	for (i = 0; i < c->size; i++) {
		const struct cache_entry *e = &c->v[i];

		live += e->kind && e->gen == (e->kind == KIND_KERNEL ? gen_kernel : gen_user);
	}
	for (size = CACHE_MIN_SLOTS; size < CACHE_MAX_SLOTS && (live + 1) * 4 > size; size *= 2)
		;
	if ((live + 1) * 4 > size)
		live = 0;	/* all of them current: start again */
	v = calloc(size, sizeof(*v));
	if (!v)
		return false;
	for (i = 0; live && i < c->size; i++) {
		const struct cache_entry *e = &c->v[i];
		uint64_t h;

		if (!e->kind || e->gen != (e->kind == KIND_KERNEL ? gen_kernel : gen_user))
			continue;
		for (h = cache_hash(e->kind, e->pid, e->exec_gen, e->addr);; h++)
			if (!v[h & (size - 1)].kind)
				break;
		v[h & (size - 1)] = *e;
	}
	free(c->v);
	c->v = v;
	c->size = size;
	c->used = live;
	return true;
}

/*
 * The entry of a key, of the current generation: emptied of an older
 * generation's answers, added when missing.  NULL when out of memory.
 * Valid until the next call.
 */
static struct cache_entry *cache_entry(struct report_cache *c, uint8_t kind, uint32_t pid,
				       uint32_t exec_gen, uint64_t addr)
{
	struct cache_entry *e;
	uint64_t gen, h;

	if ((c->used + 1) * 2 > c->size && !cache_rebuild(c))
		return NULL;
	gen = cache_gen(c, kind);
	for (h = cache_hash(kind, pid, exec_gen, addr);; h++) {
		e = &c->v[h & (c->size - 1)];
		if (!e->kind)
			break;
		if (e->addr == addr && e->pid == pid && e->exec_gen == exec_gen &&
		    e->kind == kind) {
			if (e->gen != gen) {
				e->gen = gen;
				e->have = 0;
				e->info.tag = 0;
			}
			return e;
		}
	}
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->pid = pid;
	e->exec_gen = exec_gen;
	e->gen = gen;
	e->kind = kind;
	c->used++;
	return e;
}

/*
 * Resolves an address of @kind into @sym: with @fr, frame @i of @fr
 * (report_frame_resolve()); without, the address as it is, in the kernel
 * for KIND_KERNEL (report_resolve()).
 */
static inline void answer_resolve(const struct report_cache *c, uint8_t kind, uint32_t pid,
				  uint32_t exec_gen, uint64_t addr,
				  const struct report_frames *fr, uint32_t i, struct pvprof_sym *sym)
{
	if (fr)
		report_frame_resolve(c->res, fr, i, pid, exec_gen, sym);
	else
		report_resolve(c->res, kind == KIND_KERNEL, pid, exec_gen, addr, sym);
}

/*
 * The answer for an address of @kind (answer_resolve()): kept, or resolved
 * and kept, or resolved into the scratch entry when nothing is kept.
 * Inlined in both callers, in this shape: report_cache_frame() runs for
 * every frame, and a call here, or its tests in another order, cost it a
 * few per cent more instructions.
 */
static inline __attribute__((always_inline)) struct report_frame_info *
cache_answer(struct report_cache *c, uint8_t kind, uint32_t pid, uint32_t exec_gen, uint64_t addr,
	     const struct report_frames *fr, uint32_t i)
{
	struct cache_entry *e = NULL;

	if (c->enabled)
		e = kind == KIND_KERNEL ? cache_entry(c, kind, 0, 0, addr) :
					  cache_entry(c, kind, pid, exec_gen, addr);
	if (!e) {
		answer_resolve(c, kind, pid, exec_gen, addr, fr, i, &c->scratch.sym);
		c->scratch.tag = 0;
		return &c->scratch;
	}
	if (!(e->have & HAVE_SYM)) {
		answer_resolve(c, kind, pid, exec_gen, addr, fr, i, &e->info.sym);
		e->have |= HAVE_SYM;
	}
	return &e->info;
}

/**
 * report_cache_frame() - what one frame of report_sample_frames() resolves to
 * @c: the cache
 * @fr: the sample's frames
 * @i: the frame
 * @pid: the sample's pid
 * @exec_gen: its exec generation
 *
 * Return: the answer report_frame_resolve() gives at this point of the
 * stream, with the tag the caller left on it (0 when resolved anew).  It may
 * be changed until the next call on @c.
 */
struct report_frame_info *report_cache_frame(struct report_cache *c,
					     const struct report_frames *fr, uint32_t i,
					     uint32_t pid, uint32_t exec_gen)
{
	uint64_t addr = fr->addr[i];
	uint8_t kind = i >= fr->first_return && addr ? KIND_RETURN :
		       i < fr->nr_kernel ? KIND_KERNEL : KIND_USER;

	return cache_answer(c, kind, pid, exec_gen, addr, fr, i);
}

/**
 * report_cache_addr() - what an address resolves to, as a frame at it would
 * @c: the cache
 * @kernel: a kernel address (else a user address of the process)
 * @pid: the process's pid
 * @exec_gen: its exec generation
 * @addr: the address, named at itself (not as a return address)
 *
 * The answer report_resolve() gives at this point of the stream, kept
 * with those of the frames report_cache_frame() resolves: a sample's first
 * frame asked here is the same lookup as there.
 * Return: as report_cache_frame().
 */
struct report_frame_info *report_cache_addr(struct report_cache *c, bool kernel, uint32_t pid,
					    uint32_t exec_gen, uint64_t addr)
{
	return cache_answer(c, kernel ? KIND_KERNEL : KIND_USER, pid, exec_gen, addr, NULL, 0);
}

/**
 * report_cache_user_code() - report_resolver.user_code's answer, kept
 * @c: the cache, of a resolver with a user_code
 * @pid: the image's pid
 * @exec_gen: its exec generation
 * @addr: a user return address
 *
 * Return: as report_resolver.user_code.
 */
int report_cache_user_code(struct report_cache *c, uint32_t pid, uint32_t exec_gen,
			   uint64_t addr)
{
	const struct report_resolver *res = c->res;
	struct cache_entry *e = c->enabled ? cache_entry(c, KIND_USER, pid, exec_gen, addr) : NULL;

	if (!e)
		return res->user_code(res->ctx, pid, exec_gen, addr);
	if (!(e->have & HAVE_CODE)) {
		e->user_code = (int8_t)res->user_code(res->ctx, pid, exec_gen, addr);
		e->have |= HAVE_CODE;
	}
	return e->user_code;
}
