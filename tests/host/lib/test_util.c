// SPDX-License-Identifier: GPL-2.0
/*
 * Assertions and the case runner: each case runs in a forked child so that a
 * failing assertion, a crash or a hang ends only that case, and the parent
 * reports every case on its own line.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

/* A case that has not finished after this many seconds fails. */
#define DEFAULT_CASE_TIMEOUT_S	300

/* Write end of the pipe that carries a failing case's one-line reason. */
static int reason_fd = -1;

static void report_reason(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void report_reason(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int len;

	if (reason_fd < 0)
		return;
	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(buf))
		len = sizeof(buf) - 1;
	if (write(reason_fd, buf, len) != len)
		fprintf(stderr, "warning: could not pass the failure reason to the runner\n");
}

void test_assert_fail(const char *expr, const char *file, unsigned int line,
		      int saved_errno, const char *fmt, ...)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	fprintf(stderr, "==== Test Assertion Failure ====\n");
	fprintf(stderr, "  %s:%u: %s\n", file, line, expr ? expr : "TEST_FAIL");
	fprintf(stderr, "  %s\n", msg);
	if (saved_errno)
		fprintf(stderr, "  errno=%d (%s)\n", saved_errno,
			strerror(saved_errno));
	if (expr && saved_errno)
		report_reason("%s:%u: %s: %s (errno %d, %s)", base, line, expr,
			      msg, saved_errno, strerror(saved_errno));
	else if (expr)
		report_reason("%s:%u: %s: %s", base, line, expr, msg);
	else
		report_reason("%s:%u: %s", base, line, msg);
	exit(1);
}

void test_skip(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "skipping: %s\n", msg);
	report_reason("%s", msg);
	exit(TEST_SKIP_EXIT_CODE);
}

enum kvm_flavour test_kvm_flavour(void)
{
	const char *v = getenv("PVPROF_KVM");

	if (v && !strcmp(v, "stock"))
		return KVM_FLAVOUR_STOCK;
	if (v && !strcmp(v, "pvprof"))
		return KVM_FLAVOUR_PVPROF;
	TEST_FAIL("PVPROF_KVM must say which KVM is loaded (stock or pvprof), got \"%s\"",
		  v ? v : "(unset)");
}

static unsigned int case_timeout(void)
{
	const char *v = getenv("TEST_CASE_TIMEOUT");
	long t = v ? strtol(v, NULL, 10) : 0;

	return t > 0 ? (unsigned int)t : DEFAULT_CASE_TIMEOUT_S;
}

static bool case_selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

static void read_reason(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

/* Returns 0 (pass), 1 (fail) or 2 (skip) and prints the case's line. */
static int run_one_case(const char *program, const struct test_case *tc)
{
	char reason[1024];
	int pipefd[2], status;
	pid_t pid;

	if (pipe(pipefd)) {
		printf("FAIL %s/%s: pipe: %s\n", program, tc->name, strerror(errno));
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s/%s: fork: %s\n", program, tc->name, strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return 1;
	}
	if (pid == 0) {
		close(pipefd[0]);
		reason_fd = pipefd[1];
		alarm(case_timeout());
		tc->run();
		exit(0);
	}
	close(pipefd[1]);
	read_reason(pipefd[0], reason, sizeof(reason));
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid) {
		printf("FAIL %s/%s: waitpid: %s\n", program, tc->name, strerror(errno));
		return 1;
	}

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("PASS %s/%s\n", program, tc->name);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_EXIT_CODE) {
		printf("SKIP %s/%s: %s\n", program, tc->name, reason);
		return 2;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		printf("FAIL %s/%s: timed out after %u s\n", program, tc->name,
		       case_timeout());
	else if (WIFSIGNALED(status))
		printf("FAIL %s/%s: killed by signal %d (%s)\n", program,
		       tc->name, WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (reason[0])
		printf("FAIL %s/%s: %s\n", program, tc->name, reason);
	else
		printf("FAIL %s/%s: exited with status %d\n", program, tc->name,
		       WEXITSTATUS(status));
	return 1;
}

int test_run_cases(const char *program, const struct test_case *cases,
		   size_t nr_cases, int argc, char **argv)
{
	unsigned int failed = 0, matched = 0;
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "-l")) {
		for (i = 0; i < nr_cases; i++)
			printf("%s/%s\n", program, cases[i].name);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nr_cases; i++) {
		if (!case_selected(cases[i].name, argc, argv))
			continue;
		matched++;
		if (run_one_case(program, &cases[i]) == 1)
			failed++;
	}
	if (argc >= 2 && matched != (unsigned int)(argc - 1)) {
		printf("FAIL %s: some requested cases do not exist (use -l to list them)\n",
		       program);
		failed++;
	}
	return failed ? 1 : 0;
}

uint64_t test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
