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
 *			for each callchain record (the offset of its last
 *			byte + 1), in file order
 *
 * Each record's frame-pointer chain is what a frame-pointer walk of the
 * fixture gives: its IP only (it has no frame pointers).
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/record.h"
#include "guest-agent/pvprofd.h"
#include "host-kvm/tool/recording.h"
#include "recgen.h"

#define PID		4321
/* A STATUS section of one vCPU, as pvprof-data(5) gives its size. */
#define STATUS_SIZE	(sizeof(struct pvprof_data_status) + sizeof(struct pvprof_vcpu_status))
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
static struct recording_writer w;
static FILE *layout;
/* Ends of the callchain records in g.buf, until flush() places them. */
static uint32_t sample_ends[sizeof(g.buf) / sizeof(struct pvprof_st_callchain)];
static uint32_t nr_sample_ends;

static void die(const char *what)
{
	fprintf(stderr, "dwarf-report-gen: %s\n", what);
	exit(2);
}

/* Keeps room in g.buf for the largest record; the stream is cut anywhere
 * between records, as record does between reads. */
static void layout_section(uint32_t type, uint64_t size)
{
	if (layout)
		fprintf(layout, "section %u %" PRIu64 " %" PRIu64 "\n", type, w.offset, size);
}

static void flush(bool all)
{
	uint32_t i;

	if (!g.len || (!all && sizeof(g.buf) - g.len >= PVPROF_STREAM_MAX_RECORD))
		return;
	layout_section(PVPROF_DATA_SEC_STREAM, g.len);
	for (i = 0; layout && i < nr_sample_ends; i++)
		fprintf(layout, "sample %" PRIu64 "\n",
			w.offset + sizeof(struct pvprof_data_section) + sample_ends[i]);
	nr_sample_ends = 0;
	if (recording_write_stream(&w, g.buf, g.len))
		die("cannot write the stream");
	g.len = 0;
}

static void read_snapshot(const char *path, struct snapshot *s)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int i;

	if (!f)
		die("cannot open the snapshot");
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
				die("short snapshot");
			break;
		}
	}
	fclose(f);
	if (!s->stack || !s->regs[PVPROF_UREG_IP] || !s->nr_maps)
		die("not a fixture snapshot");
}

static bool build_id_of(Elf *elf, struct pvprof_sb_build_id *id)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) || !nh.n_descsz ||
			    nh.n_descsz > PVPROF_SB_BUILD_ID_MAX)
				continue;
			id->size = (uint8_t)nh.n_descsz;
			memcpy(id->bytes, (char *)d->d_buf + desc_off, nh.n_descsz);
			return true;
		}
	}
	return false;
}

/* The ELF address that file offset @pgoff is loaded at. */
static uint64_t vaddr_of(Elf *elf, uint64_t pgoff)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return pgoff;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pgoff >= (ph.p_offset & ~0xfffULL) && pgoff < ph.p_offset + ph.p_filesz)
			return pgoff + ph.p_vaddr - ph.p_offset;
	}
	return pgoff;
}

/* The agent's own ELF_SYMS messages go into the recording as they are. */
static void syms_emit(void *opaque, const void *msg, size_t len)
{
	uint8_t copy[PVPROF_SIDEBAND_MAX_SIZE];

	(void)opaque;
	memcpy(copy, msg, len);
	flush(false);
	gen_message(&g, copy, PVPROF_SB_ELF_SYMS, (uint32_t)len);
}

struct unwind_ctx {
	unsigned int eh_frame_parts;
};

