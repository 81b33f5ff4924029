// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report: the profile of a recording (doc/kvm-pvprof-report.8).
 *
 * One walk over the stream feeds sideband messages to the resolver in
 * stream order, symbolizes every frame of the samples that pass the
 * filters, and builds a call tree (root, command, outermost frame ...
 * innermost frame) and a function table; the views that need each sample
 * (the top table, the per-vCPU table, pprof) see it through a sink in the
 * same walk.  A callchain's frames are kernel frames first, innermost first,
 * then user frames innermost first (spec pvprof-callchain-layout): the tree
 * puts user code nearer the root and the kernel path above it.  What a
 * frame resolved to and its function are kept (report_cache.c) while the
 * resolver's tables stay as they were: a frame seen before is one lookup.
 *
 * A callchain entry is 1 + own_nmi_samples samples, in at most two parts
 * (report_sample_parts()): each part is counted here, once, with its
 * weight, and the samples taken inside pvprof's own NMI path get the frame
 * REPORT_OWN_NMI_FRAME above the callchain's, here too, so that every
 * writer shows what the tree, the function table and the sinks hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "intern.h"
#include "main.h"
#include "profile.h"
#include "recording.h"
#include "report_cache.h"
#include "report_escape.h"
#include "report_resolve.h"
#include "report_select.h"
#include "report_unwind.h"

#define LABEL_SIZE		(REPORT_NAME_MAX + 32)

static int node_child(struct profile *p, uint32_t parent, const char *name,
		      uint32_t kind, uint32_t *out)
{
	struct profile_node *n;
	uint32_t i;

	for (i = p->nodes[parent].child; i; i = p->nodes[i].sibling) {
		if (p->nodes[i].name == name && p->nodes[i].kind == kind) {
			*out = i;
			return 0;
		}
	}
	if (p->nr_nodes == p->cap_nodes) {
		uint32_t cap = p->cap_nodes * 2;

		n = realloc(p->nodes, cap * sizeof(*n));
		if (!n)
			return -1;
		p->nodes = n;
		p->cap_nodes = cap;
	}
	i = p->nr_nodes++;
	n = &p->nodes[i];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->kind = kind;
	n->sibling = p->nodes[parent].child;
	p->nodes[parent].child = i;
	*out = i;
	return 0;
}

static uint64_t func_hash(const char *name, uint32_t kind, const char *dso)
{
	uint64_t h = HASH_INIT;

	h = hash_bytes(&name, sizeof(name), h);
	h = hash_bytes(&kind, sizeof(kind), h);
	return hash_bytes(&dso, sizeof(dso), h);
}

static int func_index_grow(struct profile *p)
{
	uint32_t size = p->func_index_size ? p->func_index_size * 2 : 1024, i;
	uint32_t *index = calloc(size, sizeof(*index));

	if (!index)
		return -1;
	for (i = 0; i < p->nr_funcs; i++) {
		const struct profile_func *fn = &p->funcs[i];
		uint64_t h = func_hash(fn->name, fn->kind, fn->dso);

		while (index[h & (size - 1)])
			h++;
		index[h & (size - 1)] = i + 1;
	}
	free(p->func_index);
	p->func_index = index;
	p->func_index_size = size;
	return 0;
}

static struct profile_func *func_get(struct profile *p, const char *name,
				     uint32_t kind, const char *dso)
{
	struct profile_func *fn;
	uint64_t h;

	if ((p->nr_funcs + 1) * 2 > p->func_index_size && func_index_grow(p))
		return NULL;
	for (h = func_hash(name, kind, dso);; h++) {
		uint32_t *slot = &p->func_index[h & (p->func_index_size - 1)];

		if (!*slot)
			break;
		fn = &p->funcs[*slot - 1];
		if (fn->name == name && fn->kind == kind && fn->dso == dso)
			return fn;
	}
	if (p->nr_funcs == p->cap_funcs) {
		uint32_t cap = p->cap_funcs ? p->cap_funcs * 2 : 256;

		fn = realloc(p->funcs, cap * sizeof(*fn));
		if (!fn)
			return NULL;
		p->funcs = fn;
		p->cap_funcs = cap;
	}
	fn = &p->funcs[p->nr_funcs++];
	memset(fn, 0, sizeof(*fn));
	fn->name = name;
	fn->kind = kind;
	fn->dso = dso;
	p->func_index[h & (p->func_index_size - 1)] = p->nr_funcs;
	return fn;
}

