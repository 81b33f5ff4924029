// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof model suite: the NMI protocol under random schedules.
 */
#include <stdio.h>

#include "runner.h"

Suite *model_suite(void);

int main(int argc, char **argv)
{
	Suite *suites[] = { model_suite() };

	if (argc > 2) {
		fprintf(stderr, "usage: %s [RESULTS_FILE]\n", argv[0]);
		return 2;
	}
	return pvprof_run_suites(suites, 1, argc == 2 ? argv[1] : NULL);
}
