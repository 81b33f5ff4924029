/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic recordings for the tool's tests: stream entries built with the
 * core's encoders, as the host would write them, into a buffer that goes
 * into the recording as STREAM sections, one per read of the stream; the
 * sections around them as record writes them (host-kvm/tool/recording.c).
 * Shared by the recording generators (dwarf-report-gen.c,
 * hostile-names-gen.c, perfopts-gen.c, tests/bench-core/pvprof-gen.c) and
 * the test programs that write their own (report-test.c, json-test.c);
 * recgen-elf.h adds the mappings of real ELF files.  Each includes it once.
 *
 * A generator fills one struct gen (static: it is large):
 *
 *	gen_open(), gen_start()			the file, HOST, VM, STATUS
 *	gen_hello(), gen_process(), gen_mmap(), gen_kernel(), gen_ksym(),
 *	gen_elfsym(), gen_message(), gen_chain() + gen_callchain(),
 *	gen_loss()				stream entries, in order
 *	gen_flush()				a STREAM section of what is buffered
 *	gen_end()				the last STREAM, STATUS, END
 *
 * An entry that cannot be encoded is a bug in the generator: the
 * functions print it and exit with status 2, as they do when a write
 * fails in the middle of the stream (gen_room()).  The section writers
 * return nonzero instead, for the test programs that count the failure.
 */
#ifndef _PVPROF_TOOL_TESTS_RECGEN_H
#define _PVPROF_TOOL_TESTS_RECGEN_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/callchain.h"
#include "core/sideband.h"
#include "core/stream.h"
#include "host-kvm/tool/recording.h"

/* The program's name in the generators' messages; set by the includer. */
static const char *gen_prog = "recgen";

#define GEN_BUF_SIZE	65536U

struct gen {
	uint8_t buf[GEN_BUF_SIZE];	/* the stream bytes of the next section */
	uint32_t len;
	uint64_t time_ns;		/* host time of the next entry */
	uint64_t seq;			/* of the last callchain */
	/*
	 * Free bytes each entry wants in @buf: before it, a full buffer
	 * goes out as a section (gen_room()).  0: the caller cuts the
	 * sections itself, with gen_flush().
	 */
	uint32_t room;
	/* HELLO's stream_version; 0: PVPROF_STREAM_VERSION, the encoder's. */
	uint16_t stream_version;
	/*
	 * The host's marks of the next callchain entry (stream version 2):
	 * its PVPROF_ST_SAMPLE_F_* and the samples folded into it; cleared
	 * once it is put.
	 */
	uint16_t sample_flags;
	uint32_t own_nmi_samples;
	/*
	 * The CPL the host read at the next callchain's notice, when
	 * @notice_cpl_set (else 3 for a chain taken in user mode, 0 for
	 * others); cleared once it is put.
	 */
	bool notice_cpl_set;
	uint8_t notice_cpl;
	/*
	 * The exec generation of the processes, mappings and callchains that
	 * follow (gen_process(), gen_mmap_file(), gen_chain()); 0 means 1.
	 */
	uint32_t exec_gen;
	struct recording_writer w;
	/*
	 * Where everything went, when set: "section TYPE OFFSET SIZE" for
	 * each section (its header's offset, its payload size) and "sample
	 * END" for each callchain entry (the offset of its last byte + 1).
	 */
	FILE *layout;
	uint32_t sample_ends[GEN_BUF_SIZE / sizeof(struct pvprof_st_callchain)];
	uint32_t nr_sample_ends;
	/* The callchain gen_chain() builds. */
	uint64_t chain[(PVPROF_STREAM_MAX_ENTRY + 7) / 8];
	/* The symbol chunk being filled (gen_ksym(), gen_elfsym()). */
	struct {
		uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
		struct pvprof_sb_sym_writer w;
		bool open, elf;
		uint8_t bid;
		char module[PVPROF_SB_MODULE_NAME_SIZE];
	} syms;
};

static inline void gen_die(const char *what)
{
	fprintf(stderr, "%s: %s\n", gen_prog, what);
	exit(2);
}

static inline void gen_put(struct gen *g, uint32_t n)
{
	if (!n)
		gen_die("an encoder refused an entry");
	g->len += n;
	g->time_ns += 1000000;
}

/* ------------------------------------------------------------------ */
/* Sections                                                            */
/* ------------------------------------------------------------------ */

/* Starts the recording at @path; nothing buffered yet. */
static inline int gen_open(struct gen *g, const char *path)
{
	g->len = 0;
	g->seq = 0;
	g->nr_sample_ends = 0;
	g->syms.open = false;
	return recording_writer_open(&g->w, path);
}

