// SPDX-License-Identifier: GPL-2.0
/*
 * The user half of the NMI-path self-test: a known call chain
 * main -> level1 -> level2 -> level3 -> write(), built with frame pointers,
 * static and not position independent so that nm on the build machine
 * resolves the addresses the driver captured.  Asks pvprof_selftest.ko for
 * N notices and prints its report after "pid <pid>".
 * usage: stack_user N
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_FILE "/sys/kernel/debug/pvprof-selftest/run"

__attribute__((noinline)) static int level3(int fd, const char *n)
{
	return write(fd, n, strlen(n)) == (ssize_t)strlen(n) ? 0 : -1;
}

__attribute__((noinline)) static int level2(int fd, const char *n)
{
	return level3(fd, n) + 0;
}

__attribute__((noinline)) static int level1(int fd, const char *n)
{
	return level2(fd, n) + 0;
}

int main(int argc, char **argv)
{
	static char report[16384];
	ssize_t len;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: stack_user N\n");
		return 2;
	}
	fd = open(RUN_FILE, O_RDWR);
	if (fd < 0) {
		perror(RUN_FILE);
		return 1;
	}
	if (level1(fd, argv[1])) {
		perror("write " RUN_FILE);
		return 1;
	}
	len = pread(fd, report, sizeof(report) - 1, 0);
	if (len < 0) {
		perror("read " RUN_FILE);
		return 1;
	}
	printf("pid %d\n%.*s", (int)getpid(), (int)len, report);
	return 0;
}
