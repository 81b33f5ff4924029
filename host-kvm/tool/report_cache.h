/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: what the frames of the samples resolved
 * to, kept per (process image, address) while the resolver's tables stay
 * as they were (report_cache.c), so that an address seen again costs one
 * lookup instead of the resolver's searches.
 */
#ifndef KVM_PVPROF_REPORT_CACHE_H
#define KVM_PVPROF_REPORT_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "report_resolve.h"

/**
 * struct report_frame_info - what one frame resolved to
 * @sym: as report_frame_resolve() fills it
 * @tag: the caller's own number for the frame, derived from @sym alone
 *	(profile.c: its function's index in profile.funcs + 1); 0 until the
 *	caller sets it, and again whenever @sym is resolved anew
 */
struct report_frame_info {
	struct pvprof_sym sym;
	uint32_t tag;
};

struct report_cache;
struct report_frames;

struct report_cache *report_cache_new(const struct report_resolver *res);
void report_cache_free(struct report_cache *c);
struct report_frame_info *report_cache_frame(struct report_cache *c,
					     const struct report_frames *fr, uint32_t i,
					     uint32_t pid, uint32_t exec_gen);
struct report_frame_info *report_cache_addr(struct report_cache *c, bool kernel, uint32_t pid,
					    uint32_t exec_gen, uint64_t addr);
int report_cache_user_code(struct report_cache *c, uint32_t pid, uint32_t exec_gen,
			   uint64_t addr);

#endif /* KVM_PVPROF_REPORT_CACHE_H */
