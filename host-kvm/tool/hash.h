/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof's hashes for its in-memory tables: 64-bit FNV-1a (interned
 * strings, functions, ELF images, processes, unwind tables) and a 64-bit
 * mix of keys of whole words (report_cache.c's frames, report_sort.c's
 * rows).  Nothing stores them: they may change with no format to keep.
 */
#ifndef KVM_PVPROF_HASH_H
#define KVM_PVPROF_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/**
 * hash_u64() - a 64-bit key mixed into a hash (MurmurHash3's finalizer)
 * @x: the key
 *
 * For fixed-size keys of a few words, where hash_bytes() would take a
 * multiplication per byte.
 *
 * Return: every bit of @x mixed into every bit of the result.
 */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/**
 * hash_words() - a hash of a key made of whole 64-bit words
 * @p: the key: no padding bytes of unknown value
 * @n: its size in bytes, a multiple of 8
 *
 * For fixed-size keys of integers and pointers: one multiplication per
 * word, then hash_u64() mixes every bit into the low ones a table indexes
 * with.
 *
 * Return: the hash.
 */
static inline uint64_t hash_words(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = HASH_INIT, w;

	for (; n >= sizeof(w); n -= sizeof(w), b += sizeof(w)) {
		memcpy(&w, b, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	return hash_u64(h);
}

#endif /* KVM_PVPROF_HASH_H */
