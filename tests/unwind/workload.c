// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinding suite's workload: known call chains in code built the way
 * distributions build it (gcc -O2 -fomit-frame-pointer), so that only DWARF
 * call frame information can walk them.  Runs SECONDS (default 0: until
 * killed), taking turns at seven phases of about 50 ms each:
 *
 *   main -> chain_a -> chain_b -> chain_leaf        a hot leaf
 *   main -> sort_phase -> qsort -> ... -> by_key     a callback run by glibc
 *   main -> recurse x RECURSE_DEPTH -> recurse_bottom  recursion
 *   main -> tail_from ~> tail_to                     a tail call: tail_from
 *                                                    jumps, so no frame of it
 *                                                    is on the stack
 *   main -> signal_phase -> raise -> (kernel) -> on_signal -> signal_leaf
 *                                                    a signal handler
 *   (clone3) -> start_thread -> thread_main -> thread_leaf   a thread
 *   main -> vdso_phase -> clock_gettime -> (the vDSO)  code no file holds
 *
 * Every leaf burns its time in a loop of its own, so a sample's innermost
 * frame names the phase; vdso_phase reads the clock for as long as the
 * first phase took.  Apart from tail_from's, no call in the chains is
 * a tail call: each result is used after the call returns.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORK		2000000
#define RECURSE_DEPTH	6

static volatile uint64_t sink;

/* The loop every leaf runs, inlined into it. */
static inline __attribute__((always_inline)) uint64_t burn(uint64_t n)
{
	uint64_t x = n | 1, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t chain_leaf(uint64_t n)
{
	return burn(n);
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

__attribute__((noinline)) uint64_t recurse_bottom(uint64_t n)
{
	return burn(n) + 5;
}

__attribute__((noinline)) uint64_t recurse(unsigned int depth, uint64_t n)
{
	uint64_t r;

	if (depth == 0)
		return recurse_bottom(n) * 7;
	r = recurse(depth - 1, n);
	/* Opaque to GCC, which would otherwise turn the recursion into a loop. */
	__asm__ volatile("" : "+r"(r));
	return r * 3 + depth;
}

__attribute__((noinline)) uint64_t tail_to(uint64_t n)
{
	return burn(n) + 11;
}

/* -O2 compiles the call as a jump (check.sh makes sure of it). */
__attribute__((noinline)) uint64_t tail_from(uint64_t n)
{
	return tail_to(n + sink % 2);
}

static volatile uint64_t signal_work;

__attribute__((noinline)) uint64_t signal_leaf(uint64_t n)
{
	return burn(n) ^ 13;
}

static void on_signal(int signo)
{
	sink += signal_leaf(signal_work) + (uint64_t)signo;
}

__attribute__((noinline)) void signal_phase(uint64_t n)
{
	signal_work = n;
	raise(SIGUSR1);
	sink += 1;
}

__attribute__((noinline)) uint64_t thread_leaf(uint64_t n)
{
	return burn(n) * 17;
}

static void *thread_main(void *arg)
{
	sink += thread_leaf((uint64_t)(uintptr_t)arg);
	return NULL;
}

__attribute__((noinline)) void thread_phase(uint64_t n)
{
	pthread_t thread;

	if (pthread_create(&thread, NULL, thread_main, (void *)(uintptr_t)n) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_join(thread, NULL);
}

static inline __attribute__((always_inline)) double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) void vdso_phase(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink += 1;
}

int main(int argc, char **argv)
{
	static uint64_t keys[4096];
	double seconds = argc > 1 ? atof(argv[1]) : 0, start = now();
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t round = 0;

	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	while (seconds <= 0 || now() - start < seconds) {
		double chain_start = now();

		sink += chain_a(WORK);
		vdso_phase(now() - chain_start);
		sink += sort_phase(keys, sizeof(keys) / sizeof(keys[0]), round++);
		sink += recurse(RECURSE_DEPTH, WORK);
		sink += tail_from(WORK);
		signal_phase(WORK);
		thread_phase(WORK);
	}
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
