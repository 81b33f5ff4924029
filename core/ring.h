/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof ring arithmetic: geometry derived from the registered size, and
 * free-running 64-bit indices checked against the other side's index.
 */
#ifndef _PVPROF_CORE_RING_H
#define _PVPROF_CORE_RING_H

#include "pvprof_core.h"

/**
 * struct pvprof_geometry - layout of one registered buffer
 * @size: buffer size in bytes, as registered
 * @chain_slots: number of callchain slots, PVPROF_CHAIN_SLOTS(@size)
 *
 * Both sides derive it from the size they agreed on at registration; it is
 * never read back from shared memory.
 */
struct pvprof_geometry {
	__u32 size;
	__u32 chain_slots;
};

int pvprof_geometry_init(struct pvprof_geometry *geo, __u64 size);
__u64 pvprof_ring_used(__u64 head, __u64 tail);
bool pvprof_ring_valid(__u64 head, __u64 tail, __u32 slots);
bool pvprof_ring_full(__u64 head, __u64 tail, __u32 slots);
bool pvprof_index_before(__u64 a, __u64 b);
__u32 pvprof_ring_slot(__u64 index, __u32 slots);
__u32 pvprof_notice_offset(__u64 index);
__u32 pvprof_callchain_offset(const struct pvprof_geometry *geo, __u64 index);

#endif /* _PVPROF_CORE_RING_H */
