// SPDX-License-Identifier: GPL-2.0
/*
 * The host-side symbolizer (see symbolize.h).
 *
 * Tables grow as messages arrive and are sorted lazily, on the first
 * lookup after a change, so that a republished table (the agent sends its
 * whole state again when a recording starts) costs one sort, and repeated
 * entries collapse into one.  Lookups are binary searches.
 *
 * A symbolizer fed in stream order knows, at each stream entry, only the
 * part of a table that arrived before it.  A second one, fed the whole recording's
 * sideband first (pvprof_symbolizer_complete()), supplies the complete
 * table of the same image for the name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sideband.h"
#include "hash.h"
#include "symbolize.h"

/* Caps that keep a hostile recording from growing the tables forever. */
#define MAX_MODULES	65536
#define MAX_AGENTS	1024
#define ARENA_CHUNK	(64 * 1024)

struct sym {
	uint64_t addr;
	uint64_t size;
	const char *name;
	bool last_of_message;	/* the symbol after it came in another message */
};

struct symtab {
	struct sym *v;
	size_t n;
	size_t cap;
	bool dirty;
};

/* The kernel image or one module. */
struct kimage {
	char name[PVPROF_SB_MODULE_NAME_SIZE + 1];
	char dso[PVPROF_SB_MODULE_NAME_SIZE + 3];
	uint64_t base;
	uint64_t end;		/* 0 until its KERNEL or MODULE message */
	uint64_t nr_syms;	/* announced (kernel), 0 when unknown (modules) */
	unsigned int layouts;	/* distinct (base, end) it was given */
	uint8_t build_id_size;	/* of its last KERNEL or MODULE message */
	uint8_t build_id[PVPROF_SB_BUILD_ID_MAX];
	struct symtab syms;
};

struct elfimg {
	struct elfimg *next;	/* hash chain */
	uint8_t id_size;
	uint8_t id[PVPROF_SB_BUILD_ID_MAX];
	struct symtab syms;
};

struct mapping {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t vaddr;
	struct elfimg *elf;	/* NULL when the build-id is unknown */
	const char *path;	/* NULL when the path is empty */
};

struct proc {
	struct proc *next;	/* hash chain */
	uint32_t pid;
	uint32_t exec_gen;
	char comm[PVPROF_SB_COMM_SIZE + 1];
	struct mapping *maps;	/* sorted by start, not overlapping */
	size_t nr_maps;
	size_t cap_maps;
	uint64_t maps_gen;	/* bumped whenever @maps changes */
};

struct agent {
	uint32_t pid;
	uint64_t lost_messages;
	uint64_t lost_bytes;
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	char data[ARENA_CHUNK];
};

struct pvprof_symbolizer {
	struct pvprof_symbolizer_stats st;
	struct kimage kernel;
	struct kimage **modules;
	size_t nr_modules;
	struct kimage **by_base;	/* modules sorted by base, lazily */
	bool by_base_dirty;
	struct proc **procs;		/* hash buckets */
	size_t nr_proc_buckets;
	struct elfimg **elfs;
	size_t nr_elf_buckets;
	size_t nr_elfs;
	struct agent agents[MAX_AGENTS];
	size_t nr_agents;
	struct arena_chunk *arena;
	struct pvprof_symbolizer *complete;	/* owned; NULL when none */
	/* Bumped whenever kernel (user) frames may resolve differently. */
	uint64_t kernel_gen, user_gen;
};

/* ---- strings ----------------------------------------------------------- */

/* A NUL-terminated copy of @len bytes (at most 255, no NUL among them). */
static const char *arena_str(struct pvprof_symbolizer *s, const char *p, size_t len)
{
	struct arena_chunk *c = s->arena;
	char *r;

	if (!c || c->used + len + 1 > ARENA_CHUNK) {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->next = s->arena;
		c->used = 0;
		s->arena = c;
	}
	r = c->data + c->used;
	memcpy(r, p, len);
	r[len] = '\0';
	c->used += len + 1;
	return r;
}

/* A NUL-padded field copied into a terminated buffer of size + 1. */
static void copy_padded(char *dst, const char *src, size_t size)
{
	memcpy(dst, src, size);
	dst[size] = '\0';
}

/* ---- symbol tables ----------------------------------------------------- */

