// SPDX-License-Identifier: GPL-2.0
/*
 * Escaping of guest strings for each output format.
 *
 * Common rules: at most REPORT_NAME_MAX input bytes are shown (then "...");
 * printable ASCII passes unless the format gives it a meaning; every other
 * byte (controls, DEL, bytes >= 0x80, the backslash) becomes "\xHH", so the
 * output is plain ASCII and the original bytes can be recovered.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report_escape.h"

/* Bytes a format must not see raw, beyond the common ones. */
enum esc_format {
	ESC_TEXT,	/* terminal */
	ESC_FOLDED,	/* ';' separates frames */
	ESC_SCRIPT,	/* spaces and parentheses delimit fields; ';', "->" */
	ESC_XML,	/* markup characters become entities */
};

/* @prev: the byte before @c in the input, 0 at the start. */
static bool esc_needs_hex(unsigned char c, unsigned char prev, enum esc_format fmt)
{
	if (c < 0x20 || c >= 0x7f || c == '\\')
		return true;
	if ((fmt == ESC_FOLDED || fmt == ESC_SCRIPT) && c == ';')
		return true;
	if (fmt == ESC_SCRIPT && (c == ' ' || c == '(' || c == ')'))
		return true;
	/* stackcollapse-perf.pl splits a function at "->" (inlined frames). */
	if (fmt == ESC_SCRIPT && c == '>' && prev == '-')
		return true;
	return false;
}

static const char *xml_entity(unsigned char c)
{
	switch (c) {
	case '&':	return "&amp;";
	case '<':	return "&lt;";
	case '>':	return "&gt;";
	case '"':	return "&quot;";
	case '\'':	return "&apos;";
	default:	return NULL;
	}
}

static char *escape(const char *s, char *out, enum esc_format fmt)
{
	static const char hex[] = "0123456789abcdef";
	char *o = out;
	size_t i;

	for (i = 0; s[i] && i < REPORT_NAME_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *ent = fmt == ESC_XML ? xml_entity(c) : NULL;

		if (ent) {
			size_t n = strlen(ent);

			memcpy(o, ent, n);
			o += n;
		} else if (esc_needs_hex(c, i ? (unsigned char)s[i - 1] : 0, fmt)) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	if (s[i]) {
		memcpy(o, "...", 3);
		o += 3;
	}
	*o = '\0';
	return out;
}

/**
 * esc_text() - escape a guest string for a terminal
 * @s: the string
 * @out: REPORT_ESC_SIZE bytes
 *
 * Return: @out.
 */
char *esc_text(const char *s, char *out)
{
	return escape(s, out, ESC_TEXT);
}

/**
 * esc_folded() - escape a guest string for one frame of a folded stack
 * @s: the string
 * @out: REPORT_ESC_SIZE bytes
 *
 * Return: @out, without ';', newline or other control bytes.
 */
char *esc_folded(const char *s, char *out)
{
	return escape(s, out, ESC_FOLDED);
}

/**
 * esc_script() - escape a guest string for a field of perf script output
 * @s: the string
 * @out: REPORT_ESC_SIZE bytes
 *
 * Return: @out, without spaces or parentheses, which delimit the fields, and
 * without the separators stackcollapse-perf.pl gives a meaning inside one:
 * ';' (it joins frames with it, and takes the command name as it is) and
 * the '>' of "->" (it splits a function there into inlined frames).
 */
char *esc_script(const char *s, char *out)
{
	return escape(s, out, ESC_SCRIPT);
}

/**
 * esc_xml() - escape a guest string for SVG text and attributes
 * @s: the string
 * @out: REPORT_ESC_SIZE bytes
 *
 * Return: @out: ASCII with markup characters as entities, valid XML 1.0.
 */
char *esc_xml(const char *s, char *out)
{
	return escape(s, out, ESC_XML);
}
