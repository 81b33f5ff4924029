// SPDX-License-Identifier: GPL-2.0
/*
 * dwarf-report-test's recording writer: turns a snapshot of
 * tests/unwind/fixture.c (its real registers, stack and executable
 * mappings at a known call chain) into a recording as the host writes it,
 * with the sideband the guest agent would have sent: PROCESS, MMAP with
 * the files' real build-ids and ELF addresses, ELF_SYMS from their symbol
 * tables, and UNWIND from the agent's own encoder (guest-agent/unwind.c).
 *
 * usage: dwarf-report-gen [OPTIONS] SNAPSHOT OUT
 *	--copies N	samples of the snapshot (default 1)
 *	--size BYTES	stack bytes per sample, as --call-graph dwarf,BYTES
 *			(default 8192; the snapshot's own length if smaller)
 *	--fp		no snapshot in the records: a --call-graph fp recording
 *	--no-unwind	no UNWIND messages (an agent without them)
 *	--drop-part	leave out the second UNWIND part of each file's
 *			.eh_frame (tables that never completed)
 *	--kernel	the samples also carry two kernel frames first
 *	--republish	the MMAP messages (and the files' tables) again before
 *			every sample after the first, as an agent republishing
 *			its state does: the host must drop what it cached
 *	--remap		the first sample comes after MMAP messages whose ELF
 *			addresses are 1 MiB off (it cannot unwind), the rest
 *			after the right ones: the host must drop the image
 *			it had built from the wrong ones
 *	--fp-garbage	the frame-pointer chain goes on after the IP with a
 *			"return address" in no mapping (ASCII text), then
 *			one in the first mapping, as a walk that followed a
 *			saved register through code without frame pointers
 *	--layout FILE	where everything went, for tests that cut the file:
 *			"section TYPE OFFSET SIZE" for each section (its
 *			header's offset, its payload size) and "sample END"
 *			for each callchain entry (the offset of its last
 *			byte + 1), in file order
 *
 * Each callchain's frame-pointer chain is what a frame-pointer walk of the
 * fixture gives: its IP only (it has no frame pointers).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recgen-elf.h"

#define PID		4321
#define MAX_MAPS	64
#define KADDR(n)	(0xffffffff81000000ULL + (n) * 0x100)

struct snap_map {
	uint64_t start, end, pgoff;
	char path[4096];
};

struct snapshot {
	uint64_t regs[PVPROF_UREG_NR];
	struct snap_map maps[MAX_MAPS];
	int nr_maps;
	uint8_t *stack;
	size_t stack_len;
};

static struct {
	unsigned long copies;
	uint32_t size;
	bool fp, no_unwind, drop_part, kernel, republish, remap, fp_garbage;
} opt = { .copies = 1, .size = PVPROF_USTACK_DEFAULT };

static struct gen g;

static void read_snapshot(const char *path, struct snapshot *s)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int i;

	if (!f)
		gen_die("cannot open the snapshot");
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "regs ", 5)) {
			char *p = line + 5;

			for (i = 0; i < PVPROF_UREG_NR; i++)
				s->regs[i] = strtoull(p, &p, 16);
		} else if (!strncmp(line, "map ", 4) && s->nr_maps < MAX_MAPS) {
			struct snap_map *m = &s->maps[s->nr_maps];

			/* Files only: the agent has no tables for [vdso]. */
			if (sscanf(line, "map %" SCNx64 " %" SCNx64 " %" SCNx64 " %4095s",
				   &m->start, &m->end, &m->pgoff, m->path) == 4 &&
			    m->path[0] == '/')
				s->nr_maps++;
		} else if (!strncmp(line, "stack ", 6)) {
			s->stack_len = strtoul(line + 6, NULL, 10);
			s->stack = malloc(s->stack_len ? s->stack_len : 1);
			if (!s->stack || fread(s->stack, 1, s->stack_len, f) != s->stack_len)
				gen_die("short snapshot");
			break;
		}
	}
	fclose(f);
	if (!s->stack || !s->regs[PVPROF_UREG_IP] || !s->nr_maps)
		gen_die("not a fixture snapshot");
}

struct unwind_ctx {
	unsigned int eh_frame_parts;
};

/* The agent's UNWIND messages, less the second .eh_frame part with --drop-part. */
static void unwind_emit(void *opaque, const void *msg, size_t len)
{
	struct unwind_ctx *c = opaque;
	struct pvprof_sb_unwind u;

	memcpy(&u, msg, sizeof(u));
	if (u.section == PVPROF_SB_UNWIND_EH_FRAME && ++c->eh_frame_parts == 2 &&
	    opt.drop_part)
		return;
	gen_emit(&g, msg, len);
}

