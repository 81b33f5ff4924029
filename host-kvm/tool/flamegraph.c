// SPDX-License-Identifier: GPL-2.0
/*
 * An SVG flame graph written by kvm-pvprof itself.
 *
 * Self-contained and static: no script, no link, no external font or
 * style, nothing the guest controls outside escaped text.  Frames are laid
 * out as in FlameGraph's flamegraph.pl (root at the bottom, children in
 * name order left to right, width proportional to samples, frames under
 * 0.1 px left out); colours come from a hash of the name, so the same
 * profile always gives the same bytes.  Each frame's tooltip (<title>)
 * holds its full escaped name, sample count and share.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define FG_WIDTH	1200
#define FG_PAD		10
#define FG_FRAME_H	16
#define FG_TOP		40
#define FG_BOTTOM	24
#define FG_FONT_SIZE	12
#define FG_CHAR_W	7		/* average glyph width at FG_FONT_SIZE, px */
#define FG_MIN_WIDTH	0.1		/* px */

struct fg_ctx {
	FILE *f;
	const struct profile *p;
	double px_per_sample;
	unsigned int max_depth;
	uint64_t hidden;
};

static unsigned int tree_depth(const struct profile *p, uint32_t n)
{
	unsigned int d = 0;
	uint32_t c;

	for (c = p->nodes[n].child; c; c = p->nodes[c].sibling) {
		unsigned int dc = tree_depth(p, c) + 1;

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

/* Display width of one input byte once escaped: an entity is one glyph. */
static int glyph_width(char c, char *esc)
{
	char one[2] = { c, 0 };

	esc_xml(one, esc);
	return esc[0] == '&' ? 1 : (int)strlen(esc);
}

/* The label drawn in a frame: as many escaped characters as fit, then "..". */
static void write_fitted(FILE *f, const char *name, double width)
{
	int room = (int)((width - 6) / FG_CHAR_W), used = 0;
	size_t i, len = strnlen(name, REPORT_NAME_MAX + 1);
	bool cut = len > REPORT_NAME_MAX;
	char esc[8];

	if (room < 3)
		return;
	if (cut)
		len = REPORT_NAME_MAX;
	for (i = 0; i < len; i++)
		used += glyph_width(name[i], esc);
	if (!cut && used <= room) {
		for (i = 0; i < len; i++) {
			glyph_width(name[i], esc);
			fputs(esc, f);
		}
		return;
	}
	used = 0;
	for (i = 0; i < len; i++) {
		int w = glyph_width(name[i], esc);

		if (used + w > room - 2)
			break;
		fputs(esc, f);
		used += w;
	}
	fputs("..", f);
}

static void write_frame(struct fg_ctx *c, uint32_t n, unsigned int depth,
			double x, double w)
{
	const struct profile_node *node = &c->p->nodes[n];
	char esc[REPORT_ESC_SIZE];
	double y = FG_TOP + (double)(c->max_depth - depth) * FG_FRAME_H;
	unsigned int r, g, b;
	uint32_t ch;

	frame_colour(node, &r, &g, &b);
	fprintf(c->f, "<g><title>%s (%" PRIu64 " samples, %.2f%%)</title>",
		esc_xml(node->name, esc), node->total,
		100.0 * (double)node->total / (double)c->p->nodes[0].total);
	fprintf(c->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", x, y, w,
		FG_FRAME_H - 1, r, g, b);
	fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FG_FRAME_H - 4.5);
	write_fitted(c->f, node->name, w);
	fputs("</text></g>\n", c->f);

	for (ch = node->child; ch; ch = c->p->nodes[ch].sibling) {
		double cw = (double)c->p->nodes[ch].total * c->px_per_sample;

		if (cw < FG_MIN_WIDTH)
			c->hidden++;
		else
			write_frame(c, ch, depth + 1, x, cw);
		x += cw;
	}
}

/**
 * report_write_flamegraph() - the profile as an SVG flame graph
 * @f: output
 * @p: the profile
 * @title: shown at the top (escaped here)
 *
 * Return: 0, or -1 on an output error.
 */
int report_write_flamegraph(FILE *f, const struct profile *p, const char *title)
{
	struct fg_ctx c = { .f = f, .p = p };
	char esc[REPORT_ESC_SIZE];
	unsigned int height;

	c.max_depth = tree_depth(p, 0);
	height = FG_TOP + (c.max_depth + 1) * FG_FRAME_H + FG_BOTTOM;
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\">\n",
		FG_WIDTH, height, FG_WIDTH, height);
	fprintf(f, "<style>text { font-family: Verdana, sans-serif; font-size: %dpx; "
		"fill: rgb(0,0,0); } rect:hover { stroke: black; stroke-width: 0.5; }</style>\n",
		FG_FONT_SIZE);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"rgb(248,248,248)\"/>\n",
		FG_WIDTH, height);
	fprintf(f, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" style=\"font-size: 17px\">"
		"pvprof flame graph: %s</text>\n", FG_WIDTH / 2, esc_xml(title, esc));
	fprintf(f, "<text x=\"%d\" y=\"%u\">%" PRIu64 " samples, %" PRIu64
		" frames unsymbolized; kernel frames orange, user frames red-yellow</text>\n",
		FG_PAD, height - 8, p->stats.samples, p->stats.unsymbolized);
	if (p->nodes[0].total) {
		c.px_per_sample = (double)(FG_WIDTH - 2 * FG_PAD) / (double)p->nodes[0].total;
		write_frame(&c, 0, 0, FG_PAD, FG_WIDTH - 2 * FG_PAD);
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}