static int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct sym *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	if (t->n && addr < t->v[t->n - 1].addr)
		t->dirty = true;
	else if (t->n && addr == t->v[t->n - 1].addr)
		t->dirty = true;	/* maybe a repeat: dedupe on sort */
	t->v[t->n++] = (struct sym){ .addr = addr, .size = size, .name = name };
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void symtab_normalize(struct symtab *t)
{
	size_t i, n = 0;

	if (!t->dirty)
		return;
	qsort(t->v, t->n, sizeof(*t->v), sym_cmp);
	for (i = 0; i < t->n; i++) {
		if (!n || t->v[n - 1].addr != t->v[i].addr ||
		    strcmp(t->v[n - 1].name, t->v[i].name))
			t->v[n++] = t->v[i];
		else	/* one copy that came with its successor is enough */
			t->v[n - 1].last_of_message &= t->v[i].last_of_message;
	}
	t->n = n;
	t->dirty = false;
}

/* The last symbol at or below @addr, NULL when there is none. */
static const struct sym *symtab_find(struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi;

	symtab_normalize(t);
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Of several names at one address, the first in sort order. */
	lo--;
	while (lo && t->v[lo - 1].addr == t->v[lo].addr)
		lo--;
	return &t->v[lo];
}

static void symtab_free(struct symtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- kernel and modules ------------------------------------------------ */

static struct kimage *module_find(struct pvprof_symbolizer *s, const char *name,
				  bool create)
{
	struct kimage *m, **v;
	size_t i;

	for (i = 0; i < s->nr_modules; i++)
		if (!strcmp(s->modules[i]->name, name))
			return s->modules[i];
	if (!create || s->nr_modules == MAX_MODULES)
		return NULL;
	m = calloc(1, sizeof(*m));
	v = realloc(s->modules, (s->nr_modules + 1) * sizeof(*v));
	if (!m || !v) {
		free(m);
		if (v)
			s->modules = v;
		return NULL;
	}
	s->modules = v;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->dso, sizeof(m->dso), "[%s]", name);
	s->modules[s->nr_modules++] = m;
	s->by_base_dirty = true;
	return m;
}

static int add_kernel(struct pvprof_symbolizer *s, const void *msg)
{
	struct pvprof_sb_kernel k;

	memcpy(&k, msg, sizeof(k));
	/* Another boot: the old addresses mean nothing any more. */
	if (s->kernel.end && (s->kernel.base != k.stext || s->kernel.end != k.etext))
		symtab_free(&s->kernel.syms);
	if (s->kernel.base != k.stext || s->kernel.end != k.etext)
		s->kernel.layouts++;
	s->kernel.base = k.stext;
	s->kernel.end = k.etext;
	s->kernel.nr_syms = k.nr_syms;
	s->kernel.build_id_size = k.build_id.size;
	memcpy(s->kernel.build_id, k.build_id.bytes, k.build_id.size);
	s->st.kernel_syms_expected = k.nr_syms;
	return 0;
}

static int add_module(struct pvprof_symbolizer *s, const void *msg)
{
	struct pvprof_sb_module m;
	char name[PVPROF_SB_MODULE_NAME_SIZE + 1];
	struct kimage *img;

	memcpy(&m, msg, sizeof(m));
	copy_padded(name, m.name, sizeof(m.name));
	img = module_find(s, name, true);
	if (!img)
		return -ENOMEM;
	/* Reloaded elsewhere: its symbols follow again. */
	if (img->end && (img->base != m.base || img->end != m.base + m.size))
		symtab_free(&img->syms);
	if (img->base != m.base || img->end != m.base + m.size)
		img->layouts++;
	img->base = m.base;
	img->end = m.base + m.size;
	img->build_id_size = m.build_id.size;
	memcpy(img->build_id, m.build_id.bytes, m.build_id.size);
	s->by_base_dirty = true;
	return 0;
}

static int add_symbols(struct pvprof_symbolizer *s, struct symtab *t,
		       const void *msg, size_t len, uint64_t *count)
{
	struct pvprof_sb_sym_iter it;
	const char *name;
	size_t added = 0;

	pvprof_sb_sym_iter_init(&it, msg, len);
	while (pvprof_sb_sym_next(&it) > 0) {
		name = arena_str(s, it.name, it.name_len);
		if (!name || symtab_add(t, it.addr, it.size, name))
			return -ENOMEM;
		added++;
		(*count)++;
	}
	if (added)
		t->v[t->n - 1].last_of_message = true;
	return 0;
}

