// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON side of kvm-pvprof's tests, driven by json-test.sh, where
 * Python's json module is the judge:
 *
 *   json-test strings    for each line of hex on stdin, the bytes it
 *                        spells written as one JSON string (json.c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host-kvm/tool/json.h"

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Each stdin line is hex ("" for the empty string); no NUL in it. */
static int strings(void)
{
	char line[8192], bytes[4097];
	size_t n, i;

	while (fgets(line, sizeof(line), stdin)) {
		n = strcspn(line, "\n");
		if (n % 2 || n / 2 >= sizeof(bytes)) {
			fprintf(stderr, "json-test: bad hex line of %zu characters\n", n);
			return 2;
		}
		for (i = 0; i < n / 2; i++) {
			int hi = hex_digit(line[2 * i]), lo = hex_digit(line[2 * i + 1]);

			if (hi < 0 || lo < 0 || (!hi && !lo)) {
				fprintf(stderr, "json-test: bad hex or NUL at %zu\n", 2 * i);
				return 2;
			}
			bytes[i] = (char)(hi << 4 | lo);
		}
		bytes[n / 2] = '\0';
		json_write_string(stdout, bytes);
		putchar('\n');
	}
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "strings"))
		return strings();
	fprintf(stderr, "usage: json-test strings\n");
	return 2;
}
