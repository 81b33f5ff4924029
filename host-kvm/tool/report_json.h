/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report -j (report_json.c).
 */
#ifndef KVM_PVPROF_REPORT_JSON_H
#define KVM_PVPROF_REPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;
struct pvprof_symbolizer;
struct recording;
struct report_filter;
struct report_resolver;
struct report_table;

/**
 * struct report_json - what report -j writes
 * @path: the recording's name
 * @r: the recording
 * @p: its profile
 * @flt: the filters it was built with
 * @res: the resolver it was built with, or NULL
 * @sym: the symbolizer behind @res, for the agent's counts, or NULL
 * @table: the top table (--sort), filled while @p was built
 * @limit: its length, 0 for all
 * @percent_limit: its rows below this share are left out
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
	const struct report_table *table;
	uint64_t limit;
	double percent_limit;
	char *const *warnings;
	size_t nr_warnings;
};

int report_write_json(FILE *f, const struct report_json *a);

#endif /* KVM_PVPROF_REPORT_JSON_H */