/*
 * What the agent publishes for one mapping of the process; @wrong moves
 * its ELF address by 1 MiB (down where that stays at or below the start).
 */
static void gen_mapping(const struct snap_map *sm, bool wrong)
{
	struct unwind_ctx uc = { 0 };
	struct gen_file f;
	uint64_t vaddr;

	gen_file_open(&f, sm->path);
	vaddr = gen_file_vaddr(&f, sm->pgoff);
	if (wrong)
		vaddr += vaddr >= 0x100000 ? -0x100000ULL : 0x100000;
	gen_mmap_file(&g, PID, sm->start, sm->end - sm->start, sm->pgoff, vaddr, &f.id,
		      sm->path);
	symbol_messages(f.elf, &f.id, gen_emit, &g);
	if (!opt.no_unwind && !unwind_messages(f.elf, &f.id, unwind_emit, &uc))
		gen_die("the agent's encoder found no unwind tables");
	gen_file_close(&f);
}

static void gen_snapshot_sample(const struct snapshot *s)
{
	uint64_t frames[5];
	uint32_t nr_user = opt.fp_garbage ? 3 : 1;
	uint32_t nr_kernel = opt.kernel ? 2 : 0;

	if (opt.kernel) {
		frames[0] = KADDR(1);
		frames[1] = KADDR(2);
	}
	frames[nr_kernel] = s->regs[PVPROF_UREG_IP];
	if (opt.fp_garbage) {
		frames[nr_kernel + 1] = 0x6f6c6c6568ULL;	/* "hello" */
		frames[nr_kernel + 2] = s->maps[0].start + 0x10;
	}
	gen_chain(&g, PID, PID, opt.kernel ? 0 : PVPROF_CHAIN_F_USER, nr_kernel, nr_user, frames);
	if (!opt.fp)
		gen_ustack(&g, s->regs, s->stack,
			   s->stack_len < opt.size ? (uint32_t)s->stack_len : opt.size);
	gen_callchain(&g, 0, frames[0], 0);
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	struct pvprof_vcpu_status vcpu;
	struct pvprof_ctl_status ctl;
	static struct snapshot s;
	unsigned long i;
	int a;

	gen_prog = "dwarf-report-gen";
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--copies") && a + 1 < argc)
			opt.copies = strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--size") && a + 1 < argc)
			opt.size = (uint32_t)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--fp"))
			opt.fp = true;
		else if (!strcmp(argv[a], "--no-unwind"))
			opt.no_unwind = true;
		else if (!strcmp(argv[a], "--drop-part"))
			opt.drop_part = true;
		else if (!strcmp(argv[a], "--kernel"))
			opt.kernel = true;
		else if (!strcmp(argv[a], "--republish"))
			opt.republish = true;
		else if (!strcmp(argv[a], "--remap"))
			opt.remap = true;
		else if (!strcmp(argv[a], "--fp-garbage"))
			opt.fp_garbage = true;
		else if (!strcmp(argv[a], "--layout") && a + 1 < argc) {
			g.layout = fopen(argv[++a], "w");
			if (!g.layout)
				gen_die("cannot create the layout file");
		} else
			gen_die("unknown option");
	}
	if (argc - a != 2 || opt.size % 8 || opt.size > PVPROF_USTACK_MAX)
		gen_die("usage: dwarf-report-gen [OPTIONS] SNAPSHOT OUT");
	read_snapshot(argv[a], &s);

	gen_host_vm(&host, &vm, "dwarf-host", 1000ULL * 1000000000ULL);
	gen_status_of(&ctl, &vcpu, 1, 16384);
	/* The stream is cut anywhere between entries, as record does between reads. */
	g.room = PVPROF_STREAM_MAX_ENTRY;
	g.time_ns = host.start_monotonic_ns;
	if (gen_open(&g, argv[a + 1]) || gen_start(&g, &host, &vm, &ctl, &vcpu, 1))
		gen_die("cannot write the recording");
	gen_hello(&g, 1, 16384);
	gen_process(&g, PID, "fixture", true);
	for (a = 0; a < s.nr_maps; a++)
		gen_mapping(&s.maps[a], opt.remap);
	for (i = 0; i < opt.copies; i++) {
		for (a = 0; i && (opt.republish || (opt.remap && i == 1)) && a < s.nr_maps; a++)
			gen_mapping(&s.maps[a], false);
		gen_snapshot_sample(&s);
	}
	vcpu.samples = vcpu.notices = vcpu.callchains = opt.copies;
	if (gen_end(&g, &ctl, &vcpu, 1, PVPROF_DATA_STOP_DURATION, g.time_ns))
		gen_die("cannot finish the recording");
	if (g.layout && fclose(g.layout))
		gen_die("cannot write the layout file");
	free(s.stack);
	return 0;
}
