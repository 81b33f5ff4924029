// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof script: samples as 'perf script' prints them, so that tools
 * written for perf (FlameGraph's stackcollapse-perf.pl, speedscope) read
 * pvprof recordings.
 *
 *   COMM PID/TID [VCPU] SEC.USEC: PERIOD EVENT:
 *   \t    ADDRESS SYMBOL+0xOFF (DSO)
 *   ...
 *   (blank line)
 *
 * stackcollapse-perf.pl takes a line that starts with a non-blank word and
 * then "PID/TID" as a sample header, a line that starts with blanks, a hex
 * word, a function and " (DSO)" with no blank in DSO as a frame, and a
 * blank line as the end of a sample; it joins the command name and the
 * frames with ';' and splits a function at "->" (inlined frames).  Guest
 * strings are escaped so that none of them can end a field, a line or a
 * sample early, nor become more than one frame.
 *
 * A callchain entry is printed as the samples it stands for (stream
 * version 2, report_sample_parts()): its own, then each sample folded into
 * it, with the entry's line; those taken inside pvprof's own NMI path
 * start with the frame "0 [pvprof overhead] ([pvprof])" (no guest
 * address, no offset), above the stack that NMI interrupted, which the
 * tools above then fold like report --folded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "main.h"
#include "profile.h"
#include "report_cache.h"
#include "report_escape.h"
#include "report_resolve.h"
#include "report_script.h"
#include "report_select.h"
#include "report_unwind.h"

struct script_ctx {
	FILE *f;
	const struct recording *r;
	const struct report_filter *flt;
	const struct report_resolver *res;
	const struct script_options *o;
	uint64_t origin_ns;		/* what --reltime counts from */
	struct report_stats *st;	/* what the filter warnings need */
	struct report_frames frames;	/* the sample being written */
	struct report_cache *cache;	/* the frames resolved */
};

/* perf script's field names; "vcpu" is pvprof's name for perf's "cpu". */
static const struct {
	const char *name;
	uint32_t bit;
} script_fields[] = {
	{ "comm", SCRIPT_F_COMM },
	{ "pid", SCRIPT_F_PID },
	{ "tid", SCRIPT_F_TID },
	{ "cpu", SCRIPT_F_VCPU },
	{ "vcpu", SCRIPT_F_VCPU },
	{ "time", SCRIPT_F_TIME },
	{ "period", SCRIPT_F_PERIOD },
	{ "event", SCRIPT_F_EVENT },
	{ "ip", SCRIPT_F_IP },
	{ "sym", SCRIPT_F_SYM },
	{ "symoff", SCRIPT_F_SYMOFF },
	{ "dso", SCRIPT_F_DSO },
};

/**
 * script_fields_parse() - the argument of script -F
 * @arg: field names separated by commas, the fields printed; or, as in
 *	perf, each with '+' or '-' to add it to or remove it from the
 *	default fields
 * @fields: receives the SCRIPT_F_* bits
 *
 * As perf script does, frames need ip, a symbol's offset needs sym, and
 * sym and dso need ip (the frame's address is what they name).
 * Return: EXIT_OK, or EXIT_USAGE after saying what is wrong.
 */
int script_fields_parse(const char *arg, uint32_t *fields)
{
	enum { SET, ADD_REMOVE, UNKNOWN } mode = UNKNOWN;
	uint32_t set = 0, add = 0, remove = 0;
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		char sign = *p == '+' || *p == '-' ? *p : 0;
		size_t i;

		if ((sign ? ADD_REMOVE : SET) != mode && mode != UNKNOWN)
			return usage_err("-F: give every field with '+' or '-', or none, got: '%s'",
					 arg);
		mode = sign ? ADD_REMOVE : SET;
		p += !!sign;
		len -= !!sign;
		for (i = 0; i < sizeof(script_fields) / sizeof(script_fields[0]); i++)
			if (strlen(script_fields[i].name) == len &&
			    !strncmp(script_fields[i].name, p, len))
				break;
		if (i == sizeof(script_fields) / sizeof(script_fields[0]))
			return usage_err("-F: unknown field '%.*s' (fields: comm, pid, tid, vcpu "
					 "or cpu, time, period, event, ip, sym, symoff, dso)",
					 (int)len, p);
		if (sign == '-')
			remove |= script_fields[i].bit;
		else if (sign == '+')
			add |= script_fields[i].bit;
		else
			set |= script_fields[i].bit;
		if (!p[len])
			break;
		p += len + 1;
	}
	*fields = mode == SET ? set : (SCRIPT_F_DEFAULT | add) & ~remove;
	if ((*fields & SCRIPT_F_SYMOFF) && !(*fields & SCRIPT_F_SYM))
		return usage_err("-F: symoff needs sym");
	if ((*fields & (SCRIPT_F_SYM | SCRIPT_F_DSO)) && !(*fields & SCRIPT_F_IP))
		return usage_err("-F: sym and dso need ip, the address they name");
	if (!*fields)
		return usage_err("-F: no field left to print");
	return EXIT_OK;
}

