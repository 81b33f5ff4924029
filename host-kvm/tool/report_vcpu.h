/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report --per-vcpu: the samples shown and the recording's
 * callchains and losses, per vCPU (report_vcpu.c).
 */
#ifndef KVM_PVPROF_REPORT_VCPU_H
#define KVM_PVPROF_REPORT_VCPU_H

#include <stdio.h>

struct profile;
struct profile_sink;
struct recording;
struct report_filter;

struct report_vcpus;
struct report_vcpus *report_vcpus_new(void);
const struct profile_sink *report_vcpus_sink(struct report_vcpus *vc,
					     const struct profile_sink *next);
int report_write_per_vcpu(FILE *f, struct report_vcpus *vc, const struct recording *r,
			  const struct profile *p, const struct report_filter *flt);
void report_vcpus_free(struct report_vcpus *vc);

#endif /* KVM_PVPROF_REPORT_VCPU_H */
