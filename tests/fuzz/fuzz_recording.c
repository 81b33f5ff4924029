// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: kvm-pvprof's recording reader and every report writer.
 *
 * The input is a recording.  The reader must accept it or refuse it
 * with a message that names an offset, never read outside it.  An accepted
 * recording goes through every writer (header, the top table by self and
 * by every key, the call graph in both orders, the per-vCPU table, folded
 * stacks, SVG, perf script with every field and with a few in a time
 * window, for a recording of at most FUZZ_SCRIPT_MAX_SAMPLES samples) with
 * a resolver
 * that names each frame and process by bytes of the input, so the names
 * are as hostile as the fuzzer makes them, then again with the symbolizer
 * library fed the recording's sideband, as the command does.  Whatever the names, every
 * output must stay plain ASCII lines (no control byte but newline and tab),
 * folded stacks must keep one "frames count" per line, the SVG must carry
 * no element or attribute a name could have injected, and the self counts
 * must add up.
 *
 * Seeds in corpus/recording: the golden recording of
 * host-kvm/tool/tests/report-test ("report-test gen FILE") and cuts of it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/sideband.h"
#include "host-kvm/tool/flamegraph.h"
#include "host-kvm/tool/profile.h"
#include "host-kvm/tool/recording.h"
#include "host-kvm/tool/report_callgraph.h"
#include "host-kvm/tool/report_folded.h"
#include "host-kvm/tool/report_header.h"
#include "host-kvm/tool/report_pprof.h"
#include "host-kvm/tool/report_resolve.h"
#include "host-kvm/tool/report_script.h"
#include "host-kvm/tool/report_select.h"
#include "host-kvm/tool/report_sort.h"
#include "host-kvm/tool/report_symbolizer.h"
#include "host-kvm/tool/report_vcpu.h"
#include "host-kvm/tool/symbolize.h"

#define FUZZ_CHECK(cond)	do { if (!(cond)) abort(); } while (0)

/* Samples script writes at most: more is only more of the same lines. */
#define FUZZ_SCRIPT_MAX_SAMPLES	100000

/* Names made of input bytes: up to 300 of them, any byte but NUL. */
struct names {
	const uint8_t *data;
	size_t len;
	char sym[301], dso[301], comm[301];
};

static void name_from(const struct names *n, uint64_t key, char *out, size_t size)
{
	size_t start, len, i;

	out[0] = '\0';
	if (!n->len)
		return;
	start = key % n->len;
	len = (key >> 8) % size;
	for (i = 0; i < len && start + i < n->len && n->data[start + i]; i++)
		out[i] = (char)n->data[start + i];
	out[i] = '\0';
}

static void fuzz_resolve(void *ctx, bool kernel, uint32_t pid, uint32_t exec_gen,
			 uint64_t addr, struct pvprof_sym *out)
{
	struct names *n = ctx;

	(void)exec_gen;
	/* One address in four stays unsymbolized, one in eight has no DSO. */
	if ((addr & 3) == 0)
		return;
	name_from(n, addr ^ pid, n->sym, sizeof(n->sym));
	name_from(n, addr >> 3, n->dso, sizeof(n->dso));
	out->symbol = n->sym;
	out->dso = (addr & 7) == 1 ? NULL : n->dso;
	out->offset = addr & 0xfff;
	(void)kernel;
}

static const char *fuzz_comm(void *ctx, uint32_t pid, uint32_t exec_gen)
{
	struct names *n = ctx;

	if (pid % 5 == 0)
		return NULL;
	name_from(n, (uint64_t)pid * 31 + exec_gen, n->comm, sizeof(n->comm));
	return n->comm;
}

static int fuzz_sideband(void *ctx, const void *msg, size_t len)
{
	(void)ctx;
	return pvprof_sideband_payload_check(msg, len) == PVPROF_SB_OK ? 0 : -1;
}

/* Output is ASCII lines: no control byte other than newline and tab. */
static void check_ascii(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		FUZZ_CHECK(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f));
	}
}

static void check_folded(const char *s, size_t len, uint64_t samples)
{
	uint64_t sum = 0;
	size_t i = 0;

	while (i < len) {
		const char *line = s + i, *nl = memchr(line, '\n', len - i), *sp;

		FUZZ_CHECK(nl);
		sp = nl;
		while (sp > line && sp[-1] >= '0' && sp[-1] <= '9')
			sp--;
		FUZZ_CHECK(sp < nl && sp > line + 1 && sp[-1] == ' ');
		sum += strtoull(sp, NULL, 10);
		i = (size_t)(nl - s) + 1;
	}
	FUZZ_CHECK(sum == samples);
}

/*
 * Names are text: the SVG's one script is flamegraph.js, unchanged, and
 * every other '<' starts one of the writer's own tags, so no name opened an
 * element (and, with '"' escaped, no attribute).
 */