static inline void gen_layout_section(struct gen *g, uint32_t type, uint64_t size)
{
	if (g->layout)
		fprintf(g->layout, "section %u %" PRIu64 " %" PRIu64 "\n", type,
			g->w.offset, size);
}

static inline int gen_section(struct gen *g, uint32_t type, const void *payload,
			      uint64_t size)
{
	gen_layout_section(g, type, size);
	return recording_write_section(&g->w, type, payload, size);
}

static inline int gen_status(struct gen *g, uint32_t when, const struct pvprof_ctl_status *ctl,
			     const struct pvprof_vcpu_status *vcpus, uint32_t nr)
{
	gen_layout_section(g, PVPROF_DATA_SEC_STATUS,
			   sizeof(struct pvprof_data_status) + nr * sizeof(*vcpus));
	return recording_write_status(&g->w, when, ctl, vcpus, nr);
}

/* HOST and VM, then the START status when @ctl. */
static inline int gen_start(struct gen *g, const struct pvprof_data_host *host,
			    const struct pvprof_data_vm *vm, const struct pvprof_ctl_status *ctl,
			    const struct pvprof_vcpu_status *vcpus, uint32_t nr)
{
	return gen_section(g, PVPROF_DATA_SEC_HOST, host, sizeof(*host)) ||
	       gen_section(g, PVPROF_DATA_SEC_VM, vm, sizeof(*vm)) ||
	       (ctl && gen_status(g, PVPROF_DATA_STATUS_START, ctl, vcpus, nr));
}

/* What is buffered, as one STREAM section (none when nothing is). */
static inline int gen_flush(struct gen *g)
{
	uint32_t i;

	if (!g->len)
		return 0;
	gen_layout_section(g, PVPROF_DATA_SEC_STREAM, g->len);
	for (i = 0; g->layout && i < g->nr_sample_ends; i++)
		fprintf(g->layout, "sample %" PRIu64 "\n",
			g->w.offset + sizeof(struct pvprof_data_section) + g->sample_ends[i]);
	g->nr_sample_ends = 0;
	if (recording_write_stream(&g->w, g->buf, g->len))
		return -1;
	g->len = 0;
	return 0;
}

/* Before an entry: the buffer goes out when fewer than g->room bytes are free. */
static inline void gen_room(struct gen *g)
{
	if (g->room && g->len && sizeof(g->buf) - g->len < g->room && gen_flush(g))
		gen_die("cannot write the stream");
}

/*
 * The end: what is buffered, the END status when @ctl, and the END
 * section, stopped for @stop_reason (PVPROF_DATA_STOP_*) at @end_ns.
 */
static inline int gen_end(struct gen *g, const struct pvprof_ctl_status *ctl,
			  const struct pvprof_vcpu_status *vcpus, uint32_t nr,
			  uint32_t stop_reason, uint64_t end_ns)
{
	if (gen_flush(g) || (ctl && gen_status(g, PVPROF_DATA_STATUS_END, ctl, vcpus, nr)))
		return -1;
	gen_layout_section(g, PVPROF_DATA_SEC_END, sizeof(struct pvprof_data_end));
	return recording_writer_finish(&g->w, stop_reason, end_ns);
}

/*
 * The HOST and VM sections of the tests' recordings: @hostname, started at
 * @start_ns on the monotonic clock (and in November 2023), recording one
 * VM that it sampled at 1000 Hz; the caller changes what its test needs.
 */
static inline void gen_host_vm(struct pvprof_data_host *host, struct pvprof_data_vm *vm,
			       const char *hostname, uint64_t start_ns)
{
	memset(host, 0, sizeof(*host));
	host->start_realtime_ns = 1700000000ULL * 1000000000ULL;
	host->start_monotonic_ns = start_ns;
	snprintf(host->hostname, sizeof(host->hostname), "%s", hostname);
	strcpy(host->release, "6.1.0-test-amd64");
	strcpy(host->machine, "x86_64");
	strcpy(host->tool_version, "0.1");
	memset(vm, 0, sizeof(*vm));
	vm->vmm_pid = 4242;
	vm->vmm_fd = 11;
	vm->flags = PVPROF_DATA_VM_F_ENABLED_BY_US;
	vm->event = PVPROF_EVENT_CPU_CLOCK;
	vm->sample_freq = 1000;
	vm->sample_period = 1000000;
	strcpy(vm->comm, "qemu-system-x86");
}

