/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report --callgraph, -g caller|callee: the call tree as text,
 * branches below --percent-limit left out (report_callgraph.c).
 */
#ifndef KVM_PVPROF_REPORT_CALLGRAPH_H
#define KVM_PVPROF_REPORT_CALLGRAPH_H

#include <stdbool.h>
#include <stdio.h>

/* Branches below this share are left out unless --percent-limit says. */
#define CALLGRAPH_DEFAULT_PERCENT	0.5

/**
 * struct callgraph_options - how the call tree is printed
 * @callee: callee order (perf's -g callee): each command's sampled
 *	functions first, their callers below them; else caller order, the
 *	outermost frame first
 * @min_percent: subtrees with fewer samples than this share of the
 *	samples shown are left out (and counted)
 */
struct callgraph_options {
	bool callee;
	double min_percent;
};

struct profile;

int report_write_callgraph(FILE *f, const struct profile *p,
			   const struct callgraph_options *o);

#endif /* KVM_PVPROF_REPORT_CALLGRAPH_H */
