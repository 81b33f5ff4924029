// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report --callgraph: the call tree as text, in either of
 * perf's orders (-g caller, -g callee).
 *
 * The profile's tree is in caller order: root, command, outermost frame
 * ... innermost frame.  Callee order is the same stacks reversed below the
 * command: root, command, innermost frame, its caller ... outermost frame,
 * built here from the profile's tree (each stack with its count), so that
 * both orders count the very same stacks.  In both, a line's Total is the
 * samples whose stack begins with the path to it, its Self the samples
 * whose stack is that path exactly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main.h"
#include "profile.h"
#include "report_callgraph.h"
#include "report_escape.h"

struct cg_tree {
	struct profile_node *nodes;
	uint32_t nr, cap;
};

/* The child of @parent named like @like, added when missing. */
static int cg_child(struct cg_tree *t, uint32_t parent, const struct profile_node *like,
		    uint32_t *out)
{
	struct profile_node *n;
	uint32_t i;

	for (i = t->nodes[parent].child; i; i = t->nodes[i].sibling) {
		if (t->nodes[i].name == like->name && t->nodes[i].kind == like->kind) {
			*out = i;
			return 0;
		}
	}
	if (t->nr == t->cap) {
		uint32_t cap = t->cap * 2;

		n = realloc(t->nodes, cap * sizeof(*n));
		if (!n)
			return -1;
		t->nodes = n;
		t->cap = cap;
	}
	i = t->nr++;
	t->nodes[i] = (struct profile_node){
		.name = like->name,
		.kind = like->kind,
		.sibling = t->nodes[parent].child,
	};
	t->nodes[parent].child = i;
	*out = i;
	return 0;
}

/* Adds a stack of @count samples: @path[0] the command, then callees first. */
static int cg_add(struct cg_tree *t, const struct profile_node *nodes, const uint32_t *path,
		  uint32_t depth, uint64_t count)
{
	uint32_t n = 0, i;

	t->nodes[0].total += count;
	for (i = 0; i < depth; i++) {
		if (cg_child(t, n, &nodes[path[i]], &n))
			return -1;
		t->nodes[n].total += count;
	}
	t->nodes[n].self += count;
	return 0;
}

/* A node's stack, if it ends one, reversed below the command into @ctx. */
static int callee_stack(void *ctx, const struct profile *p, const uint32_t *path, uint32_t len)
{
	uint32_t rev[PROFILE_MAX_PATH], i;
	uint64_t self = p->nodes[path[len - 1]].self;

	if (!self)
		return 0;
	rev[0] = path[0];
	for (i = 1; i < len; i++)
		rev[i] = path[len - i];
	return cg_add(ctx, p->nodes, rev, len, self);
}

/* The profile's stacks, reversed below the command, into @t. */
static int callee_tree(const struct profile *p, struct cg_tree *t)
{
	t->cap = 1024;
	t->nr = 1;
	t->nodes = calloc(t->cap, sizeof(*t->nodes));
	if (!t->nodes)
		return -1;
	t->nodes[0].name = p->nodes[0].name;
	t->nodes[0].kind = p->nodes[0].kind;
	return profile_walk(p, callee_stack, t);
}

struct callgraph_walk {
	FILE *f;
	const struct profile_node *nodes;
	uint64_t samples;
	double min_percent;
	uint64_t hidden;
};

/* Children by samples, then by name and kind: the output is deterministic. */
static int cg_cmp(const void *a, const void *b, void *arg)
{
	const struct profile_node *nodes = arg;
	const struct profile_node *x = &nodes[*(const uint32_t *)a];
	const struct profile_node *y = &nodes[*(const uint32_t *)b];
	int r;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	r = strcmp(x->name, y->name);
	if (r)
		return r;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static bool below_limit(uint64_t count, uint64_t samples, double min_percent)
{
	return (double)count * 100.0 < min_percent * (double)samples;
}

static int callgraph_node(struct callgraph_walk *w, uint32_t n, unsigned int depth)
{
	const struct profile_node *nodes = w->nodes;
	char esc[REPORT_ESC_SIZE];
	uint32_t *kids, nr = 0, i;

	fprintf(w->f, "%8.2f%% %7.2f%%  %*s%s%s\n", share(nodes[n].total, w->samples),
		share(nodes[n].self, w->samples), (int)(2 * depth), "",
		esc_text(nodes[n].name, esc),
		nodes[n].kind == PROFILE_KIND_KERNEL ? " [k]" :
		nodes[n].kind == PROFILE_KIND_USER ? " [u]" : "");
	for (i = nodes[n].child; i; i = nodes[i].sibling)
		nr++;
	if (!nr)
		return 0;
	kids = malloc(nr * sizeof(*kids));
	if (!kids)
		return -1;
	nr = 0;
	for (i = nodes[n].child; i; i = nodes[i].sibling)
		kids[nr++] = i;
	qsort_r(kids, nr, sizeof(*kids), cg_cmp, (void *)nodes);
	for (i = 0; i < nr; i++) {
		if (below_limit(nodes[kids[i]].total, w->samples, w->min_percent)) {
			w->hidden++;
			continue;
		}
		if (callgraph_node(w, kids[i], depth + 1)) {
			free(kids);
			return -1;
		}
	}
	free(kids);
	return 0;
}

/**
 * report_write_callgraph() - the call tree
 * @f: output
 * @p: the profile
 * @o: the order and the share below which subtrees are left out (and
 *	counted); NULL for caller order and CALLGRAPH_DEFAULT_PERCENT
 *
 * Children are ordered by samples.
 * Return: 0, or -1 on an output error or out of memory.
 */
int report_write_callgraph(FILE *f, const struct profile *p,
			   const struct callgraph_options *o)
{
	static const struct callgraph_options defaults = {
		.min_percent = CALLGRAPH_DEFAULT_PERCENT,
	};
	struct callgraph_walk w = { .f = f, .nodes = p->nodes, .samples = p->stats.samples };
	struct cg_tree callee = { 0 };
	int ret = -1;

	if (!o)
		o = &defaults;
	w.min_percent = o->min_percent;
	if (o->callee) {
		if (callee_tree(p, &callee))
			goto oom;
		w.nodes = callee.nodes;
	}
	fprintf(f, "#\n# call graph: command, then %s; [k] kernel, [u] user\n#\n",
		o->callee ? "callees above their callers" : "callers above callees");
	fprintf(f, "#  Total%%   Self%%  Function\n");
	if (callgraph_node(&w, 0, 0))
		goto oom;
	if (w.hidden)
		fprintf(f, "# %" PRIu64 " subtrees below %g%% not shown\n", w.hidden,
			o->min_percent);
	ret = ferror(f) ? -1 : 0;
	goto out;
oom:
	p_err("out of memory writing the call graph");
out:
	free(callee.nodes);
	return ret;
}
