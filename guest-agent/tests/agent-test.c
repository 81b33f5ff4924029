// SPDX-License-Identifier: GPL-2.0
/*
 * The agent test's workload: spins for SECONDS (default 6) in a function
 * with a name the test looks for, entering the kernel through getppid()
 * on every round, so that samples land in user code and in the syscall
 * path.  Built static with frame pointers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

__attribute__((noinline)) unsigned long agent_test_spin(double seconds)
{
	volatile unsigned long sum = 0;
	struct timespec t0;
	unsigned long i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed(&t0) < seconds) {
		for (i = 0; i < 20000; i++)
			sum += i * i;
		sum += (unsigned long)getppid();
	}
	return sum;
}

__attribute__((noinline)) unsigned long agent_test_outer(double seconds)
{
	return agent_test_spin(seconds) + 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 6.0;

	printf("agent-test: %lu\n", agent_test_outer(seconds));
	return 0;
}