static void check_svg(const char *s, size_t len)
{
	static const char *const tags[] = {
		"<?xml ", "<svg ", "</svg>", "<style>", "</style>", "<rect ", "<text ",
		"</text>", "<g>", "<g ", "</g>", "<title>", "</title>",
	};
	static const char open_tag[] = "<script type=\"text/ecmascript\"><![CDATA[\n";
	static const char close_tag[] = "]]></script>";
	const char *p = s, *end = s + len, *script;
	size_t script_len;

	script = memmem(s, len, open_tag, strlen(open_tag));
	FUZZ_CHECK(script);
	script_len = strlen(open_tag) + strlen(flamegraph_script) + strlen(close_tag);
	FUZZ_CHECK((size_t)(end - script) >= script_len &&
		   !memcmp(script + strlen(open_tag), flamegraph_script, strlen(flamegraph_script)) &&
		   !memcmp(script + script_len - strlen(close_tag), close_tag, strlen(close_tag)));
	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		size_t i, n = sizeof(tags) / sizeof(tags[0]);

		if (p == script) {
			p += script_len;
			continue;
		}
		for (i = 0; i < n; i++)
			if ((size_t)(end - p) >= strlen(tags[i]) &&
			    !memcmp(p, tags[i], strlen(tags[i])))
				break;
		FUZZ_CHECK(i < n);
		p++;
	}
}

static void run_writers(const struct recording *r, const struct report_resolver *res)
{
	static const struct callgraph_options callee = { .callee = true, .min_percent = 1 };
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	struct report_filter kernel = { .vcpu = 0, .pid = -1,
					.flags = REPORT_F_KERNEL_ONLY };
	struct script_options fields = { .fields = SCRIPT_F_COMM | SCRIPT_F_TID |
					 SCRIPT_F_TIME | SCRIPT_F_IP | SCRIPT_F_DSO,
					 .reltime = true };
	struct report_sort_spec by_self, by_all;
	struct report_table *top, *all;
	struct report_vcpus *vcpus;
	struct report_time window;
	struct report_pprof *pp;
	struct profile p;
	uint64_t self_sum = 0, frameless = 0, samples;
	char *buf = NULL;
	size_t len = 0;
	uint32_t i;
	FILE *f;

	/* The pprof writer, the tables and the vCPU counts take every sample. */
	pp = report_pprof_create("/dev/null", "fuzz");
	FUZZ_CHECK(pp);
	FUZZ_CHECK(!report_sort_parse("self", &by_self));
	FUZZ_CHECK(!report_sort_parse("comm,pid,tid,vcpu,dso,sym,total", &by_all));
	top = report_table_new(&by_self);
	all = report_table_new(&by_all);
	vcpus = report_vcpus_new();
	FUZZ_CHECK(top && all && vcpus);
	FUZZ_CHECK(!profile_build_sink(&p, r, &none, res,
				       report_vcpus_sink(vcpus, report_table_sink(top,
						report_table_sink(all, report_pprof_sink(pp))))));
	FUZZ_CHECK(!report_pprof_write(pp, "fuzz", r, &p, &none, res));
	report_pprof_free(pp);
	for (i = 0; i < p.nr_funcs; i++) {
		FUZZ_CHECK(p.funcs[i].self <= p.funcs[i].total);
		FUZZ_CHECK(p.funcs[i].total <= p.stats.samples);
		self_sum += p.funcs[i].self;
	}
	/*
	 * The samples without frames end at their command's node; a callchain
	 * without frames is not always one: the samples taken in pvprof's own
	 * NMI path have [pvprof overhead] as their frame.
	 */
	for (i = p.nodes[0].child; i; i = p.nodes[i].sibling)
		frameless += p.nodes[i].self;
	FUZZ_CHECK(self_sum == p.stats.samples - frameless);
	FUZZ_CHECK(p.stats.own_nmi <= p.stats.samples && p.stats.own_nmi <= p.stats.own_nmi_recorded);
	FUZZ_CHECK(p.stats.unsymbolized <= p.stats.frames);

	f = open_memstream(&buf, &len);
	FUZZ_CHECK(f);
	FUZZ_CHECK(!report_write_header(f, "fuzz", r, &p, &kernel, res));
	FUZZ_CHECK(!report_write_table(f, top, &p, 0, 0));
	FUZZ_CHECK(!report_write_table(f, all, &p, 3, 5));
	FUZZ_CHECK(!report_write_callgraph(f, &p, NULL));
	FUZZ_CHECK(!report_write_callgraph(f, &p, &callee));
	FUZZ_CHECK(!report_write_per_vcpu(f, vcpus, r, &p, &none));
	/*
	 * script prints every sample, each folded into an entry too: a
	 * recording may claim 2^32 of them per entry, and the lines would not
	 * fit in memory.  The profile above counted them all the same.
	 */
	if (p.stats.samples <= FUZZ_SCRIPT_MAX_SAMPLES)
		FUZZ_CHECK(!report_write_script(f, r, &none, res, NULL, NULL));
	/* The second half of the recording, if it has a start to count from. */
	if (p.stats.samples <= FUZZ_SCRIPT_MAX_SAMPLES && r->has_host &&
	    !report_time_parse("50%-100%", &window) && !report_time_resolve(&window, r)) {
		none.time = &window;
		FUZZ_CHECK(!report_write_script(f, r, &none, res, &fields, NULL));
		none.time = NULL;
	}
	FUZZ_CHECK(!fclose(f));
	check_ascii(buf, len);
	free(buf);

	f = open_memstream(&buf, &len);
	FUZZ_CHECK(f && !report_write_folded(f, &p) && !fclose(f));
	check_ascii(buf, len);
	check_folded(buf, len, p.stats.samples);
	free(buf);

	f = open_memstream(&buf, &len);
	FUZZ_CHECK(f && !report_write_flamegraph(f, &p, "fuzz") && !fclose(f));
	check_ascii(buf, len);
	check_svg(buf, len);
	free(buf);
	samples = p.stats.samples;
	profile_free(&p);
	report_table_free(top);
	report_table_free(all);
	report_vcpus_free(vcpus);

	/* vCPU 0's kernel frames: a subset of the samples, no user frame. */
	FUZZ_CHECK(!profile_build(&p, r, &kernel, res));
	FUZZ_CHECK(p.stats.samples <= samples);
	for (i = 0; i < p.nr_funcs; i++)
		FUZZ_CHECK(p.funcs[i].kind == PROFILE_KIND_KERNEL);
	profile_free(&p);
}

