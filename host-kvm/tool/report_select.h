/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: which samples and frames count, the
 * filters both commands take (--vcpu, --pid, --comm, --time, --kernel,
 * --user), applied by report_select.c.
 */
#ifndef KVM_PVPROF_REPORT_SELECT_H
#define KVM_PVPROF_REPORT_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recording.h"

#define REPORT_F_KERNEL_ONLY	(1U << 0)
#define REPORT_F_USER_ONLY	(1U << 1)

/*
 * The innermost frame of a sample taken inside pvprof's own NMI path
 * (spec pvprof-own-nmi-samples), above the frames of the stack that NMI
 * interrupted: a kernel frame of a DSO of its own, at no guest address.
 */
#define REPORT_OWN_NMI_FRAME	"[pvprof overhead]"
#define REPORT_OWN_NMI_DSO	"[pvprof]"

/**
 * struct report_part - samples of one callchain entry shown with one stack
 * @weight: how many, at least 1
 * @own_nmi: they hit pvprof's own NMI path: REPORT_OWN_NMI_FRAME goes
 *	above the callchain's frames (report_part_shown())
 *
 * An entry stands for 1 + own_nmi_samples samples (stream version 2):
 * its own, with the frame when PVPROF_ST_SAMPLE_F_OWN_NMI is set, and the
 * samples folded into it, always with the frame.  report_sample_parts()
 * splits it into the parts that differ; every output counts each part
 * as @weight samples.
 */
struct report_part {
	uint64_t weight;
	bool own_nmi;
};

#define REPORT_MAX_PARTS	2

/**
 * struct report_filter - which samples and frames count
 * @vcpu: only this vCPU, -1 for all
 * @pid: only this guest pid, -1 for all
 * @comm: only this command name (compared unescaped), NULL for all
 * @flags: REPORT_F_*
 * @time: only samples in these windows (--time), NULL for all
 */
struct report_time;

struct report_filter {
	int64_t vcpu;
	int64_t pid;
	const char *comm;
	uint32_t flags;
	const struct report_time *time;
};

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

struct report_frames;

int report_time_parse(const char *arg, struct report_time *t);
int report_time_resolve(struct report_time *t, const struct recording *r);
uint64_t report_time_relative(uint64_t origin_ns, uint64_t host_time_ns);
bool report_time_selected(const struct report_time *t, uint64_t host_time_ns);
void report_time_describe(const struct report_time *t, char *buf, size_t size);
bool report_sample_selected(const struct report_filter *f,
			    const struct pvprof_st_view *v, const char *comm);
uint32_t report_sample_parts(const struct pvprof_st_view *v,
			     struct report_part parts[REPORT_MAX_PARTS]);
uint64_t report_sample_weight(const struct pvprof_st_view *v);
bool report_part_shown(const struct report_part *part, const struct report_frames *fr,
		       uint32_t flags, uint32_t *first, uint32_t *end, bool *leaf);

#endif /* KVM_PVPROF_REPORT_SELECT_H */
