// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of kvm-pvprof's recording reader and report writers, on recordings
 * synthesized with the core's stream encoders.
 *
 *   report-test gen FILE         write the golden recording (for the CLI tests)
 *   report-test run GOLDEN_DIR   run the tests; with PVPROF_UPDATE_GOLDEN=1
 *                                rewrite GOLDEN_DIR's files instead of
 *                                comparing (review the diff before committing)
 *
 * The golden recording has kernel-mode, user-mode, idle, empty, deepest
 * (120 frames) and hostile samples, losses, registrations, a sideband
 * message, an unknown entry type and two stream sections.  A stand-in
 * resolver gives the hostile samples hostile names (markup, ';', control
 * bytes, spaces and parentheses, UTF-8, 400 bytes), so every writer's
 * escaping is compared byte for byte.  The reader tests cut the recording
 * at every length and flip fields; each must give an error naming an
 * offset, never a crash (the fuzz target goes further).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sideband.h"
#include "core/stream.h"
#include "host-kvm/tool/flamegraph.h"
#include "host-kvm/tool/profile.h"
#include "host-kvm/tool/recording.h"
#include "host-kvm/tool/report_callgraph.h"
#include "host-kvm/tool/report_folded.h"
#include "host-kvm/tool/report_header.h"
#include "host-kvm/tool/report_resolve.h"
#include "host-kvm/tool/report_script.h"
#include "host-kvm/tool/report_select.h"
#include "host-kvm/tool/report_sort.h"
#include "host-kvm/tool/report_symbolizer.h"
#include "host-kvm/tool/symbolize.h"
#include "check.h"
#include "recgen.h"

/* ------------------------------------------------------------------ */
/* The golden recording                                                */
/* ------------------------------------------------------------------ */

#define K(n)	(0xffffffff81000000ULL + (n) * 0x100)
#define U(n)	(0x0000555555554000ULL + (n) * 0x40)

struct sample {
	uint32_t vcpu, pid, tid, flags;
	uint16_t nr_kernel, nr_user;
	uint64_t frames[PVPROF_MAX_DEPTH];
};

static void gen_sample(struct gen *g, const struct sample *s)
{
	gen_chain(g, s->pid, s->tid, s->flags, s->nr_kernel, s->nr_user, s->frames);
	gen_callchain(g, s->vcpu, s->nr_kernel + s->nr_user ? s->frames[0] : K(0), 0);
}

struct named {
	uint64_t addr, size;
	const char *name;
};

/*
 * What the guest agent publishes for the golden samples: the kernel (text
 * at K(0), symbols K(1)..K(5), then a boundary), and /usr/bin/writer mapped
 * at U(0) with ELF symbols, one of them hostile.
 */
static void gen_agent(struct gen *g)
{
	static const struct named ksyms[] = {
		{ K(1), 0, "vfs_write" }, { K(2), 0, "ksys_write" },
		{ K(3), 0, "do_syscall_64" }, { K(4), 0, "default_idle" },
		{ K(5), 0, "cpu_startup_entry" }, { K(6), 0, "_etext_boundary" },
	};
	static const struct named esyms[] = {
		{ 0x40, 0x40, "write_loop" }, { 0x80, 0x40, "main" },
		{ 0xc0, 0x40, "compute" },
		{ 0x280, 0x40, "<svg onload=alert(1)>;\x1b[31m" },
	};
	size_t i;

	gen_kernel(g, K(0), K(0) + 0x100000, sizeof(ksyms) / sizeof(ksyms[0]),
		   "6.1.0-test-amd64");
	for (i = 0; i < sizeof(ksyms) / sizeof(ksyms[0]); i++)
		gen_ksym(g, NULL, ksyms[i].addr, ksyms[i].name);
	gen_syms_end(g);
	gen_mmap(g, 100, U(0), 0x10000, 0xab, "/usr/bin/writer");
	gen_mmap(g, 200, U(0), 0x10000, 0xab, "/usr/bin/writer");	/* hostile names */
	for (i = 0; i < sizeof(esyms) / sizeof(esyms[0]); i++)
		gen_elfsym(g, 0xab, esyms[i].addr, esyms[i].size, esyms[i].name);
	gen_syms_end(g);
}

static const struct sample s_write = {	/* a write(2) from user code */
	.vcpu = 0, .pid = 100, .tid = 100, .nr_kernel = 3, .nr_user = 2,
	.frames = { K(1), K(2), K(3), U(1), U(2) },
};
static const struct sample s_user = {	/* user code computing */
	.vcpu = 1, .pid = 100, .tid = 101, .flags = PVPROF_CHAIN_F_USER,
	.nr_user = 3, .frames = { U(3), U(1), U(2) },
};
static const struct sample s_idle = {
	.vcpu = 1, .pid = 0, .tid = 0, .flags = PVPROF_CHAIN_F_KTHREAD,
	.nr_kernel = 2, .frames = { K(4), K(5) },
};
static const struct sample s_hostile = {
	.vcpu = 0, .pid = 200, .tid = 200,
	.flags = PVPROF_CHAIN_F_SKEWED | PVPROF_CHAIN_F_TRUNCATED,
	.nr_kernel = 2, .nr_user = 5,
	.frames = { K(10), K(11), U(10), U(11), U(12), U(13), U(14) },
};
static const struct sample s_empty = {	/* answered without a stack */
	.vcpu = 0, .pid = 100, .tid = 100, .flags = PVPROF_CHAIN_F_STALE,
};

static void gen_deep(struct sample *s)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->vcpu = 1;
	s->pid = 300;
	s->tid = 300;
	s->nr_kernel = 60;
	s->nr_user = PVPROF_MAX_DEPTH - 60;
	for (i = 0; i < 60; i++)
		s->frames[i] = K(100 + i);
	for (; i < PVPROF_MAX_DEPTH; i++)
		s->frames[i] = U(100 + i);
}

static void status_of(struct pvprof_ctl_status *ctl, struct pvprof_vcpu_status *v,
		      uint64_t samples)
{
	uint32_t i;

	gen_status_of(ctl, v, 2, 16384);
	for (i = 0; i < 2; i++)
		v[i].samples = v[i].notices = v[i].callchains = v[i].nmis = samples;
}

