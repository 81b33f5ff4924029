/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: warnings for filters that left no sample
 * (report_filter.c).
 */
#ifndef KVM_PVPROF_REPORT_FILTER_H
#define KVM_PVPROF_REPORT_FILTER_H

struct recording;
struct report_filter;
struct report_resolver;
struct report_stats;

int report_filter_warnings(const struct recording *r, const struct report_stats *st,
			   const struct report_filter *f,
			   const struct report_resolver *res, char ***out);
void report_filter_warnings_free(char **v, int nr);

#endif /* KVM_PVPROF_REPORT_FILTER_H */
