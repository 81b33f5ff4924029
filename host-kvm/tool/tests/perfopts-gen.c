// SPDX-License-Identifier: GPL-2.0
/*
 * A recording written from a plain-text description, for the tests of
 * report's and script's perf options (perfopts-test.sh): the test script
 * writes the description, so it knows every sample's process, vCPU, time
 * and frames, and every name the guest agent publishes, before kvm-pvprof
 * reads a byte; what it expects comes from its own description.
 *
 * usage: perfopts-gen OUT < DESCRIPTION
 *
 * One directive per line, fields separated by blanks, numbers in decimal
 * or 0x hex, names without blanks:
 *
 *   host START_NS            HOST section: the recording's start (monotonic)
 *   end END_NS               an END section at END_NS (without it, none)
 *   vcpus N                  HELLO, and N vCPUs registered
 *   kernel STEXT ETEXT NR    KERNEL message: text range, NR symbols announced
 *   ksym ADDR NAME           kernel symbols, ascending, sent as KSYMS chunks
 *   process PID COMM         PROCESS message (exec generation 1)
 *   mmap PID START LEN BID PATH   MMAP: build-id 20 bytes of BID, offset 0
 *   elfsym BID ADDR SIZE NAME     ELF symbols of build-id BID, ascending
 *   sample TIME VCPU PID TID USER NK NU FRAME...
 *                            a callchain at host time TIME: NK kernel frames
 *                            then NU user frames, innermost first; USER 1 for
 *                            a sample taken in user mode
 *   loss TIME VCPU REASON COUNT   a LOSS record (VCPU 4294967295: none)
 *
 * Consecutive ksym and elfsym lines of one build-id are packed into as few
 * messages as fit.  Stream sections are cut at most every 56 KiB, as record
 * writes them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "host-kvm/tool/recording.h"
#include "recgen.h"

#define FLUSH_AT	(sizeof(((struct gen *)0)->buf) - 8192)
#define MAX_FIELDS	(8 + PVPROF_MAX_DEPTH)

static struct gen g;
static struct recording_writer w;
static unsigned int line_no;

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "perfopts-gen: line %u: ", line_no);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s)
		die("not a number: '%s'", s);
	return v;
}

static void flush_stream(void)
{
	if (g.len && recording_write_stream(&w, g.buf, g.len))
		die("cannot write the stream%s", "");
	g.len = 0;
}

static void room(void)
{
	if (g.len > FLUSH_AT)
		flush_stream();
}

/* A symbol chunk (KSYMS or ELF_SYMS) being filled. */
static struct {
	uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_sym_writer w;
	bool open, elf;
	uint8_t bid;
} chunk;

static void chunk_send(void)
{
	if (!chunk.open)
		return;
	if (chunk.elf) {
		struct pvprof_sb_elf_syms *e = (void *)chunk.msg;

		e->build_id.size = 20;
		memset(e->build_id.bytes, chunk.bid, 20);
		e->nr = chunk.w.nr;
		room();
		gen_message(&g, e, PVPROF_SB_ELF_SYMS, chunk.w.len);
	} else {
		struct pvprof_sb_ksyms *k = (void *)chunk.msg;

		k->nr = chunk.w.nr;
		room();
		gen_message(&g, k, PVPROF_SB_KSYMS, chunk.w.len);
	}
	chunk.open = false;
}

static void chunk_put(bool elf, uint8_t bid, uint64_t addr, uint64_t size, const char *name)
{
	if (chunk.open && (chunk.elf != elf || chunk.bid != bid))
		chunk_send();
	for (;;) {
		if (!chunk.open) {
			memset(chunk.msg, 0, sizeof(chunk.msg));
			pvprof_sb_sym_writer_init(&chunk.w, chunk.msg,
						  elf ? sizeof(struct pvprof_sb_elf_syms) :
							sizeof(struct pvprof_sb_ksyms),
						  sizeof(chunk.msg), elf, addr);
			if (elf)
				((struct pvprof_sb_elf_syms *)chunk.msg)->first = addr;
			else
				((struct pvprof_sb_ksyms *)chunk.msg)->first = addr;
			chunk.open = true;
			chunk.elf = elf;
			chunk.bid = bid;
		}
		if (!pvprof_sb_sym_put(&chunk.w, addr, size, name, (uint32_t)strlen(name)))
			return;
		if (!chunk.w.nr)
			die("symbol '%s' fits no message", name);
		chunk_send();
	}
}

static void gen_kernel(uint64_t stext, uint64_t etext, uint64_t nr)
{
	static uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_kernel *k = (void *)msg;

	memset(msg, 0, sizeof(msg));
	k->stext = stext;
	k->etext = etext;
	k->nr_syms = (uint32_t)nr;
	strcpy(k->release, "6.1.0-perfopts");
	room();
	gen_message(&g, k, PVPROF_SB_KERNEL, sizeof(*k));
}

static void gen_mmap(uint32_t pid, uint64_t start, uint64_t len, uint8_t bid,
		     const char *path)
{
	static uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_mmap *m = (void *)msg;

	memset(msg, 0, sizeof(msg));
	m->pid = pid;
	m->exec_gen = 1;
	m->start = start;
	m->len = len;
	m->build_id.size = 20;
	memset(m->build_id.bytes, bid, 20);
	m->path_len = (uint16_t)strlen(path);
	memcpy(msg + sizeof(*m), path, m->path_len);
	room();
	gen_message(&g, m, PVPROF_SB_MMAP, sizeof(*m) + m->path_len);
}