static void unwind_emit(void *opaque, const void *msg, size_t len)
{
	struct unwind_ctx *c = opaque;
	uint8_t copy[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_unwind u;

	memcpy(&u, msg, sizeof(u));
	if (u.section == PVPROF_SB_UNWIND_EH_FRAME && ++c->eh_frame_parts == 2 &&
	    opt.drop_part)
		return;
	memcpy(copy, msg, len);
	flush(false);
	gen_message(&g, copy, PVPROF_SB_UNWIND, (uint32_t)len);
}

/*
 * What the agent publishes for one mapping of the process; @wrong moves
 * its ELF address by 1 MiB (down where that stays at or below the start).
 */
static void gen_mapping(const struct snap_map *sm, bool wrong)
{
	union {
		struct pvprof_sb_mmap m;
		uint8_t raw[PVPROF_SIDEBAND_MAX_SIZE];
	} m;
	struct pvprof_sb_build_id id = { 0 };
	struct unwind_ctx uc = { 0 };
	int fd = open(sm->path, O_RDONLY);
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	size_t plen = strnlen(sm->path, PVPROF_SB_NAME_MAX);

	if (!elf || !build_id_of(elf, &id))
		die("a mapped file without a build-id");
	memset(&m, 0, sizeof(m));
	m.m.pid = PID;
	m.m.exec_gen = 1;
	m.m.start = sm->start;
	m.m.len = sm->end - sm->start;
	m.m.pgoff = sm->pgoff;
	m.m.vaddr = vaddr_of(elf, sm->pgoff);
	if (wrong)
		m.m.vaddr += m.m.vaddr >= 0x100000 ? -0x100000ULL : 0x100000;
	m.m.build_id = id;
	m.m.path_len = (uint16_t)plen;
	memcpy(m.raw + sizeof(m.m), sm->path, plen);
	flush(false);
	gen_message(&g, &m, PVPROF_SB_MMAP, (uint32_t)(sizeof(m.m) + plen));
	symbol_messages(elf, &id, syms_emit, NULL);
	if (!opt.no_unwind && !unwind_messages(elf, &id, unwind_emit, &uc))
		die("the agent's encoder found no unwind tables");
	elf_end(elf);
	close(fd);
}

static void gen_snapshot_sample(const struct snapshot *s)
{
	static uint64_t rec_buf[(PVPROF_STREAM_MAX_RECORD + 7) / 8];
	struct pvprof_record *rec = (struct pvprof_record *)rec_buf;
	__u64 *frames = pvprof_record_frames(rec);
	struct pvprof_notice_facts facts = { 0 };
	uint32_t nr_user = opt.fp_garbage ? 3 : 1;
	uint32_t nr_kernel = opt.kernel ? 2 : 0, nr = nr_kernel + nr_user, size;

	memset(rec_buf, 0, sizeof(rec_buf));
	rec->seq = ++g.seq;
	rec->time_ns = g.time_ns;
	rec->pid = PID;
	rec->tid = PID;
	rec->exec_gen = 1;
	rec->flags = opt.kernel ? 0 : PVPROF_REC_F_USER;
	rec->nr_kernel = (uint16_t)nr_kernel;
	rec->nr_user = (uint16_t)nr_user;
	if (opt.kernel) {
		frames[0] = KADDR(1);
		frames[1] = KADDR(2);
	}
	frames[nr_kernel] = s->regs[PVPROF_UREG_IP];
	if (opt.fp_garbage) {
		frames[nr_kernel + 1] = 0x6f6c6c6568ULL;	/* "hello" */
		frames[nr_kernel + 2] = s->maps[0].start + 0x10;
	}
	rec->size = (uint16_t)pvprof_record_bytes(nr);
	if (!opt.fp) {
		struct pvprof_ustack *us = pvprof_record_ustack(rec);

		size = s->stack_len < opt.size ? (uint32_t)s->stack_len : opt.size;
		rec->flags |= PVPROF_REC_F_USTACK;
		memcpy(us->regs, s->regs, sizeof(us->regs));
		us->size = size;
		memcpy(pvprof_ustack_data(us), s->stack, size);
		rec->size = (uint16_t)pvprof_record_ustack_bytes(nr, size);
	}
	facts.ip = frames[0];
	facts.cpl = opt.kernel ? 0 : 3;
	flush(false);
	gen_put(&g, pvprof_st_put_callchain(g.buf + g.len, sizeof(g.buf) - g.len, 0,
					    g.time_ns, &facts, rec));
	sample_ends[nr_sample_ends++] = g.len;
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host = {
		.start_realtime_ns = 1700000000ULL * 1000000000ULL,
		.start_monotonic_ns = 1000ULL * 1000000000ULL,
		.hostname = "dwarf-host",
		.release = "6.1.0-test-amd64",
		.machine = "x86_64",
		.tool_version = "0.1",
	};
	struct pvprof_data_vm vm = {
		.vmm_pid = 4242, .vmm_fd = 11,
		.flags = PVPROF_DATA_VM_F_ENABLED_BY_US,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 1000, .sample_period = 1000000,
		.comm = "qemu-system-x86",
	};
	struct pvprof_vcpu_status vcpu = { .registered = 1, .size = 16384, .gpa = 0x100000 };
	struct pvprof_ctl_status ctl = { .flags = PVPROF_STATUS_F_ENABLED, .nr_vcpus = 1,
					 .sample_freq = 1000, .sample_period = 1000000 };
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
			layout = fopen(argv[++a], "w");
			if (!layout)
				die("cannot create the layout file");
		} else
			die("unknown option");
	}
	if (argc - a != 2 || opt.size % 8 || opt.size > PVPROF_USTACK_MAX)
		die("usage: dwarf-report-gen [OPTIONS] SNAPSHOT OUT");
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf");
	read_snapshot(argv[a], &s);

	g.time_ns = host.start_monotonic_ns;
	if (recording_writer_open(&w, argv[a + 1]))
		die("cannot write the recording");
	layout_section(PVPROF_DATA_SEC_HOST, sizeof(host));
	if (recording_write_section(&w, PVPROF_DATA_SEC_HOST, &host, sizeof(host)))
		die("cannot write the recording");
	layout_section(PVPROF_DATA_SEC_VM, sizeof(vm));
	if (recording_write_section(&w, PVPROF_DATA_SEC_VM, &vm, sizeof(vm)))
		die("cannot write the recording");
	layout_section(PVPROF_DATA_SEC_STATUS, STATUS_SIZE);
	if (recording_write_status(&w, PVPROF_DATA_STATUS_START, &ctl, &vcpu, 1))
		die("cannot write the recording");
	gen_put(&g, pvprof_st_put_hello(g.buf, sizeof(g.buf), g.time_ns, 1));
	gen_put(&g, pvprof_st_put_vcpu(g.buf + g.len, sizeof(g.buf) - g.len, 0, g.time_ns,
				       PVPROF_VCPU_REGISTERED, 16384, 0x100000));
	gen_process(&g, PID, "fixture", true);
	for (a = 0; a < s.nr_maps; a++)
		gen_mapping(&s.maps[a], opt.remap);
	for (i = 0; i < opt.copies; i++) {
		for (a = 0; i && (opt.republish || (opt.remap && i == 1)) && a < s.nr_maps; a++)
			gen_mapping(&s.maps[a], false);
		gen_snapshot_sample(&s);
	}
	flush(true);
	vcpu.samples = vcpu.notices = vcpu.records = opt.copies;
	layout_section(PVPROF_DATA_SEC_STATUS, STATUS_SIZE);
	if (recording_write_status(&w, PVPROF_DATA_STATUS_END, &ctl, &vcpu, 1))
		die("cannot finish the recording");
	layout_section(PVPROF_DATA_SEC_END, sizeof(struct pvprof_data_end));
	if (recording_writer_finish(&w, PVPROF_DATA_STOP_DURATION, g.time_ns))
		die("cannot finish the recording");
	if (layout && fclose(layout))
		die("cannot write the layout file");
	free(s.stack);
	return 0;
}
