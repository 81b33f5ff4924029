/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: the frames a sample is shown with, user
 * stack snapshots unwound with the guest agent's DWARF tables
 * (report_unwind.c), and what became of them.
 */
#ifndef KVM_PVPROF_REPORT_UNWIND_H
#define KVM_PVPROF_REPORT_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "abi/pvprof_ctl.h"
#include "recording.h"
#include "report_resolve.h"

/**
 * struct report_frames - the frames a sample is shown with
 * @addr: kernel frames innermost first, then user frames innermost first
 * @nr: frames in @addr
 * @nr_kernel: of those, kernel frames
 * @first_return: frames from this index on are return addresses found by
 *	DWARF unwinding, named at addr - 1; @nr when there are none
 * @cut: user frames of the callchain's frame-pointer chain left out from a
 *	return address outside the image's code on (0 when none)
 */
struct report_frames {
	uint64_t addr[PVPROF_MAX_DEPTH];
	uint32_t nr, nr_kernel, first_return;
	uint32_t cut;
};

/* Why a snapshot's user frames stayed the guest's frame-pointer chain. */
enum report_uw_fallback {
	REPORT_UW_NO_TABLES,	/* no usable tables for the sampled file */
	REPORT_UW_INCOMPLETE,	/* its tables did not all arrive */
	REPORT_UW_MEMORY,	/* needed stack beyond the snapshot */
	REPORT_UW_ERROR,	/* bad or missing CFI, a loop */
	REPORT_UW_NO_CALLER,	/* the CFI says frame 0 has no caller */
	REPORT_UW_NR
};

/**
 * struct report_unwind_stats - what became of the user stack snapshots
 * @snapshots: callchains with a snapshot that were shown
 * @unwound: of those, shown with DWARF-unwound user frames
 * @outermost: of those, unwound up to a frame without caller
 * @fallback: the others, shown with the frame-pointer chain, by reason
 */
struct report_unwind_stats {
	uint64_t snapshots, unwound, outermost;
	uint64_t fallback[REPORT_UW_NR];
};

struct pvprof_symbolizer;

struct report_unwind *report_unwind_new(const struct recording *r,
					struct pvprof_symbolizer *sym);
struct report_unwind *report_unwind_alloc(struct pvprof_symbolizer *sym);
int report_unwind_add(struct report_unwind *ru, const void *msg, size_t len);
void report_unwind_settle(struct report_unwind *ru);
void report_unwind_free(struct report_unwind *ru);
void report_unwind_stats(const struct report_unwind *ru, struct report_unwind_stats *st);
void report_unwind_describe(const struct report_unwind *ru, FILE *f);
const char *report_uw_fallback_name(enum report_uw_fallback r);
struct report_cache;

int report_sample_frames(const struct report_resolver *res, struct report_cache *cache,
			 const struct pvprof_st_view *v, struct report_frames *out);
void report_frame_resolve(const struct report_resolver *res,
			  const struct report_frames *fr, uint32_t i, uint32_t pid,
			  uint32_t exec_gen, struct pvprof_sym *sym);

#endif /* KVM_PVPROF_REPORT_UNWIND_H */
