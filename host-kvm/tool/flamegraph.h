/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report's interactive SVG flame graph (flamegraph.c, its
 * script flamegraph.js).
 */
#ifndef KVM_PVPROF_FLAMEGRAPH_H
#define KVM_PVPROF_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdio.h>

/* Narrower, the title and the controls run into each other. */
#define FLAMEGRAPH_WIDTH_MIN		300
#define FLAMEGRAPH_WIDTH_MAX		100000
#define FLAMEGRAPH_WIDTH_DEFAULT	1200

/**
 * struct flamegraph_options - how the flame graph is drawn
 * @title: the whole title (escaped when written); NULL for "pvprof flame
 *	graph: @source" ("icicle graph" when @inverted)
 * @source: the recording's name, for the default title
 * @width: in pixels, FLAMEGRAPH_WIDTH_MIN to _MAX; 0 for the default
 * @inverted: an icicle graph: the root at the top, callees below
 */
struct flamegraph_options {
	const char *title;
	const char *source;
	unsigned int width;
	bool inverted;
};

struct profile;

int flamegraph_write(FILE *f, const struct profile *p, const struct flamegraph_options *o);
int report_write_flamegraph(FILE *f, const struct profile *p, const char *source);

/* The script every flame graph carries, byte for byte (flamegraph.js). */
extern const char flamegraph_script[];

#endif /* KVM_PVPROF_FLAMEGRAPH_H */
