// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinding suite's workload: known call chains in code built the way
 * distributions build it (gcc -O2 -fomit-frame-pointer, static), so that
 * only DWARF call frame information can walk them.  Runs SECONDS (default
 * 0: until killed), alternating two phases of about 50 ms:
 *
 *   main -> chain_a -> chain_b -> chain_leaf     a hot leaf, pure compute
 *   main -> sort_phase -> qsort -> ... -> by_key  a callback run by glibc
 *
 * Nothing here depends on a frame pointer; each call's result is used
 * after it returns, so no call in the chains is a tail call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t chain_leaf(uint64_t n)
{
	uint64_t x = n | 1, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t chain_b(uint64_t n)
{
	return chain_leaf(n) * 3 + 1;
}

__attribute__((noinline)) uint64_t chain_a(uint64_t n)
{
	return chain_b(n) ^ 7;
}

/* The comparison burns a little so that samples land in it. */
__attribute__((noinline)) int by_key(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	int i;

	for (i = 0; i < 40; i++) {
		a = a * 31 + 7;
		b = b * 31 + 7;
	}
	return a < b ? -1 : a > b;
}

__attribute__((noinline)) uint64_t sort_phase(uint64_t *v, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ULL + 1;
		v[i] = seed >> 11;
	}
	qsort(v, n, sizeof(*v), by_key);
	return v[n / 2];
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static uint64_t keys[4096];
	double seconds = argc > 1 ? atof(argv[1]) : 0, start = now();
	uint64_t round = 0;

	while (seconds <= 0 || now() - start < seconds) {
		sink += chain_a(2000000);
		sink += sort_phase(keys, sizeof(keys) / sizeof(keys[0]), round++);
	}
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
