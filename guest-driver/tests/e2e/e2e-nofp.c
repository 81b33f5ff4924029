// SPDX-License-Identifier: GPL-2.0
/*
 * The same chain as e2e-fp.c built with -fomit-frame-pointer: the user
 * stack of a sample in e2e_nofp_hot cannot be walked, and must come back
 * flagged truncated, never as frames that are not code of this binary.
 */
#define _GNU_SOURCE
#include "workload.h"

#define NOINLINE __attribute__((noinline))

volatile unsigned long e2e_nofp_sink;

/* The local lives on the stack, so the function sets up its own frame. */
NOINLINE void e2e_nofp_hot(void)
{
	volatile unsigned long x = 1;

	while (!e2e_done)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	e2e_nofp_sink = x;
}

NOINLINE void e2e_nofp_inner(void)
{
	e2e_nofp_hot();
	e2e_nofp_sink++;
}

NOINLINE void e2e_nofp_middle(void)
{
	e2e_nofp_inner();
	e2e_nofp_sink++;
}

NOINLINE void e2e_nofp_outer(void)
{
	e2e_nofp_middle();
	e2e_nofp_sink++;
}

int main(int argc, char **argv)
{
	e2e_start(argc, argv);
	e2e_nofp_outer();
	return 0;
}