static int write_golden(const char *path)
{
	static struct gen g;
	struct pvprof_stream_hdr unknown = { .type = 99, .size = 32, .vcpu_id = ~0U };
	struct pvprof_vcpu_status vcpus[2];
	struct pvprof_ctl_status ctl;
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	struct sample deep;
	int i;

	gen_host_vm(&host, &vm, "golden-host", 1000ULL * 1000000000ULL);
	vm.duration_ns = 5000000000ULL;
	status_of(&ctl, vcpus, 0);
	g.time_ns = host.start_monotonic_ns;
	gen_deep(&deep);
	if (gen_open(&g, path) || gen_start(&g, &host, &vm, &ctl, vcpus, 2))
		return -1;

	gen_hello(&g, 2, 16384);
	gen_process(&g, 100, "writer", true);
	gen_process(&g, 200, "bad", false);
	gen_process(&g, 300, "<b>;\x1b[1m(x) y", true);
	gen_agent(&g);
	gen_sample(&g, &s_write);
	gen_sample(&g, &s_user);
	gen_sample(&g, &s_idle);
	gen_sample(&g, &s_hostile);
	gen_sample(&g, &deep);
	gen_sample(&g, &s_empty);
	unknown.host_time_ns = g.time_ns;
	memcpy(g.buf + g.len, &unknown, sizeof(unknown));
	memset(g.buf + g.len + sizeof(unknown), 0, 32 - sizeof(unknown));
	gen_put(&g, 32);
	gen_loss(&g, 0, PVPROF_LOSS_THROTTLED, 3);
	gen_loss(&g, 1, PVPROF_LOSS_NOTICE_RING_FULL, 2);
	if (gen_flush(&g))
		return -1;

	for (i = 0; i < 3; i++)
		gen_sample(&g, &s_write);
	for (i = 0; i < 2; i++)
		gen_sample(&g, &s_user);
	gen_loss(&g, 0, PVPROF_LOSS_STREAM_OVERFLOW, 1);
	gen_put(&g, pvprof_st_put_vcpu(g.buf + g.len, sizeof(g.buf) - g.len, 1, g.time_ns,
				       PVPROF_VCPU_UNREGISTERED, 16384, 0x200000));
	status_of(&ctl, vcpus, 6);
	return gen_end(&g, &ctl, vcpus, 2, PVPROF_DATA_STOP_DURATION, g.time_ns);
}

/* ------------------------------------------------------------------ */
/* The stand-in resolver: hostile names for pid 200                    */
/* ------------------------------------------------------------------ */

static char long_name[401];

static const struct {
	uint64_t addr;
	const char *symbol, *dso;
} syms[] = {
	{ K(1), "vfs_write", "[kernel.kallsyms]" },
	{ K(2), "ksys_write", "[kernel.kallsyms]" },
	{ K(3), "do_syscall_64", "[kernel.kallsyms]" },
	{ K(4), "default_idle", "[kernel.kallsyms]" },
	{ K(5), "cpu_startup_entry", "[kernel.kallsyms]" },
	{ K(10), "<script>alert(1)</script>", "[kernel.kallsyms]" },
	{ K(11), NULL, "[evil_mod]" },
	{ U(1), "write_loop", "/usr/bin/writer" },
	{ U(2), "main", "/usr/bin/writer" },
	{ U(3), "compute", "/usr/bin/writer" },
	{ U(10), "evil;frame\nnew line\r", "/tmp/evil dir/lib (1).so" },
	{ U(11), "\x1b[2J\x1b[31mred\x7f\\", "&amp;\"'<>" },
	{ U(12), "operator new (unsigned long)", "/lib/libstdc++.so" },
	{ U(13), "\xc3\xa9t\xc3\xa9_utf8\xff", NULL },
	{ U(14), long_name, "/usr/bin/evil" },
};

static void fake_resolve(void *ctx, bool kernel, uint32_t pid, uint32_t exec_gen,
			 uint64_t addr, struct pvprof_sym *out)
{
	size_t i;

	(void)ctx;
	(void)kernel;
	(void)pid;
	(void)exec_gen;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (syms[i].addr != addr)
			continue;
		out->symbol = syms[i].symbol;
		out->dso = syms[i].dso;
		out->offset = syms[i].symbol ? 0x10 : addr - K(0);
		return;
	}
}

static const char *fake_comm(void *ctx, uint32_t pid, uint32_t exec_gen)
{
	(void)ctx;
	(void)exec_gen;
	if (pid == 100)
		return "writer";
	if (pid == 200)
		return "evil comm\t;<b>&";
	return NULL;
}

static int fake_sideband(void *ctx, const void *msg, size_t len)
{
	(void)ctx;
	return pvprof_sideband_payload_check(msg, len) == PVPROF_SB_OK ? 0 : -EINVAL;
}

static const struct report_resolver fake = {
	.sideband = fake_sideband,
	.resolve = fake_resolve,
	.comm = fake_comm,
};

/* ------------------------------------------------------------------ */
/* Golden comparisons                                                  */
/* ------------------------------------------------------------------ */

static const char *golden_dir;
static bool update_golden;

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* The first differing line, for the message. */
static void first_diff(const char *a, const char *b, char *out, size_t size)
{
	unsigned int line = 1;
	size_t i = 0;

	while (a[i] && a[i] == b[i]) {
		line += a[i] == '\n';
		i++;
	}
	snprintf(out, size, "differs at line %u (byte %zu)", line, i);
}

static void golden(const char *name, const char *file, const char *got, size_t len)
{
	char path[4096], msg[128];
	size_t want_len;
	char *want;

	snprintf(path, sizeof(path), "%s/%s", golden_dir, file);
	if (update_golden) {
		FILE *f = fopen(path, "wb");

		if (!f || fwrite(got, 1, len, f) != len || fclose(f))
			fail(name, "cannot write %s", path);
		else
			pass(name);
		return;
	}
	want = read_file(path, &want_len);
	if (!want) {
		fail(name, "cannot read %s (PVPROF_UPDATE_GOLDEN=1 writes it)", path);
		return;
	}
	if (want_len != len || memcmp(want, got, len)) {
		first_diff(want, got, msg, sizeof(msg));
		fail(name, "output %s from %s", msg, path);
	} else {
		pass(name);
	}
	free(want);
}

typedef int (*writer_fn)(FILE *f, const struct recording *r, const struct profile *p);

/* The top tables of test_golden()'s profile: --sort self and --sort total. */
static struct report_table *table_self, *table_total;

static int w_report(FILE *f, const struct recording *r, const struct profile *p)
{
	struct report_filter none = { .vcpu = -1, .pid = -1 };

	return report_write_header(f, "golden.data", r, p, &none, &fake) ||
	       report_write_table(f, table_self, p, 0, 0);
}

static int w_total(FILE *f, const struct recording *r, const struct profile *p)
{
	(void)r;
	return report_write_table(f, table_total, p, 5, 0);
}

static int w_callgraph(FILE *f, const struct recording *r, const struct profile *p)
{
	(void)r;
	return report_write_callgraph(f, p, NULL);
}

static int w_folded(FILE *f, const struct recording *r, const struct profile *p)
{
	(void)r;
	return report_write_folded(f, p);
}

static int w_svg(FILE *f, const struct recording *r, const struct profile *p)
{
	(void)r;
	return report_write_flamegraph(f, p, "golden <&> title");
}

/* Runs a writer into memory; the caller frees *out. */
static int capture(writer_fn fn, const struct recording *r, const struct profile *p,
		   char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	int ret;

	if (!f)
		return -1;
	ret = fn(f, r, p);
	if (fclose(f))
		ret = -1;
	return ret;
}

static bool has_raw_byte(const char *s, size_t len, bool allow_newline)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && !(allow_newline && c == '\n') && c != '\t') || c >= 0x7f)
			return true;
	}
	return false;
}