/*
 * The status of that VM with @nr vCPUs, as PVPROF_CTL_STATUS gives it
 * before any sample: each registered with a buffer of @size bytes at
 * 0x100000 * (vCPU + 1) (@size 0: no buffer given).
 */
static inline void gen_status_of(struct pvprof_ctl_status *ctl, struct pvprof_vcpu_status *vcpus,
				 uint32_t nr, uint32_t size)
{
	uint32_t i;

	memset(ctl, 0, sizeof(*ctl));
	ctl->flags = PVPROF_STATUS_F_ENABLED;
	ctl->nr_vcpus = nr;
	ctl->sample_freq = 1000;
	ctl->sample_period = 1000000;
	memset(vcpus, 0, nr * sizeof(*vcpus));
	for (i = 0; i < nr; i++) {
		vcpus[i].vcpu_id = i;
		vcpus[i].registered = 1;
		vcpus[i].size = size;
		vcpus[i].gpa = size ? 0x100000ULL * (i + 1) : 0;
	}
}

/* ------------------------------------------------------------------ */
/* Stream entries                                                      */
/* ------------------------------------------------------------------ */

/*
 * HELLO for @nr vCPUs, then each one's registration of a @size-byte buffer
 * at 0x100000 * (vCPU + 1); @size 0: HELLO alone.
 */
static inline void gen_hello(struct gen *g, uint32_t nr, uint32_t size)
{
	uint8_t *hello = g->buf + g->len;
	uint32_t i;

	gen_put(g, pvprof_st_put_hello(g->buf + g->len, sizeof(g->buf) - g->len, g->time_ns, nr));
	/* An older host's stream: the same bytes but the version. */
	if (g->stream_version)
		memcpy(hello + offsetof(struct pvprof_st_hello, stream_version),
		       &g->stream_version, sizeof(g->stream_version));
	for (i = 0; size && i < nr; i++) {
		gen_room(g);
		gen_put(g, pvprof_st_put_vcpu(g->buf + g->len, sizeof(g->buf) - g->len, i,
					      g->time_ns, PVPROF_VCPU_REGISTERED, size,
					      0x100000ULL * (i + 1)));
	}
}

static inline void gen_loss(struct gen *g, uint32_t vcpu, uint32_t reason, uint64_t count)
{
	gen_room(g);
	gen_put(g, pvprof_st_put_loss(g->buf + g->len, sizeof(g->buf) - g->len, vcpu,
				      g->time_ns, reason, count));
}

/* A sideband message as the agent sends it, framed into the stream. */
static inline void gen_message(struct gen *g, void *msg, uint16_t type, uint32_t size)
{
	struct pvprof_sideband_hdr *sb = msg;

	sb->type = type;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = size;
	sb->time_ns = g->time_ns;
	if (pvprof_sideband_payload_check(msg, size) != PVPROF_SB_OK)
		gen_die("a sideband message breaks the payload rules");
	gen_room(g);
	gen_put(g, pvprof_st_put_sideband(g->buf + g->len, sizeof(g->buf) - g->len,
					  0, g->time_ns, msg, size));
}

static inline void gen_process(struct gen *g, uint32_t pid, const char *comm, bool valid)
{
	struct pvprof_sb_process p = { 0 };

	p.hdr.type = PVPROF_SB_PROCESS;
	p.hdr.version = PVPROF_SIDEBAND_VERSION;
	p.hdr.size = sizeof(p);
	p.hdr.time_ns = g->time_ns;
	p.pid = pid;
	p.exec_gen = g->exec_gen ? g->exec_gen : 1;
	/* Invalid payload, valid framing: a fork flag without a parent. */
	p.flags = valid ? 0 : PVPROF_SB_PROC_F_FORK;
	memcpy(p.comm, comm, strnlen(comm, sizeof(p.comm) - 1));
	gen_room(g);
	gen_put(g, pvprof_st_put_sideband(g->buf + g->len, sizeof(g->buf) - g->len,
					  0, g->time_ns, &p, sizeof(p)));
}

/*
 * MMAP: @path mapped by process @pid (exec generation g->exec_gen) at @start for
 * @len bytes from file offset @pgoff, which the file's program headers
 * load at ELF address @vaddr; @id the file's build-id.
 */
