/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: the options perf users reach for, with
 * perf's syntax where perf has the option (doc/kvm-pvprof-report.8):
 *
 *   --sort KEY,...        the top table's rows and order (report_sort.c)
 *   --percent-limit PCT   rows and call-graph branches below PCT% hidden
 *   -g caller|callee      the call tree's direction (report_callgraph.c)
 *   --time START,END      samples in a time window (report_select.c)
 *   --per-vcpu            samples and losses per vCPU (report_vcpu.c)
 *   script -F FIELD,...   perf script's fields (report_script.c)
 */
#ifndef KVM_PVPROF_REPORT_PERF_H
#define KVM_PVPROF_REPORT_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "recording.h"
#include "report.h"

/* ------------------------------------------------------------------ */
/* Sample selection: --time, and the filters report and script share   */
/* ------------------------------------------------------------------ */

/* perf's --time takes a few ranges; more is a typing error. */
#define REPORT_TIME_MAX_RANGES	16

/**
 * struct report_time_range - one window, in ns from the recording's start
 * @start: first ns selected
 * @end: last ns selected (inclusive); UINT64_MAX when open
 * @pct_start: with @percent, the window's start in millionths of a percent
 * @pct_end: the same for its end
 * @percent: given as percentages: @start and @end are set by
 *	report_time_resolve()
 */
struct report_time_range {
	uint64_t start, end;
	uint32_t pct_start, pct_end;
	bool percent;
};

/**
 * struct report_time - what --time selects
 * @spec: the argument as given, for the header
 * @nr: ranges; a sample in any of them is selected
 * @range: the ranges
 * @origin_ns: the recording's start, host CLOCK_MONOTONIC (HOST section)
 */
struct report_time {
	const char *spec;
	uint32_t nr;
	struct report_time_range range[REPORT_TIME_MAX_RANGES];
	uint64_t origin_ns;
};

int report_time_parse(const char *arg, struct report_time *t);
int report_time_resolve(struct report_time *t, const struct recording *r);
uint64_t report_time_relative(uint64_t origin_ns, uint64_t host_time_ns);
bool report_time_selected(const struct report_time *t, uint64_t host_time_ns);
void report_time_describe(const struct report_time *t, char *buf, size_t size);
bool report_sample_selected(const struct report_filter *f,
			    const struct pvprof_st_view *v, const char *comm);
void report_frame_range(const struct report_frames *fr, uint32_t flags,
			uint32_t *first, uint32_t *end);

/* ------------------------------------------------------------------ */
/* --sort and --percent-limit: the top table                           */
/* ------------------------------------------------------------------ */

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

struct report_table;
struct report_table *report_table_new(const struct report_sort_spec *s);
const struct profile_sink *report_table_sink(struct report_table *t,
					     const struct profile_sink *next);
int report_write_table(FILE *f, const struct report_table *t, const struct profile *p,
		       uint64_t limit, double percent_limit);
struct json_writer;
int report_table_json(struct json_writer *w, const struct report_table *t,
		      const struct profile *p, uint64_t limit, double percent_limit);
void report_table_free(struct report_table *t);

/* ------------------------------------------------------------------ */
/* The call graph: -g caller|callee, --percent-limit                   */
/* ------------------------------------------------------------------ */

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

int report_write_callgraph(FILE *f, const struct profile *p,
			   const struct callgraph_options *o);

/* ------------------------------------------------------------------ */
/* --per-vcpu                                                          */
/* ------------------------------------------------------------------ */

struct report_vcpus;
struct report_vcpus *report_vcpus_new(void);
const struct profile_sink *report_vcpus_sink(struct report_vcpus *vc,
					     const struct profile_sink *next);
int report_write_per_vcpu(FILE *f, struct report_vcpus *vc, const struct recording *r,
			  const struct profile *p, const struct report_filter *flt);
void report_vcpus_free(struct report_vcpus *vc);

/* ------------------------------------------------------------------ */
/* script -F                                                           */
/* ------------------------------------------------------------------ */

#define SCRIPT_F_COMM		(1U << 0)
#define SCRIPT_F_PID		(1U << 1)
#define SCRIPT_F_TID		(1U << 2)
#define SCRIPT_F_VCPU		(1U << 3)
#define SCRIPT_F_TIME		(1U << 4)
#define SCRIPT_F_PERIOD		(1U << 5)
#define SCRIPT_F_EVENT		(1U << 6)
#define SCRIPT_F_IP		(1U << 7)
#define SCRIPT_F_SYM		(1U << 8)
#define SCRIPT_F_SYMOFF		(1U << 9)
#define SCRIPT_F_DSO		(1U << 10)
/* perf script's fields for a cpu-clock recording with call chains. */
#define SCRIPT_F_DEFAULT	((1U << 11) - 1)

/**
 * struct script_options - what script prints of each sample
 * @fields: SCRIPT_F_*
 * @reltime: times from the recording's start (the clock of --time),
 *	not host CLOCK_MONOTONIC
 */
struct script_options {
	uint32_t fields;
	bool reltime;
};

int script_fields_parse(const char *arg, uint32_t *fields);

#endif /* KVM_PVPROF_REPORT_PERF_H */