/*
 * The one script is the tool's own, byte for byte; outside it no other
 * script, event attribute, link or raw markup from the hostile names.
 */
static void check_svg_safe(const char *svg, size_t len)
{
	static const char *const banned[] = {
		"<script", "onload", "onclick", "onmouse", "javascript:", "href",
		"<b>", "<foreignObject", "]]>", "<!",
	};
	static const char open_tag[] = "<script type=\"text/ecmascript\"><![CDATA[\n";
	static const char close_tag[] = "]]></script>";
	size_t i, script_len = strlen(open_tag) + strlen(flamegraph_script) + strlen(close_tag);
	char *script = malloc(script_len + 1), *at, *rest;

	if (!script) {
		fail("svg: no active content", "out of memory");
		return;
	}
	snprintf(script, script_len + 1, "%s%s%s", open_tag, flamegraph_script, close_tag);
	at = memmem(svg, len, script, script_len);
	rest = at ? malloc(len - script_len) : NULL;
	if (!rest) {
		fail("svg: its script is flamegraph.js, unchanged", "not found");
		free(script);
		return;
	}
	pass("svg: its script is flamegraph.js, unchanged");
	memcpy(rest, svg, (size_t)(at - svg));
	memcpy(rest + (at - svg), at + script_len, len - (size_t)(at - svg) - script_len);
	for (i = 0; i < sizeof(banned) / sizeof(banned[0]); i++) {
		if (memmem(rest, len - script_len, banned[i], strlen(banned[i]))) {
			fail("svg: no other active content", "found '%s'", banned[i]);
			break;
		}
	}
	if (i == sizeof(banned) / sizeof(banned[0]))
		pass("svg: no other active content");
	free(rest);
	free(script);
	if (has_raw_byte(svg, len, true))
		fail("svg: plain ASCII", "a control or non-ASCII byte is in the SVG");
	else
		pass("svg: plain ASCII");
}

/* Each folded line: frames without ';' inside, a space, a positive count. */
static void check_folded(const char *s, const struct profile *p)
{
	uint64_t sum = 0;
	const char *line = s;
	unsigned int lines = 0;

	while (*line) {
		const char *nl = strchr(line, '\n'), *sp;
		char *end;
		unsigned long long n;

		if (!nl) {
			fail("folded: structure", "last line without a newline");
			return;
		}
		sp = nl;
		while (sp > line && sp[-1] != ' ')
			sp--;
		if (sp == line || sp == nl) {
			fail("folded: structure", "line %u has no count", lines + 1);
			return;
		}
		n = strtoull(sp, &end, 10);
		if (end != nl || !n || sp[-1] != ' ' || sp - 1 == line) {
			fail("folded: structure", "line %u: bad count", lines + 1);
			return;
		}
		if (line[0] == ';' || sp[-2] == ';' ||
		    (strstr(line, ";;") && strstr(line, ";;") < sp)) {
			fail("folded: structure", "line %u has an empty frame", lines + 1);
			return;
		}
		sum += n;
		lines++;
		line = nl + 1;
	}
	if (sum != p->stats.samples)
		fail("folded: counts add up to the samples", "%" PRIu64 " != %" PRIu64,
		     sum, p->stats.samples);
	else
		pass("folded: counts add up to the samples");
	if (has_raw_byte(s, strlen(s), true))
		fail("folded: structure", "a control or non-ASCII byte");
	else
		pass("folded: structure");
}

static void test_golden(const char *data_path)
{
	static const struct {
		const char *name, *file;
		writer_fn fn;
	} outs[] = {
		{ "golden: report (symbolized, hostile names)", "sym-report.txt", w_report },
		{ "golden: top by total, limit 5", "sym-total.txt", w_total },
		{ "golden: call graph", "sym-callgraph.txt", w_callgraph },
		{ "golden: folded stacks", "sym-folded.txt", w_folded },
		{ "golden: flame graph SVG", "sym-flamegraph.svg", w_svg },
	};
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	struct report_sort_spec by_self, by_total;
	char err[512], *out, *again;
	struct recording r;
	struct profile p;
	size_t len, len2, i;

	if (report_sort_parse("self", &by_self) || report_sort_parse("total", &by_total) ||
	    !(table_self = report_table_new(&by_self)) ||
	    !(table_total = report_table_new(&by_total))) {
		fail("golden: the top tables", "cannot make them");
		return;
	}
	if (recording_load(&r, data_path, err, sizeof(err))) {
		fail("golden: load the recording", "%s", err);
		return;
	}
	pass("golden: load the recording");
	if (r.stream_entries != 27 || !r.has_end || !r.start.present || !r.end_status.present)
		fail("golden: reader counts", "%" PRIu64 " entries, end %d",
		     r.stream_entries, r.has_end);
	else
		pass("golden: reader counts");
	if (profile_build_sink(&p, &r, &none, &fake,
			       report_table_sink(table_self, report_table_sink(table_total, NULL)))) {
		fail("golden: build the profile", "failed");
		recording_free(&r);
		return;
	}
	if (p.stats.callchains != 11 || p.stats.samples != 11 || p.stats.stale != 1 ||
	    p.stats.skewed != 1 || p.stats.truncated != 1 || p.stats.empty != 1 ||
	    p.stats.losses[PVPROF_LOSS_THROTTLED] != 3 ||
	    p.stats.losses[PVPROF_LOSS_NOTICE_RING_FULL] != 2 ||
	    p.stats.losses[PVPROF_LOSS_STREAM_OVERFLOW] != 1 ||
	    p.stats.sideband != 8 || p.stats.sideband_rejected != 1 ||
	    p.stats.unknown != 1 || p.stats.unsymbolized != 1 + 120 ||
	    p.stats.vcpu_events[PVPROF_VCPU_REGISTERED] != 2)
		fail("golden: header totals", "callchains %" PRIu64 " stale %" PRIu64
		     " unsymbolized %" PRIu64 " rejected %" PRIu64, p.stats.callchains,
		     p.stats.stale, p.stats.unsymbolized, p.stats.sideband_rejected);
	else
		pass("golden: header totals");

	for (i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		if (capture(outs[i].fn, &r, &p, &out, &len)) {
			fail(outs[i].name, "the writer failed");
			continue;
		}
		golden(outs[i].name, outs[i].file, out, len);
		if (outs[i].fn == w_svg) {
			check_svg_safe(out, len);
			/* Deterministic: the same profile again gives the same bytes. */
			if (capture(w_svg, &r, &p, &again, &len2) || len2 != len ||
			    memcmp(out, again, len))
				fail("svg: deterministic", "a second run differs");
			else
				pass("svg: deterministic");
			free(again);
		}
		if (outs[i].fn == w_folded)
			check_folded(out, &p);
		if (outs[i].fn == w_report &&
		    (!strstr(out, "\\x1b[2J\\x1b[31mred\\x7f\\x5c") ||
		     has_raw_byte(out, len, true)))
			fail("text: control bytes escaped", "raw or unescaped bytes in the report");
		else if (outs[i].fn == w_report)
			pass("text: control bytes escaped");
		free(out);
	}
	out = NULL;
	{
		FILE *f = open_memstream(&out, &len);

		if (!f || report_write_script(f, &r, &none, &fake, NULL, NULL) || fclose(f))
			fail("golden: perf script", "the writer failed");
		else
			golden("golden: perf script", "sym-script.txt", out, len);
		free(out);
	}
	profile_free(&p);
	recording_free(&r);
	report_table_free(table_self);
	report_table_free(table_total);
}