static void gen_callchain(char **f, int nf)
{
	static uint64_t rec_buf[(sizeof(struct pvprof_record) + 8 * PVPROF_MAX_DEPTH) / 8];
	struct pvprof_record *rec = (struct pvprof_record *)rec_buf;
	__u64 *frames = pvprof_record_frames(rec);
	struct pvprof_notice_facts facts = { 0 };
	uint64_t nk = num(f[6]), nu = num(f[7]);
	uint32_t i;

	if (nk + nu > PVPROF_MAX_DEPTH || (uint64_t)nf != 8 + nk + nu)
		die("a sample needs NK + NU frames, at most 120: '%s'", f[0]);
	memset(rec_buf, 0, sizeof(rec_buf));
	g.time_ns = num(f[1]);
	rec->seq = ++g.seq;
	rec->time_ns = g.time_ns;
	rec->pid = (uint32_t)num(f[3]);
	rec->tid = (uint32_t)num(f[4]);
	rec->exec_gen = 1;
	rec->flags = num(f[5]) ? PVPROF_REC_F_USER : 0;
	rec->nr_kernel = (uint16_t)nk;
	rec->nr_user = (uint16_t)nu;
	rec->size = (uint16_t)(sizeof(*rec) + 8 * (nk + nu));
	for (i = 0; i < nk + nu; i++)
		frames[i] = num(f[8 + i]);
	facts.ip = nk + nu ? frames[0] : 0;
	facts.cpl = num(f[5]) ? 3 : 0;
	facts.event = PVPROF_EVENT_CPU_CLOCK;
	room();
	gen_put(&g, pvprof_st_put_callchain(g.buf + g.len, sizeof(g.buf) - g.len,
					    (uint32_t)num(f[2]), g.time_ns, &facts, rec));
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host = {
		.start_realtime_ns = 1700000000ULL * 1000000000ULL,
		.hostname = "perfopts-host",
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
	static char line[65536];
	uint64_t end_ns = 0;
	bool has_end = false, started = false;

	gen_prog = "perfopts-gen";
	if (argc != 2) {
		fprintf(stderr, "usage: perfopts-gen OUT < DESCRIPTION\n");
		return 2;
	}
	if (recording_writer_open(&w, argv[1]))
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		char *f[MAX_FIELDS], *save = NULL, *tok;
		int nf = 0;

		line_no++;
		for (tok = strtok_r(line, " \t\n", &save); tok && nf < MAX_FIELDS;
		     tok = strtok_r(NULL, " \t\n", &save))
			f[nf++] = tok;
		if (!nf || f[0][0] == '#')
			continue;
		if (strcmp(f[0], "ksym") && strcmp(f[0], "elfsym"))
			chunk_send();
		if (!strcmp(f[0], "host") && nf == 2) {
			host.start_monotonic_ns = num(f[1]);
			if (recording_write_section(&w, PVPROF_DATA_SEC_HOST, &host,
						    sizeof(host)) ||
			    recording_write_section(&w, PVPROF_DATA_SEC_VM, &vm, sizeof(vm)))
				die("cannot write %s", "HOST and VM");
			started = true;
		} else if (!started) {
			die("the first directive is 'host', not '%s'", f[0]);
		} else if (!strcmp(f[0], "end") && nf == 2) {
			end_ns = num(f[1]);
			has_end = true;
		} else if (!strcmp(f[0], "vcpus") && nf == 2) {
			uint32_t i, n = (uint32_t)num(f[1]);

			g.time_ns = host.start_monotonic_ns;
			gen_put(&g, pvprof_st_put_hello(g.buf + g.len, sizeof(g.buf) - g.len,
							g.time_ns, n));
			for (i = 0; i < n; i++) {
				room();
				gen_put(&g, pvprof_st_put_vcpu(g.buf + g.len, sizeof(g.buf) - g.len,
							       i, g.time_ns, PVPROF_VCPU_REGISTERED,
							       16384, 0x100000ULL * (i + 1)));
			}
		} else if (!strcmp(f[0], "kernel") && nf == 4) {
			gen_kernel(num(f[1]), num(f[2]), num(f[3]));
		} else if (!strcmp(f[0], "ksym") && nf == 3) {
			chunk_put(false, 0, num(f[1]), 0, f[2]);
		} else if (!strcmp(f[0], "process") && nf == 3) {
			room();
			gen_process(&g, (uint32_t)num(f[1]), f[2], true);
		} else if (!strcmp(f[0], "mmap") && nf == 6) {
			gen_mmap((uint32_t)num(f[1]), num(f[2]), num(f[3]), (uint8_t)num(f[4]), f[5]);
		} else if (!strcmp(f[0], "elfsym") && nf == 5) {
			chunk_put(true, (uint8_t)num(f[1]), num(f[2]), num(f[3]), f[4]);
		} else if (!strcmp(f[0], "sample") && nf >= 8) {
			gen_callchain(f, nf);
		} else if (!strcmp(f[0], "loss") && nf == 5) {
			g.time_ns = num(f[1]);
			room();
			gen_put(&g, pvprof_st_put_loss(g.buf + g.len, sizeof(g.buf) - g.len,
						       (uint32_t)num(f[2]), g.time_ns,
						       (uint32_t)num(f[3]), num(f[4])));
		} else {
			die("unknown directive or wrong field count: '%s'", f[0]);
		}
	}
	chunk_send();
	flush_stream();
	if (has_end && recording_writer_finish(&w, PVPROF_DATA_STOP_DURATION, end_ns))
		die("cannot finish %s", "the recording");
	return 0;
}
