/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Check runner for pvprof's suites: one "PASS name" / "FAIL name: why"
 * line per case, a closing "N passed, N failed" line, and the counts in a
 * results file.
 */
#ifndef _PVPROF_TEST_RUNNER_H
#define _PVPROF_TEST_RUNNER_H

#include <check.h>

/* One test case per test, so that the case name is the test's name. */
#define PVPROF_ADD_TEST(suite, fn)				\
	do {							\
		TCase *tc_ = tcase_create(#fn);			\
		tcase_add_test(tc_, fn);			\
		suite_add_tcase(suite, tc_);			\
	} while (0)

int pvprof_run_suites(Suite **suites, int nr_suites, const char *results_path);

#endif /* _PVPROF_TEST_RUNNER_H */
