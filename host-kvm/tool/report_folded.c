// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report --folded: the call tree as FlameGraph's folded stacks.
 */
#include <inttypes.h>
#include <stdio.h>

#include "profile.h"
#include "report_escape.h"
#include "report_folded.h"

/* One line for each node that ends a stack: the path to it and its count. */
static int folded_stack(void *ctx, const struct profile *p, const uint32_t *path, uint32_t len)
{
	const struct profile_node *n = &p->nodes[path[len - 1]];
	char esc[REPORT_ESC_SIZE];
	FILE *f = ctx;
	uint32_t i;

	if (!n->self)
		return 0;
	for (i = 0; i < len; i++)
		fprintf(f, "%s%s", i ? ";" : "", esc_folded(p->nodes[path[i]].name, esc));
	fprintf(f, " %" PRIu64 "\n", n->self);
	return 0;
}

/**
 * report_write_folded() - FlameGraph's folded stacks
 * @f: output
 * @p: the profile
 *
 * One line per distinct stack: "comm;outer;...;inner COUNT", frames escaped
 * so that none holds ';' or a line break, stacks in name order.
 * Return: 0, or -1 on an output error or out of memory.
 */
int report_write_folded(FILE *f, const struct profile *p)
{
	profile_walk(p, folded_stack, f);
	return ferror(f) ? -1 : 0;
}
