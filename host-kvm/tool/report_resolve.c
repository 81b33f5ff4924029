// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report and script: what a resolver says about a sample's
 * process and frames, with the defaults every output shares when it knows
 * nothing (struct report_resolver, report_resolve.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report_resolve.h"

/**
 * sample_comm() - the command name a sample is shown under
 * @res: the resolver, or NULL
 * @pid: the guest pid
 * @exec_gen: its exec generation
 * @buf: room for a made-up name
 * @size: its size
 *
 * Return: the guest's name for the process; "swapper" for pid 0 (idle)
 * like perf; ":PID" when unknown or empty.  Unescaped.
 */
const char *sample_comm(const struct report_resolver *res, uint32_t pid,
			uint32_t exec_gen, char *buf, size_t size)
{
	const char *comm = res && res->comm ? res->comm(res->ctx, pid, exec_gen) : NULL;

	if (comm && *comm)
		return comm;
	if (!pid)
		return "swapper";
	snprintf(buf, size, ":%u", pid);
	return buf;
}

/**
 * report_resolve() - what the resolver knows about one frame
 * @res: the resolver, or NULL
 * @kernel: a kernel frame (else user)
 * @pid: the sample's guest pid
 * @exec_gen: its exec generation
 * @addr: the frame's address
 * @sym: filled; an empty symbol or DSO name counts as unknown, and so does
 *	the image of a frame without a DSO
 */
void report_resolve(const struct report_resolver *res, bool kernel, uint32_t pid,
		    uint32_t exec_gen, uint64_t addr, struct pvprof_sym *sym)
{
	*sym = (struct pvprof_sym){ .offset = addr };
	if (res && res->resolve)
		res->resolve(res->ctx, kernel, pid, exec_gen, addr, sym);
	if (sym->symbol && !*sym->symbol)
		sym->symbol = NULL;
	if (sym->dso && !*sym->dso)
		sym->dso = NULL;
	if (!sym->symbol && !sym->dso)
		sym->offset = addr;
	if (!sym->dso)
		sym->image_start = sym->image_end = sym->image_pgoff = 0;
	if (!sym->dso || !sym->build_id || sym->build_id_size > REPORT_BUILD_ID_MAX) {
		sym->build_id = NULL;
		sym->build_id_size = 0;
	}
}
