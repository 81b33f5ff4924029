// SPDX-License-Identifier: GPL-2.0
/*
 * sb-check: the agent test's judge.  Reads a kvm-pvprof recording, feeds
 * every sideband message to the host symbolizer, resolves every frame of
 * every callchain, and prints what the test checks as "FACT name
 * value" lines:
 *
 *   sideband_messages, sideband_bytes, sideband_max_bytes_2s (the most in
 *   any 2-second window of host time), rejected, kernel_syms,
 *   kernel_syms_expected, elf_syms, processes, mappings,
 *   agent_lost_messages, samples, user_hits (samples with a user frame
 *   named USER_FUNCTION), user_frames_of_comm and user_named_of_comm (user
 *   frames of processes named COMM, and those with a symbol),
 *   kernel_frames, kernel_named, kernel_hits (frames named KERNEL_FUNCTION)
 *
 * usage: sb-check RECORDING USER_FUNCTION KERNEL_FUNCTION COMM
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "host-kvm/tool/recording.h"
#include "host-kvm/tool/symbolize.h"

#define WINDOW_NS	(2ULL * 1000 * 1000 * 1000)

struct sample {
	uint32_t pid;
	uint32_t exec_gen;
	uint32_t nr_kernel;
	uint32_t nr;
	uint64_t *frames;
};

struct sb_time {
	uint64_t ns;
	uint32_t bytes;
};

struct ctx {
	struct pvprof_symbolizer *sym;
	struct sample *samples;
	size_t nr_samples, cap_samples;
	struct sb_time *sb;
	size_t nr_sb, cap_sb;
	uint64_t sb_bytes;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 1024;
	p = realloc(p, *cap * size);
	if (!p) {
		perror("sb-check");
		exit(1);
	}
	return p;
}

static int on_entry(void *arg, const struct pvprof_st_view *v, uint64_t off)
{
	struct ctx *c = arg;
	struct sample *s;
	uint32_t i;

	(void)off;
	if (v->hdr.type == PVPROF_ST_SIDEBAND) {
		pvprof_symbolizer_add(c->sym, v->sb_msg, v->sb_len);
		c->sb = grow(c->sb, &c->cap_sb, c->nr_sb, sizeof(*c->sb));
		c->sb[c->nr_sb++] = (struct sb_time){ v->hdr.host_time_ns, v->sb_len };
		c->sb_bytes += v->sb_len;
	} else if (v->hdr.type == PVPROF_ST_CALLCHAIN) {
		c->samples = grow(c->samples, &c->cap_samples, c->nr_samples, sizeof(*s));
		s = &c->samples[c->nr_samples++];
		s->pid = v->u.callchain.chain.pid;
		s->exec_gen = v->u.callchain.chain.exec_gen;
		s->nr_kernel = v->u.callchain.chain.nr_kernel;
		s->nr = v->nr_frames;
		s->frames = calloc(s->nr ? s->nr : 1, sizeof(*s->frames));
		if (!s->frames) {
			perror("sb-check");
			exit(1);
		}
		for (i = 0; i < s->nr; i++)
			s->frames[i] = pvprof_st_frame(v, i);
	}
	return 0;
}

/* The most sideband bytes in any window of WINDOW_NS (entries are in host time order). */
static uint64_t max_window(const struct ctx *c)
{
	uint64_t best = 0, cur = 0;
	size_t lo = 0, hi;

	for (hi = 0; hi < c->nr_sb; hi++) {
		cur += c->sb[hi].bytes;
		while (c->sb[hi].ns - c->sb[lo].ns >= WINDOW_NS)
			cur -= c->sb[lo++].bytes;
		if (cur > best)
			best = cur;
	}
	return best;
}

int main(int argc, char **argv)
{
	uint64_t user_hits = 0, kernel_frames = 0, kernel_named = 0, kernel_hits = 0;
	uint64_t comm_frames = 0, comm_named = 0;
	struct pvprof_symbolizer_stats st;
	struct ctx c = { 0 };
	struct recording r;
	char err[256];
	size_t i;
	uint32_t f;

	if (argc != 5) {
		fprintf(stderr, "usage: sb-check RECORDING USER_FUNCTION KERNEL_FUNCTION COMM\n");
		return 2;
	}
	if (recording_load(&r, argv[1], err, sizeof(err))) {
		fprintf(stderr, "sb-check: %s: %s\n", argv[1], err);
		return 1;
	}
	c.sym = pvprof_symbolizer_new();
	if (!c.sym)
		return 1;
	recording_for_each(&r, on_entry, &c);
	for (i = 0; i < c.nr_samples; i++) {
		const struct sample *s = &c.samples[i];
		const char *comm = pvprof_symbolizer_comm(c.sym, s->pid, s->exec_gen);
		bool hit = false;

		for (f = 0; f < s->nr; f++) {
			bool kernel = f < s->nr_kernel;
			struct pvprof_sym y;

			pvprof_symbolizer_resolve(c.sym, kernel, s->pid, s->exec_gen,
						  s->frames[f], &y);
			if (kernel) {
				kernel_frames++;
				kernel_named += y.symbol != NULL;
				kernel_hits += y.symbol && !strcmp(y.symbol, argv[3]);
				continue;
			}
			if (comm && !strcmp(comm, argv[4])) {
				comm_frames++;
				comm_named += y.symbol != NULL;
			}
			if (y.symbol && !strcmp(y.symbol, argv[2]))
				hit = true;
		}
		user_hits += hit;
		free(s->frames);
	}
	pvprof_symbolizer_stats(c.sym, &st);
	printf("FACT sideband_messages %zu\n", c.nr_sb);
	printf("FACT sideband_bytes %llu\n", (unsigned long long)c.sb_bytes);
	printf("FACT sideband_max_bytes_2s %llu\n", (unsigned long long)max_window(&c));
	printf("FACT rejected %llu\n", (unsigned long long)st.rejected);
	printf("FACT kernel_syms %llu\n", (unsigned long long)st.kernel_syms);
	printf("FACT kernel_syms_expected %llu\n", (unsigned long long)st.kernel_syms_expected);
	printf("FACT elf_syms %llu\n", (unsigned long long)st.elf_syms);
	printf("FACT processes %llu\n", (unsigned long long)st.processes);
	printf("FACT mappings %llu\n", (unsigned long long)st.mappings);
	printf("FACT agent_lost_messages %llu\n", (unsigned long long)st.agent_lost_messages);
	printf("FACT samples %zu\n", c.nr_samples);
	printf("FACT user_hits %llu\n", (unsigned long long)user_hits);
	printf("FACT user_frames_of_comm %llu\n", (unsigned long long)comm_frames);
	printf("FACT user_named_of_comm %llu\n", (unsigned long long)comm_named);
	printf("FACT kernel_frames %llu\n", (unsigned long long)kernel_frames);
	printf("FACT kernel_named %llu\n", (unsigned long long)kernel_named);
	printf("FACT kernel_hits %llu\n", (unsigned long long)kernel_hits);
	pvprof_symbolizer_free(c.sym);
	free(c.samples);
	free(c.sb);
	recording_free(&r);
	return 0;
}
