// SPDX-License-Identifier: GPL-2.0
/*
 * The model must catch a host sequence in the wrong order.
 *
 * Linked with core/host_vcpu.c built with -DPVPROF_HOST_TEST_GATE_FIRST,
 * which rings the NMI gate before the pending sample's notice is written,
 * the kind of slip a change to the sequence could make: the gate then
 * finds no unconsumed notice, injects nothing, and the new notice waits
 * for another pass.  Every honest case of the model
 * (model_misorder_suite()) must fail against it; a case that passes is
 * this suite's failure.  One line per case ("PASS name: caught: why" or
 * "FAIL name: ..."), then "N passed, N failed" and the counts in the
 * results file, as the other suites.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runner.h"

Suite *model_misorder_suite(void);

int main(int argc, char **argv)
{
	SRunner *sr;
	TestResult **results;
	int i, n, caught = 0, missed = 0;
	FILE *f;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [RESULTS_FILE]\n", argv[0]);
		return 2;
	}
	sr = srunner_create(model_misorder_suite());
	srunner_run_all(sr, CK_SILENT);
	n = srunner_ntests_run(sr);
	results = srunner_results(sr);
	for (i = 0; i < n; i++) {
		TestResult *tr = results[i];

		if (tr_rtype(tr) == CK_FAILURE) {
			printf("PASS %s: caught: %s\n", tr_tcname(tr), tr_msg(tr));
			caught++;
		} else if (tr_rtype(tr) == CK_PASS) {
			printf("FAIL %s: the model passed a host sequence in the wrong order\n",
			       tr_tcname(tr));
			missed++;
		} else {
			printf("FAIL %s: died instead of failing: %s\n", tr_tcname(tr),
			       tr_msg(tr));
			missed++;
		}
	}
	free(results);
	srunner_free(sr);
	printf("%d passed, %d failed\n", caught, missed);

	if (argc == 2) {
		f = fopen(argv[1], "w");
		if (!f || fprintf(f, "%d %d\n", caught, missed) < 0 || fclose(f)) {
			perror(argv[1]);
			return 1;
		}
	}
	return missed || !caught;
}
