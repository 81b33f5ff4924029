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
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "main.h"
#include "report.h"

struct script_ctx {
	FILE *f;
	const struct recording *r;
	const struct report_filter *flt;
	const struct report_resolver *res;
	struct report_frames frames;	/* the sample being written */
};

/*
 * A kernel frame without a symbol but in a known image is named like
 * report names it, "[kernel.kallsyms]+0xOFFSET" ("-0x" below _stext) or
 * "[module]+0xOFFSET": a bare "[unknown]" would merge every such frame
 * (idle, .init, .noinstr code) into one.  User frames keep perf's
 * "[unknown] (DSO)", which stackcollapse-perf.pl names after the DSO.
 */
static void script_frame(FILE *f, const struct report_sym *sym, uint64_t addr,
			 bool kernel)
{
	char esc[REPORT_ESC_SIZE], esc_dso[REPORT_ESC_SIZE];

	fprintf(f, "\t%16" PRIx64 " ", addr);
	if (sym->symbol)
		fprintf(f, "%s+0x%" PRIx64, esc_script(sym->symbol, esc), sym->offset);
	else if (kernel && sym->dso && (int64_t)sym->offset < 0)
		fprintf(f, "%s-0x%" PRIx64, esc_script(sym->dso, esc), -sym->offset);
	else if (kernel && sym->dso)
		fprintf(f, "%s+0x%" PRIx64, esc_script(sym->dso, esc), sym->offset);
	else
		fputs("[unknown]", f);
	fprintf(f, " (%s)\n", sym->dso ? esc_script(sym->dso, esc_dso) : "[unknown]");
}

static int script_record(void *opaque, const struct pvprof_st_view *v, uint64_t off)
{
	struct script_ctx *c = opaque;
	const struct pvprof_record *rec = &v->u.callchain.rec;
	const struct report_resolver *res = c->res;
	char comm_buf[16], esc[REPORT_ESC_SIZE];
	const char *event;
	uint32_t i;

	(void)off;
	if (v->hdr.type == PVPROF_ST_SIDEBAND && res && res->sideband) {
		res->sideband(res->ctx, v->sb_msg, v->sb_len);
		return 0;
	}
	if (v->hdr.type != PVPROF_ST_CALLCHAIN)
		return 0;
	if (c->flt->vcpu >= 0 && v->hdr.vcpu_id != (uint64_t)c->flt->vcpu)
		return 0;
	if (c->flt->pid >= 0 && rec->pid != (uint64_t)c->flt->pid)
		return 0;
	event = event_name(v->u.callchain.event);
	fprintf(c->f, "%s %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n",
		esc_script(sample_comm(res, rec->pid, rec->exec_gen, comm_buf,
				       sizeof(comm_buf)), esc),
		rec->pid, rec->tid, v->hdr.vcpu_id,
		(uint64_t)(v->hdr.host_time_ns / 1000000000ULL),
		(uint64_t)(v->hdr.host_time_ns % 1000000000ULL / 1000ULL),
		c->r->vm.sample_period ? c->r->vm.sample_period : 1,
		event ? event : "unknown-event");
	if (report_sample_frames(res, v, &c->frames))
		return 1;
	for (i = 0; i < c->frames.nr; i++) {
		struct report_sym sym;

		report_frame_resolve(res, &c->frames, i, rec->pid, rec->exec_gen, &sym);
		script_frame(c->f, &sym, c->frames.addr[i], i < c->frames.nr_kernel);
	}
	fputc('\n', c->f);
	/* 1, not -1: recording_for_each()'s own failures are -1. */
	return ferror(c->f) ? 1 : 0;
}

/**
 * report_write_script() - every sample in perf script's text form
 * @f: output
 * @r: a parsed recording
 * @flt: vCPU and pid filters (the others do not apply)
 * @res: the resolver, or NULL for raw addresses
 *
 * Return: 0, -1 on an output error, or -2 after a read error of the
 * recording (printed).
 */
int report_write_script(FILE *f, const struct recording *r,
			const struct report_filter *flt,
			const struct report_resolver *res)
{
	struct script_ctx c = { .f = f, .r = r, .flt = flt, .res = res };

	if (recording_for_each(r, script_record, &c) < 0)
		return -2;
	return ferror(f) ? -1 : 0;
}
