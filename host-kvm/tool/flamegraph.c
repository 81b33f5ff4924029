// SPDX-License-Identifier: GPL-2.0
/*
 * An interactive SVG flame graph written by kvm-pvprof itself.
 *
 * Frames are laid out as in FlameGraph's flamegraph.pl (root at the bottom,
 * or at the top for an icicle graph; children in name order left to right,
 * width proportional to samples, frames under 0.1 px left out, labels cut
 * to what fits and ended with ".."); colours come from a hash of the name,
 * so the same profile always gives the same bytes.
 *
 * The document is built for its script (flamegraph.js, embedded as is):
 * each frame is a <g> nested in its caller's, with a <title> "NAME (N
 * samples, P%)" that is also its tooltip, a <rect>, a <text> label and
 * data-start, the offset of its first sample among all, from which the
 * script lays out a zoom exactly.  Guest strings appear only as escaped
 * text content, never in an attribute or in the script; no event
 * attribute, no link, no external font or style.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "flamegraph.h"
#include "profile.h"
#include "report_escape.h"

#define FG_PAD		10
#define FG_FRAME_H	16
#define FG_TITLE_Y	24
#define FG_SUBTITLE_Y	44
#define FG_TOP		56		/* the first row of frames */
#define FG_BOTTOM	24
#define FG_FONT_SIZE	12
/* flamegraph.pl's metric (0.59 em of the font); flamegraph.js uses it too. */
#define FG_CHAR_WIDTH	7.08
#define FG_MIN_WIDTH	0.1		/* px */

const char flamegraph_script[] =
#include "flamegraph-script.h"
	;

struct fg_ctx {
	FILE *f;
	const struct profile *p;
	double px_per_sample;
	unsigned int max_depth;
	bool inverted;
};

/* Rows of frames drawn above the root: frames too narrow to draw take none. */
static unsigned int drawn_depth(const struct fg_ctx *c, uint32_t n)
{
	const struct profile *p = c->p;
	unsigned int d = 0;
	uint32_t ch;

	for (ch = p->nodes[n].child; ch; ch = p->nodes[ch].sibling) {
		unsigned int dc;

		if ((double)p->nodes[ch].total * c->px_per_sample < FG_MIN_WIDTH)
			continue;
		dc = drawn_depth(c, ch) + 1;
		if (dc > d)
			d = dc;
	}
	return d;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261U;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619U;
	return h;
}

/* Warm colours for user code, orange-brown for the kernel, grey for the rest. */
static void frame_colour(const struct profile_node *n, unsigned int *r,
			 unsigned int *g, unsigned int *b)
{
	uint32_t h = name_hash(n->name);
	unsigned int v1 = h % 256, v2 = (h >> 8) % 256, v3 = (h >> 16) % 256;

	switch (n->kind) {
	case PROFILE_KIND_USER:
		*r = 205 + v1 * 50 / 255;
		*g = v2 * 230 / 255;
		*b = v3 * 55 / 255;
		break;
	case PROFILE_KIND_KERNEL:
		*r = 200 + v1 * 55 / 255;
		*g = 110 + v2 * 70 / 255;
		*b = v3 * 40 / 255;
		break;
	default:
		*r = *g = *b = 170 + v1 * 40 / 255;
		break;
	}
}

/* @s is printable ASCII already (esc_text()): only markup needs entities. */
static void write_xml_ascii(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':	fputs("&amp;", f); break;
		case '<':	fputs("&lt;", f); break;
		case '>':	fputs("&gt;", f); break;
		case '"':	fputs("&quot;", f); break;
		case '\'':	fputs("&apos;", f); break;
		default:	fputc(s[i], f); break;
		}
	}
}

/*
 * flamegraph.pl's label: as many characters of the name as the frame is
 * wide at FG_CHAR_WIDTH each, the last two of them ".." when the name is
 * longer; nothing when fewer than three fit.  Characters are those of the
 * name as shown (escaped, an entity being one), the ones the script counts
 * when it fits a label again after a zoom.
 */
static void write_label(FILE *f, const char *name, double width)
{
	char shown[REPORT_ESC_SIZE];
	double fit = width / FG_CHAR_WIDTH;
	size_t len, chars;

	if (fit < 3)
		return;
	chars = (size_t)fit;
	len = strlen(esc_text(name, shown));
	if (len <= chars) {
		write_xml_ascii(f, shown, len);
	} else {
		write_xml_ascii(f, shown, chars - 2);
		fputs("..", f);
	}
}

