// SPDX-License-Identifier: GPL-2.0
/*
 * A syscall loop with a known kernel path: read(2) of /dev/zero issued by
 * an inline syscall instruction in e2e_sys_leaf, under main ->
 * e2e_sys_outer -> e2e_sys_inner, so the user frames of every sample are
 * that chain and the kernel frames run entry_SYSCALL_64 -> do_syscall_64
 * -> __x64_sys_read -> ksys_read -> vfs_read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include "workload.h"

#define NOINLINE __attribute__((noinline))

static char e2e_sys_buf[16384];
volatile long e2e_sys_sink;

/* calls lives on the stack, so the function sets up its own frame. */
NOINLINE long e2e_sys_leaf(int fd)
{
	volatile long calls = 0;
	long ret;

	while (!e2e_done) {
		__asm__ volatile("syscall"
			     : "=a"(ret)
			     : "0"((long)SYS_read), "D"((long)fd), "S"(e2e_sys_buf),
			       "d"(sizeof(e2e_sys_buf))
			     : "rcx", "r11", "memory");
		/* The alarm may cut the last read short, or interrupt it. */
		if (ret <= 0 && ret != -EINTR)
			return -1;
		calls++;
	}
	return calls;
}

NOINLINE long e2e_sys_inner(int fd)
{
	long calls = e2e_sys_leaf(fd);

	e2e_sys_sink++;
	return calls;
}

NOINLINE long e2e_sys_outer(int fd)
{
	long calls = e2e_sys_inner(fd);

	e2e_sys_sink++;
	return calls;
}

int main(int argc, char **argv)
{
	int fd = open("/dev/zero", O_RDONLY);
	long calls;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	e2e_start(argc, argv);
	calls = e2e_sys_outer(fd);
	if (calls < 0) {
		fprintf(stderr, "%s: read of /dev/zero failed\n", argv[0]);
		return 1;
	}
	printf("e2e-sys: %ld reads\n", calls);
	return 0;
}
