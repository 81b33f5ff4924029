/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof script: samples as 'perf script' prints them, with the fields
 * of perf's -F (report_script.c).
 */
#ifndef KVM_PVPROF_REPORT_SCRIPT_H
#define KVM_PVPROF_REPORT_SCRIPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

struct recording;
struct report_filter;
struct report_resolver;
struct report_stats;

/* Returns 0, -1 on an output error, or -2 after a read error (printed). */
int report_write_script(FILE *f, const struct recording *r,
			const struct report_filter *flt,
			const struct report_resolver *res,
			const struct script_options *o, struct report_stats *st);

#endif /* KVM_PVPROF_REPORT_SCRIPT_H */