static inline void gen_mmap_file(struct gen *g, uint32_t pid, uint64_t start, uint64_t len,
				 uint64_t pgoff, uint64_t vaddr,
				 const struct pvprof_sb_build_id *id, const char *path)
{
	static union {
		struct pvprof_sb_mmap m;
		uint8_t raw[PVPROF_SIDEBAND_MAX_SIZE];
	} m;
	size_t plen = strnlen(path, PVPROF_SB_NAME_MAX);

	memset(&m, 0, sizeof(m));
	m.m.pid = pid;
	m.m.exec_gen = g->exec_gen ? g->exec_gen : 1;
	m.m.start = start;
	m.m.len = len;
	m.m.pgoff = pgoff;
	m.m.vaddr = vaddr;
	m.m.build_id = *id;
	m.m.path_len = (uint16_t)plen;
	memcpy(m.raw + sizeof(m.m), path, plen);
	gen_message(g, &m, PVPROF_SB_MMAP, (uint32_t)(sizeof(m.m) + plen));
}

/* A made-up build-id: 20 bytes of @b. */
static inline struct pvprof_sb_build_id gen_build_id(uint8_t b)
{
	struct pvprof_sb_build_id id;

	memset(&id, 0, sizeof(id));
	id.size = 20;
	memset(id.bytes, b, 20);
	return id;
}

/* MMAP of a made-up file: offset 0 at ELF address 0, build-id 20 bytes of @bid. */
static inline void gen_mmap(struct gen *g, uint32_t pid, uint64_t start, uint64_t len,
			    uint8_t bid, const char *path)
{
	struct pvprof_sb_build_id id = gen_build_id(bid);

	gen_mmap_file(g, pid, start, len, 0, 0, &id, path);
}

/* KERNEL: the running kernel's text from @stext to @etext, @nr_syms symbols to come. */
static inline void gen_kernel(struct gen *g, uint64_t stext, uint64_t etext, uint32_t nr_syms,
			      const char *release)
{
	static uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_kernel *k = (void *)msg;

	memset(msg, 0, sizeof(msg));
	k->stext = stext;
	k->etext = etext;
	k->nr_syms = nr_syms;
	snprintf(k->release, sizeof(k->release), "%s", release);
	gen_message(g, k, PVPROF_SB_KERNEL, sizeof(*k));
}

/* Sends the symbol chunk being filled, if any. */
static inline void gen_syms_end(struct gen *g)
{
	if (!g->syms.open)
		return;
	g->syms.open = false;
	if (g->syms.elf) {
		struct pvprof_sb_elf_syms *e = (void *)g->syms.msg;

		e->build_id = gen_build_id(g->syms.bid);
		e->nr = (uint16_t)g->syms.w.nr;
		gen_message(g, e, PVPROF_SB_ELF_SYMS, g->syms.w.len);
	} else {
		struct pvprof_sb_ksyms *k = (void *)g->syms.msg;

		memcpy(k->module, g->syms.module, sizeof(k->module));
		k->nr = (uint16_t)g->syms.w.nr;
		gen_message(g, k, PVPROF_SB_KSYMS, g->syms.w.len);
	}
}

static inline void gen_sym(struct gen *g, bool elf, uint8_t bid, const char *module,
			   uint64_t addr, uint64_t size, const char *name)
{
	if (g->syms.open && (g->syms.elf != elf || g->syms.bid != bid ||
			     strncmp(g->syms.module, module, sizeof(g->syms.module))))
		gen_syms_end(g);
	for (;;) {
		if (!g->syms.open) {
			memset(g->syms.msg, 0, sizeof(g->syms.msg));
			pvprof_sb_sym_writer_init(&g->syms.w, g->syms.msg,
						  elf ? sizeof(struct pvprof_sb_elf_syms) :
							sizeof(struct pvprof_sb_ksyms),
						  sizeof(g->syms.msg), elf, addr);
			if (elf)
				((struct pvprof_sb_elf_syms *)g->syms.msg)->first = addr;
			else
				((struct pvprof_sb_ksyms *)g->syms.msg)->first = addr;
			g->syms.open = true;
			g->syms.elf = elf;
			g->syms.bid = bid;
			memset(g->syms.module, 0, sizeof(g->syms.module));
			memcpy(g->syms.module, module,
			       strnlen(module, sizeof(g->syms.module) - 1));
		}
		if (!pvprof_sb_sym_put(&g->syms.w, addr, size, name, (uint32_t)strlen(name)))
			return;
		if (!g->syms.w.nr)
			gen_die("a symbol fits no message");
		gen_syms_end(g);
	}
}

/*
 * Symbol tables as the agent sends them, each in ascending order: the
 * kernel's (@module NULL) or a module's KSYMS, the ELF_SYMS of the file
 * whose build-id is 20 bytes of @bid.  Consecutive symbols of one table go
 * into as few messages as fit; another table's symbol or gen_syms_end()
 * sends the last one.
 */