static void test_filters(const char *data_path)
{
	static const struct {
		const char *name;
		struct report_filter f;
		uint64_t samples, frames;
	} cases[] = {
		{ "filter: vcpu 1", { .vcpu = 1, .pid = -1 }, 5, 3 * 3 + 2 + 120 },
		{ "filter: pid 100", { .vcpu = -1, .pid = 100 }, 8, 4 * 5 + 3 * 3 },
		{ "filter: comm writer", { .vcpu = -1, .pid = -1, .comm = "writer" }, 8, 29 },
		{ "filter: kernel frames", { .vcpu = -1, .pid = -1, .flags = REPORT_F_KERNEL_ONLY },
		  7, 4 * 3 + 2 + 2 + 60 },
		{ "filter: user frames", { .vcpu = -1, .pid = -1, .flags = REPORT_F_USER_ONLY },
		  9, 4 * 2 + 3 * 3 + 5 + 60 },
		{ "filter: pid without samples", { .vcpu = -1, .pid = 7 }, 0, 0 },
	};
	char err[512];
	struct recording r;
	size_t i;

	if (recording_load(&r, data_path, err, sizeof(err))) {
		fail("filters: load", "%s", err);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profile p;

		if (profile_build(&p, &r, &cases[i].f, &fake))
			fail(cases[i].name, "build failed");
		else if (p.stats.samples != cases[i].samples || p.stats.frames != cases[i].frames)
			fail(cases[i].name, "%" PRIu64 " samples, %" PRIu64 " frames; expected %"
			     PRIu64 ", %" PRIu64, p.stats.samples, p.stats.frames,
			     cases[i].samples, cases[i].frames);
		else if (p.stats.callchains != 11)
			fail(cases[i].name, "the header total changed with the filter");
		else
			pass(cases[i].name);
		profile_free(&p);
	}
	recording_free(&r);
}

/* Self and total: each function once per sample, self only innermost. */
static void test_self_total(const char *data_path)
{
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	uint64_t self_sum = 0;
	bool ok = true;
	char err[512];
	struct recording r;
	struct profile p;
	uint32_t i;

	if (recording_load(&r, data_path, err, sizeof(err)) ||
	    profile_build(&p, &r, &none, &fake)) {
		fail("top: self and total", "load or build failed");
		return;
	}
	for (i = 0; i < p.nr_funcs; i++) {
		const struct profile_func *fn = &p.funcs[i];

		self_sum += fn->self;
		if (fn->self > fn->total || fn->total > p.stats.samples)
			ok = false;
		if (!strcmp(fn->name, "main") && (fn->total != 7 || fn->self))
			ok = false;
		if (!strcmp(fn->name, "vfs_write") && (fn->total != 4 || fn->self != 4))
			ok = false;
		if (!strcmp(fn->name, "compute") && (fn->total != 3 || fn->self != 3))
			ok = false;
	}
	/* Every sample with a frame has exactly one innermost function. */
	if (!ok || self_sum != p.stats.samples - p.stats.empty)
		fail("top: self and total", "self sum %" PRIu64 ", samples %" PRIu64,
		     self_sum, p.stats.samples);
	else
		pass("top: self and total");
	profile_free(&p);
	recording_free(&r);
}

/* ------------------------------------------------------------------ */
/* Reader against damaged recordings                                   */
/* ------------------------------------------------------------------ */

static bool parse_fails(const uint8_t *buf, size_t len, const char *want, char *err,
			size_t err_size)
{
	struct recording r;

	if (!recording_parse(&r, buf, len, err, err_size)) {
		recording_free(&r);
		return false;
	}
	return strstr(err, "offset ") == err && (!want || strstr(err, want));
}

static bool same_cut(const struct recording_cut *a, const struct recording_cut *b)
{
	return a->cut == b->cut && a->in_header == b->in_header && a->at == b->at &&
	       a->section == b->section && a->type == b->type && a->size == b->size &&
	       a->kept == b->kept && a->entries_lost == b->entries_lost;
}

