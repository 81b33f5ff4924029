/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report: the totals every report starts with (report_header.c),
 * and the host's counters of a STATUS section.
 */
#ifndef KVM_PVPROF_REPORT_HEADER_H
#define KVM_PVPROF_REPORT_HEADER_H

#include <stdint.h>
#include <stdio.h>

#include "recording.h"

/**
 * struct report_host_counters - a STATUS section of the recording, summed
 * @samples: samples the host took, all vCPUs
 * @notices: notices it wrote
 * @callchains: callchains it accepted
 * @nmis: pvprof NMIs it injected
 * @lost: its losses, all reasons
 * @sideband_bytes: sideband bytes it accepted
 * @sideband_refused: sideband messages it refused
 */
struct report_host_counters {
	uint64_t samples, notices, callchains, nmis, lost;
	uint64_t sideband_bytes, sideband_refused;
};

void report_host_counters(const struct recording_status *st,
			  struct report_host_counters *c);

struct profile;
struct report_filter;
struct report_resolver;

/* Returns 0, or -1 when the output could not be written. */
int report_write_header(FILE *f, const char *path, const struct recording *r,
			const struct profile *p, const struct report_filter *flt,
			const struct report_resolver *res);

#endif /* KVM_PVPROF_REPORT_HEADER_H */