static void write_frame(struct fg_ctx *c, uint32_t n, unsigned int depth,
			uint64_t start, double x, double w)
{
	const struct profile_node *node = &c->p->nodes[n];
	char esc[REPORT_ESC_SIZE];
	double y = c->inverted ? (double)(FG_TOP + depth * FG_FRAME_H) :
		   (double)(FG_TOP + (c->max_depth - depth) * FG_FRAME_H);
	unsigned int r, g, b;
	uint32_t ch;

	frame_colour(node, &r, &g, &b);
	fprintf(c->f, "<g data-start=\"%" PRIu64 "\"><title>%s (%" PRIu64
		" samples, %.2f%%)</title>", start, esc_xml(node->name, esc), node->total,
		100.0 * (double)node->total / (double)c->p->nodes[0].total);
	fprintf(c->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", x, y, w,
		FG_FRAME_H - 1, r, g, b);
	fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FG_FRAME_H - 4.5);
	write_label(c->f, node->name, w);
	fputs("</text>\n", c->f);

	for (ch = node->child; ch; ch = c->p->nodes[ch].sibling) {
		uint64_t samples = c->p->nodes[ch].total;
		double cw = (double)samples * c->px_per_sample;

		if (cw >= FG_MIN_WIDTH)
			write_frame(c, ch, depth + 1, start, x, cw);
		x += cw;
		start += samples;
	}
	fputs("</g>\n", c->f);
}

static void write_head(FILE *f, unsigned int width, unsigned int height)
{
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n",
		width, height, width, height);
	fprintf(f, "<style>\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: %dpx; }\n"
		"#subtitle { text-anchor: middle; fill: rgb(96,96,96); }\n"
		"#matched { text-anchor: end; }\n"
		"#unzoom, #search, #ignorecase { cursor: pointer; }\n"
		"#search, #ignorecase { opacity: 0.4; }\n"
		"#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity: 1; }\n"
		"#frames rect:hover { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"#frames text { pointer-events: none; }\n"
		".hide { display: none; }\n"
		".parent > rect, .parent > text { opacity: 0.5; }\n"
		"</style>\n", FG_FONT_SIZE, FG_FONT_SIZE + 5);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"rgb(248,248,248)\"/>\n",
		width, height);
}

/* The controls flamegraph.js brings to life, where flamegraph.pl has them. */
static void write_controls(FILE *f, unsigned int width, unsigned int height)
{
	fprintf(f, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
		FG_PAD, FG_TITLE_Y);
	fprintf(f, "<text id=\"search\" x=\"%u\" y=\"%d\">Search</text>\n",
		width - FG_PAD - 100, FG_TITLE_Y);
	fprintf(f, "<text id=\"ignorecase\" x=\"%u\" y=\"%d\">ic</text>\n",
		width - FG_PAD - 16, FG_TITLE_Y);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", FG_PAD, height - 8);
	fprintf(f, "<text id=\"matched\" class=\"hide\" x=\"%u\" y=\"%u\"> </text>\n",
		width - FG_PAD, height - 8);
}

/**
 * flamegraph_write() - the profile as an interactive SVG flame graph
 * @f: output
 * @p: the profile
 * @o: title, width, orientation
 *
 * Return: 0, or -1 on an output error.
 */
int flamegraph_write(FILE *f, const struct profile *p, const struct flamegraph_options *o)
{
	unsigned int width = o->width ? o->width : FLAMEGRAPH_WIDTH_DEFAULT;
	struct fg_ctx c = { .f = f, .p = p, .inverted = o->inverted };
	char esc[REPORT_ESC_SIZE];
	unsigned int height;

	if (p->nodes[0].total)
		c.px_per_sample = (double)(width - 2 * FG_PAD) / (double)p->nodes[0].total;
	c.max_depth = drawn_depth(&c, 0);
	height = FG_TOP + (c.max_depth + 1) * FG_FRAME_H + FG_BOTTOM;
	write_head(f, width, height);
	if (o->title)
		fprintf(f, "<text id=\"title\" x=\"%u\" y=\"%d\">%s</text>\n",
			width / 2, FG_TITLE_Y, esc_xml(o->title, esc));
	else
		fprintf(f, "<text id=\"title\" x=\"%u\" y=\"%d\">pvprof %s graph: %s</text>\n",
			width / 2, FG_TITLE_Y, o->inverted ? "icicle" : "flame",
			esc_xml(o->source, esc));
	fprintf(f, "<text id=\"subtitle\" x=\"%u\" y=\"%d\">%" PRIu64 " samples, %" PRIu64
		" frames unsymbolized; kernel frames orange, user frames red-yellow</text>\n",
		width / 2, FG_SUBTITLE_Y, p->stats.samples, p->stats.unsymbolized);
	write_controls(f, width, height);
	fputs("<g id=\"frames\">\n", f);
	if (p->nodes[0].total)
		write_frame(&c, 0, 0, 0, FG_PAD, width - 2 * FG_PAD);
	fputs("</g>\n", f);
	/* Last, so that the elements it looks up exist when it runs. */
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		flamegraph_script);
	return ferror(f) ? -1 : 0;
}

/**
 * report_write_flamegraph() - the flame graph with the default options
 * @f: output
 * @p: the profile
 * @source: the recording's name, in the title (escaped here)
 *
 * Return: 0, or -1 on an output error.
 */
int report_write_flamegraph(FILE *f, const struct profile *p, const char *source)
{
	struct flamegraph_options o = { .source = source };

	return flamegraph_write(f, p, &o);
}