/**
 * frame_label() - how a frame is named in every output but perf script
 * @sym: what the resolver knows
 * @addr: the frame's address
 * @buf: room for the label
 * @size: its size, at least LABEL_SIZE
 *
 * Return: the symbol, else "DSO+0xOFFSET" ("DSO-0xOFFSET" for an offset
 * with the top bit set: a kernel frame below _stext), else "0xADDRESS";
 * unescaped.
 */
const char *frame_label(const struct pvprof_sym *sym, uint64_t addr, char *buf,
			size_t size)
{
	if (sym->symbol)
		return sym->symbol;
	if (sym->dso && (int64_t)sym->offset < 0)	/* below the kernel's _stext */
		snprintf(buf, size, "%.*s-0x%" PRIx64, REPORT_NAME_MAX, sym->dso,
			 -sym->offset);
	else if (sym->dso)
		snprintf(buf, size, "%.*s+0x%" PRIx64, REPORT_NAME_MAX, sym->dso,
			 sym->offset);
	else
		snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

struct build_ctx {
	struct profile *p;
	const struct report_filter *f;
	const struct report_resolver *res;
	struct report_cache *cache;	/* the frames resolved, with their functions */
	const struct profile_sink *sink;
	int error;
	struct report_frames frames;	/* the entry being added */
	struct profile_frame counted[PROFILE_MAX_FRAMES];	/* a part's frames for @sink */
	const char *own_nmi_name;	/* REPORT_OWN_NMI_FRAME and its DSO, interned */
	const char *own_nmi_dso;
};

/* A function in @weight more samples, innermost in them when @self. */
static void func_count(struct profile *p, struct profile_func *fn, uint64_t weight, bool self)
{
	/* stats.samples grew by @weight for this part: it tells the parts apart. */
	if (fn->last_sample != p->stats.samples) {
		fn->last_sample = p->stats.samples;
		fn->total += weight;
	}
	if (self)
		fn->self += weight;
}

/* The frame REPORT_OWN_NMI_FRAME: its function, counted above @node. */
static int add_own_nmi_frame(struct build_ctx *c, uint64_t weight, uint32_t *node)
{
	struct profile *p = c->p;
	struct profile_func *fn;

	if (!c->own_nmi_name) {
		c->own_nmi_name = intern(p->strings, REPORT_OWN_NMI_FRAME);
		c->own_nmi_dso = intern(p->strings, REPORT_OWN_NMI_DSO);
		if (!c->own_nmi_name || !c->own_nmi_dso)
			return -1;
	}
	if (node_child(p, *node, c->own_nmi_name, PROFILE_KIND_KERNEL, node))
		return -1;
	p->nodes[*node].total += weight;
	fn = func_get(p, c->own_nmi_name, PROFILE_KIND_KERNEL, c->own_nmi_dso);
	if (!fn)
		return -1;
	func_count(p, fn, weight, true);
	c->counted[0] = (struct profile_frame){ .func = (uint32_t)(fn - p->funcs) };
	return 0;
}

/* The function of a frame that resolved to @sym: its label and DSO interned. */
static struct profile_func *frame_func(struct profile *p, const struct pvprof_sym *sym,
				       uint64_t addr, uint32_t kind)
{
	char label_buf[LABEL_SIZE];
	const char *name, *dso;

	name = intern(p->strings, frame_label(sym, addr, label_buf, sizeof(label_buf)));
	dso = sym->dso ? intern(p->strings, sym->dso) : NULL;
	if (!name || (sym->dso && !dso))
		return NULL;
	return func_get(p, name, kind, dso);
}

/*
 * One part of an entry (report_sample_parts()): @weight samples with the
 * frames [@first, @end) of c->frames, and REPORT_OWN_NMI_FRAME above them
 * when @leaf.
 */
static int add_part(struct build_ctx *c, const struct pvprof_st_view *v, const char *comm,
		    uint64_t weight, uint32_t first, uint32_t end, bool leaf)
{
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	struct profile *p = c->p;
	uint32_t node, i;

	p->stats.samples += weight;
	p->stats.own_nmi += leaf ? weight : 0;
	p->stats.cut_samples += c->frames.cut ? weight : 0;
	p->stats.cut_frames += c->frames.cut * weight;
	if (node_child(p, 0, comm, PROFILE_KIND_COMM, &node))
		return -1;
	p->nodes[0].total += weight;
	p->nodes[node].total += weight;
	/* Outermost first: user frames from the last, then kernel frames. */
	for (i = end; i-- > first;) {
		bool kernel = i < c->frames.nr_kernel;
		uint32_t kind = kernel ? PROFILE_KIND_KERNEL : PROFILE_KIND_USER;
		struct profile_frame *out = &c->counted[leaf + i - first];
		struct report_frame_info *info;
		const struct pvprof_sym *sym;
		struct profile_func *fn;

		/* A frame seen before, in this generation, is one lookup. */
		info = report_cache_frame(c->cache, &c->frames, i, chain->pid, chain->exec_gen);
		sym = &info->sym;
		p->stats.frames += weight;
		p->stats.unsymbolized += sym->symbol ? 0 : weight;
		if (!info->tag) {
			fn = frame_func(p, sym, c->frames.addr[i], kind);
			if (!fn)
				return -1;
			info->tag = (uint32_t)(fn - p->funcs) + 1;
		}
		fn = &p->funcs[info->tag - 1];
		if (node_child(p, node, fn->name, kind, &node))
			return -1;
		p->nodes[node].total += weight;
		func_count(p, fn, weight, i == first && !leaf);
		*out = (struct profile_frame){
			.addr = c->frames.addr[i],
			.func = info->tag - 1,
			.image_start = sym->image_start,
			.image_end = sym->image_end,
			.image_pgoff = sym->image_pgoff,
			.build_id_size = (uint8_t)sym->build_id_size,
		};
		if (sym->build_id_size)
			memcpy(out->build_id, sym->build_id, sym->build_id_size);
	}
	if (leaf && add_own_nmi_frame(c, weight, &node))
		return -1;
	p->nodes[node].self += weight;
	if (c->sink)
		return c->sink->sample(c->sink->ctx, p, &(struct profile_sample){
			.v = v, .comm = comm, .frames = c->counted, .nr = end - first + leaf,
			.weight = weight });
	return 0;
}

static int add_sample(struct build_ctx *c, const struct pvprof_st_view *v)
{
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	struct report_part parts[REPORT_MAX_PARTS];
	uint32_t nr_parts, first, end, k;
	const char *comm, *name = NULL;
	char comm_buf[16];
	bool leaf;

	comm = sample_comm(c->res, chain->pid, chain->exec_gen, comm_buf, sizeof(comm_buf));
	if (!report_sample_selected(c->f, v, comm))
		return 0;
	if (report_sample_frames(c->res, c->cache, v, &c->frames))
		return -1;
	nr_parts = report_sample_parts(v, parts);
	for (k = 0; k < nr_parts; k++) {
		if (!report_part_shown(&parts[k], &c->frames, c->f->flags, &first, &end, &leaf))
			continue;
		if (!name)
			name = intern(c->p->strings, comm);
		if (!name || add_part(c, v, name, parts[k].weight, first, end, leaf))
			return -1;
	}
	return 0;
}

/* Two names of a resolver's answers: the same string, or both unknown. */
static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Whether a skewed callchain stayed in the sampled function: its
 * interrupted IP (the guest's first frame) and the IP the host read at the
 * sample (notice_ip: a kernel address at CPL 0, a user address of the
 * sample's process at CPL 3) resolve to one symbol, of one DSO and at one
 * start.  An address without a symbol is in no function; a callchain
 * without frames, or taken in another mode than the sample, moved on.
 */
static bool skew_same_function(struct build_ctx *c, const struct pvprof_st_view *v)
{
	const struct pvprof_st_callchain *cc = &v->u.callchain;
	const struct pvprof_callchain *chain = &cc->chain;
	bool kernel = chain->nr_kernel != 0;
	uint64_t ip = v->nr_frames ? pvprof_st_frame(v, 0) : 0;
	const struct pvprof_sym *at;
	struct pvprof_sym first;

	if (!v->nr_frames || cc->notice_cpl != (kernel ? 0 : 3))
		return false;
	/* A copy: the next lookup may move the cache's entries. */
	first = report_cache_addr(c->cache, kernel, chain->pid, chain->exec_gen, ip)->sym;
	if (!first.symbol)
		return false;
	at = &report_cache_addr(c->cache, kernel, chain->pid, chain->exec_gen,
				cc->notice_ip)->sym;
	return at->symbol && ip - first.offset == cc->notice_ip - at->offset &&
	       same_name(first.symbol, at->symbol) && same_name(first.dso, at->dso);
}

static int build_entry(void *opaque, const struct pvprof_st_view *v, uint64_t off)
{
	struct build_ctx *c = opaque;
	struct report_stats *s = &c->p->stats;
	uint32_t flags, own_nmi;

	(void)off;
	s->entries++;
	switch (v->hdr.type) {
	case PVPROF_ST_HELLO:
		s->nr_vcpus = v->u.hello.nr_vcpus;
		return 0;
	case PVPROF_ST_LOSS:
		s->losses[v->u.loss.reason] += v->u.loss.count;
		return 0;
	case PVPROF_ST_VCPU:
		s->vcpu_events[v->u.vcpu.event]++;
		return 0;
	case PVPROF_ST_SIDEBAND:
		s->sideband++;
		s->sideband_bytes += v->sb_len;
		if (c->res && c->res->sideband) {
			int ret = c->res->sideband(c->res->ctx, v->sb_msg, v->sb_len);

			if (ret == -ENOMEM) {
				c->error = ENOMEM;
				return -1;
			}
			s->sideband_rejected += ret < 0;
		}
		return 0;
	case PVPROF_ST_CALLCHAIN:
		break;
	default:
		s->unknown++;
		return 0;
	}
	flags = v->u.callchain.chain.flags;
	own_nmi = v->u.callchain.sample_flags & PVPROF_ST_SAMPLE_F_OWN_NMI;
	s->callchains++;
	s->own_nmi_recorded += !!own_nmi + (uint64_t)v->u.callchain.own_nmi_samples;
	s->user_mode += !!(flags & PVPROF_CHAIN_F_USER);
	s->stale += !!(flags & PVPROF_CHAIN_F_STALE);
	/*
	 * The guest compares the IP it finds with the sample's; for a sample
	 * in pvprof's own NMI path the two differ by construction.
	 */
	if ((flags & PVPROF_CHAIN_F_SKEWED) && !own_nmi) {
		s->skewed++;
		s->skewed_same_function += skew_same_function(c, v);
	}
	s->truncated += !!(flags & PVPROF_CHAIN_F_TRUNCATED);
	/*
	 * The guest flags both a chain that reached the depth limit and one
	 * whose walk stopped at a frame it could not follow.  The recording
	 * does not keep the max_depth the VM was enabled with (record enables
	 * with the maximum), so a full callchain is one of PVPROF_MAX_DEPTH
	 * frames.
	 */
	if ((flags & PVPROF_CHAIN_F_TRUNCATED) &&
	    (uint32_t)v->u.callchain.chain.nr_kernel + v->u.callchain.chain.nr_user >=
	    PVPROF_MAX_DEPTH)
		s->trunc_depth++;
	if ((flags & PVPROF_CHAIN_F_TRUNCATED) && v->ustack_data)
		s->trunc_snapshot++;
	s->empty += !v->nr_frames;
	if (!s->first_ns)
		s->first_ns = v->hdr.host_time_ns;
	s->last_ns = v->hdr.host_time_ns;
	if (add_sample(c, v)) {
		c->error = ENOMEM;
		return -1;
	}
	return 0;
}

/* qsort_r() comparators: the indices sorted, the array they index as @arg. */
static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct profile_node *nodes = arg;
	const struct profile_node *x = &nodes[*(const uint32_t *)a];
	const struct profile_node *y = &nodes[*(const uint32_t *)b];
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Children in name order, so that every writer's output is deterministic. */
static int sort_children(struct profile *p)
{
	uint32_t *tmp = malloc(p->nr_nodes * sizeof(*tmp));
	uint32_t n, i, k;

	if (!tmp)
		return -1;
	for (n = 0; n < p->nr_nodes; n++) {
		k = 0;
		for (i = p->nodes[n].child; i; i = p->nodes[i].sibling)
			tmp[k++] = i;
		if (k < 2)
			continue;
		qsort_r(tmp, k, sizeof(*tmp), node_cmp, p->nodes);
		p->nodes[n].child = tmp[0];
		for (i = 0; i + 1 < k; i++)
			p->nodes[tmp[i]].sibling = tmp[i + 1];
		p->nodes[tmp[k - 1]].sibling = 0;
	}
	free(tmp);
	return 0;
}

/**
 * profile_build() - the profile of a recording
 * @p: filled; free with profile_free() whatever the result
 * @r: a parsed recording
 * @f: the filters
 * @res: the resolver, or NULL for raw addresses
 *
 * Return: 0, or -1 out of memory (printed).
 */
int profile_build(struct profile *p, const struct recording *r,
		  const struct report_filter *f, const struct report_resolver *res)
{
	return profile_build_sink(p, r, f, res, NULL);
}

/**
 * profile_build_sink() - profile_build() that also hands each sample to a sink
 * @p: as for profile_build()
 * @r: the same
 * @f: the same
 * @res: the same
 * @sink: sees each sample counted, or NULL
 *
 * Return: 0, or -1 out of memory (printed).
 */
int profile_build_sink(struct profile *p, const struct recording *r,
		       const struct report_filter *f, const struct report_resolver *res,
		       const struct profile_sink *sink)
{
	struct build_ctx c = { .p = p, .f = f, .res = res, .sink = sink };
	int ret;

	memset(p, 0, sizeof(*p));
	p->strings = intern_new();
	p->nodes = calloc(1024, sizeof(*p->nodes));
	c.cache = report_cache_new(res);
	if (!p->strings || !p->nodes || !c.cache)
		goto oom;
	p->cap_nodes = 1024;
	p->nr_nodes = 1;
	p->nodes[0].name = "all";
	ret = recording_for_each(r, build_entry, &c);
	report_cache_free(c.cache);
	c.cache = NULL;
	/* A read error is printed by recording_for_each(). */
	if (ret && !c.error)
		return -1;
	if (c.error || sort_children(p))
		goto oom;
	return 0;
oom:
	report_cache_free(c.cache);
	p_err("out of memory building the profile");
	return -1;
}

/**
 * profile_walk() - visit every node of the call tree below the root
 * @p: a built profile
 * @visit: called on each node with the path to it
 * @ctx: passed to @visit
 *
 * Depth first, a node before its children, children in the tree's order
 * (name order once built): a node's stack (the path to it, its @self
 * samples) comes in the same order as in --folded.  The tree is never
 * deeper than PROFILE_MAX_PATH below the root; a deeper node would not be
 * visited.
 * Return: 0, or the first nonzero value @visit returned.
 */
int profile_walk(const struct profile *p, profile_visit_fn visit, void *ctx)
{
	/* next[d]: the node to visit next at path[d], 0 when none is left. */
	uint32_t path[PROFILE_MAX_PATH], next[PROFILE_MAX_PATH];
	int depth = 0, ret;

	next[0] = p->nodes[0].child;
	while (depth >= 0) {
		uint32_t n = next[depth];

		if (!n) {
			depth--;
			continue;
		}
		next[depth] = p->nodes[n].sibling;
		path[depth] = n;
		ret = visit(ctx, p, path, (uint32_t)depth + 1);
		if (ret)
			return ret;
		if (depth + 1 < PROFILE_MAX_PATH)
			next[++depth] = p->nodes[n].child;
	}
	return 0;
}

/**
 * profile_free() - release a profile
 * @p: the profile
 */
void profile_free(struct profile *p)
{
	intern_free(p->strings);
	free(p->nodes);
	free(p->funcs);
	free(p->func_index);
	memset(p, 0, sizeof(*p));
}
