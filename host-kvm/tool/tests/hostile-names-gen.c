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

#include "core/host.h"
#include "host-kvm/tool/recording.h"
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

static void die(const char *what)
{
	fprintf(stderr, "hostile-names-gen: %s\n", what);
	exit(2);
}

static void gen_mapping(uint32_t pid, uint64_t start, const char *path, uint8_t build_id)
{
	static uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_mmap *m = (void *)msg;

	memset(msg, 0, sizeof(msg));
	m->pid = pid;
	m->exec_gen = 1;
	m->start = start;
	m->len = MAP_LEN;
	m->build_id.size = 20;
	memset(m->build_id.bytes, build_id, 20);
	m->path_len = (uint16_t)strlen(path);
	memcpy(msg + sizeof(*m), path, m->path_len);
	gen_message(&g, m, PVPROF_SB_MMAP, sizeof(*m) + m->path_len);
}

static void gen_elf_syms(void)
{
	static uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_elf_syms *e = (void *)msg;
	struct pvprof_sb_sym_writer w;
	int i;

	memset(msg, 0, sizeof(msg));
	pvprof_sb_sym_writer_init(&w, msg, sizeof(*e), sizeof(msg), true, syms[0].addr);
	for (i = 0; i < NR_SYMS; i++) {
		if (pvprof_sb_sym_put(&w, syms[i].addr, syms[i].size, syms[i].name,
				      (uint32_t)strlen(syms[i].name)))
			die("a symbol does not fit the ELF_SYMS message");
	}
	e->build_id.size = 20;
	memset(e->build_id.bytes, 0xcd, 20);
	e->first = syms[0].addr;
	e->nr = (uint16_t)w.nr;
	gen_message(&g, e, PVPROF_SB_ELF_SYMS, w.len);
}

static void gen_stack(const struct stack *s)
{
	uint64_t rec_buf[(sizeof(struct pvprof_record) + 8 * PVPROF_MAX_DEPTH) / 8];
	struct pvprof_record *rec = (struct pvprof_record *)rec_buf;
	__u64 *frames = pvprof_record_frames(rec);
	struct pvprof_notice_facts facts = { .cpl = 3 };
	uint16_t i;

	memset(rec_buf, 0, sizeof(rec_buf));
	rec->seq = ++g.seq;
	rec->time_ns = g.time_ns;
	rec->pid = s->pid;
	rec->tid = s->pid;
	rec->exec_gen = 1;
	rec->flags = PVPROF_REC_F_USER;
	rec->nr_user = s->nr;
	rec->size = (uint16_t)(sizeof(*rec) + 8 * s->nr);
	/* Innermost first in a record. */
	for (i = 0; i < s->nr; i++) {
		int fn = s->funcs[s->nr - 1 - i];

		frames[i] = fn == UNNAMED ? FAR_START + 0x8 : MAP_START + syms[fn].addr;
	}
	facts.ip = frames[0];
	gen_put(&g, pvprof_st_put_callchain(g.buf + g.len, sizeof(g.buf) - g.len, 0,
					    g.time_ns, &facts, rec));
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host = {
		.start_realtime_ns = 1700000000ULL * 1000000000ULL,
		.start_monotonic_ns = 1000ULL * 1000000000ULL,
		.hostname = "hostile-host",
		.release = "6.1.0-test-amd64",
		.machine = "x86_64",
		.tool_version = "0.1",
	};
	struct pvprof_data_vm vm = {
		.vmm_pid = 4242, .vmm_fd = 11,
		.flags = PVPROF_DATA_VM_F_ENABLED_BY_US,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000, .sample_period = 1000000,
		.comm = "qemu-system-x86",
	};
	struct pvprof_vcpu_status vcpu = { .registered = 1, .size = 16384, .gpa = 0x100000 };
	struct pvprof_ctl_status ctl = { .flags = PVPROF_STATUS_F_ENABLED, .nr_vcpus = 1,
					 .sample_freq = 1000, .sample_period = 1000000 };
	struct recording_writer w;
	static const char pattern[] = "</script>]]>&<'\"\x1b";
	static const char path[] = "/opt/\"evil\" <dir>/&bin";
	uint32_t samples = 0;
	size_t i, j;

	gen_prog = "hostile-names-gen";
	if (argc != 2)
		die("usage: hostile-names-gen OUT");
	for (i = 0; i < sizeof(long_name) - 1; i++) {
		long_name[i] = pattern[i % (sizeof(pattern) - 1)];
		long_path[i] = pattern[(i + 3) % (sizeof(pattern) - 1)];
	}

	g.time_ns = host.start_monotonic_ns;
	if (recording_writer_open(&w, argv[1]) ||
	    recording_write_section(&w, PVPROF_DATA_SEC_HOST, &host, sizeof(host)) ||
	    recording_write_section(&w, PVPROF_DATA_SEC_VM, &vm, sizeof(vm)) ||
	    recording_write_status(&w, PVPROF_DATA_STATUS_START, &ctl, &vcpu, 1))
		die("cannot write the recording");
	gen_put(&g, pvprof_st_put_hello(g.buf, sizeof(g.buf), g.time_ns, 1));
	gen_put(&g, pvprof_st_put_vcpu(g.buf + g.len, sizeof(g.buf) - g.len, 0, g.time_ns,
				       PVPROF_VCPU_REGISTERED, 16384, 0x100000));
	/* A command name is 15 bytes at most. */
	gen_process(&g, 500, "\"</script>&'<x>", true);
	gen_process(&g, 600, "]]>\x01<!--&amp;", true);
	gen_mapping(500, MAP_START, path, 0xcd);
	gen_mapping(600, MAP_START, path, 0xcd);
	gen_mapping(500, FAR_START, long_path, 0xef);
	gen_elf_syms();
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		for (j = 0; j < stacks[i].count; j++)
			gen_stack(&stacks[i]);
		samples += stacks[i].count;
	}
	if (recording_write_stream(&w, g.buf, g.len))
		die("cannot write the stream");
	vcpu.samples = vcpu.notices = vcpu.records = samples;
	if (recording_write_status(&w, PVPROF_DATA_STATUS_END, &ctl, &vcpu, 1) ||
	    recording_writer_finish(&w, PVPROF_DATA_STOP_DURATION, g.time_ns))
		die("cannot finish the recording");
	return 0;
}
