// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd logging: to stderr (systemd's journal takes it) or to syslog.
 */
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "pvprofd.h"

static bool to_syslog;

void log_init(bool use_syslog)
{
	to_syslog = use_syslog;
	if (to_syslog)
		openlog("pvprofd", LOG_PID, LOG_DAEMON);
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *const names[8] = {
		[3] = "error", [4] = "warning", [6] = "info", [7] = "debug",
	};
	va_list ap;

	if (level == LOG_DEBUG && opts.verbose < 1)
		return;
	va_start(ap, fmt);
	if (to_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		fprintf(stderr, "pvprofd: %s: ", names[level & 7] ? names[level & 7] : "note");
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