static bool same_cut(const struct recording_cut *a, const struct recording_cut *b)
{
	return a->cut == b->cut && a->in_header == b->in_header && a->at == b->at &&
	       a->section == b->section && a->type == b->type && a->size == b->size &&
	       a->kept == b->kept && a->entries_lost == b->entries_lost;
}

static int count_entry(void *ctx, const struct pvprof_st_view *v, uint64_t off)
{
	(void)v;
	(void)off;
	++*(uint64_t *)ctx;
	return 0;
}

/*
 * The same bytes as a file, read through the reader's window as report
 * reads them: it must judge them as the in-memory reading did (@mem, or
 * NULL when that refused them) and walk the same entries.
 */
static void check_file_reader(const uint8_t *data, size_t size, const struct recording *mem)
{
	int fd = memfd_create("fuzz_recording", MFD_CLOEXEC);
	struct recording r;
	char path[64], err[512];
	uint64_t entries = 0;

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(!size || write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (recording_load(&r, path, err, sizeof(err))) {
		FUZZ_CHECK(!mem && !strncmp(err, "offset ", 7));
	} else {
		FUZZ_CHECK(mem && r.stream_entries == mem->stream_entries &&
			   r.has_end == mem->has_end &&
			   same_cut(&r.cut, &mem->cut));
		FUZZ_CHECK(!recording_for_each(&r, count_entry, &entries));
		FUZZ_CHECK(entries == r.stream_entries);
		recording_free(&r);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct names n = { .data = data, .len = size };
	const struct report_resolver res = {
		.ctx = &n,
		.sideband = fuzz_sideband,
		.resolve = fuzz_resolve,
		.comm = fuzz_comm,
	};
	struct pvprof_symbolizer *sym;
	struct report_resolver sym_res;
	struct recording r;
	char err[512];

	if (recording_parse(&r, data, size, err, sizeof(err))) {
		FUZZ_CHECK(!strncmp(err, "offset ", 7));
		check_file_reader(data, size, NULL);
		return 0;
	}
	/* Only a recording closed cleanly must be whole; a cut one is read to the cut. */
	FUZZ_CHECK(!r.has_end || (r.has_host && r.has_vm && r.stream_entries >= 1));
	FUZZ_CHECK(!r.cut.cut || (!r.has_end && r.cut.at == size && r.cut.kept <= size));
	if (!r.has_end) {
		recording_describe_end(&r, err, sizeof(err));
		check_ascii(err, strlen(err));
	}
	check_file_reader(data, size, &r);
	run_writers(&r, &res);
	run_writers(&r, NULL);
	/* The symbolizer fed the recording's own sideband, as report does. */
	sym = recording_symbolizer(&r);
	FUZZ_CHECK(sym);
	symbolizer_resolver(sym, &sym_res);
	run_writers(&r, &sym_res);
	pvprof_symbolizer_free(sym);
	recording_free(&r);
	return 0;
}
