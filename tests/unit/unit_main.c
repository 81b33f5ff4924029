// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof unit suite: layout, rings, notices, callchains, host accounting,
 * guest NMI logic, stream and sideband.
 */
#include <stdio.h>

#include "runner.h"
#include "test_util.h"

int main(int argc, char **argv)
{
	Suite *suites[] = {
		layout_suite(), ring_suite(), host_suite(), callchain_suite(),
		guest_suite(), stream_suite(), sideband_suite(),
	};

	if (argc > 2) {
		fprintf(stderr, "usage: %s [RESULTS_FILE]\n", argv[0]);
		return 2;
	}
	return pvprof_run_suites(suites, sizeof(suites) / sizeof(suites[0]),
				 argc == 2 ? argv[1] : NULL);
}
