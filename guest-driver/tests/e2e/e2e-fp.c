// SPDX-License-Identifier: GPL-2.0
/*
 * Built with frame pointers: the hot loop runs in e2e_fp_hot under
 * main -> e2e_fp_outer -> e2e_fp_middle -> e2e_fp_inner, the chain the
 * checker expects every sample's user frames to resolve to.
 */
#define _GNU_SOURCE
#include "workload.h"

#define NOINLINE __attribute__((noinline))

volatile unsigned long e2e_fp_sink;

/* The local lives on the stack, so the function sets up its own frame. */
NOINLINE void e2e_fp_hot(void)
{
	volatile unsigned long x = 1;

	while (!e2e_done)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	e2e_fp_sink = x;
}

NOINLINE void e2e_fp_inner(void)
{
	e2e_fp_hot();
	e2e_fp_sink++;
}

NOINLINE void e2e_fp_middle(void)
{
	e2e_fp_inner();
	e2e_fp_sink++;
}

NOINLINE void e2e_fp_outer(void)
{
	e2e_fp_middle();
	e2e_fp_sink++;
}

int main(int argc, char **argv)
{
	e2e_start(argc, argv);
	e2e_fp_outer();
	return 0;
}