/*
 * A kernel frame without a symbol but in a known image is named like
 * report names it, "[kernel.kallsyms]+0xOFFSET" ("-0x" below _stext) or
 * "[module]+0xOFFSET": a bare "[unknown]" would merge every such frame
 * (idle, .init, .noinstr code) into one.  User frames keep perf's
 * "[unknown] (DSO)", which stackcollapse-perf.pl names after the DSO.
 */
static void script_frame(FILE *f, const struct pvprof_sym *sym, uint64_t addr,
			 bool kernel, uint32_t fields)
{
	char esc[REPORT_ESC_SIZE], esc_dso[REPORT_ESC_SIZE];

	fprintf(f, "\t%16" PRIx64, addr);
	if (fields & SCRIPT_F_SYM) {
		fputc(' ', f);
		if (sym->symbol) {
			fputs(esc_script(sym->symbol, esc), f);
			if (fields & SCRIPT_F_SYMOFF)
				fprintf(f, "+0x%" PRIx64, sym->offset);
		} else if (kernel && sym->dso && (int64_t)sym->offset < 0) {
			fprintf(f, "%s-0x%" PRIx64, esc_script(sym->dso, esc), -sym->offset);
		} else if (kernel && sym->dso) {
			fprintf(f, "%s+0x%" PRIx64, esc_script(sym->dso, esc), sym->offset);
		} else {
			fputs("[unknown]", f);
		}
	}
	if (fields & SCRIPT_F_DSO)
		fprintf(f, " (%s)", sym->dso ? esc_script(sym->dso, esc_dso) : "[unknown]");
	fputc('\n', f);
}

/* The sample's line: its fields in perf script's order, blank-separated. */
static void script_header(struct script_ctx *c, const struct pvprof_st_view *v,
			  const char *comm)
{
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	uint32_t fields = c->o->fields;
	char esc[REPORT_ESC_SIZE];
	const char *sep = "";
	uint64_t t;

	if (fields & SCRIPT_F_COMM) {
		fprintf(c->f, "%s", esc_script(comm, esc));
		sep = " ";
	}
	if ((fields & SCRIPT_F_PID) && (fields & SCRIPT_F_TID))
		fprintf(c->f, "%s%u/%u", sep, chain->pid, chain->tid);
	else if (fields & (SCRIPT_F_PID | SCRIPT_F_TID))
		fprintf(c->f, "%s%u", sep, fields & SCRIPT_F_PID ? chain->pid : chain->tid);
	if (fields & (SCRIPT_F_PID | SCRIPT_F_TID))
		sep = " ";
	if (fields & SCRIPT_F_VCPU) {
		fprintf(c->f, "%s[%03u]", sep, v->hdr.vcpu_id);
		sep = " ";
	}
	if (fields & SCRIPT_F_TIME) {
		t = c->o->reltime ? report_time_relative(c->origin_ns, v->hdr.host_time_ns) :
				    v->hdr.host_time_ns;
		fprintf(c->f, "%s%" PRIu64 ".%06" PRIu64 ":", sep, t / UINT64_C(1000000000),
			t % UINT64_C(1000000000) / 1000);
		sep = " ";
	}
	if (fields & SCRIPT_F_PERIOD) {
		fprintf(c->f, "%s%" PRIu64, sep,
			c->r->vm.sample_period ? c->r->vm.sample_period : 1);
		sep = " ";
	}
	if (fields & SCRIPT_F_EVENT) {
		const char *event = event_name(v->u.callchain.event);

		fprintf(c->f, "%s%s:", sep, event ? event : "unknown-event");
		sep = " ";
	}
	if (*sep)
		fputc('\n', c->f);
}

