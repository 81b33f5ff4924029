// SPDX-License-Identifier: GPL-2.0
/*
 * bench-core's recording writer: perf's samples (perf_samples.py's output)
 * as the pvprof host would have streamed them, one callchain record per
 * sample through the core's encoder, with the sideband a guest agent would
 * have sent for the process: PROCESS, MMAP with the files' build-ids and
 * ELF addresses, ELF_SYMS and UNWIND from the agent's own encoders.  So
 * kvm-pvprof report and perf report work on the same samples, the same
 * frames and the same stack bytes, read from the same files.
 *
 * usage: pvprof-gen [--fp] SAMPLES OUT
 *	--fp	records without their stack snapshot, as --call-graph fp
 *		(a dwarf-mode input then leaves each record its IP alone)
 *
 * Prints "samples N frames F snapshots S stream_bytes B".
 *
 * The sideband part follows host-kvm/tool/tests/dwarf-report-gen.c, which
 * does the same for one snapshot of its fixture; kept apart so that
 * neither test depends on the other's options.
 */
#include <fcntl.h>
#include <stdarg.h>
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
#include "host-kvm/tool/tests/recgen.h"

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
static struct recording_writer w;
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

static void die(const char *what)
{
	fprintf(stderr, "pvprof-gen: %s\n", what);
	exit(2);
}

