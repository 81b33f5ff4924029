// SPDX-License-Identifier: GPL-2.0
/*
 * bench-core's recording writer: perf's samples (perf_samples.py's output)
 * as the pvprof host would have streamed them, one callchain entry per
 * sample through the core's encoder, with the sideband a guest agent would
 * have sent for the process: PROCESS, MMAP with the files' build-ids and
 * ELF addresses, ELF_SYMS and UNWIND from the agent's own encoders.  So
 * kvm-pvprof report and perf report work on the same samples, the same
 * frames and the same stack bytes, read from the same files.
 *
 * usage: pvprof-gen [--fp] SAMPLES OUT
 *	--fp	callchains without their stack snapshot, as --call-graph fp
 *		(a dwarf-mode input then leaves each callchain its IP alone)
 *
 * Prints "samples N frames F snapshots S stream_bytes B".
 *
 * The recording is written as host-kvm/tool/tests/dwarf-report-gen.c
 * writes one for a snapshot of its fixture, with the same writer
 * (host-kvm/tool/tests/recgen-elf.h).
 */
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host-kvm/tool/tests/recgen-elf.h"

#define TAG_MAP		1
#define TAG_PROCESS	2
#define TAG_SAMPLE	3
#define MAX_PATH	4096
#define MAX_FILES	256

/* Payloads of perf_samples.py, fixed parts. */
struct in_map {
	uint32_t pid, reserved;
	uint64_t start, len, pgoff;
};

struct in_sample {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t nr_frames, stack_size, has_regs, reserved;
};

static struct gen g;
static bool opt_fp;
static uint64_t nr_samples, nr_frames, nr_snapshots;
/* Files whose symbols and tables are out: the agent sends them once. */
static char *published[MAX_FILES];
static unsigned int nr_published;

/* The recording writer's error messages; kvm-pvprof's own is in common.c. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("pvprof-gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static bool publish_once(const char *path)
{
	unsigned int i;

	for (i = 0; i < nr_published; i++)
		if (!strcmp(published[i], path))
			return false;
	if (nr_published == MAX_FILES)
		gen_die("too many files");
	published[nr_published] = strdup(path);
	if (!published[nr_published])
		gen_die("out of memory");
	nr_published++;
	return true;
}

/* What the agent publishes for one executable mapping of a process. */
static void gen_mapping(const struct in_map *im, const char *path)
{
	struct gen_file f;

	gen_file_open(&f, path);
	gen_mmap_file(&g, im->pid, im->start, im->len, im->pgoff,
		      gen_file_vaddr(&f, im->pgoff), &f.id, path);
	if (publish_once(path)) {
		symbol_messages(f.elf, &f.id, gen_emit, &g);
		unwind_messages(f.elf, &f.id, gen_emit, &g);
	}
	gen_file_close(&f);
}

