// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof ring arithmetic.
 *
 * Indices count entries since registration and are never reduced; the
 * number of entries in flight is head - tail in modulo-2^64 arithmetic, so
 * the distance stays right across a wrap of either counter.  Whatever one
 * side reads of the other side's index is untrusted and goes through
 * pvprof_ring_valid() before it is used.
 */
#include "ring.h"

/**
 * pvprof_geometry_init() - derive the buffer geometry from its size
 * @geo: geometry to fill
 * @size: buffer size in bytes
 *
 * Return: 0 when @size is a legal buffer size; -PVPROF_E2BIG when it is
 * above PVPROF_BUF_MAX_SIZE; -PVPROF_EINVAL when it is below
 * PVPROF_BUF_MIN_SIZE or not a power of two.  @geo is only written on
 * success.
 */
int pvprof_geometry_init(struct pvprof_geometry *geo, __u64 size)
{
	if (size > PVPROF_BUF_MAX_SIZE)
		return -PVPROF_E2BIG;
	if (size < PVPROF_BUF_MIN_SIZE || (size & (size - 1)))
		return -PVPROF_EINVAL;
	geo->size = (__u32)size;
	geo->chain_slots = PVPROF_CHAIN_SLOTS((__u32)size);
	return 0;
}

/**
 * pvprof_ring_used() - entries between a consumer and a producer index
 * @head: producer index
 * @tail: consumer index
 *
 * Return: head - tail modulo 2^64; meaningful only when the pair passed
 * pvprof_ring_valid().
 */
__u64 pvprof_ring_used(__u64 head, __u64 tail)
{
	return head - tail;
}

/**
 * pvprof_ring_valid() - check an index pair read from shared memory
 * @head: producer index
 * @tail: consumer index
 * @slots: ring capacity
 *
 * Return: true when 0 <= head - tail <= @slots, i.e. the consumer is not
 * ahead of the producer and the producer has not overrun the consumer.
 */
bool pvprof_ring_valid(__u64 head, __u64 tail, __u32 slots)
{
	return head - tail <= slots;
}

/**
 * pvprof_ring_full() - is a valid ring full
 * @head: producer index
 * @tail: consumer index
 * @slots: ring capacity
 *
 * Return: true when head - tail == @slots.  The caller checks validity
 * first; an invalid pair is neither full nor empty.
 */
bool pvprof_ring_full(__u64 head, __u64 tail, __u32 slots)
{
	return head - tail == slots;
}

/**
 * pvprof_index_before() - order two free-running indices
 * @a: first index
 * @b: second index
 *
 * Return: true when @a comes before @b, for indices less than 2^63 apart.
 */
bool pvprof_index_before(__u64 a, __u64 b)
{
	return (__s64)(a - b) < 0;
}

/**
 * pvprof_ring_slot() - slot number of an index
 * @index: free-running index
 * @slots: ring capacity, nonzero
 *
 * Return: @index modulo @slots.  Consecutive indices map to consecutive
 * slots everywhere below 2^64; across the 2^64 wrap only when @slots is a
 * power of two (indices start at zero per registration, so a wrap needs
 * 2^64 entries and does not happen in practice).
 */
__u32 pvprof_ring_slot(__u64 index, __u32 slots)
{
	return (__u32)(index % slots);
}

/**
 * pvprof_notice_offset() - byte offset of a notice slot in the buffer
 * @index: free-running notice index
 *
 * Return: offset of the slot that holds notice @index.
 */
__u32 pvprof_notice_offset(__u64 index)
{
	return PVPROF_NOTICE_OFFSET +
	       pvprof_ring_slot(index, PVPROF_NOTICE_SLOTS) * PVPROF_NOTICE_SIZE;
}

/**
 * pvprof_callchain_offset() - byte offset of a callchain slot in the buffer
 * @geo: buffer geometry
 * @index: free-running callchain slot index (chain_head, chain_tail)
 *
 * Return: offset of the slot of index @index; the slot and its
 * PVPROF_CHAIN_SLOT_SIZE bytes lie inside the buffer.
 */
__u32 pvprof_callchain_offset(const struct pvprof_geometry *geo, __u64 index)
{
	return PVPROF_CHAIN_OFFSET +
	       pvprof_ring_slot(index, geo->chain_slots) * PVPROF_CHAIN_SLOT_SIZE;
}
