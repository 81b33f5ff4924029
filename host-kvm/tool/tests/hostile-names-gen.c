// SPDX-License-Identifier: GPL-2.0
/*
 * A recording whose guest agent names its functions and processes to
 * break an SVG flame graph: markup, quotes, ']]>' and '</script>', entity
 * look-alikes, control and non-ASCII bytes, a backslash, ';', a name that
 * is no valid regular expression, a symbol of 255 bytes, and a frame
 * without symbol in a file whose path is 255 bytes, whose "PATH+0xOFF"
 * label report cuts and ends with "...".
 * The names reach report through the real path: the agent's sideband in
 * the recording, read by the symbolizer.
 *
 * usage: hostile-names-gen OUT
 *
 * The stacks nest matches on purpose (a name under itself, a name in a
 * command and in its functions), for flamegraph-browser-test.sh's search
 * percentages; it computes what to expect from 'report --folded', not from
 * this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recgen.h"

#define MAP_START	0x0000555555554000ULL
#define MAP_LEN		0x10000ULL
#define FAR_START	0x00007f0000000000ULL	/* the long path, no symbols */

enum { MAIN, SCRIPT, CDATA, QUOTES, CONTROLS, NOT_REGEX, ENTITIES, COMMENT, LONG, NR_SYMS };
#define UNNAMED		NR_SYMS		/* a frame in the long path's mapping */

static char long_name[PVPROF_SB_NAME_MAX + 1], long_path[PVPROF_SB_NAME_MAX + 1];

/* ELF addresses in ascending order, as the ELF_SYMS encoder wants them. */
static struct {
	uint64_t addr, size;
	const char *name;
} syms[NR_SYMS] = {
	[MAIN]		= { 0x040, 0x40, "main" },
	[SCRIPT]	= { 0x080, 0x40, "</script><script>alert(\"x\")</script>" },
	[CDATA]		= { 0x0c0, 0x40, "]]><svg onload=alert(1)><![CDATA[" },
	[QUOTES]	= { 0x100, 0x40, "\"quoted\" & 'single' <b>bold</b>" },
	[CONTROLS]	= { 0x140, 0x40, "ctl\x01\x1b[31m\x7f\xff\\x3c;end" },
	[NOT_REGEX]	= { 0x180, 0x40, "array[0]::get" },
	[ENTITIES]	= { 0x1c0, 0x40, "&lt;not-an-entity&gt;&#60;&amp" },
	[COMMENT]	= { 0x200, 0x40, "<!-- x --><?pi x?>" },
	[LONG]		= { 0x400, 0x100, long_name },
};

struct stack {
	uint32_t pid, count;
	uint16_t nr;
	int funcs[8];		/* outermost first */
};

static const struct stack stacks[] = {
	{ 500, 3, 3, { MAIN, SCRIPT, CDATA } },
	{ 500, 2, 3, { MAIN, QUOTES, CDATA } },
	{ 500, 1, 3, { MAIN, CONTROLS, NOT_REGEX } },
	{ 500, 4, 4, { MAIN, QUOTES, LONG, QUOTES } },
	{ 500, 2, 3, { MAIN, UNNAMED, QUOTES } },
	{ 600, 1, 3, { MAIN, ENTITIES, COMMENT } },
};

static struct gen g;

static void gen_stack(const struct stack *s)
{
	uint64_t frames[8];
	uint16_t i;

	/* Innermost first in a callchain. */
	for (i = 0; i < s->nr; i++) {
		int fn = s->funcs[s->nr - 1 - i];

		frames[i] = fn == UNNAMED ? FAR_START + 0x8 : MAP_START + syms[fn].addr;
	}
	gen_chain(&g, s->pid, s->pid, PVPROF_CHAIN_F_USER, 0, s->nr, frames);
	gen_callchain(&g, 0, frames[0], 0);
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	struct pvprof_vcpu_status vcpu;
	struct pvprof_ctl_status ctl;
	static const char pattern[] = "</script>]]>&<'\"\x1b";
	static const char path[] = "/opt/\"evil\" <dir>/&bin";
	uint32_t samples = 0;
	size_t i, j;

	gen_prog = "hostile-names-gen";
	if (argc != 2)
		gen_die("usage: hostile-names-gen OUT");
	for (i = 0; i < sizeof(long_name) - 1; i++) {
		long_name[i] = pattern[i % (sizeof(pattern) - 1)];
		long_path[i] = pattern[(i + 3) % (sizeof(pattern) - 1)];
	}

	gen_host_vm(&host, &vm, "hostile-host", 1000ULL * 1000000000ULL);
	gen_status_of(&ctl, &vcpu, 1, 16384);
	g.time_ns = host.start_monotonic_ns;
	if (gen_open(&g, argv[1]) || gen_start(&g, &host, &vm, &ctl, &vcpu, 1))
		gen_die("cannot write the recording");
	gen_hello(&g, 1, 16384);
	/* A command name is 15 bytes at most. */
	gen_process(&g, 500, "\"</script>&'<x>", true);
	gen_process(&g, 600, "]]>\x01<!--&amp;", true);
	gen_mmap(&g, 500, MAP_START, MAP_LEN, 0xcd, path);
	gen_mmap(&g, 600, MAP_START, MAP_LEN, 0xcd, path);
	gen_mmap(&g, 500, FAR_START, MAP_LEN, 0xef, long_path);
	for (i = 0; i < NR_SYMS; i++)
		gen_elfsym(&g, 0xcd, syms[i].addr, syms[i].size, syms[i].name);
	gen_syms_end(&g);
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		for (j = 0; j < stacks[i].count; j++)
			gen_stack(&stacks[i]);
		samples += stacks[i].count;
	}
	vcpu.samples = vcpu.notices = vcpu.callchains = samples;
	if (gen_end(&g, &ctl, &vcpu, 1, PVPROF_DATA_STOP_DURATION, g.time_ns))
		gen_die("cannot finish the recording");
	return 0;
}
