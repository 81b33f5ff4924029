/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report --pprof: pprof's profile.proto, gzipped
 * (report_pprof.c).
 */
#ifndef KVM_PVPROF_REPORT_PPROF_H
#define KVM_PVPROF_REPORT_PPROF_H

struct profile;
struct profile_sink;
struct recording;
struct report_filter;
struct report_resolver;

struct report_pprof;
struct report_pprof *report_pprof_create(const char *path, const char *input);
const struct profile_sink *report_pprof_sink(struct report_pprof *pp);
int report_pprof_write(struct report_pprof *pp, const char *input,
		       const struct recording *r, const struct profile *p,
		       const struct report_filter *flt,
		       const struct report_resolver *res);
void report_pprof_free(struct report_pprof *pp);

#endif /* KVM_PVPROF_REPORT_PPROF_H */
