// SPDX-License-Identifier: GPL-2.0
/*
 * Check runner for pvprof's suites.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runner.h"

/**
 * pvprof_run_suites() - run suites, print one line per case, write counts
 * @suites: the suites
 * @nr_suites: their number
 * @results_path: file to write "<passed> <failed>" into, or NULL
 *
 * Return: 0 when every case passed and at least one ran, else 1.
 */
int pvprof_run_suites(Suite **suites, int nr_suites, const char *results_path)
{
	SRunner *sr = srunner_create(suites[0]);
	TestResult **results;
	int i, n, passed = 0, failed = 0;
	FILE *f;

	for (i = 1; i < nr_suites; i++)
		srunner_add_suite(sr, suites[i]);
	srunner_run_all(sr, CK_SILENT);
	n = srunner_ntests_run(sr);
	results = srunner_results(sr);
	for (i = 0; i < n; i++) {
		TestResult *tr = results[i];

		if (tr_rtype(tr) == CK_PASS) {
			printf("PASS %s\n", tr_tcname(tr));
			passed++;
		} else {
			printf("FAIL %s: %s (%s:%d)\n", tr_tcname(tr), tr_msg(tr),
			       tr_lfile(tr) ? tr_lfile(tr) : "?", tr_lno(tr));
			failed++;
		}
	}
	free(results);
	srunner_free(sr);
	printf("%d passed, %d failed\n", passed, failed);

	if (results_path) {
		f = fopen(results_path, "w");
		if (!f || fprintf(f, "%d %d\n", passed, failed) < 0 || fclose(f)) {
			perror(results_path);
			return 1;
		}
	}
	return failed || !passed;
}
