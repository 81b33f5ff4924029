/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof record's end-of-run summary: what the stream carried, counted
 * as record reads it, written as one text line or as one JSON object.
 */
#ifndef KVM_PVPROF_RECORD_SUMMARY_H
#define KVM_PVPROF_RECORD_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "abi/pvprof_ctl.h"
#include "core/stream.h"

/**
 * struct record_summary - what record tells when it stops
 * @output: the recording's file name
 * @stop_reason: PVPROF_DATA_STOP_*, as the END section says
 * @duration_ns: from the start of the recording to its END section
 * @stream_bytes: stream bytes written to the file (set by the caller)
 * @stream_entries: stream entries in them
 * @callchains: of those, callchain entries
 * @sideband: of those, sideband messages
 * @sideband_bytes: their message bytes
 * @lost: samples the LOSS entries count
 * @losses: the same by reason (PVPROF_LOSS_*)
 * @stream: the reads decoded so far, as one stream (private)
 *
 * A zeroed summary counts from the stream's start.
 */
struct record_summary {
	const char *output;
	uint32_t stop_reason;
	uint64_t duration_ns;
	uint64_t stream_bytes;
	uint64_t stream_entries, callchains;
	uint64_t sideband, sideband_bytes;
	uint64_t lost;
	uint64_t losses[PVPROF_LOSS_NR];
	struct pvprof_st_iter stream;
};

void record_summary_count(struct record_summary *s, const uint8_t *buf, size_t len);
int record_summary_write(FILE *f, const struct record_summary *s, bool json);

#endif /* KVM_PVPROF_RECORD_SUMMARY_H */
