/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the end-to-end workloads: "PROGRAM SECONDS [CPU]" runs for
 * SECONDS (SIGALRM ends the loop, so the hot code makes no calls) on CPU
 * when given.
 */
#ifndef E2E_WORKLOAD_H
#define E2E_WORKLOAD_H

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t e2e_done;

static void e2e_on_alarm(int sig)
{
	(void)sig;
	e2e_done = 1;
}

/* Parses SECONDS [CPU], pins and arms the alarm; exits 2 on bad usage. */
static void e2e_start(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = e2e_on_alarm };
	long seconds = argc >= 2 ? strtol(argv[1], NULL, 10) : 0;
	cpu_set_t set;

	if (argc < 2 || argc > 3 || seconds <= 0) {
		fprintf(stderr, "usage: %s SECONDS [CPU]\n", argv[0]);
		exit(2);
	}
	if (argc == 3) {
		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			exit(1);
		}
	}
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)seconds);
}

#endif /* E2E_WORKLOAD_H */
