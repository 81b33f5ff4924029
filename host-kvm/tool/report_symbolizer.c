// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report and script: the guest agent's symbols (symbolize.c)
 * and unwind tables (report_unwind.c) as a report_resolver, read from the
 * recording before its samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "main.h"
#include "recording.h"
#include "report_hdr.h"
#include "report_resolve.h"
#include "report_symbolizer.h"
#include "report_unwind.h"
#include "symbolize.h"

static int sym_sideband(void *ctx, const void *msg, size_t len)
{
	return pvprof_symbolizer_add(ctx, msg, len);
}

static void sym_resolve(void *ctx, bool kernel_frame, uint32_t pid, uint32_t exec_gen,
			uint64_t addr, struct pvprof_sym *out)
{
	pvprof_symbolizer_resolve(ctx, kernel_frame, pid, exec_gen, addr, out);
}

static int sym_user_code(void *ctx, uint32_t pid, uint32_t exec_gen, uint64_t addr)
{
	return pvprof_symbolizer_user_code(ctx, pid, exec_gen, addr);
}

static uint64_t sym_generation(void *ctx, bool kernel)
{
	return pvprof_symbolizer_generation(ctx, kernel);
}

static const char *sym_comm(void *ctx, uint32_t pid, uint32_t exec_gen)
{
	return pvprof_symbolizer_comm(ctx, pid, exec_gen);
}

/*
 * The KERNEL message announces the kernel image's symbols, not the
 * modules'; an entry counts each time it arrives, and the agent sends its
 * tables again whenever sampling starts again.
 */
static void sym_describe(void *ctx, FILE *f)
{
	struct pvprof_symbolizer_stats st;
	uint64_t image;
	struct report_hdr h;

	pvprof_symbolizer_stats(ctx, &st);
	image = st.kernel_syms - st.module_syms;
	report_hdr_begin(&h, f, "symbols from the guest agent:");
	if (!st.kernel_syms_expected)
		report_hdr_item(&h, "%" PRIu64 " of the kernel image (none announced)", image);
	else if (image == st.kernel_syms_expected)
		report_hdr_item(&h, "%" PRIu64 " of the kernel image (as announced)", image);
	else if (image < st.kernel_syms_expected)
		report_hdr_item(&h, "%" PRIu64 " of the kernel image (%" PRIu64 " announced: %"
				PRIu64 " never arrived)", image, st.kernel_syms_expected,
				st.kernel_syms_expected - image);
	else
		report_hdr_item(&h, "%" PRIu64 " of the kernel image (%" PRIu64 " announced;"
				" tables sent again count again)", image,
				st.kernel_syms_expected);
	report_hdr_item(&h, "%" PRIu64 " of modules", st.module_syms);
	report_hdr_item(&h, "%" PRIu64 " of ELF files", st.elf_syms);
	report_hdr_sep(&h, "; ");
	report_hdr_item(&h, "processes %" PRIu64, st.processes);
	report_hdr_item(&h, "mappings %" PRIu64, st.mappings);
	report_hdr_sep(&h, "; ");
	report_hdr_item(&h, "messages the agent could not send %" PRIu64 " (%" PRIu64
			" bytes)", st.agent_lost_messages, st.agent_lost_bytes);
	report_hdr_end(&h);
}

static int feed_sideband(void *ctx, const struct pvprof_st_view *v, uint64_t off)
{
	(void)off;
	if (v->hdr.type == PVPROF_ST_SIDEBAND &&
	    pvprof_symbolizer_add(ctx, v->sb_msg, v->sb_len) == -ENOMEM)
		return 1;
	return 0;
}

/**
 * recording_symbolizer() - the symbolizer for a recording
 * @r: the recording
 *
 * It is to be fed @r's sideband in stream order, and names addresses from
 * the tables of the whole recording, read here in a first walk
 * (pvprof_symbolizer_complete()): samples taken while the agent was still
 * publishing get the same names as later ones.
 *
 * Return: the symbolizer, NULL after printing why (out of memory, a read
 * error).
 */
struct pvprof_symbolizer *recording_symbolizer(const struct recording *r)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	struct pvprof_symbolizer *complete = pvprof_symbolizer_new();
	int ret = -1;

	if (s && complete)
		ret = recording_for_each(r, feed_sideband, complete);
	if (ret) {
		/* feed_sideband() stops the walk with 1, a read error is -1. */
		if (ret > 0 || !s || !complete)
			p_err("out of memory for the symbolizer");
		pvprof_symbolizer_free(complete);
		pvprof_symbolizer_free(s);
		return NULL;
	}
	pvprof_symbolizer_complete(s, complete);
	return s;
}

/**
 * symbolizer_resolver() - a resolver backed by the symbolizer library
 * @s: the symbolizer, fed the recording's sideband in stream order
 * @res: filled
 */
void symbolizer_resolver(struct pvprof_symbolizer *s, struct report_resolver *res)
{
	res->ctx = s;
	res->sideband = sym_sideband;
	res->resolve = sym_resolve;
	res->comm = sym_comm;
	res->describe = sym_describe;
	res->user_code = sym_user_code;
	res->unwind = NULL;
	res->generation = sym_generation;
}

struct setup_ctx {
	struct pvprof_symbolizer *complete;
	struct report_unwind *unwind;
};

static int setup_entry(void *opaque, const struct pvprof_st_view *v, uint64_t off)
{
	struct setup_ctx *c = opaque;

	(void)off;
	if (v->hdr.type != PVPROF_ST_SIDEBAND)
		return 0;
	if (pvprof_symbolizer_add(c->complete, v->sb_msg, v->sb_len) == -ENOMEM ||
	    report_unwind_add(c->unwind, v->sb_msg, v->sb_len))
		return 1;
	return 0;
}

/**
 * recording_resolver() - what report and script name and unwind frames with
 * @r: the recording
 * @res: filled: the symbolizer as a resolver, with the DWARF unwinder
 *
 * One walk of the recording reads the guest agent's symbol and unwind
 * tables for both (recording_symbolizer(), report_unwind_new()): a long
 * recording is read once before its samples, not once for each.
 * Return: the symbolizer, to free with pvprof_symbolizer_free() after
 * report_unwind_free(res->unwind); NULL after printing why.
 */
struct pvprof_symbolizer *recording_resolver(const struct recording *r,
					      struct report_resolver *res)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	struct setup_ctx c = { .complete = pvprof_symbolizer_new() };
	int ret;

	if (!s || !c.complete) {
		p_err("out of memory for the symbolizer");
		goto free_sym;
	}
	c.unwind = report_unwind_alloc(s);
	if (!c.unwind)
		goto free_sym;
	ret = recording_for_each(r, setup_entry, &c);
	if (ret) {
		/* A read error (-1) is printed by recording_for_each(). */
		if (ret > 0)
			p_err("out of memory for the symbol and unwind tables");
		goto free_unwind;
	}
	pvprof_symbolizer_complete(s, c.complete);
	report_unwind_settle(c.unwind);
	symbolizer_resolver(s, res);
	res->unwind = c.unwind;
	return s;

free_unwind:
	report_unwind_free(c.unwind);
free_sym:
	pvprof_symbolizer_free(c.complete);
	pvprof_symbolizer_free(s);
	return NULL;
}
