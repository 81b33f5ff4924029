/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PASS and FAIL lines for the tool's C test programs (report-test.c,
 * unwind-test.c), as lib.sh prints them for the scripts: "PASS NAME" or
 * "FAIL NAME: WHY" per case, then check_finish()'s "N passed, N failed",
 * the line make check's summary counts.  Each program includes it once.
 */
#ifndef _PVPROF_TOOL_TESTS_CHECK_H
#define _PVPROF_TOOL_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int passed, failed;

static inline void pass(const char *name)
{
	printf("PASS %s\n", name);
	passed++;
}

static inline void vfail(const char *name, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static inline void vfail(const char *name, const char *fmt, va_list ap)
{
	printf("FAIL %s: ", name);
	vprintf(fmt, ap);
	printf("\n");
	failed++;
}

static inline void fail(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(name, fmt, ap);
	va_end(ap);
}

/* The closing line; the exit status: 0 only when nothing failed. */
static inline int check_finish(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif /* _PVPROF_TOOL_TESTS_CHECK_H */