static int add_ksyms(struct pvprof_symbolizer *s, const void *msg, size_t len)
{
	char module[PVPROF_SB_MODULE_NAME_SIZE + 1];
	struct kimage *img = &s->kernel;
	uint64_t before = s->st.kernel_syms;
	int ret;

	copy_padded(module, (const char *)msg + offsetof(struct pvprof_sb_ksyms, module),
		    PVPROF_SB_MODULE_NAME_SIZE);
	if (module[0]) {
		img = module_find(s, module, true);
		if (!img)
			return -ENOMEM;
	}
	ret = add_symbols(s, &img->syms, msg, len, &s->st.kernel_syms);
	/* The KERNEL message announces the image's symbols only. */
	if (module[0])
		s->st.module_syms += s->st.kernel_syms - before;
	return ret;
}

static int base_cmp(const void *a, const void *b)
{
	const struct kimage *x = *(struct kimage * const *)a;
	const struct kimage *y = *(struct kimage * const *)b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return 0;
}

static struct kimage *kimage_at(struct pvprof_symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi;

	if (s->kernel.end && addr >= s->kernel.base && addr < s->kernel.end)
		return &s->kernel;
	if (s->by_base_dirty) {
		struct kimage **v = realloc(s->by_base, (s->nr_modules + 1) * sizeof(*v));

		if (!v)
			return NULL;
		s->by_base = v;
		if (s->nr_modules)
			memcpy(v, s->modules, s->nr_modules * sizeof(*v));
		qsort(v, s->nr_modules, sizeof(*v), base_cmp);
		s->by_base_dirty = false;
	}
	hi = s->nr_modules;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->by_base[mid]->base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Modules do not overlap in a real kernel; a lying guest gets one. */
	if (lo && s->by_base[lo - 1]->end && addr < s->by_base[lo - 1]->end)
		return s->by_base[lo - 1];
	return NULL;
}

/* ---- ELF images -------------------------------------------------------- */

static int grow_buckets(void ***buckets, size_t *nr, size_t used,
			void **(*next)(void *), uint64_t (*hash)(const void *))
{
	size_t n = *nr ? 2 * *nr : 256, i;
	void **b;

	if (used < *nr)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (i = 0; i < *nr; i++) {
		void *e = (*buckets)[i];

		while (e) {
			void *after = *next(e);
			size_t h = hash(e) & (n - 1);

			*next(e) = b[h];
			b[h] = e;
			e = after;
		}
	}
	free(*buckets);
	*buckets = b;
	*nr = n;
	return 0;
}

static void **elf_next(void *e)
{
	return (void **)&((struct elfimg *)e)->next;
}

static uint64_t elf_hash(const void *e)
{
	const struct elfimg *x = e;

	return hash_bytes(x->id, x->id_size, HASH_INIT);
}

static struct elfimg *elf_find(struct pvprof_symbolizer *s,
			       const struct pvprof_sb_build_id *b, bool create)
{
	struct elfimg *e;
	size_t h;

	if (!b->size)
		return NULL;
	if (s->nr_elf_buckets) {
		h = hash_bytes(b->bytes, b->size, HASH_INIT) & (s->nr_elf_buckets - 1);
		for (e = s->elfs[h]; e; e = e->next)
			if (e->id_size == b->size && !memcmp(e->id, b->bytes, b->size))
				return e;
	}
	if (!create ||
	    grow_buckets((void ***)&s->elfs, &s->nr_elf_buckets, s->nr_elfs,
			 elf_next, elf_hash))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->id_size = b->size;
	memcpy(e->id, b->bytes, b->size);
	h = hash_bytes(e->id, e->id_size, HASH_INIT) & (s->nr_elf_buckets - 1);
	e->next = s->elfs[h];
	s->elfs[h] = e;
	s->nr_elfs++;
	return e;
}

/* The symbols of @e's build-id: from the complete tables when there are any. */
static struct symtab *elf_syms(struct pvprof_symbolizer *s, struct elfimg *e)
{
	struct pvprof_sb_build_id b = { .size = e->id_size };
	struct elfimg *twin;

	if (!s->complete)
		return &e->syms;
	memcpy(b.bytes, e->id, e->id_size);
	twin = elf_find(s->complete, &b, false);
	return twin ? &twin->syms : &e->syms;
}

static int add_elf_syms(struct pvprof_symbolizer *s, const void *msg, size_t len)
{
	struct pvprof_sb_build_id b;
	struct elfimg *e;

	memcpy(&b, (const char *)msg + offsetof(struct pvprof_sb_elf_syms, build_id), sizeof(b));
	e = elf_find(s, &b, true);
	if (!e)
		return -ENOMEM;
	return add_symbols(s, &e->syms, msg, len, &s->st.elf_syms);
}

