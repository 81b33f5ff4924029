/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report --sort and --percent-limit: the top table, with perf
 * report's sort keys (report_sort.c).
 */
#ifndef KVM_PVPROF_REPORT_SORT_H
#define KVM_PVPROF_REPORT_SORT_H

#include <stdint.h>
#include <stdio.h>

enum report_sort_key {
	REPORT_KEY_SELF,	/* counts: they order rows */
	REPORT_KEY_TOTAL,
	REPORT_KEY_COMM,	/* per sample: they group rows */
	REPORT_KEY_PID,
	REPORT_KEY_TID,
	REPORT_KEY_VCPU,
	REPORT_KEY_DSO,		/* per frame */
	REPORT_KEY_SYM,
	REPORT_KEY_NR
};

/**
 * struct report_sort_spec - a parsed --sort
 * @arg: the argument as given
 * @chain: every key rows are compared by, in order
 * @nr_chain: keys in @chain
 * @columns: the grouping keys, in the order given (the table's columns)
 * @nr_columns: keys in @columns
 * @primary: the first count in @chain, the one --percent-limit applies to
 */
struct report_sort_spec {
	const char *arg;
	enum report_sort_key chain[REPORT_KEY_NR];
	uint32_t nr_chain;
	enum report_sort_key columns[REPORT_KEY_NR];
	uint32_t nr_columns;
	enum report_sort_key primary;
};

int report_sort_parse(const char *arg, struct report_sort_spec *s);
int report_percent_parse(const char *what, const char *arg, double *out);

struct json_writer;
struct profile;
struct profile_sink;
struct report_table;
struct report_table *report_table_new(const struct report_sort_spec *s);
const struct profile_sink *report_table_sink(struct report_table *t,
					     const struct profile_sink *next);
int report_write_table(FILE *f, const struct report_table *t, const struct profile *p,
		       uint64_t limit, double percent_limit);
int report_table_json(struct json_writer *w, const struct report_table *t,
		      const struct profile *p, uint64_t limit, double percent_limit);
void report_table_free(struct report_table *t);

#endif /* KVM_PVPROF_REPORT_SORT_H */
