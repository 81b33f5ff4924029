/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report -j (report_json.c).
 */
#ifndef KVM_PVPROF_REPORT_JSON_H
#define KVM_PVPROF_REPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

struct pvprof_symbolizer;

/**
 * struct report_json - what report -j writes
 * @path: the recording's name
 * @r: the recording
 * @p: its profile
 * @flt: the filters it was built with
 * @res: the resolver it was built with, or NULL
 * @sym: the symbolizer behind @res, for the agent's counts, or NULL
 * @sort: the function table's order
 * @limit: its length, 0 for all
 * @warnings: messages on the filters (report_filter_warnings())
 * @nr_warnings: how many
 */
struct report_json {
	const char *path;
	const struct recording *r;
	const struct profile *p;
	const struct report_filter *flt;
	const struct report_resolver *res;
	const struct pvprof_symbolizer *sym;
	enum report_sort sort;
	uint64_t limit;
	char *const *warnings;
	size_t nr_warnings;
};

int report_write_json(FILE *f, const struct report_json *a);

#endif /* KVM_PVPROF_REPORT_JSON_H */
