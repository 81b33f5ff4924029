// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof's JSON writer (RFC 8259): one compact document per call
 * sequence, on any FILE.
 *
 * Strings come from the guest (symbols, DSO paths, command names), from
 * the file system or from the user: any byte but NUL.  The output is
 * always valid JSON in valid UTF-8:
 *   - '"' and '\' are escaped; \n, \r and \t use their short escapes;
 *   - every other control character (C0, DEL, and the C1 range U+0080 to
 *     U+009F) and U+2028/U+2029 are written as \u00XX or \u20XX, so that
 *     a document printed on a terminal cannot drive it and one pasted into
 *     JavaScript stays a string;
 *   - well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 *     nothing above U+10FFFF) passes through unchanged;
 *   - ill-formed bytes are replaced by U+FFFD, written \ufffd, one for
 *     each maximal subpart (a lead byte and the continuation bytes that
 *     fit it, else a single byte), as Python's bytes.decode("utf-8",
 *     "replace") does.  The bytes are lost; the text outputs (\xHH) keep
 *     them.  Writing them as \u00XX instead would be ambiguous: JSON
 *     strings are Unicode, and U+00XX is also a real character.
 * Strings are written whole: a guest string is bounded by the sideband
 * message that carried it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "json.h"

/*
 * The well-formed UTF-8 sequence at @s (Unicode's table 3-7): its length,
 * 2 to 4; or, when there is none, minus the length of its maximal subpart,
 * the bytes that one U+FFFD replaces (Unicode 3.9, "U+FFFD Substitution of
 * Maximal Subparts", as Python's and most decoders do).  @s is
 * NUL-terminated; a NUL fails the continuation test before anything past
 * it is read.
 */
static int utf8_sequence(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return -1;
	/* The second byte's range excludes overlongs, surrogates, > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return -1;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -i;
	return len;
}

/**
 * json_write_string() - a string as a JSON string literal, quotes included
 * @f: output
 * @s: any NUL-terminated bytes
 *
 * See the comment at the top of the file for what is escaped or replaced.
 */
void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int len;

		switch (*p) {
		case '"':
			fputs("\\\"", f);
			p++;
			continue;
		case '\\':
			fputs("\\\\", f);
			p++;
			continue;
		case '\n':
			fputs("\\n", f);
			p++;
			continue;
		case '\r':
			fputs("\\r", f);
			p++;
			continue;
		case '\t':
			fputs("\\t", f);
			p++;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
			continue;
		}
		if (*p < 0x80) {
			fputc(*p++, f);
			continue;
		}
		len = utf8_sequence(p);
		if (len < 0) {
			fputs("\\ufffd", f);
			p += -len;
		} else if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0) {	/* C1 */
			fprintf(f, "\\u%04x", p[1]);
			p += 2;
		} else if (len == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
			   (p[2] == 0xa8 || p[2] == 0xa9)) {
			fprintf(f, "\\u%04x", 0x2000 | (p[2] - 0x80));
			p += 3;
		} else {
			fwrite(p, 1, (size_t)len, f);
			p += len;
		}
	}
	fputc('"', f);
}

void json_init(struct json_writer *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->has_value = 0;
	w->after_name = false;
}

/* Before a value or a name: the comma that separates it from the last one. */
static void json_separate(struct json_writer *w)
{
	if (w->after_name) {
		w->after_name = false;
		return;
	}
	if (w->depth && (w->has_value >> w->depth & 1))
		fputc(',', w->f);
	w->has_value |= 1ULL << w->depth;
}

static void json_open(struct json_writer *w, char c)
{
	json_separate(w);
	fputc(c, w->f);
	if (w->depth < JSON_MAX_DEPTH)
		w->depth++;
	w->has_value &= ~(1ULL << w->depth);
}

static void json_close(struct json_writer *w, char c)
{
	if (w->depth)
		w->depth--;
	fputc(c, w->f);
}

void json_begin_object(struct json_writer *w) { json_open(w, '{'); }
void json_end_object(struct json_writer *w) { json_close(w, '}'); }
void json_begin_array(struct json_writer *w) { json_open(w, '['); }
void json_end_array(struct json_writer *w) { json_close(w, ']'); }

void json_name(struct json_writer *w, const char *name)
{
	json_separate(w);
	json_write_string(w->f, name);
	fputc(':', w->f);
	w->after_name = true;
}

void json_string(struct json_writer *w, const char *s)
{
	json_separate(w);
	json_write_string(w->f, s);
}

void json_uint(struct json_writer *w, uint64_t v)
{
	json_separate(w);
	fprintf(w->f, "%" PRIu64, v);
}

void json_int(struct json_writer *w, int64_t v)
{
	json_separate(w);
	fprintf(w->f, "%" PRId64, v);
}

void json_bool(struct json_writer *w, bool v)
{
	json_separate(w);
	fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w)
{
	json_separate(w);
	fputs("null", w->f);
}

/* A finite number with two decimals, as the text report rounds percentages. */
void json_fixed2(struct json_writer *w, double v)
{
	json_separate(w);
	fprintf(w->f, "%.2f", v);
}

/* Ends the document with a newline; 0, or -1 when the output failed. */
int json_end_document(struct json_writer *w)
{
	fputc('\n', w->f);
	return fflush(w->f) || ferror(w->f) ? -1 : 0;
}

void json_member_string(struct json_writer *w, const char *name, const char *s)
{
	json_name(w, name);
	if (s)
		json_string(w, s);
	else
		json_null(w);
}

void json_member_uint(struct json_writer *w, const char *name, uint64_t v)
{
	json_name(w, name);
	json_uint(w, v);
}

void json_member_bool(struct json_writer *w, const char *name, bool v)
{
	json_name(w, name);
	json_bool(w, v);
}
