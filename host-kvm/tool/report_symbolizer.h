/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: the guest agent's symbols (symbolize.c) and
 * unwind tables (report_unwind.c) as a report_resolver
 * (report_symbolizer.c).
 */
#ifndef KVM_PVPROF_REPORT_SYMBOLIZER_H
#define KVM_PVPROF_REPORT_SYMBOLIZER_H

struct pvprof_symbolizer;
struct recording;
struct report_resolver;

struct pvprof_symbolizer *recording_symbolizer(const struct recording *r);
void symbolizer_resolver(struct pvprof_symbolizer *s, struct report_resolver *res);

struct pvprof_symbolizer *recording_resolver(const struct recording *r,
					      struct report_resolver *res);

#endif /* KVM_PVPROF_REPORT_SYMBOLIZER_H */
