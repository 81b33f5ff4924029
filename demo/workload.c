// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof-demo: the workload make demo profiles inside the L2 guest.
 *
 * Two branches under clearly named functions, so a flame graph shows the
 * guest's user code and its kernel's syscall path under each other:
 *
 *   main -> demo_run -> compute_checksums -> crc_block -> crc_byte
 *   main -> demo_run -> talk_to_kernel -> write_log_line | ask_pid |
 *                       read_proc_status -> raw_syscall -> [guest kernel]
 *
 * The guest driver walks user stacks by frame pointers, so every named
 * function is noinline and has a frame: built static with clang,
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer and no sibling
 * calls (GCC 12 leaves leaf functions without a frame whatever the flags,
 * which hides their caller).  System calls go through raw_syscall(), which
 * has a frame of its own, because libc's wrappers are frameless leaves.
 *
 * usage: pvprof-demo [SECONDS]   (default 10; 0 runs until killed)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_SIZE	4096
#define BLOCKS		16

static unsigned char blocks[BLOCKS][BLOCK_SIZE];
/* Results land here so the compiler cannot drop the work. */
static volatile uint32_t checksum_sink;

static __attribute__((noinline)) long raw_syscall(long nr, long a0, long a1, long a2)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * Bitwise CRC-32 (no table): slow on purpose, it is the hot loop. The bit
 * loop stays a loop: under TCG an interrupt lands on a translated block's
 * first instruction, and samples at the loop head, inside crc_byte's frame,
 * show the whole chain, where samples at an unrolled body's entry (before
 * the frame is set up) would hide crc_block.
 */
static __attribute__((noinline)) uint32_t crc_byte(uint32_t crc, unsigned char byte)
{
	crc ^= byte;
#pragma clang loop unroll(disable)
	for (int bit = 0; bit < 8; bit++)
		crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	return crc;
}

static __attribute__((noinline)) uint32_t crc_block(const unsigned char *block, size_t len)
{
	uint32_t crc = 0xffffffffU;

	for (size_t i = 0; i < len; i++)
		crc = crc_byte(crc, block[i]);
	return ~crc;
}

static __attribute__((noinline)) void compute_checksums(void)
{
	uint32_t all = 0;

	for (int i = 0; i < BLOCKS; i++)
		all ^= crc_block(blocks[i], BLOCK_SIZE);
	checksum_sink = all;
}

static __attribute__((noinline)) void write_log_line(int fd, unsigned long round)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "round %lu checksum %08x\n",
			   round, (unsigned int)checksum_sink);

	raw_syscall(SYS_write, fd, (long)line, len);
}

static __attribute__((noinline)) void ask_pid(void)
{
	raw_syscall(SYS_getpid, 0, 0, 0);
}

static __attribute__((noinline)) void read_proc_status(void)
{
	char buf[2048];
	long fd = raw_syscall(SYS_open, (long)"/proc/self/status", O_RDONLY, 0);

	if (fd < 0)
		return;
	while (raw_syscall(SYS_read, fd, (long)buf, sizeof(buf)) > 0)
		;
	raw_syscall(SYS_close, fd, 0, 0);
}

static __attribute__((noinline)) void talk_to_kernel(int null_fd, unsigned long round)
{
	for (int i = 0; i < 64; i++) {
		write_log_line(null_fd, round);
		ask_pid();
	}
	read_proc_status();
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) unsigned long demo_run(double seconds)
{
	double end = now_seconds() + seconds;
	unsigned long round = 0;
	int null_fd = open("/dev/null", O_WRONLY);

	if (null_fd < 0) {
		fprintf(stderr, "pvprof-demo: cannot open /dev/null: %s\n", strerror(errno));
		exit(1);
	}
	for (int i = 0; i < BLOCKS; i++)
		for (int j = 0; j < BLOCK_SIZE; j++)
			blocks[i][j] = (unsigned char)(i * 31 + j * 7);
	while (seconds == 0 || now_seconds() < end) {
		compute_checksums();
		talk_to_kernel(null_fd, round);
		round++;
	}
	close(null_fd);
	return round;
}

int main(int argc, char **argv)
{
	double seconds = 10;
	char *end;

	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		fprintf(stderr, "usage: pvprof-demo [SECONDS]  (default 10; 0 runs until killed)\n");
		return argc > 2 ? 2 : 0;
	}
	if (argc == 2) {
		errno = 0;
		seconds = strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || seconds < 0 || seconds > 86400) {
			fprintf(stderr, "pvprof-demo: SECONDS must be a number from 0 to 86400, got '%s'\n",
				argv[1]);
			return 2;
		}
	}
	printf("pvprof-demo: %lu rounds\n", demo_run(seconds));
	return 0;
}