static void gen_sample(const struct in_sample *is, const uint64_t *frames,
		       const uint64_t *regs, const uint8_t *stack)
{
	uint32_t nr = is->nr_frames < PVPROF_MAX_DEPTH ? is->nr_frames : PVPROF_MAX_DEPTH;

	g.time_ns = is->time;
	gen_chain(&g, is->pid, is->tid,
		  PVPROF_CHAIN_F_USER | (nr < is->nr_frames ? PVPROF_CHAIN_F_TRUNCATED : 0),
		  0, nr, frames);
	if (regs && !opt_fp) {
		uint64_t uregs[PVPROF_UREG_NR];

		memcpy(uregs, regs, sizeof(uregs));
		uregs[PVPROF_UREG_IP] = frames[0];
		gen_ustack(&g, uregs, stack, is->stack_size < PVPROF_USTACK_DEFAULT ?
					     is->stack_size : PVPROF_USTACK_DEFAULT);
		nr_snapshots++;
	}
	gen_callchain(&g, 0, frames[0], 0);
	nr_samples++;
	nr_frames += nr;
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n;

	if (!f)
		gen_die("cannot open the samples");
	*len = 0;
	do {
		if (*len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = realloc(buf, cap);
			if (!buf)
				gen_die("out of memory");
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	fclose(f);
	return buf;
}

/* perf's clock of the first sample: the recording's stream clock starts there. */
static uint64_t first_sample_time(const uint8_t *in, size_t len)
{
	size_t pos = 8;
	uint64_t t = 0;

	while (pos + 8 <= len) {
		uint32_t tag, plen;

		memcpy(&tag, in + pos, 4);
		memcpy(&plen, in + pos + 4, 4);
		if (tag == TAG_SAMPLE && pos + 8 + sizeof(struct in_sample) <= len) {
			memcpy(&t, in + pos + 8 + offsetof(struct in_sample, time), 8);
			break;
		}
		pos += 8 + ((plen + 7ULL) & ~7ULL);
	}
	return t;
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	struct pvprof_vcpu_status vcpu;
	struct pvprof_ctl_status ctl;
	size_t len, pos = 8;
	uint8_t *in;
	bool started = false;
	int a = 1;

	gen_prog = "pvprof-gen";
	if (a < argc && !strcmp(argv[a], "--fp")) {
		opt_fp = true;
		a++;
	}
	if (argc - a != 2)
		gen_die("usage: pvprof-gen [--fp] SAMPLES OUT");
	in = read_all(argv[a], &len);
	if (len < 8 || memcmp(in, "PVBCSMP1", 8))
		gen_die("not a perf_samples.py output");
	/* A STREAM section as one read(2) of record; room kept for the largest. */
	g.room = PVPROF_STREAM_MAX_ENTRY;
	if (gen_open(&g, argv[a + 1]))
		gen_die("cannot write the recording");
	while (pos + 8 <= len) {
		uint32_t tag, plen;
		const uint8_t *p = in + pos + 8;

		memcpy(&tag, in + pos, 4);
		memcpy(&plen, in + pos + 4, 4);
		if (pos + 8 + plen > len)
			gen_die("the samples are cut");
		if (!started) {
			uint64_t t0 = first_sample_time(in, len);

			gen_host_vm(&host, &vm, "bench-core", t0);
			strcpy(host.release, "6.1.0-bench-amd64");
			vm.sample_freq = 4000;
			vm.sample_period = 250000;
			gen_status_of(&ctl, &vcpu, 1, 65536);
			ctl.sample_freq = vm.sample_freq;
			ctl.sample_period = vm.sample_period;
			g.time_ns = t0;
			if (gen_start(&g, &host, &vm, &ctl, &vcpu, 1))
				gen_die("cannot write the recording");
			gen_hello(&g, 1, 65536);
			g.time_ns = t0;
			started = true;
		}
		if (tag == TAG_MAP && plen > sizeof(struct in_map) &&
		    plen - sizeof(struct in_map) < MAX_PATH) {
			struct in_map im;
			char path[MAX_PATH];

			memcpy(&im, p, sizeof(im));
			memcpy(path, p + sizeof(im), plen - sizeof(im));
			path[plen - sizeof(im)] = 0;
			gen_mapping(&im, path);
		} else if (tag == TAG_PROCESS && plen == 20) {
			uint32_t pid;
			char comm[17] = { 0 };

			/* u32 pid, then 16 bytes of comm. */
			memcpy(&pid, p, 4);
			memcpy(comm, p + 4, 16);
			gen_process(&g, pid, comm, true);
		} else if (tag == TAG_SAMPLE && plen >= sizeof(struct in_sample)) {
			struct in_sample is;
			const uint64_t *frames;
			const uint64_t *regs = NULL;
			const uint8_t *stack = NULL;
			size_t need;

			memcpy(&is, p, sizeof(is));
			need = sizeof(is) + 8ULL * is.nr_frames +
			       (is.has_regs ? 64ULL + is.stack_size : 0);
			if (!is.nr_frames || need > plen)
				gen_die("a malformed sample");
			/* The payload is 8-byte aligned in the buffer: read in place. */
			frames = (const uint64_t *)(p + sizeof(is));
			if (is.has_regs) {
				regs = frames + is.nr_frames;
				stack = (const uint8_t *)(regs + 8);
			}
			gen_sample(&is, frames, regs, stack);
		} else {
			gen_die("an unknown or malformed item in the samples");
		}
		pos += 8 + ((plen + 7U) & ~7U);
	}
	if (!started)
		gen_die("no samples");
	vcpu.samples = vcpu.notices = vcpu.callchains = nr_samples;
	if (gen_end(&g, &ctl, &vcpu, 1, PVPROF_DATA_STOP_SIGNAL, g.time_ns))
		gen_die("cannot finish the recording");
	printf("samples %" PRIu64 " frames %" PRIu64 " snapshots %" PRIu64
	       " stream_bytes %" PRIu64 "\n", nr_samples, nr_frames, nr_snapshots,
	       g.w.stream_bytes);
	free(in);
	return 0;
}