static inline void gen_ksym(struct gen *g, const char *module, uint64_t addr, const char *name)
{
	gen_sym(g, false, 0, module ? module : "", addr, 0, name);
}

static inline void gen_elfsym(struct gen *g, uint8_t bid, uint64_t addr, uint64_t size,
			      const char *name)
{
	gen_sym(g, true, bid, "", addr, size, name);
}

/*
 * The callchain gen_callchain() puts next: the next seq, taken at
 * g->time_ns by process @pid's thread @tid (exec generation g->exec_gen), @flags
 * (PVPROF_CHAIN_F_*), @nr_kernel kernel then @nr_user user frames of
 * @frames, innermost first.
 */
static inline struct pvprof_callchain *gen_chain(struct gen *g, uint32_t pid, uint32_t tid,
					      uint32_t flags, uint32_t nr_kernel,
					      uint32_t nr_user, const uint64_t *frames)
{
	struct pvprof_callchain *chain = (struct pvprof_callchain *)g->chain;
	uint32_t nr = nr_kernel + nr_user;

	if (nr > PVPROF_MAX_DEPTH)
		gen_die("more frames than a callchain holds");
	memset(chain, 0, sizeof(*chain));
	chain->seq = ++g->seq;
	chain->time_ns = g->time_ns;
	chain->pid = pid;
	chain->tid = tid;
	chain->exec_gen = g->exec_gen ? g->exec_gen : 1;
	chain->flags = flags;
	chain->nr_kernel = (uint16_t)nr_kernel;
	chain->nr_user = (uint16_t)nr_user;
	if (nr)
		memcpy(pvprof_callchain_frames(chain), frames, 8U * nr);
	chain->size = (uint16_t)pvprof_callchain_bytes(nr);
	return chain;
}

/*
 * Gives that callchain a user stack snapshot, as --call-graph dwarf does: the
 * user registers @regs (PVPROF_UREG_*) and @size bytes of @stack.
 */
static inline void gen_ustack(struct gen *g, const uint64_t *regs, const void *stack,
			      uint32_t size)
{
	struct pvprof_callchain *chain = (struct pvprof_callchain *)g->chain;
	struct pvprof_ustack *us = pvprof_callchain_ustack(chain);

	if (size > PVPROF_USTACK_MAX)
		gen_die("a stack snapshot larger than a callchain holds");
	chain->flags |= PVPROF_CHAIN_F_USTACK;
	memcpy(us->regs, regs, sizeof(us->regs));
	us->size = size;
	us->reserved0 = 0;
	memcpy(pvprof_ustack_data(us), stack, size);
	memset(pvprof_ustack_data(us) + size, 0, ((size + 7U) & ~7U) - size);
	chain->size = (uint16_t)pvprof_callchain_ustack_bytes(chain->nr_kernel + chain->nr_user, size);
}

/*
 * Puts that callchain as vCPU @vcpu's callchain entry, with the facts the
 * host took at the notice: the guest's RIP @ip, its CPL (g->notice_cpl
 * when set, else 3 for a callchain taken in user mode), the event @event
 * (PVPROF_EVENT_*), and the marks in g->sample_flags and
 * g->own_nmi_samples; it clears them all.
 */
static inline void gen_callchain(struct gen *g, uint32_t vcpu, uint64_t ip, uint8_t event)
{
	const struct pvprof_callchain *chain = (const struct pvprof_callchain *)g->chain;
	struct pvprof_notice_facts facts = { 0 };

	facts.ip = ip;
	facts.cpl = g->notice_cpl_set ? g->notice_cpl : (chain->flags & PVPROF_CHAIN_F_USER) ? 3 : 0;
	facts.event = event;
	facts.sample_flags = g->sample_flags;
	facts.own_nmi_samples = g->own_nmi_samples;
	g->sample_flags = 0;
	g->own_nmi_samples = 0;
	g->notice_cpl_set = false;
	gen_room(g);
	gen_put(g, pvprof_st_put_callchain(g->buf + g->len, sizeof(g->buf) - g->len, vcpu,
					   g->time_ns, &facts, chain));
	if (g->nr_sample_ends < sizeof(g->sample_ends) / sizeof(g->sample_ends[0]))
		g->sample_ends[g->nr_sample_ends++] = g->len;
}

#endif /* _PVPROF_TOOL_TESTS_RECGEN_H */
