/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report: a header line, "# " and a lead, then items wrapped
 * before REPORT_HEADER_WIDTH columns (report_hdr.c).
 */
#ifndef KVM_PVPROF_REPORT_HDR_H
#define KVM_PVPROF_REPORT_HDR_H

#include <stddef.h>
#include <stdio.h>

/* Header lines wrap before this many columns (guest strings aside). */
#define REPORT_HEADER_WIDTH	100

/**
 * struct report_hdr - a header line being written (report_hdr_begin())
 * @f: output
 * @col: columns written on the current line
 * @sep: what goes before the next item
 */
struct report_hdr {
	FILE *f;
	size_t col;
	const char *sep;
};

void report_hdr_begin(struct report_hdr *h, FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report_hdr_item(struct report_hdr *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void report_hdr_sep(struct report_hdr *h, const char *sep);
void report_hdr_end(struct report_hdr *h);

#endif /* KVM_PVPROF_REPORT_HDR_H */