/* The same cut read from a file: the window reader must agree with memory. */
static bool file_agrees(const uint8_t *data, size_t cut, const struct recording *mem)
{
	char path[4096], err[512];
	struct recording r;
	bool same;
	FILE *f;

	snprintf(path, sizeof(path), "%s/report-test-cut.%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, cut, f) != cut || fclose(f))
		return false;
	if (recording_load(&r, path, err, sizeof(err))) {
		unlink(path);
		return false;
	}
	same = r.stream_entries == mem->stream_entries &&
	       r.stream_bytes == mem->stream_bytes && r.has_end == mem->has_end &&
	       same_cut(&r.cut, &mem->cut);
	recording_free(&r);
	unlink(path);
	return same;
}

/*
 * Every cut past the file header is read up to its last whole entry: the
 * entries read never decrease as the cut moves on, and what the reader
 * says of the cut stays within the bytes it was given.
 */
static void test_truncation(const uint8_t *data, size_t len)
{
	const size_t header = sizeof(struct pvprof_data_header);
	uint64_t last_entries = 0;
	size_t cut, bad = 0, at = 0, file_bad = 0;
	char err[512], why[600] = "";
	uint8_t *copy;

	/* Exact-size copies, so that ASan (in the fuzz build) sees overreads too. */
	for (cut = 0; cut < len; cut++) {
		struct recording r;
		bool ok;

		copy = malloc(cut ? cut : 1);
		memcpy(copy, data, cut);
		if (recording_parse(&r, copy, cut, err, sizeof(err))) {
			ok = cut < header && strstr(err, "offset ") == err;
			if (!ok)
				snprintf(why, sizeof(why), "refused: %s", err);
		} else {
			ok = cut >= header && !r.has_end && r.stream_entries >= last_entries &&
			     (!r.cut.cut || (r.cut.at == cut && r.cut.kept <= cut &&
					     r.cut.section <= r.cut.kept));
			if (!ok)
				snprintf(why, sizeof(why), "%" PRIu64 " entries after %" PRIu64
					 ", cut %d at %" PRIu64 " kept %" PRIu64, r.stream_entries,
					 last_entries, r.cut.cut, r.cut.at, r.cut.kept);
			last_entries = r.stream_entries;
			/* Every 16th cut, and each one in the first sections. */
			if ((cut % 16 == 0 || cut < 1024) && !file_agrees(data, cut, &r))
				file_bad++;
			recording_free(&r);
		}
		if (!ok) {
			bad++;
			at = cut;
		}
		free(copy);
	}
	if (bad)
		fail("reader: every truncation", "%zu cuts misjudged, e.g. at %zu: %s", bad, at, why);
	else
		pass("reader: every truncation read up to its last whole entry");
	if (file_bad)
		fail("reader: truncations read from a file", "%zu disagree with memory", file_bad);
	else
		pass("reader: truncations read from a file agree with memory");
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void test_damage(const uint8_t *data, size_t len)
{
	/* Offsets in the golden file: header 24, HOST section header at 24. */
	const size_t host_sec = 24, vm_sec = host_sec + 16 + 176;
	const size_t status_sec = vm_sec + 16 + 328;
	size_t stream_sec, stream;
	uint8_t *b = malloc(len);
	char err[512];

	memcpy(b, data, len);
	{
		uint64_t st_size;

		memcpy(&st_size, data + status_sec + 8, 8);
		stream_sec = status_sec + 16 + ((st_size + 7) & ~7ULL);
		stream = stream_sec + 16;
	}

#define DAMAGE(label, expect, stmt) do {				\
		memcpy(b, data, len);					\
		stmt;							\
		if (parse_fails(b, len, expect, err, sizeof(err)))	\
			pass("reader: " label);				\
		else							\
			fail("reader: " label, "got '%s'", err);	\
	} while (0)

	DAMAGE("bad magic", "bad magic", b[0] ^= 1);
	DAMAGE("future version", "version 2", put_u32(b + 8, 2));
	DAMAGE("section flags", "flags", put_u32(b + host_sec + 4, 1));
	DAMAGE("huge section", "at most", put_u32(b + host_sec + 12, 1));
	DAMAGE("HOST size", "HOST section", put_u32(b + host_sec + 8, 175));
	DAMAGE("VM flags", "unknown flags", put_u32(b + vm_sec + 16 + 8, 0x80));
	DAMAGE("STATUS vCPU count", "vCPUs", put_u32(b + status_sec + 16 + 4, 3));
	DAMAGE("STATUS moment", "unknown moment", put_u32(b + status_sec + 16, 9));
	DAMAGE("stream without HELLO", "does not start with HELLO",
	       memcpy(b + stream, data + stream + 40, 40));
	DAMAGE("stream entry size", "malformed stream entry", put_u32(b + stream + 4, 12));
	DAMAGE("stream reserved field", "reserved_nonzero", put_u32(b + stream + 12, 1));
	DAMAGE("stream entry past its section", "cut by the end of its section",
	       put_u32(b + stream + 4, 8192));
	DAMAGE("second HELLO", "second stream HELLO",
	       memcpy(b + stream + 40, data + stream, 40));
	DAMAGE("END counts", "END section counts", b[len - 32 + 8] ^= 1);
	DAMAGE("END stop reason", "stop reason", put_u32(b + len - 32 + 24, 0));
	free(b);

	/* A section of a newer writer is skipped; its padding must be zero. */
	b = malloc(len + 24);
	memcpy(b, data, 24);
	put_u32(b + 24, 77);
	put_u32(b + 28, 0);
	memcpy(b + 32, "\3\0\0\0\0\0\0\0abc\0\0\0\0\0", 16);
	memcpy(b + 48, data + 24, len - 24);
	{
		struct recording r;

		if (recording_parse(&r, b, len + 24, err, sizeof(err)) || !r.has_end)
			fail("reader: unknown section skipped", "got '%s'", err);
		else
			pass("reader: unknown section skipped");
		recording_free(&r);
	}
	b[47] = 1;
	if (parse_fails(b, len + 24, "nonzero padding", err, sizeof(err)))
		pass("reader: nonzero padding");
	else
		fail("reader: nonzero padding", "got '%s'", err);
	free(b);

	/* Trailing bytes after END. */
	b = calloc(1, len + 8);
	memcpy(b, data, len);
	if (parse_fails(b, len + 8, "after the END section", err, sizeof(err)))
		pass("reader: bytes after END");
	else
		fail("reader: bytes after END", "got '%s'", err);
	free(b);
}

static void test_reader(const char *data_path)
{
	size_t len;
	uint8_t *data = (uint8_t *)read_file(data_path, &len);
	char err[512];
	struct recording r;

	if (!data) {
		fail("reader: read the recording", "%s", strerror(errno));
		return;
	}
	test_truncation(data, len);
	test_damage(data, len);
	if (recording_load(&r, "/nonexistent/pvprof.data", err, sizeof(err)) &&
	    strstr(err, "No such file"))
		pass("reader: missing file");
	else
		fail("reader: missing file", "got '%s'", err);
	if (recording_load(&r, "/", err, sizeof(err)) && strstr(err, "not a regular file"))
		pass("reader: a directory");
	else
		fail("reader: a directory", "got '%s'", err);
	free(data);
}

/* Writer errors: a full disk must be reported, not ignored. */
/*
 * A sample taken before the agent published anything, then the agent's
 * messages, then the same sample again: the report names both alike.
 */
static int write_late_symbols(const char *path)
{
	static struct gen g;
	struct pvprof_data_host host = { .hostname = "late-host", .machine = "x86_64" };
	struct pvprof_data_vm vm = { .vmm_pid = 4242, .event = PVPROF_EVENT_CPU_CLOCK,
				     .sample_freq = 1000, .sample_period = 1000000 };

	g.time_ns = 1000ULL * 1000000000ULL;
	if (gen_open(&g, path) || gen_start(&g, &host, &vm, NULL, NULL, 0))
		return -1;
	gen_hello(&g, 1, 0);
	gen_sample(&g, &s_write);
	gen_process(&g, 100, "writer", true);
	gen_agent(&g);
	gen_sample(&g, &s_write);
	return gen_end(&g, NULL, NULL, 0, PVPROF_DATA_STOP_DURATION, g.time_ns);
}

static void test_late_symbols(const char *dir)
{
	static const char name[] = "symbolizer: a sample before the agent's tables";
	static const char want[] = "writer;main;write_loop;do_syscall_64;ksys_write;vfs_write 2\n";
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	struct pvprof_symbolizer *sym;
	struct report_resolver res;
	char path[4096], err[512];
	struct recording r;
	struct profile p;
	char *folded = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/report-test.%d.late.data", dir, (int)getpid());
	if (write_late_symbols(path) || recording_load(&r, path, err, sizeof(err))) {
		fail(name, "cannot write or load %s", path);
		unlink(path);
		return;
	}
	unlink(path);
	/* Fed in stream order alone, the first sample has no names. */
	sym = pvprof_symbolizer_new();
	symbolizer_resolver(sym, &res);
	if (!sym || profile_build(&p, &r, &none, &res))
		fail(name, "build failed");
	else if (p.stats.unsymbolized != 5)
		fail(name, "stream order alone: %" PRIu64 " frames unsymbolized, expected 5",
		     p.stats.unsymbolized);
	else
		pass("symbolizer: stream order alone leaves the early sample unnamed");
	profile_free(&p);
	pvprof_symbolizer_free(sym);

	sym = recording_symbolizer(&r);
	symbolizer_resolver(sym, &res);
	if (!sym || profile_build(&p, &r, &none, &res) ||
	    capture(w_folded, &r, &p, &folded, &len))
		fail(name, "build failed");
	else if (p.stats.unsymbolized || strcmp(folded, want))
		fail(name, "%" PRIu64 " frames unsymbolized, folded:\n%s", p.stats.unsymbolized,
		     folded);
	else
		pass(name);
	free(folded);
	profile_free(&p);
	pvprof_symbolizer_free(sym);
	recording_free(&r);
}

/*
 * Frame-pointer mode made honest (issue 23, item 4), with the symbolizer
 * fed the agent's sideband of gen_agent(): /usr/bin/writer mapped at U(0)
 * for pid 100, nothing for pid 300, kernel text at K(0) .. K(0) + 1 MiB.
 * 0x2785bb4a is the kind of "return address" a frame-pointer walk reads
 * past code without frame pointers (a real one, from the unwind workload).
 */
#define FP_GARBAGE	0x2785bb4aULL
#define K_PAST_ETEXT	(K(0) + 0x200000)	/* idle, .init: past _etext */
#define K_BELOW_STEXT	(K(0) - 0x40)
#define K_BEFORE_SYMS	(K(0) + 0x10)		/* in the text, before any symbol */

static const struct sample s_fp_cut = {	/* the second user frame is garbage */
	.vcpu = 0, .pid = 100, .tid = 100,
	.flags = PVPROF_CHAIN_F_USER | PVPROF_CHAIN_F_TRUNCATED,
	.nr_user = 4, .frames = { U(3), FP_GARBAGE, U(2), U(1) },
};
static const struct sample s_fp_inside = {	/* every frame in the mapping */
	.vcpu = 0, .pid = 100, .tid = 100, .flags = PVPROF_CHAIN_F_USER,
	.nr_user = 3, .frames = { U(3), U(1), U(2) },
};
static const struct sample s_fp_nomaps = {	/* an image without mappings */
	.vcpu = 0, .pid = 300, .tid = 300,
	.flags = PVPROF_CHAIN_F_USER | PVPROF_CHAIN_F_TRUNCATED,
	.nr_user = 3, .frames = { U(3), FP_GARBAGE, U(2) },
};
static const struct sample s_kernel_outside = {	/* kernel frames kallsyms does not name */
	.vcpu = 1, .pid = 100, .tid = 100, .nr_kernel = 4, .nr_user = 2,
	.frames = { K_PAST_ETEXT, K_BELOW_STEXT, K_BEFORE_SYMS, K(3), U(1), U(2) },
};

static int write_fp_honest(const char *path)
{
	static struct gen g;
	struct pvprof_data_host host = { .hostname = "fp-host", .machine = "x86_64" };
	struct pvprof_data_vm vm = { .vmm_pid = 4242, .event = PVPROF_EVENT_CPU_CLOCK,
				     .sample_freq = 1000, .sample_period = 1000000 };
	struct sample deep;

	g.time_ns = 1000ULL * 1000000000ULL;
	gen_deep(&deep);		/* pid 300, 120 frames: the depth limit */
	deep.flags = PVPROF_CHAIN_F_TRUNCATED;
	if (gen_open(&g, path) || gen_start(&g, &host, &vm, NULL, NULL, 0))
		return -1;
	gen_hello(&g, 2, 0);
	gen_process(&g, 100, "writer", true);
	gen_process(&g, 300, "nomaps", true);
	gen_agent(&g);
	gen_sample(&g, &s_fp_cut);
	gen_sample(&g, &s_fp_inside);
	gen_sample(&g, &s_fp_nomaps);
	gen_sample(&g, &deep);
	gen_sample(&g, &s_kernel_outside);
	return gen_end(&g, NULL, NULL, 0, PVPROF_DATA_STOP_DURATION, g.time_ns);
}

/* NAME passes when OUT holds WANT. */
static void expect_in(const char *name, const char *out, const char *want)
{
	if (out && strstr(out, want))
		pass(name);
	else
		fail(name, "'%s' not in:\n%s", want, out ? out : "(no output)");
}

static void test_fp_honest(const char *dir)
{
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	struct pvprof_symbolizer *sym;
	struct report_resolver res;
	char path[4096], err[512], *hdr = NULL, *folded = NULL, *svg = NULL;
	char *script = NULL;
	size_t len;
	struct recording r;
	struct profile p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/report-test.%d.fp.data", dir, (int)getpid());
	if (write_fp_honest(path) || recording_load(&r, path, err, sizeof(err))) {
		fail("fp honest: the recording", "cannot write or load %s", path);
		unlink(path);
		return;
	}
	unlink(path);
	sym = recording_symbolizer(&r);
	if (!sym) {
		fail("fp honest: the symbolizer", "out of memory");
		recording_free(&r);
		return;
	}
	symbolizer_resolver(sym, &res);
	if (profile_build(&p, &r, &none, &res)) {
		fail("fp honest: build the profile", "failed");
		pvprof_symbolizer_free(sym);
		recording_free(&r);
		return;
	}
	f = open_memstream(&hdr, &len);
	if (f) {
		report_write_header(f, "fp.data", &r, &p, &none, &res);
		fclose(f);
	}
	capture(w_folded, &r, &p, &folded, &len);
	capture(w_svg, &r, &p, &svg, &len);
	f = open_memstream(&script, &len);
	if (f) {
		report_write_script(f, &r, &none, &res, NULL, NULL);
		fclose(f);
	}

	expect_in("fp honest: a garbage second user frame cuts the chain there",
		  folded, "\nwriter;compute 1\n");
	expect_in("fp honest: a chain inside the mapping is unchanged",
		  folded, "\nwriter;main;write_loop;compute 1\n");
	expect_in("fp honest: an image without mappings keeps its chain",
		  folded, "nomaps;0x555555554080;0x2785bb4a;0x5555555540c0 1\n");
	expect_in("fp honest: the header counts the cut samples and frames", hdr,
		  "# frame-pointer chains cut at a return address outside the image's code: 1 (3 frames)\n");
	expect_in("fp honest: truncated by depth limit and by walk end", hdr,
		  "# truncated: 3 (stacks that end before their outermost caller): at the depth"
		  " limit 1,\n#   where the frame-pointer walk ended 2\n");
	expect_in("fp honest: kernel frames outside kallsyms in folded stacks", folded,
		  "writer;main;write_loop;do_syscall_64;[kernel.kallsyms]+0x10;"
		  "[kernel.kallsyms]-0x40;[kernel.kallsyms]+0x200000 1\n");
	expect_in("fp honest: kernel frames outside kallsyms in the flame graph", svg,
		  ">[kernel.kallsyms]+0x200000<");
	expect_in("fp honest: kernel frame past _etext in perf script", script,
		  "ffffffff81200000 [kernel.kallsyms]+0x200000 ([kernel.kallsyms])\n");
	expect_in("fp honest: kernel frame below _stext in perf script", script,
		  "ffffffff80ffffc0 [kernel.kallsyms]-0x40 ([kernel.kallsyms])\n");
	expect_in("fp honest: kernel frame before the first symbol in perf script", script,
		  "ffffffff81000010 [kernel.kallsyms]+0x10 ([kernel.kallsyms])\n");
	if (script && strstr(script, "ffffffff81200000 [unknown]"))
		fail("fp honest: no kernel frame is a raw [unknown]", "in script:\n%s", script);
	else
		pass("fp honest: no kernel frame is a raw [unknown]");
	free(hdr);
	free(folded);
	free(svg);
	free(script);
	profile_free(&p);
	pvprof_symbolizer_free(sym);
	recording_free(&r);
}

/*
 * The same addresses meaning other functions as the stream goes on
 * (report_cache.c keeps what frames resolved to): pid 100's U(1) and U(2)
 * before any mapping of it in the stream (named from the recording's last
 * one), in /usr/bin/old, in /usr/lib/new.so mapped over it, then after an
 * exec in /usr/bin/exec, and in new.so again for a sample of the old image
 * that came after the exec; the kernel frame K(1) + 0x10 before and after
 * the kernel was laid out anew (another boot).  REBIND_X is in no mapping of
 * the process: the frame-pointer chain is cut there once a mapping is known.
 */
#define REBIND_K	(K(1) + 0x10)
#define REBIND_X	(U(0) + 0x20000)

static void rebind_sample(struct gen *g)
{
	static const uint64_t frames[] = { REBIND_K, U(1), U(2), REBIND_X };

	gen_chain(g, 100, 100, 0, 1, 3, frames);
	gen_callchain(g, 0, REBIND_K, 0);
}


static int write_rebind(const char *path)
{
	static struct gen g;
	struct pvprof_data_host host = { .hostname = "rebind-host", .machine = "x86_64" };
	struct pvprof_data_vm vm = { .vmm_pid = 4242, .event = PVPROF_EVENT_CPU_CLOCK,
				     .sample_freq = 1000, .sample_period = 1000000 };

	memset(&g, 0, sizeof(g));
	g.time_ns = 1000ULL * 1000000000ULL;
	if (gen_open(&g, path) || gen_start(&g, &host, &vm, NULL, NULL, 0))
		return -1;
	gen_hello(&g, 1, 0);
	gen_process(&g, 100, "before_exec", true);
	gen_kernel(&g, K(0), K(0) + 0x100000, 2, "6.1.0-test-amd64");
	gen_ksym(&g, NULL, K(1), "old_kernel_fn");
	gen_ksym(&g, NULL, K(6), "old_end");
	gen_syms_end(&g);
	/* Each file's symbols once, as the agent sends them: the MMAPs alone follow. */
	gen_elfsym(&g, 0xa1, 0x40, 0x40, "old_fn");
	gen_elfsym(&g, 0xa2, 0x40, 0x40, "new_fn");
	gen_elfsym(&g, 0xa3, 0x40, 0x40, "exec_fn");
	gen_syms_end(&g);
	rebind_sample(&g);			/* no mapping yet */
	gen_mmap(&g, 100, U(0), 0x10000, 0xa1, "/usr/bin/old");
	rebind_sample(&g);
	gen_mmap(&g, 100, U(0), 0x10000, 0xa2, "/usr/lib/new.so");	/* over the old one */
	rebind_sample(&g);
	gen_kernel(&g, K(0) + 0x80, K(0) + 0x100000, 2, "6.1.0-test-amd64");
	gen_ksym(&g, NULL, K(0) + 0x80, "new_kernel_fn");
	gen_ksym(&g, NULL, K(6), "new_end");
	gen_syms_end(&g);
	rebind_sample(&g);
	g.exec_gen = 2;
	gen_process(&g, 100, "after_exec", true);
	gen_mmap(&g, 100, U(0), 0x10000, 0xa3, "/usr/bin/exec");
	rebind_sample(&g);
	/* Taken before the exec, streamed after it (another vCPU). */
	g.exec_gen = 1;
	rebind_sample(&g);
	return gen_end(&g, NULL, NULL, 0, PVPROF_DATA_STOP_DURATION, g.time_ns);
}

/* Script's frames without their addresses: a line per sample. */
static char *script_frames(const char *script)
{
	size_t len = 0;
	char *out = NULL;
	const char *p, *nl;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (p = script; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		if (*p == '\t') {
			p += strspn(p, "\t ");
			p += strcspn(p, " ");	/* the address */
			p += *p == ' ';
			fprintf(f, "%.*s;", (int)(nl - p), p);
		} else if (nl == p) {
			fputc('\n', f);
		}
	}
	fclose(f);
	return out;
}

/* A resolver for one walk of @r: the symbolizer of report, or one in stream order. */
static struct pvprof_symbolizer *rebind_resolver(const struct recording *r, bool complete,
						 bool cached, struct report_resolver *res)
{
	struct pvprof_symbolizer *sym = complete ? recording_symbolizer(r) :
						   pvprof_symbolizer_new();

	if (sym) {
		symbolizer_resolver(sym, res);
		if (!cached)
			res->generation = NULL;
	}
	return sym;
}

/*
 * --folded, the header and script of @r into memory, each walk with a
 * symbolizer of its own (one fed the stream twice starts the second walk
 * knowing the first's end).
 */
static int rebind_outputs(const struct recording *r, bool complete, bool cached,
			  char **folded, char **hdr, char **script)
{
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	struct report_resolver res;
	struct pvprof_symbolizer *sym;
	struct profile p;
	size_t len;
	char *raw = NULL;
	FILE *f;
	int ret = -1;

	memset(&p, 0, sizeof(p));
	sym = rebind_resolver(r, complete, cached, &res);
	if (sym && !profile_build(&p, r, &none, &res)) {
		ret = capture(w_folded, r, &p, folded, &len);
		f = open_memstream(hdr, &len);
		if (f) {
			report_write_header(f, "rebind.data", r, &p, &none, &res);
			fclose(f);
		}
	}
	profile_free(&p);
	pvprof_symbolizer_free(sym);
	sym = ret ? NULL : rebind_resolver(r, complete, cached, &res);
	f = sym ? open_memstream(&raw, &len) : NULL;
	if (f) {
		ret = report_write_script(f, r, &none, &res, NULL, NULL);
		fclose(f);
		*script = raw ? script_frames(raw) : NULL;
	}
	free(raw);
	pvprof_symbolizer_free(sym);
	return ret || !*folded || !*hdr || !*script ? -1 : 0;
}

/*
 * One check of test_rebind_mode(), named "rebind, MODE: WHAT": it passes
 * when @ok, else fails with @fmt's reason.
 */
static void rebind_check(const char *mode, const char *what, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void rebind_check(const char *mode, const char *what, bool ok, const char *fmt, ...)
{
	char name[200];
	va_list ap;

	snprintf(name, sizeof(name), "rebind, %s: %s", mode, what);
	if (ok) {
		pass(name);
		return;
	}
	va_start(ap, fmt);
	vfail(name, fmt, ap);
	va_end(ap);
}

static void test_rebind_mode(const struct recording *r, bool complete, const char *want_folded,
			     const char *want_script, const char *want_cut)
{
	const char *mode = complete ? "report's symbolizer" : "stream order alone";
	char *folded = NULL, *hdr = NULL, *script = NULL;
	char *ref_folded = NULL, *ref_hdr = NULL, *ref_script = NULL;

	if (rebind_outputs(r, complete, true, &folded, &hdr, &script) ||
	    rebind_outputs(r, complete, false, &ref_folded, &ref_hdr, &ref_script)) {
		fail("rebind: the outputs", "%s: failed", mode);
		goto out;
	}
	rebind_check(mode, "folded stacks name each address as it then was",
		     !strcmp(folded, want_folded), "got:\n%s", folded);
	rebind_check(mode, "script names each address as it then was",
		     !strcmp(script, want_script), "got:\n%s", script);
	rebind_check(mode, "the chains cut where the mappings then ended",
		     strstr(hdr, want_cut), "'%s' not in:\n%s", want_cut, hdr);
	/* The resolver without a generation: every frame asked, nothing kept. */
	rebind_check(mode, "report and script as without the cache",
		     !strcmp(folded, ref_folded) && !strcmp(hdr, ref_hdr) &&
		     !strcmp(script, ref_script),
		     "folded:\n%s\nwithout:\n%s\nscript:\n%s\nwithout:\n%s",
		     folded, ref_folded, script, ref_script);
out:
	free(folded);
	free(hdr);
	free(script);
	free(ref_folded);
	free(ref_hdr);
	free(ref_script);
}

/*
 * Script's frames for every sample of the rebind recording but the first,
 * the same whichever symbolizer: each comes after the mappings it needs.
 */
#define REBIND_SCRIPT_LATER \
	"old_kernel_fn+0x10 ([kernel.kallsyms]);old_fn+0x0 (/usr/bin/old);" \
	"[unknown] (/usr/bin/old);\n" \
	"old_kernel_fn+0x10 ([kernel.kallsyms]);new_fn+0x0 (/usr/lib/new.so);" \
	"[unknown] (/usr/lib/new.so);\n" \
	"new_kernel_fn+0x90 ([kernel.kallsyms]);new_fn+0x0 (/usr/lib/new.so);" \
	"[unknown] (/usr/lib/new.so);\n" \
	"new_kernel_fn+0x90 ([kernel.kallsyms]);exec_fn+0x0 (/usr/bin/exec);" \
	"[unknown] (/usr/bin/exec);\n" \
	"new_kernel_fn+0x90 ([kernel.kallsyms]);new_fn+0x0 (/usr/lib/new.so);" \
	"[unknown] (/usr/lib/new.so);\n"

static void test_rebind(const char *dir)
{
	/*
	 * With the recording's tables, the first sample's user frames are
	 * named from its last mapping of U(0), new.so; REBIND_X is in none.
	 */
	static const char complete_folded[] =
		"after_exec;/usr/bin/exec+0x80;exec_fn;new_kernel_fn 1\n"
		"before_exec;/usr/bin/old+0x80;old_fn;old_kernel_fn 1\n"
		"before_exec;/usr/lib/new.so+0x80;new_fn;new_kernel_fn 2\n"
		"before_exec;/usr/lib/new.so+0x80;new_fn;old_kernel_fn 2\n";
	static const char complete_script[] =
		"old_kernel_fn+0x10 ([kernel.kallsyms]);new_fn+0x0 (/usr/lib/new.so);"
		"[unknown] (/usr/lib/new.so);\n"
		REBIND_SCRIPT_LATER;
	/* In stream order alone the first sample's image has no mapping yet. */
	static const char stream_folded[] =
		"after_exec;/usr/bin/exec+0x80;exec_fn;new_kernel_fn 1\n"
		"before_exec;/usr/bin/old+0x80;old_fn;old_kernel_fn 1\n"
		"before_exec;/usr/lib/new.so+0x80;new_fn;new_kernel_fn 2\n"
		"before_exec;/usr/lib/new.so+0x80;new_fn;old_kernel_fn 1\n"
		"before_exec;0x555555574000;0x555555554080;0x555555554040;old_kernel_fn 1\n";
	static const char stream_script[] =
		"old_kernel_fn+0x10 ([kernel.kallsyms]);[unknown] ([unknown]);"
		"[unknown] ([unknown]);[unknown] ([unknown]);\n"
		REBIND_SCRIPT_LATER;
	char path[4096], err[512];
	struct recording r;

	snprintf(path, sizeof(path), "%s/report-test.%d.rebind.data", dir, (int)getpid());
	if (write_rebind(path) || recording_load(&r, path, err, sizeof(err))) {
		fail("rebind: the recording", "cannot write or load %s", path);
		unlink(path);
		return;
	}
	unlink(path);
	test_rebind_mode(&r, true, complete_folded, complete_script,
			 "image's code: 6 (6 frames)\n");
	test_rebind_mode(&r, false, stream_folded, stream_script,
			 "image's code: 5 (5 frames)\n");
	recording_free(&r);
}

static void test_writer_full(void)
{
	struct recording_writer w;
	uint8_t chunk[4096] = { 0 };
	int i, ret = 0;

	if (access("/dev/full", W_OK)) {
		printf("SKIP writer: full disk: no /dev/full\n");
		return;
	}
	if (recording_writer_open(&w, "/dev/full")) {
		pass("writer: full disk reported");
		return;
	}
	for (i = 0; i < 64 && !ret; i++)
		ret = recording_write_stream(&w, chunk, sizeof(chunk));
	if (!ret)
		ret = recording_writer_finish(&w, PVPROF_DATA_STOP_DURATION, 0);
	else
		recording_writer_abort(&w);
	if (ret)
		pass("writer: full disk reported");
	else
		fail("writer: full disk reported", "every write claimed success");
}

int main(int argc, char **argv)
{
	char data_path[4096];

	gen_prog = "report-test";

	memset(long_name, 'A', sizeof(long_name) - 1);
	if (argc == 3 && !strcmp(argv[1], "gen"))
		return write_golden(argv[2]) ? 1 : 0;
	if (argc != 3 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: report-test gen FILE | run GOLDEN_DIR\n");
		return 2;
	}
	golden_dir = argv[2];
	update_golden = getenv("PVPROF_UPDATE_GOLDEN") &&
			!strcmp(getenv("PVPROF_UPDATE_GOLDEN"), "1");
	snprintf(data_path, sizeof(data_path), "%s/report-test.%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (write_golden(data_path)) {
		fail("golden: write the recording", "failed");
		return 1;
	}
	pass("golden: write the recording");
	test_golden(data_path);
	test_filters(data_path);
	test_self_total(data_path);
	test_reader(data_path);
	test_writer_full();
	test_late_symbols(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	test_fp_honest(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	test_rebind(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	unlink(data_path);
	return check_finish();
}
