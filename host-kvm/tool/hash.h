/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof's hash for its in-memory tables (interned strings, functions,
 * ELF images, processes, unwind tables): 64-bit FNV-1a.  Nothing stores
 * it: it may change with no format to keep.
 */
#ifndef KVM_PVPROF_HASH_H
#define KVM_PVPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a's offset basis: the hash of no bytes. */
#define HASH_INIT	0xcbf29ce484222325ULL

/**
 * hash_bytes() - FNV-1a over some bytes
 * @p: the bytes
 * @n: their number
 * @h: HASH_INIT, or the hash of the bytes before them (a key in parts)
 *
 * Return: the hash of the bytes hashed into @h so far and @p's.
 */
static inline uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

#endif /* KVM_PVPROF_HASH_H */