/* The frame REPORT_OWN_NMI_FRAME: no guest address, no offset, a DSO of its own. */
static void script_own_nmi_frame(FILE *f, uint32_t fields)
{
	fprintf(f, "\t%16x", 0);
	if (fields & SCRIPT_F_SYM)
		fputs(" " REPORT_OWN_NMI_FRAME, f);
	if (fields & SCRIPT_F_DSO)
		fputs(" (" REPORT_OWN_NMI_DSO ")", f);
	fputc('\n', f);
}

/* One sample: its line, then REPORT_OWN_NMI_FRAME when @leaf and its frames. */
static void script_sample(struct script_ctx *c, const struct pvprof_st_view *v,
			  const char *comm, uint32_t first, uint32_t end, bool leaf)
{
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	uint32_t fields = c->o->fields, i;

	script_header(c, v, comm);
	if (!(fields & SCRIPT_F_IP))
		return;
	if (leaf)
		script_own_nmi_frame(c->f, fields);
	for (i = first; i < end; i++) {
		const struct report_frame_info *info =
			report_cache_frame(c->cache, &c->frames, i, chain->pid, chain->exec_gen);

		script_frame(c->f, &info->sym, c->frames.addr[i], i < c->frames.nr_kernel, fields);
	}
	fputc('\n', c->f);
}

static int script_entry(void *opaque, const struct pvprof_st_view *v, uint64_t off)
{
	struct script_ctx *c = opaque;
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	const struct report_resolver *res = c->res;
	struct report_part parts[REPORT_MAX_PARTS];
	uint32_t nr_parts, first, end, k;
	char comm_buf[16];
	const char *comm;
	uint64_t n;
	bool leaf;

	(void)off;
	if (v->hdr.type == PVPROF_ST_HELLO)
		c->st->nr_vcpus = v->u.hello.nr_vcpus;
	if (v->hdr.type == PVPROF_ST_SIDEBAND && res && res->sideband) {
		res->sideband(res->ctx, v->sb_msg, v->sb_len);
		return 0;
	}
	if (v->hdr.type != PVPROF_ST_CALLCHAIN)
		return 0;
	c->st->callchains++;
	comm = sample_comm(res, chain->pid, chain->exec_gen, comm_buf, sizeof(comm_buf));
	if (!report_sample_selected(c->flt, v, comm))
		return 0;
	if (report_sample_frames(res, c->cache, v, &c->frames))
		return 1;
	/*
	 * Every sample is printed, those folded into the entry too: the same
	 * line (the entry's time, the recording's period), then the frames.
	 */
	nr_parts = report_sample_parts(v, parts);
	for (k = 0; k < nr_parts; k++) {
		if (!report_part_shown(&parts[k], &c->frames, c->flt->flags, &first, &end, &leaf))
			continue;
		c->st->samples += parts[k].weight;
		for (n = 0; n < parts[k].weight; n++) {
			script_sample(c, v, comm, first, end, leaf);
			/* 1, not -1: recording_for_each()'s own failures are -1. */
			if (ferror(c->f))
				return 1;
		}
	}
	return 0;
}

/**
 * report_write_script() - every sample in perf script's text form
 * @f: output
 * @r: a parsed recording
 * @flt: the filters, report's (report_sample_selected())
 * @res: the resolver, or NULL for raw addresses
 * @o: the fields and the clock; NULL for perf script's defaults
 * @st: receives the callchains, the samples written and the vCPUs (for
 *	report_filter_warnings()), or NULL
 *
 * With ip, a sample is its line, a line per frame and a blank line; without,
 * its line alone.
 * Return: 0, -1 on an output error or when out of memory, or -2 after a
 * read error of the recording (printed).
 */
int report_write_script(FILE *f, const struct recording *r,
			const struct report_filter *flt,
			const struct report_resolver *res,
			const struct script_options *o, struct report_stats *st)
{
	static const struct script_options defaults = { .fields = SCRIPT_F_DEFAULT };
	struct report_stats unused;
	struct script_ctx c = { .f = f, .r = r, .flt = flt, .res = res,
				.o = o ? o : &defaults,
				.origin_ns = r->host.start_monotonic_ns,
				.st = st ? st : &unused };
	int ret;

	memset(c.st, 0, sizeof(*c.st));
	c.cache = report_cache_new(res);
	if (!c.cache) {
		errno = ENOMEM;
		return -1;
	}
	ret = recording_for_each(r, script_entry, &c);
	report_cache_free(c.cache);
	if (ret < 0)
		return -2;
	return ferror(f) ? -1 : 0;
}
