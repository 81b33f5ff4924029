/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: where symbols and command names come from
 * (struct report_resolver), and what every output asks it through
 * (report_resolve.c).  report_symbolizer.c makes the guest agent's tables
 * one.
 */
#ifndef KVM_PVPROF_REPORT_RESOLVE_H
#define KVM_PVPROF_REPORT_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "abi/pvprof_ctl.h"
#include "symbolize.h"

/*
 * What a resolver knows about one frame's address is a struct pvprof_sym
 * (symbolize.h), whichever resolver answers; report_resolve() also makes
 * an empty name unknown and keeps @build_id_size at most
 * REPORT_BUILD_ID_MAX.
 */
#define REPORT_BUILD_ID_MAX	PVPROF_SB_BUILD_ID_MAX

/**
 * struct report_resolver - where symbols and command names come from
 * @ctx: passed to the callbacks
 * @sideband: takes one sideband message in stream order; 0, or a negative
 *	errno for a message it rejected
 * @resolve: symbolizes one frame (@out comes zeroed, @out->offset the
 *	address); the strings it points @out to stay as they are at least
 *	until @sideband is called again
 * @comm: the command name of a process, NULL when unknown
 * @describe: optional, writes one header line on what it knows
 * @user_code: optional, whether a user address lies in an executable
 *	mapping of the process image: 1 yes, 0 no, -1 no mapping of the image
 *	is known; frame-pointer chains are cut at the first return address
 *	that is not (report_sample_frames()).  NULL keeps every chain whole
 * @unwind: optional, unwinds the user stack snapshots of --call-graph
 *	dwarf recordings (report_unwind_new()); NULL keeps every callchain's
 *	frame-pointer chain
 * @generation: optional, a number that changes whenever @resolve's answer
 *	for a kernel frame (@kernel true) or a user frame, or @user_code's,
 *	may have changed since it was last returned (after @sideband took a
 *	message that changed a table), and only then.  A resolver that sets
 *	it promises that, while the number stays, the same question gets the
 *	same answer, its strings and build-id unchanged, and that a kernel
 *	frame's answer depends on the address alone (not on the pid and
 *	exec_gen): answers may then be kept instead of asked again
 *	(report_cache.c).  NULL: every frame is asked
 *
 * With no resolver every frame is unsymbolized (raw addresses).
 */
struct report_unwind;

struct report_resolver {
	void *ctx;
	int (*sideband)(void *ctx, const void *msg, size_t len);
	void (*resolve)(void *ctx, bool kernel_frame, uint32_t pid, uint32_t exec_gen,
			uint64_t addr, struct pvprof_sym *out);
	const char *(*comm)(void *ctx, uint32_t pid, uint32_t exec_gen);
	void (*describe)(void *ctx, FILE *f);
	int (*user_code)(void *ctx, uint32_t pid, uint32_t exec_gen, uint64_t addr);
	struct report_unwind *unwind;
	uint64_t (*generation)(void *ctx, bool kernel);
};

void report_resolve(const struct report_resolver *res, bool kernel, uint32_t pid,
		    uint32_t exec_gen, uint64_t addr, struct pvprof_sym *sym);
const char *sample_comm(const struct report_resolver *res, uint32_t pid,
			uint32_t exec_gen, char *buf, size_t size);

#endif /* KVM_PVPROF_REPORT_RESOLVE_H */
