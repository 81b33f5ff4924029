// SPDX-License-Identifier: GPL-2.0
/*
 * bench-core's workload: deep user call chains for both profilers to
 * record on this machine.  Built twice by run.py, -O2 with frame pointers
 * (the --call-graph fp recordings) and -O2 -fomit-frame-pointer (the
 * --call-graph dwarf ones), the way programs are built either way.
 *
 * Each round walks a path of DEPTH_MIN..DEPTH_MAX calls through four
 * mutually recursive functions and burns its time in one of four leaves,
 * so a sample carries 20-45 frames.  The path is one of NR_PATHS, picked
 * by the round's number: enough distinct stacks that folding them is
 * real work, few enough that each recurs, as in a real profile.
 *
 * The walks run below a 12 KiB frame of main's, every page of it touched,
 * so that a --call-graph dwarf sample always has the 8 KiB of stack a
 * snapshot takes: without it the bytes left above the sampled frame depend
 * on where ASLR put the top of the stack, and the inputs' sizes changed
 * from run to run.  Touched, because the kernel's copy of the stack (perf's
 * in an interrupt, the guest driver's in its NMI) cannot fault a page in
 * and stops at the first one not present.
 *
 * usage: bench-core-workload SECONDS   (CPU seconds of this process)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE	__attribute__((noinline, noclone))
#define DEPTH_MIN	16
#define DEPTH_MAX	40
#define NR_PATHS	256
#define LEAF_WORK	20000

volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t burn(uint64_t n)
{
	uint64_t x = n | 1, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

NOINLINE uint64_t leaf_0(uint64_t n) { return burn(n) + 1; }
NOINLINE uint64_t leaf_1(uint64_t n) { return burn(n) ^ 3; }
NOINLINE uint64_t leaf_2(uint64_t n) { return burn(n) * 5; }
NOINLINE uint64_t leaf_3(uint64_t n) { return burn(n) - 7; }

uint64_t walk_a(uint64_t path, unsigned int depth);
uint64_t walk_b(uint64_t path, unsigned int depth);
uint64_t walk_c(uint64_t path, unsigned int depth);
uint64_t walk_d(uint64_t path, unsigned int depth);

/*
 * The next call on the path: two bits of it per level.  The empty asm
 * keeps GCC from turning the recursion into a loop or a tail call, so
 * every level is a real frame in both builds.
 */
static inline __attribute__((always_inline)) uint64_t step(uint64_t path,
							  unsigned int depth)
{
	uint64_t r;

	if (!depth) {
		switch (path & 3) {
		case 0: r = leaf_0(LEAF_WORK); break;
		case 1: r = leaf_1(LEAF_WORK); break;
		case 2: r = leaf_2(LEAF_WORK); break;
		default: r = leaf_3(LEAF_WORK); break;
		}
	} else {
		uint64_t next = (path >> 2) | (path << 62);

		switch (path & 3) {
		case 0: r = walk_a(next, depth - 1); break;
		case 1: r = walk_b(next, depth - 1); break;
		case 2: r = walk_c(next, depth - 1); break;
		default: r = walk_d(next, depth - 1); break;
		}
	}
	__asm__ volatile("" : "+r"(r));
	return r;
}

NOINLINE uint64_t walk_a(uint64_t path, unsigned int depth) { return step(path, depth) * 3 + depth; }
NOINLINE uint64_t walk_b(uint64_t path, unsigned int depth) { return step(path, depth) ^ depth; }
NOINLINE uint64_t walk_c(uint64_t path, unsigned int depth) { return step(path, depth) + 11; }
NOINLINE uint64_t walk_d(uint64_t path, unsigned int depth) { return step(path, depth) * 7 - depth; }

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#define PAD_BYTES	(12 * 1024)

NOINLINE uint64_t run(double seconds)
{
	uint64_t round = 0;

	while (cpu_seconds() < seconds) {
		/* A fixed mix: path k of NR_PATHS, the same paths every run. */
		uint64_t k = round++ % NR_PATHS;
		uint64_t path = (k + 1) * 0x9e3779b97f4a7c15ULL;
		unsigned int depth = DEPTH_MIN + (unsigned int)(k * 7 % (DEPTH_MAX - DEPTH_MIN + 1));

		sink += walk_a(path, depth);
	}
	return round;
}

int main(int argc, char **argv)
{
	volatile char pad[PAD_BYTES];
	uint64_t rounds;
	unsigned int i;

	for (i = 0; i < PAD_BYTES; i += 64)
		pad[i] = 1;
	pad[PAD_BYTES - 1] = 1;
	rounds = run(argc > 1 ? atof(argv[1]) : 1);
	printf("%llu rounds %d\n", (unsigned long long)rounds, pad[0] + pad[PAD_BYTES - 1]);
	return 0;
}