/* A STREAM section as one read(2) of record; room kept for the largest. */
static void flush(bool all)
{
	if (!g.len || (!all && sizeof(g.buf) - g.len >= PVPROF_STREAM_MAX_RECORD))
		return;
	if (recording_write_stream(&w, g.buf, g.len))
		die("cannot write the stream");
	g.len = 0;
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

static void sideband_emit(void *opaque, const void *msg, size_t len)
{
	uint8_t copy[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sideband_hdr h;

	(void)opaque;
	memcpy(&h, msg, sizeof(h));
	memcpy(copy, msg, len);
	flush(false);
	gen_message(&g, copy, h.type, (uint32_t)len);
}

static bool publish_once(const char *path)
{
	unsigned int i;

	for (i = 0; i < nr_published; i++)
		if (!strcmp(published[i], path))
			return false;
	if (nr_published == MAX_FILES)
		die("too many files");
	published[nr_published] = strdup(path);
	if (!published[nr_published])
		die("out of memory");
	nr_published++;
	return true;
}

/* What the agent publishes for one executable mapping of a process. */
static void gen_mapping(const struct in_map *im, const char *path)
{
	union {
		struct pvprof_sb_mmap m;
		uint8_t raw[PVPROF_SIDEBAND_MAX_SIZE];
	} m;
	struct pvprof_sb_build_id id = { 0 };
	int fd = open(path, O_RDONLY);
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	size_t plen = strnlen(path, PVPROF_SB_NAME_MAX);

	if (!elf || !build_id_of(elf, &id)) {
		fprintf(stderr, "pvprof-gen: %s: not readable or without a build-id\n", path);
		exit(2);
	}
	memset(&m, 0, sizeof(m));
	m.m.pid = im->pid;
	m.m.exec_gen = 1;
	m.m.start = im->start;
	m.m.len = im->len;
	m.m.pgoff = im->pgoff;
	m.m.vaddr = vaddr_of(elf, im->pgoff);
	m.m.build_id = id;
	m.m.path_len = (uint16_t)plen;
	memcpy(m.raw + sizeof(m.m), path, plen);
	flush(false);
	gen_message(&g, &m, PVPROF_SB_MMAP, (uint32_t)(sizeof(m.m) + plen));
	if (publish_once(path)) {
		symbol_messages(elf, &id, sideband_emit, NULL);
		unwind_messages(elf, &id, sideband_emit, NULL);
	}
	elf_end(elf);
	close(fd);
}

static void gen_sample(const struct in_sample *is, const uint64_t *frames,
		       const uint64_t *regs, const uint8_t *stack)
{
	static uint64_t rec_buf[(PVPROF_STREAM_MAX_RECORD + 7) / 8];
	struct pvprof_record *rec = (struct pvprof_record *)rec_buf;
	struct pvprof_notice_facts facts = { .ip = frames[0], .cpl = 3 };
	uint32_t nr = is->nr_frames < PVPROF_MAX_DEPTH ? is->nr_frames : PVPROF_MAX_DEPTH;

	memset(rec, 0, sizeof(*rec));
	rec->seq = ++g.seq;
	rec->time_ns = is->time;
	rec->pid = is->pid;
	rec->tid = is->tid;
	rec->exec_gen = 1;
	rec->flags = PVPROF_REC_F_USER;
	if (nr < is->nr_frames)
		rec->flags |= PVPROF_REC_F_TRUNCATED;
	rec->nr_user = (uint16_t)nr;
	memcpy(pvprof_record_frames(rec), frames, 8U * nr);
	rec->size = (uint16_t)pvprof_record_bytes(nr);
	if (regs && !opt_fp) {
		struct pvprof_ustack *us = pvprof_record_ustack(rec);
		uint32_t size = is->stack_size < PVPROF_USTACK_DEFAULT ?
				is->stack_size : PVPROF_USTACK_DEFAULT;

		rec->flags |= PVPROF_REC_F_USTACK;
		memcpy(us->regs, regs, sizeof(us->regs));
		us->regs[PVPROF_UREG_IP] = frames[0];
		us->size = size;
		us->reserved0 = 0;
		memcpy(pvprof_ustack_data(us), stack, size);
		memset(pvprof_ustack_data(us) + size, 0, ((size + 7U) & ~7U) - size);
		rec->size = (uint16_t)pvprof_record_ustack_bytes(nr, size);
		nr_snapshots++;
	}
	flush(false);
	g.time_ns = is->time;
	gen_put(&g, pvprof_st_put_callchain(g.buf + g.len, sizeof(g.buf) - g.len, 0,
					    is->time, &facts, rec));
	nr_samples++;
	nr_frames += nr;
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n;

	if (!f)
		die("cannot open the samples");
	*len = 0;
	do {
		if (*len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = realloc(buf, cap);
			if (!buf)
				die("out of memory");
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
	struct pvprof_data_host host = {
		.start_realtime_ns = 1700000000ULL * 1000000000ULL,
		.hostname = "bench-core",
		.release = "6.1.0-bench-amd64",
		.machine = "x86_64",
		.tool_version = "0.1",
	};
	struct pvprof_data_vm vm = {
		.vmm_pid = 4242, .vmm_fd = 11,
		.flags = PVPROF_DATA_VM_F_ENABLED_BY_US,
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_freq = 4000, .sample_period = 250000,
		.comm = "qemu-system-x86",
	};
	struct pvprof_vcpu_status vcpu = { .registered = 1, .size = 65536, .gpa = 0x100000 };
	struct pvprof_ctl_status ctl = { .flags = PVPROF_STATUS_F_ENABLED, .nr_vcpus = 1,
					 .sample_freq = 4000, .sample_period = 250000 };
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
		die("usage: pvprof-gen [--fp] SAMPLES OUT");
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf");
	in = read_all(argv[a], &len);
	if (len < 8 || memcmp(in, "PVBCSMP1", 8))
		die("not a perf_samples.py output");
	if (recording_writer_open(&w, argv[a + 1]))
		die("cannot write the recording");
	while (pos + 8 <= len) {
		uint32_t tag, plen;
		const uint8_t *p = in + pos + 8;

		memcpy(&tag, in + pos, 4);
		memcpy(&plen, in + pos + 4, 4);
		if (pos + 8 + plen > len)
			die("the samples are cut");
		if (!started) {
			uint64_t t0 = first_sample_time(in, len);

			host.start_monotonic_ns = g.time_ns = t0;
			if (recording_write_section(&w, PVPROF_DATA_SEC_HOST, &host, sizeof(host)) ||
			    recording_write_section(&w, PVPROF_DATA_SEC_VM, &vm, sizeof(vm)) ||
			    recording_write_status(&w, PVPROF_DATA_STATUS_START, &ctl, &vcpu, 1))
				die("cannot write the recording");
			gen_put(&g, pvprof_st_put_hello(g.buf, sizeof(g.buf), g.time_ns, 1));
			gen_put(&g, pvprof_st_put_vcpu(g.buf + g.len, sizeof(g.buf) - g.len, 0,
						       g.time_ns, PVPROF_VCPU_REGISTERED, 65536,
						       0x100000));
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
			flush(false);
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
				die("a malformed sample");
			/* The payload is 8-byte aligned in the buffer: read in place. */
			frames = (const uint64_t *)(p + sizeof(is));
			if (is.has_regs) {
				regs = frames + is.nr_frames;
				stack = (const uint8_t *)(regs + 8);
			}
			gen_sample(&is, frames, regs, stack);
		} else {
			die("an unknown or malformed record in the samples");
		}
		pos += 8 + ((plen + 7U) & ~7U);
	}
	if (!started)
		die("no samples");
	flush(true);
	vcpu.samples = vcpu.notices = vcpu.records = nr_samples;
	if (recording_write_status(&w, PVPROF_DATA_STATUS_END, &ctl, &vcpu, 1) ||
	    recording_writer_finish(&w, PVPROF_DATA_STOP_SIGNAL, g.time_ns))
		die("cannot finish the recording");
	printf("samples %" PRIu64 " frames %" PRIu64 " snapshots %" PRIu64
	       " stream_bytes %" PRIu64 "\n", nr_samples, nr_frames, nr_snapshots,
	       w.stream_bytes);
	free(in);
	return 0;
}
