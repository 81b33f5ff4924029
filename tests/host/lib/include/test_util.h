/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host-side assertions and the case runner of the minimal-guest tests.
 *
 * Every case runs in its own child process, so a failed assertion ends only
 * that case; the parent prints one line per case: "PASS name",
 * "FAIL name: why" or "SKIP name: why".
 */
#ifndef PVPROF_TEST_UTIL_H
#define PVPROF_TEST_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit status of a case that skipped itself (kselftest's KSFT_SKIP). */
#define TEST_SKIP_EXIT_CODE	4

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

void __attribute__((noreturn, format(printf, 5, 6)))
test_assert_fail(const char *expr, const char *file, unsigned int line,
		 int saved_errno, const char *fmt, ...);
void __attribute__((noreturn, format(printf, 1, 2)))
test_skip(const char *fmt, ...);

/*
 * TEST_ASSERT(cond, fmt, ...): on failure print the expression, file:line,
 * errno and the message, and fail the current case.
 */
#define TEST_ASSERT(cond, ...)						\
	do {								\
		if (!(cond))						\
			test_assert_fail(#cond, __FILE__, __LINE__,	\
					 errno, __VA_ARGS__);		\
	} while (0)

#define TEST_ASSERT_EQ(a, b)						\
	do {								\
		uint64_t __a = (uint64_t)(a), __b = (uint64_t)(b);	\
		if (__a != __b)						\
			test_assert_fail(#a " == " #b, __FILE__,	\
					 __LINE__, 0,			\
					 "%#llx != %#llx",		\
					 (unsigned long long)__a,	\
					 (unsigned long long)__b);	\
	} while (0)

#define TEST_FAIL(...)							\
	test_assert_fail(NULL, __FILE__, __LINE__, 0, __VA_ARGS__)

/* Skip the current case (reported as SKIP, never as PASS). */
#define TEST_REQUIRE(cond)						\
	do {								\
		if (!(cond))						\
			test_skip("requirement not met: %s", #cond);	\
	} while (0)

struct test_case {
	const char *name;
	void (*run)(void);
};

/*
 * Run every case of a test program (or those named on the command line),
 * each in a child process with a time limit. Case names are printed as
 * "<program>/<case>". Returns the process exit status: 0 when no case
 * failed.
 */
int test_run_cases(const char *program, const struct test_case *cases,
		   size_t nr_cases, int argc, char **argv);

/* Which KVM the runner loaded in L1: PVPROF_KVM=stock|pvprof. */
enum kvm_flavour {
	KVM_FLAVOUR_STOCK,
	KVM_FLAVOUR_PVPROF,
};

enum kvm_flavour test_kvm_flavour(void);

/* CLOCK_MONOTONIC in nanoseconds, for the cases' deadlines. */
uint64_t test_now_ns(void);

#endif
