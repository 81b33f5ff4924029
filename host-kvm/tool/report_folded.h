/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report --folded: FlameGraph's folded stacks (report_folded.c).
 */
#ifndef KVM_PVPROF_REPORT_FOLDED_H
#define KVM_PVPROF_REPORT_FOLDED_H

#include <stdio.h>

struct profile;

int report_write_folded(FILE *f, const struct profile *p);

#endif /* KVM_PVPROF_REPORT_FOLDED_H */
