/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic recordings for the tool's tests: stream records built with the
 * core's encoders, as the host would write them, into a buffer that the
 * test then hands to recording_write_stream().  Shared by report-test.c
 * and dwarf-report-gen.c; each includes it once.
 */
#ifndef _PVPROF_TOOL_TESTS_RECGEN_H
#define _PVPROF_TOOL_TESTS_RECGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sideband.h"
#include "core/stream.h"

/* The program's name in the generators' messages; set by the includer. */
static const char *gen_prog = "recgen";

struct gen {
	uint8_t buf[65536];
	uint32_t len;
	uint64_t time_ns;
	uint64_t seq;
};

static void gen_put(struct gen *g, uint32_t n)
{
	if (!n) {
		fprintf(stderr, "%s: an encoder refused a record\n", gen_prog);
		exit(2);
	}
	g->len += n;
	g->time_ns += 1000000;
}

static void gen_process(struct gen *g, uint32_t pid, const char *comm, bool valid)
{
	struct pvprof_sb_process p = { 0 };

	p.hdr.type = PVPROF_SB_PROCESS;
	p.hdr.version = PVPROF_SIDEBAND_VERSION;
	p.hdr.size = sizeof(p);
	p.hdr.time_ns = g->time_ns;
	p.pid = pid;
	p.exec_gen = 1;
	/* Invalid payload, valid framing: a fork flag without a parent. */
	p.flags = valid ? 0 : PVPROF_SB_PROC_F_FORK;
	memcpy(p.comm, comm, strnlen(comm, sizeof(p.comm) - 1));
	gen_put(g, pvprof_st_put_sideband(g->buf + g->len, sizeof(g->buf) - g->len,
					  0, g->time_ns, &p, sizeof(p)));
}

/* A sideband message as the agent sends it, framed into the stream. */
static void gen_message(struct gen *g, void *msg, uint16_t type, uint32_t size)
{
	struct pvprof_sideband_hdr *sb = msg;

	sb->type = type;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = size;
	sb->time_ns = g->time_ns;
	if (pvprof_sideband_payload_check(msg, size) != PVPROF_SB_OK) {
		fprintf(stderr, "%s: a sideband message breaks the payload rules\n", gen_prog);
		exit(2);
	}
	gen_put(g, pvprof_st_put_sideband(g->buf + g->len, sizeof(g->buf) - g->len,
					  0, g->time_ns, msg, size));
}

#endif /* _PVPROF_TOOL_TESTS_RECGEN_H */
