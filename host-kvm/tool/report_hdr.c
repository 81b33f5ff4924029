// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report: the lines of a report's header, "# " and a lead, then
 * items wrapped before REPORT_HEADER_WIDTH columns (report_header.c, and
 * what resolvers and the unwinder describe).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report_escape.h"
#include "report_hdr.h"

/**
 * report_hdr_begin() - start a header line: "# " and its lead
 * @h: the line
 * @f: output
 * @fmt: the lead, printf-style
 *
 * Items follow with report_hdr_item(), wrapped so that no line passes
 * REPORT_HEADER_WIDTH columns (unless an item alone does: a long name).
 */
void report_hdr_begin(struct report_hdr *h, FILE *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	h->f = f;
	h->sep = " ";
	fputs("# ", f);
	va_start(ap, fmt);
	n = vfprintf(f, fmt, ap);
	va_end(ap);
	h->col = 2 + (n > 0 ? (size_t)n : 0);
}

/* The next item, after the separator (" " after the lead, then ", "). */
void report_hdr_item(struct report_hdr *h, const char *fmt, ...)
{
	char item[2 * REPORT_ESC_SIZE];
	size_t sep = strlen(h->sep), len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	len = strlen(item);
	if (h->col + sep + len > REPORT_HEADER_WIDTH && h->col > 4) {
		while (sep && h->sep[sep - 1] == ' ')
			sep--;
		fprintf(h->f, "%.*s\n#  ", (int)sep, h->sep);
		h->col = 3;
		sep = 1;
		h->sep = " ";
	}
	fprintf(h->f, "%s%s", h->sep, item);
	h->col += sep + len;
	h->sep = ", ";
}

/* The separator before the next item, when it is not ", ". */
void report_hdr_sep(struct report_hdr *h, const char *sep)
{
	h->sep = sep;
}

void report_hdr_end(struct report_hdr *h)
{
	fputc('\n', h->f);
}
