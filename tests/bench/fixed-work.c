// SPDX-License-Identifier: GPL-2.0
/*
 * bench-work: the fixed amount of guest work make bench times in each run.
 *
 * ROUNDS rounds of a checksum over 64 KiB under a short call chain (so
 * pvprof's guest has a user stack to walk), timed inside the guest with
 * CLOCK_MONOTONIC, which is what the run's slowdown is computed from.
 * Prints exactly one line on success:
 *
 *   BENCH elapsed_ns <nanoseconds> rounds <ROUNDS> checksum <hex>
 *
 * usage: bench-work ROUNDS
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DATA_SIZE	65536

static unsigned char data[DATA_SIZE];

static __attribute__((noinline)) uint32_t mix_byte(uint32_t crc, unsigned char byte)
{
	crc ^= byte;
	for (int bit = 0; bit < 8; bit++)
		crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	return crc;
}

static __attribute__((noinline)) uint32_t checksum_data(void)
{
	uint32_t crc = 0xffffffffU;

	for (size_t i = 0; i < DATA_SIZE; i++)
		crc = mix_byte(crc, data[i]);
	return ~crc;
}

static __attribute__((noinline)) uint32_t run_rounds(unsigned long rounds)
{
	uint32_t all = 0;

	for (unsigned long r = 0; r < rounds; r++) {
		data[r % DATA_SIZE] ^= (unsigned char)r;
		all ^= checksum_data();
	}
	return all;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long rounds;
	uint64_t start, elapsed;
	uint32_t sum;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: bench-work ROUNDS\n");
		return 2;
	}
	errno = 0;
	rounds = strtoul(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || rounds == 0 || rounds > 1000000) {
		fprintf(stderr, "bench-work: ROUNDS must be a number from 1 to 1000000, got '%s'\n",
			argv[1]);
		return 2;
	}
	for (size_t i = 0; i < DATA_SIZE; i++)
		data[i] = (unsigned char)(i * 7 + 3);
	start = now_ns();
	sum = run_rounds(rounds);
	elapsed = now_ns() - start;
	printf("BENCH elapsed_ns %" PRIu64 " rounds %lu checksum %08" PRIx32 "\n",
	       elapsed, rounds, sum);
	return 0;
}
