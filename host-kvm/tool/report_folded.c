// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report --folded: the call tree as FlameGraph's folded stacks.
 */
#include <inttypes.h>
#include <stdio.h>

#include "profile.h"
#include "report_escape.h"
#include "report_folded.h"

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
	/* Depth: root, command, PVPROF_MAX_DEPTH frames. */
	uint32_t path[PVPROF_MAX_DEPTH + 2], next[PVPROF_MAX_DEPTH + 2];
	char esc[REPORT_ESC_SIZE];
	int depth = 0, i;

	path[0] = 0;
	next[0] = p->nodes[0].child;
	while (depth >= 0) {
		uint32_t n = next[depth];

		if (!n) {
			depth--;
			continue;
		}
		next[depth] = p->nodes[n].sibling;
		path[++depth] = n;
		next[depth] = p->nodes[n].child;
		if (!p->nodes[n].self)
			continue;
		for (i = 1; i <= depth; i++)
			fprintf(f, "%s%s", i > 1 ? ";" : "", esc_folded(p->nodes[path[i]].name, esc));
		fprintf(f, " %" PRIu64 "\n", p->nodes[n].self);
	}
	return ferror(f) ? -1 : 0;
}
