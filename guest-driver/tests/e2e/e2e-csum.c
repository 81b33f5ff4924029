// SPDX-License-Identifier: GPL-2.0
/*
 * e2e-csum MB: keeps MB MiB of memory under a running checksum across
 * snapshots, migration and resets of its VM.  Each pass checks every page
 * against the pattern of the generation it was last written with, then
 * rewrites it with the next generation's.  Prints "CSUM ok passes N" after
 * every pass, or "CSUM BAD page P word W" and exits 1 at the first
 * mismatch.  Runs until killed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE_WORDS	(4096 / sizeof(uint64_t))

static uint64_t pattern(uint64_t page, uint64_t word, uint64_t gen)
{
	uint64_t x = (page << 32) ^ (word << 8) ^ gen ^ 0x9e3779b97f4a7c15ULL;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

int main(int argc, char **argv)
{
	long mb = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	uint64_t pages, gen, p, w, *mem;

	if (argc != 2 || mb <= 0) {
		fprintf(stderr, "usage: %s MEGABYTES\n", argv[0]);
		return 2;
	}
	pages = (uint64_t)mb * 256;
	mem = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (p = 0; p < pages; p++)
		for (w = 0; w < PAGE_WORDS; w++)
			mem[p * PAGE_WORDS + w] = pattern(p, w, 0);
	for (gen = 0;; gen++) {
		for (p = 0; p < pages; p++) {
			uint64_t *page = mem + p * PAGE_WORDS;

			for (w = 0; w < PAGE_WORDS; w++) {
				if (page[w] != pattern(p, w, gen)) {
					printf("CSUM BAD page %llu word %llu\n",
					       (unsigned long long)p, (unsigned long long)w);
					fflush(stdout);
					return 1;
				}
				page[w] = pattern(p, w, gen + 1);
			}
		}
		printf("CSUM ok passes %llu\n", (unsigned long long)gen + 1);
		fflush(stdout);
	}
}