/* ---- processes ----------------------------------------------------------- */

static uint64_t proc_key(uint32_t pid, uint32_t exec_gen)
{
	return (uint64_t)pid << 32 | exec_gen;
}

static void **proc_next(void *p)
{
	return (void **)&((struct proc *)p)->next;
}

static uint64_t proc_hash(const void *p)
{
	const struct proc *x = p;
	uint64_t k = proc_key(x->pid, x->exec_gen);

	return hash_bytes(&k, sizeof(k), HASH_INIT);
}

static struct proc *proc_find(struct pvprof_symbolizer *s, uint32_t pid,
			      uint32_t exec_gen, bool create, bool *created)
{
	uint64_t k = proc_key(pid, exec_gen);
	struct proc *p;
	size_t h;

	if (created)
		*created = false;
	if (s->nr_proc_buckets) {
		h = hash_bytes(&k, sizeof(k), HASH_INIT) & (s->nr_proc_buckets - 1);
		for (p = s->procs[h]; p; p = p->next)
			if (p->pid == pid && p->exec_gen == exec_gen)
				return p;
	}
	if (!create ||
	    grow_buckets((void ***)&s->procs, &s->nr_proc_buckets, s->st.processes,
			 proc_next, proc_hash))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->exec_gen = exec_gen;
	h = hash_bytes(&k, sizeof(k), HASH_INIT) & (s->nr_proc_buckets - 1);
	p->next = s->procs[h];
	s->procs[h] = p;
	s->st.processes++;
	if (created)
		*created = true;
	return p;
}

static int maps_reserve(struct proc *p, size_t n)
{
	struct mapping *v;
	size_t cap;

	if (p->nr_maps + n <= p->cap_maps)
		return 0;
	cap = p->cap_maps ? 2 * p->cap_maps : 16;
	while (cap < p->nr_maps + n)
		cap *= 2;
	v = realloc(p->maps, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->maps = v;
	p->cap_maps = cap;
	return 0;
}

/*
 * Insert @m, cutting what it overlaps out of older mappings (the kernel
 * replaces overlapped ranges the same way, MAP_FIXED).
 */
static int maps_insert(struct proc *p, const struct mapping *m)
{
	size_t i, at;

	/* A split adds one mapping, the new one another. */
	if (maps_reserve(p, 2))
		return -ENOMEM;
	for (i = 0; i < p->nr_maps; i++) {
		struct mapping *o = &p->maps[i];

		if (o->end <= m->start || o->start >= m->end)
			continue;
		if (o->start < m->start && o->end > m->end) {
			/* m inside o: o splits in two. */
			struct mapping tail = *o;
			uint64_t cut = m->end - o->start;

			tail.start = m->end;
			tail.pgoff += cut;
			tail.vaddr += cut;
			o->end = m->start;
			memmove(o + 2, o + 1, (p->nr_maps - i - 1) * sizeof(*o));
			o[1] = tail;
			p->nr_maps++;
			i++;
		} else if (o->start < m->start) {
			o->end = m->start;
		} else if (o->end > m->end) {
			uint64_t cut = m->end - o->start;

			o->start = m->end;
			o->pgoff += cut;
			o->vaddr += cut;
		} else {
			memmove(o, o + 1, (p->nr_maps - i - 1) * sizeof(*o));
			p->nr_maps--;
			i--;
		}
	}
	for (at = 0; at < p->nr_maps && p->maps[at].start < m->start; at++)
		;
	memmove(p->maps + at + 1, p->maps + at, (p->nr_maps - at) * sizeof(*m));
	p->maps[at] = *m;
	p->nr_maps++;
	return 0;
}

static int add_process(struct pvprof_symbolizer *s, const void *msg)
{
	struct pvprof_sb_process m;
	struct proc *p, *parent;
	bool created;

	memcpy(&m, msg, sizeof(m));
	p = proc_find(s, m.pid, m.exec_gen, true, &created);
	if (!p)
		return -ENOMEM;
	copy_padded(p->comm, m.comm, sizeof(m.comm));
	if (!created || !(m.flags & PVPROF_SB_PROC_F_FORK))
		return 0;
	parent = proc_find(s, m.parent_pid, m.exec_gen, false, NULL);
	if (!parent || parent == p || !parent->nr_maps)
		return 0;
	if (maps_reserve(p, parent->nr_maps))
		return -ENOMEM;
	memcpy(p->maps, parent->maps, parent->nr_maps * sizeof(*p->maps));
	p->nr_maps = parent->nr_maps;
	p->maps_gen++;
	return 0;
}

static int add_mmap(struct pvprof_symbolizer *s, const void *msg)
{
	struct pvprof_sb_mmap m;
	struct mapping map = { 0 };
	struct proc *p;

	memcpy(&m, msg, sizeof(m));
	p = proc_find(s, m.pid, m.exec_gen, true, NULL);
	if (!p)
		return -ENOMEM;
	map.start = m.start;
	map.end = m.start + m.len;
	map.pgoff = m.pgoff;
	map.vaddr = m.vaddr;
	if (m.build_id.size) {
		map.elf = elf_find(s, &m.build_id, true);
		if (!map.elf)
			return -ENOMEM;
	}
	if (m.path_len) {
		map.path = arena_str(s, (const char *)msg + sizeof(m), m.path_len);
		if (!map.path)
			return -ENOMEM;
	}
	if (maps_insert(p, &map))
		return -ENOMEM;
	p->maps_gen++;
	s->st.mappings++;
	return 0;
}

static void add_agent(struct pvprof_symbolizer *s, const void *msg)
{
	struct pvprof_sb_agent a;
	size_t i;

	memcpy(&a, msg, sizeof(a));
	for (i = 0; i < s->nr_agents && s->agents[i].pid != a.pid; i++)
		;
	if (i == s->nr_agents) {
		if (s->nr_agents == MAX_AGENTS)
			return;
		s->nr_agents++;
	}
	/* Counters only grow within one agent's life. */
	s->agents[i].pid = a.pid;
	s->agents[i].lost_messages = a.lost_messages;
	s->agents[i].lost_bytes = a.lost_bytes;
}

/* ---- the interface -------------------------------------------------------- */

/**
 * pvprof_symbolizer_new() - an empty symbolizer
 *
 * Return: the symbolizer, or NULL when out of memory.
 */
struct pvprof_symbolizer *pvprof_symbolizer_new(void)
{
	struct pvprof_symbolizer *s = calloc(1, sizeof(*s));

	if (s)
		strcpy(s->kernel.dso, "[kernel.kallsyms]");
	return s;
}

/**
 * pvprof_symbolizer_free() - free a symbolizer and every string it returned
 * @s: the symbolizer, or NULL
 */
void pvprof_symbolizer_free(struct pvprof_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	symtab_free(&s->kernel.syms);
	for (i = 0; i < s->nr_modules; i++) {
		symtab_free(&s->modules[i]->syms);
		free(s->modules[i]);
	}
	free(s->modules);
	free(s->by_base);
	for (i = 0; i < s->nr_proc_buckets; i++) {
		struct proc *p = s->procs[i], *next;

		for (; p; p = next) {
			next = p->next;
			free(p->maps);
			free(p);
		}
	}
	free(s->procs);
	for (i = 0; i < s->nr_elf_buckets; i++) {
		struct elfimg *e = s->elfs[i], *next;

		for (; e; e = next) {
			next = e->next;
			symtab_free(&e->syms);
			free(e);
		}
	}
	free(s->elfs);
	while (s->arena) {
		struct arena_chunk *c = s->arena;

		s->arena = c->next;
		free(c);
	}
	pvprof_symbolizer_free(s->complete);
	free(s);
}

/**
 * pvprof_symbolizer_complete() - name addresses from the whole recording's tables
 * @s: the symbolizer that follows the stream
 * @complete: a symbolizer fed every sideband message of the same recording
 *	beforehand; @s owns it from now on and frees it with itself
 *
 * The agent's tables take seconds to arrive (the kernel's 47092 symbols are
 * 214 messages, sent within the sideband budget), and samples taken
 * meanwhile would be named from the part that had arrived: an address
 * beyond the last symbol received takes that symbol's name.  @s still
 * decides, in stream order, which kernel, module or process image an
 * address belongs to; the name then comes from @complete's table of that
 * same image: the kernel or module at the same text range, the ELF file
 * with the same build-id.  An address in no image @s knows yet is looked
 * up in @complete's images, where that answer is the recording's only one:
 * a kernel or module that was never given another range, a process image
 * (its pid and exec generation name it exactly).
 */
void pvprof_symbolizer_complete(struct pvprof_symbolizer *s,
				struct pvprof_symbolizer *complete)
{
	/* Past the old tables' generations too: the sum only grows. */
	s->kernel_gen += (s->complete ? pvprof_symbolizer_generation(s->complete, true) : 0) + 1;
	s->user_gen += (s->complete ? pvprof_symbolizer_generation(s->complete, false) : 0) + 1;
	pvprof_symbolizer_free(s->complete);
	s->complete = complete;
}

/**
 * pvprof_symbolizer_add() - take in one sideband message
 * @s: the symbolizer
 * @msg: struct pvprof_sideband_hdr and its payload, as carried by a
 *	PVPROF_ST_SIDEBAND stream entry; messages go in stream order
 * @len: bytes at @msg
 *
 * Return: 0; -EINVAL for a message that breaks the framing or payload
 * rules (counted in stats.rejected, nothing else changes); -ENOMEM when
 * memory ran out (the message may be partly applied).
 */
int pvprof_symbolizer_add(struct pvprof_symbolizer *s, const void *msg, size_t len)
{
	struct pvprof_sideband_hdr sb;
	int ret = 0;

	if (pvprof_sideband_payload_check(msg, len) != PVPROF_SB_OK) {
		s->st.rejected++;
		return -EINVAL;
	}
	memcpy(&sb, msg, sizeof(sb));
	switch (sb.type) {
	case PVPROF_SB_KERNEL:
		ret = add_kernel(s, msg);
		break;
	case PVPROF_SB_KSYMS:
		ret = add_ksyms(s, msg, len);
		break;
	case PVPROF_SB_MODULE:
		ret = add_module(s, msg);
		break;
	case PVPROF_SB_PROCESS:
		ret = add_process(s, msg);
		break;
	case PVPROF_SB_MMAP:
		ret = add_mmap(s, msg);
		break;
	case PVPROF_SB_ELF_SYMS:
		ret = add_elf_syms(s, msg, len);
		break;
	case PVPROF_SB_EXIT:
		/* Callchains of the image may follow: its tables stay. */
		break;
	case PVPROF_SB_AGENT:
		add_agent(s, msg);
		break;
	}
	/* Even a message applied in part (-ENOMEM) may have changed a table. */
	switch (sb.type) {
	case PVPROF_SB_KERNEL:
	case PVPROF_SB_KSYMS:
	case PVPROF_SB_MODULE:
		s->kernel_gen++;
		break;
	case PVPROF_SB_PROCESS:
	case PVPROF_SB_MMAP:
	case PVPROF_SB_ELF_SYMS:
		s->user_gen++;
		break;
	}
	if (!ret)
		s->st.messages++;
	return ret;
}

/* @img's twin in the complete tables: the same image at the same range. */
static struct kimage *kimage_twin(struct pvprof_symbolizer *s, struct kimage *img)
{
	struct kimage *twin;

	if (!s->complete)
		return NULL;
	twin = img == &s->kernel ? &s->complete->kernel :
	       module_find(s->complete, img->name, false);
	return twin && twin->base == img->base && twin->end == img->end ? twin : NULL;
}

static void kimage_describe(const struct kimage *img, struct pvprof_sym *out)
{
	out->dso = img->dso;
	out->image_start = img->base;
	out->image_end = img->end;
	out->build_id = img->build_id_size ? img->build_id : NULL;
	out->build_id_size = img->build_id_size;
}

/*
 * A kernel frame in no text range the agent described: idle and .noinstr
 * code past _etext, .init text, or an address no symbol covers.  Once the
 * kernel's identity is known its offset from _stext still tells frames
 * apart and can be looked up in the guest's System.map; a bare "unknown"
 * would merge them all.  The offset wraps for an address below _stext:
 * the writers show it as negative.
 */
/* x86-64's kernel image mapping: modules are mapped above it. */
#define KERNEL_IMAGE_START	0xffffffff80000000ULL
#define KERNEL_IMAGE_END	0xffffffffc0000000ULL

static void kernel_outside(struct pvprof_symbolizer *s, uint64_t addr,
			   struct pvprof_sym *out)
{
	const struct kimage *k = &s->kernel;

	/* A module's address is no offset into the kernel image. */
	if (addr < KERNEL_IMAGE_START || addr >= KERNEL_IMAGE_END)
		return;

	/* Not yet in the stream: the recording's only kernel, if it had one. */
	if (!k->end && s->complete && s->complete->kernel.layouts == 1)
		k = &s->complete->kernel;
	if (!k->end)
		return;
	kimage_describe(k, out);
	out->offset = addr - k->base;
}

static void resolve_kernel(struct pvprof_symbolizer *s, uint64_t addr,
			   struct pvprof_sym *out)
{
	struct kimage *img = kimage_at(s, addr), *twin = NULL;
	const struct sym *sym;

	if (img) {
		twin = kimage_twin(s, img);
	} else if (s->complete) {
		twin = kimage_at(s->complete, addr);
		if (twin && twin->layouts != 1)
			twin = NULL;
	}
	if (twin)
		img = twin;
	if (!img) {
		kernel_outside(s, addr, out);
		return;
	}
	kimage_describe(img, out);
	out->offset = addr - img->base;
	sym = symtab_find(&img->syms, addr);
	/*
	 * A symbol extends to the next one, which may be in a message that was
	 * lost: while the table is short of what the KERNEL message announced,
	 * past the last symbol of a message is no one's.
	 */
	if (sym && sym->last_of_message && img->syms.n < img->nr_syms)
		sym = NULL;
	if (sym && sym->addr >= img->base) {
		out->symbol = sym->name;
		out->offset = addr - sym->addr;
	}
}

/* The mapping of @p that holds @addr, NULL when none does. */
static const struct mapping *mapping_at(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < p->maps[lo - 1].end ? &p->maps[lo - 1] : NULL;
}

static void resolve_user(struct pvprof_symbolizer *s, uint32_t pid,
			 uint32_t exec_gen, uint64_t addr, struct pvprof_sym *out)
{
	struct proc *p = proc_find(s, pid, exec_gen, false, NULL);
	const struct mapping *m = p ? mapping_at(p, addr) : NULL;
	const struct sym *sym;
	struct symtab *syms;
	uint64_t va;

	if (!m && s->complete) {
		p = proc_find(s->complete, pid, exec_gen, false, NULL);
		m = p ? mapping_at(p, addr) : NULL;
	}
	if (!m)
		return;
	out->dso = m->path ? m->path : "[unknown]";
	out->offset = addr - m->start + m->pgoff;
	out->image_start = m->start;
	out->image_end = m->end;
	out->image_pgoff = m->pgoff;
	if (!m->elf)
		return;
	out->build_id = m->elf->id;
	out->build_id_size = m->elf->id_size;
	va = addr - m->start + m->vaddr;
	syms = elf_syms(s, m->elf);
	sym = symtab_find(syms, va);
	if (sym && (!sym->size || va - sym->addr < sym->size)) {
		out->symbol = sym->name;
		out->offset = va - sym->addr;
	}
}

/**
 * pvprof_symbolizer_resolve() - name one callchain address
 * @s: the symbolizer
 * @kernel_frame: the address is one of the callchain's kernel frames
 * @pid: the callchain's pid (ignored for kernel frames)
 * @exec_gen: the callchain's exec_gen (ignored for kernel frames)
 * @addr: the address
 * @out: the answer (see struct pvprof_sym)
 */
void pvprof_symbolizer_resolve(struct pvprof_symbolizer *s, bool kernel_frame,
			       uint32_t pid, uint32_t exec_gen, uint64_t addr,
			       struct pvprof_sym *out)
{
	*out = (struct pvprof_sym){ .offset = addr };
	if (kernel_frame)
		resolve_kernel(s, addr, out);
	else
		resolve_user(s, pid, exec_gen, addr, out);
}

/**
 * pvprof_symbolizer_image() - the mappings of a process image, for unwinding
 * @s: the symbolizer
 * @pid: the image's pid
 * @exec_gen: its exec generation
 * @gen: receives a number that changes whenever the image's mappings change
 * @nr_maps: receives the number of mappings
 *
 * The mappings known at this point of the stream, or, for an image that
 * has none yet, the whole recording's (as pvprof_symbolizer_resolve()
 * names them).
 *
 * Return: an opaque pointer that identifies the image for the life of @s
 * (pass it to pvprof_symbolizer_image_map()), NULL for an unknown image.
 */
const void *pvprof_symbolizer_image(struct pvprof_symbolizer *s, uint32_t pid,
				    uint32_t exec_gen, uint64_t *gen, size_t *nr_maps)
{
	struct proc *p = proc_find(s, pid, exec_gen, false, NULL);

	if ((!p || !p->nr_maps) && s->complete)
		p = proc_find(s->complete, pid, exec_gen, false, NULL);
	if (!p)
		return NULL;
	*gen = p->maps_gen;
	*nr_maps = p->nr_maps;
	return p;
}

/**
 * pvprof_symbolizer_image_map() - one mapping of an image, in address order
 * @image: from pvprof_symbolizer_image()
 * @i: its index, below the @nr_maps returned with @image
 * @out: filled; its pointers stay valid for the life of the symbolizer
 */
void pvprof_symbolizer_image_map(const void *image, size_t i, struct pvprof_sym_map *out)
{
	const struct mapping *m = &((const struct proc *)image)->maps[i];

	out->start = m->start;
	out->end = m->end;
	out->vaddr = m->vaddr;
	out->build_id = m->elf ? m->elf->id : NULL;
	out->build_id_size = m->elf ? m->elf->id_size : 0;
	out->path = m->path;
}

/**
 * pvprof_symbolizer_user_code() - is a user address in the image's code
 * @s: the symbolizer
 * @pid: the image's pid
 * @exec_gen: its exec generation
 * @addr: a return address of the image's frame-pointer chain
 *
 * The agent describes every executable mapping (PVPROF_SB_MMAP), so a
 * return address in none of them is not one: the guest's frame-pointer
 * walk went through code without frame pointers and read data.  The
 * mappings known at this point of the stream count, and so do the whole
 * recording's (a sample may come before its mappings were sent).  @addr
 * - 1 counts too: a call that is the last instruction of a mapping
 * returns to the address after it.
 *
 * Return: 1 when @addr is in one of the image's executable mappings, 0
 * when it is in none, -1 when no mapping of the image is known (nothing
 * can be judged).
 */
int pvprof_symbolizer_user_code(struct pvprof_symbolizer *s, uint32_t pid,
				uint32_t exec_gen, uint64_t addr)
{
	struct proc *p = proc_find(s, pid, exec_gen, false, NULL);
	struct proc *c = s->complete ?
			 proc_find(s->complete, pid, exec_gen, false, NULL) : NULL;
	int i;

	if ((!p || !p->nr_maps) && (!c || !c->nr_maps))
		return -1;
	for (i = 0; i < 2; i++) {
		uint64_t a = addr - (uint64_t)i;

		if ((p && mapping_at(p, a)) || (c && mapping_at(c, a)))
			return 1;
	}
	return 0;
}

/**
 * pvprof_symbolizer_comm() - the command name of a process image
 * @s: the symbolizer
 * @pid: its pid
 * @exec_gen: its exec generation
 *
 * Return: the name (at most 16 bytes), NULL when unknown or empty.
 */
const char *pvprof_symbolizer_comm(struct pvprof_symbolizer *s, uint32_t pid,
				   uint32_t exec_gen)
{
	struct proc *p = proc_find(s, pid, exec_gen, false, NULL);

	if (!p && s->complete)
		p = proc_find(s->complete, pid, exec_gen, false, NULL);
	return p && p->comm[0] ? p->comm : NULL;
}

/**
 * pvprof_symbolizer_generation() - when answers may have changed
 * @s: the symbolizer
 * @kernel: for kernel frames (else for user frames, pvprof_symbolizer_user_code(),
 *	pvprof_symbolizer_image() and pvprof_symbolizer_comm())
 *
 * pvprof_symbolizer_resolve() is a function of the address (for a user
 * frame, and of the pid and exec_gen) and of the tables taken in so far:
 * the number returned changes whenever a message (KERNEL, KSYMS and MODULE
 * for kernel frames; PROCESS, MMAP and ELF_SYMS for user frames), taken in
 * by @s or by its complete tables, or pvprof_symbolizer_complete() may
 * have changed what a frame of that kind resolves to, and only then.
 * While it stays the same, an answer may be kept instead of asked again,
 * and the strings and build-id it points to stay as they were.  EXIT and
 * AGENT messages, and messages rejected, change no answer.
 *
 * Return: the generation, a number that only grows.
 */
uint64_t pvprof_symbolizer_generation(const struct pvprof_symbolizer *s, bool kernel)
{
	uint64_t gen = kernel ? s->kernel_gen : s->user_gen;

	return s->complete ? gen + pvprof_symbolizer_generation(s->complete, kernel) : gen;
}

/**
 * pvprof_symbolizer_stats() - what the symbolizer has taken in so far
 * @s: the symbolizer
 * @st: filled in
 */
void pvprof_symbolizer_stats(const struct pvprof_symbolizer *s,
			     struct pvprof_symbolizer_stats *st)
{
	size_t i;

	*st = s->st;
	st->agent_lost_messages = 0;
	st->agent_lost_bytes = 0;
	for (i = 0; i < s->nr_agents; i++) {
		st->agent_lost_messages += s->agents[i].lost_messages;
		st->agent_lost_bytes += s->agents[i].lost_bytes;
	}
}
