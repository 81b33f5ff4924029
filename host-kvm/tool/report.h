/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: the profile built from a recording, the
 * output writers, and the escaping every guest string goes through.
 *
 * Symbols, DSO paths and command names come from the guest: any byte but
 * NUL, any length.  Each writer escapes them for its format (terminal,
 * folded stacks, perf script, SVG) and caps them at REPORT_NAME_MAX bytes.
 */
#ifndef KVM_PVPROF_REPORT_H
#define KVM_PVPROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "abi/pvprof_ctl.h"
#include "recording.h"

/* Longest guest string shown, in bytes before escaping. */
#define REPORT_NAME_MAX		255
/* Header lines wrap before this many columns (guest strings aside). */
#define REPORT_HEADER_WIDTH	100

/**
 * struct report_sym - what is known about one frame's address
 * @symbol: function name, NULL when unknown
 * @dso: "[kernel.kallsyms]", "[module]", a path, or NULL when unknown
 * @offset: from the symbol; from the DSO base when @symbol is NULL; the
 *	raw address when both are NULL
 * @image_start: with @dso, the address range of the image that holds the
 *	frame (the kernel's text, a module, a mapping); 0 and 0 when unknown
 * @image_end: the address after it
 * @image_pgoff: the file offset at @image_start
 * @build_id: the image's build-id, NULL when unknown
 * @build_id_size: its length, at most REPORT_BUILD_ID_MAX
 */
struct report_sym {
	const char *symbol;
	const char *dso;
	uint64_t offset;
	uint64_t image_start, image_end, image_pgoff;
	const uint8_t *build_id;
	size_t build_id_size;
};

#define REPORT_BUILD_ID_MAX	PVPROF_SB_BUILD_ID_MAX

/**
 * struct report_resolver - where symbols and command names come from
 * @ctx: passed to the callbacks
 * @sideband: takes one sideband message in stream order; 0, or a negative
 *	errno for a message it rejected
 * @resolve: symbolizes one frame
 * @comm: the command name of a process, NULL when unknown
 * @describe: optional, writes one header line on what it knows
 * @user_code: optional, whether a user address lies in an executable
 *	mapping of the process image: 1 yes, 0 no, -1 no mapping of the image
 *	is known; frame-pointer chains are cut at the first return address
 *	that is not (report_sample_frames()).  NULL keeps every chain whole
 * @unwind: optional, unwinds the user stack snapshots of --call-graph
 *	dwarf recordings (report_unwind_new()); NULL keeps every record's
 *	frame-pointer chain
 *
 * With no resolver every frame is unsymbolized (raw addresses).
 */
struct report_unwind;

struct report_resolver {
	void *ctx;
	int (*sideband)(void *ctx, const void *msg, size_t len);
	void (*resolve)(void *ctx, bool kernel_frame, uint32_t pid, uint32_t exec_gen,
			uint64_t addr, struct report_sym *out);
	const char *(*comm)(void *ctx, uint32_t pid, uint32_t exec_gen);
	void (*describe)(void *ctx, FILE *f);
	int (*user_code)(void *ctx, uint32_t pid, uint32_t exec_gen, uint64_t addr);
	struct report_unwind *unwind;
};

/**
 * struct report_frames - the frames a sample is shown with
 * @addr: kernel frames innermost first, then user frames innermost first
 * @nr: frames in @addr
 * @nr_kernel: of those, kernel frames
 * @first_return: frames from this index on are return addresses found by
 *	DWARF unwinding, named at addr - 1; @nr when there are none
 * @cut: user frames of the record's frame-pointer chain left out from a
 *	return address outside the image's code on (0 when none)
 */
struct report_frames {
	uint64_t addr[PVPROF_MAX_DEPTH];
	uint32_t nr, nr_kernel, first_return;
	uint32_t cut;
};

/* Why a snapshot's user frames stayed the guest's frame-pointer chain. */
enum report_uw_fallback {
	REPORT_UW_NO_TABLES,	/* no usable tables for the sampled file */
	REPORT_UW_INCOMPLETE,	/* its tables did not all arrive */
	REPORT_UW_MEMORY,	/* needed stack beyond the snapshot */
	REPORT_UW_ERROR,	/* bad or missing CFI, a loop */
	REPORT_UW_NO_CALLER,	/* the CFI says frame 0 has no caller */
	REPORT_UW_NR
};

/**
 * struct report_unwind_stats - what became of the user stack snapshots
 * @snapshots: callchains with a snapshot that were shown
 * @unwound: of those, shown with DWARF-unwound user frames
 * @outermost: of those, unwound up to a frame without caller
 * @fallback: the others, shown with the frame-pointer chain, by reason
 */
struct report_unwind_stats {
	uint64_t snapshots, unwound, outermost;
	uint64_t fallback[REPORT_UW_NR];
};

#define REPORT_F_KERNEL_ONLY	(1U << 0)
#define REPORT_F_USER_ONLY	(1U << 1)

/**
 * struct report_filter - which samples and frames count
 * @vcpu: only this vCPU, -1 for all
 * @pid: only this guest pid, -1 for all
 * @comm: only this command name (compared unescaped), NULL for all
 * @flags: REPORT_F_*
 * @time: only samples in these windows (--time), NULL for all
 */
struct report_time;

struct report_filter {
	int64_t vcpu;
	int64_t pid;
	const char *comm;
	uint32_t flags;
	const struct report_time *time;
};

/**
 * struct report_stats - totals shown in every report's header
 * @records: stream records
 * @callchains: callchain records
 * @samples: callchains that passed the filters
 * @user_mode: callchains with PVPROF_REC_F_USER
 * @stale: callchains flagged stale
 * @skewed: callchains flagged skewed
 * @truncated: callchains flagged truncated
 * @trunc_depth: of those, the ones whose frames reached the depth limit
 * @trunc_snapshot: of those, the ones with a user stack snapshot, whose
 *	user part report unwinds instead (the guest's walk ended, not the
 *	stack shown)
 * @cut_samples: samples that passed the filters whose frame-pointer chain
 *	was cut at a return address outside the image's code
 * @cut_frames: the frames left out of them
 * @empty: callchains without a frame
 * @frames: frames in the samples that passed the filters
 * @unsymbolized: of those, frames without a symbol
 * @losses: LOSS record counts by reason
 * @sideband: sideband messages
 * @sideband_bytes: their bytes
 * @sideband_rejected: messages the resolver rejected
 * @vcpu_events: VCPU records by PVPROF_VCPU_* (index 0 unused)
 * @unknown: records of a type this reader does not know (skipped)
 * @nr_vcpus: the stream's HELLO
 * @first_ns: host time of the first callchain
 * @last_ns: host time of the last callchain
 */
struct report_stats {
	uint64_t records, callchains, samples, user_mode;
	uint64_t stale, skewed, truncated, empty;
	uint64_t trunc_depth, trunc_snapshot, cut_samples, cut_frames;
	uint64_t frames, unsymbolized;
	uint64_t losses[PVPROF_LOSS_NR];
	uint64_t sideband, sideband_bytes, sideband_rejected;
	uint64_t vcpu_events[4];
	uint64_t unknown;
	uint32_t nr_vcpus;
	uint64_t first_ns, last_ns;
};

struct profile;

/**
 * struct profile_node - a node of the call tree (root = all samples)
 * @name: interned label, unescaped
 * @kind: PROFILE_KIND_*
 * @total: samples at or below this node
 * @self: samples ending here
 * @child: first child (sorted by name once finished), 0 for none
 * @sibling: next sibling, 0 for none
 */
struct profile_node {
	const char *name;
	uint32_t kind;
	uint64_t total;
	uint64_t self;
	uint32_t child;
	uint32_t sibling;
};

#define PROFILE_KIND_ROOT	0
#define PROFILE_KIND_COMM	1
#define PROFILE_KIND_KERNEL	2
#define PROFILE_KIND_USER	3

/**
 * struct profile_func - one function's counts
 * @name: interned label, unescaped
 * @kind: PROFILE_KIND_KERNEL or PROFILE_KIND_USER
 * @dso: its DSO, interned, or NULL
 * @self: samples whose innermost frame it is
 * @total: samples it appears in (once per sample)
 * @last_sample: the last sample that counted it in @total
 */
struct profile_func {
	const char *name;
	uint32_t kind;
	const char *dso;
	uint64_t self;
	uint64_t total;
	uint64_t last_sample;
};

/**
 * struct profile - everything report writes, built from one recording
 * @stats: the header totals
 * @nodes: the call tree, nodes[0] the root
 * @nr_nodes: nodes in use
 * @funcs: the function table
 * @nr_funcs: functions in use
 * @strings: the intern table (private)
 */
struct profile {
	struct report_stats stats;
	struct profile_node *nodes;
	uint32_t nr_nodes, cap_nodes;
	struct profile_func *funcs;
	uint32_t nr_funcs, cap_funcs;
	struct intern_table *strings;
	uint32_t *func_index;		/* hash (name, kind, dso) -> funcs + 1 */
	uint32_t func_index_size;
};

/**
 * struct profile_frame - one frame of a sample, as profile_build() counted it
 * @addr: its address
 * @func: its function, an index into profile.funcs
 * @image_start: report_sym's, copied: resolvers may reuse their buffers
 * @image_end: the same
 * @image_pgoff: the same
 * @build_id_size: the same
 * @build_id: the same
 */
struct profile_frame {
	uint64_t addr;
	uint32_t func;
	uint64_t image_start, image_end, image_pgoff;
	uint8_t build_id_size;
	uint8_t build_id[REPORT_BUILD_ID_MAX];
};

/**
 * struct profile_sample - one sample that passed the filters
 * @v: its callchain record
 * @comm: its command name, interned, unescaped
 * @frames: the frames that count, innermost first (kernel, then user)
 * @nr: their number
 */
struct profile_sample {
	const struct pvprof_st_view *v;
	const char *comm;
	const struct profile_frame *frames;
	uint32_t nr;
};

/**
 * struct profile_sink - a writer's hook on each sample profile_build_sink() counts
 * @sample: called for each sample counted, in stream order; 0, or -1 when
 *	out of memory
 * @ctx: passed to @sample
 *
 * For a writer that keeps every sample (pprof), not only the tree and the
 * function table: it sees them during the profile's own walk, so that the
 * recording is read, unwound and symbolized once for every output.
 */
struct profile_sink {
	int (*sample)(void *ctx, const struct profile *p, const struct profile_sample *s);
	void *ctx;
};

/* Escaping (report_escape.c); each returns @out, always NUL-terminated. */
#define REPORT_ESC_SIZE		(REPORT_NAME_MAX * 6 + 8)
char *esc_text(const char *s, char *out);
char *esc_folded(const char *s, char *out);
char *esc_script(const char *s, char *out);
char *esc_xml(const char *s, char *out);

/* Building the profile (report.c). */
int profile_build(struct profile *p, const struct recording *r,
		  const struct report_filter *f, const struct report_resolver *res);
int profile_build_sink(struct profile *p, const struct recording *r,
		       const struct report_filter *f, const struct report_resolver *res,
		       const struct profile_sink *sink);
void profile_free(struct profile *p);
const char *frame_label(const struct report_sym *sym, uint64_t addr, char *buf,
			size_t size);
void report_resolve(const struct report_resolver *res, bool kernel, uint32_t pid,
		    uint32_t exec_gen, uint64_t addr, struct report_sym *sym);
const char *sample_comm(const struct report_resolver *res, uint32_t pid,
			uint32_t exec_gen, char *buf, size_t size);

/* The guest agent's symbols (symbolize.c) as a resolver (report.c). */
struct pvprof_symbolizer;
struct pvprof_symbolizer *recording_symbolizer(const struct recording *r);
void symbolizer_resolver(struct pvprof_symbolizer *s, struct report_resolver *res);

struct pvprof_symbolizer *recording_resolver(const struct recording *r,
					      struct report_resolver *res);

/* DWARF unwinding of user stack snapshots (report_unwind.c). */
struct report_unwind *report_unwind_new(const struct recording *r,
					struct pvprof_symbolizer *sym);
struct report_unwind *report_unwind_alloc(struct pvprof_symbolizer *sym);
int report_unwind_add(struct report_unwind *ru, const void *msg, size_t len);
void report_unwind_settle(struct report_unwind *ru);
void report_unwind_free(struct report_unwind *ru);
void report_unwind_stats(const struct report_unwind *ru, struct report_unwind_stats *st);
void report_unwind_describe(const struct report_unwind *ru, FILE *f);
const char *report_uw_fallback_name(enum report_uw_fallback r);
int report_sample_frames(const struct report_resolver *res,
			 const struct pvprof_st_view *v, struct report_frames *out);
void report_frame_resolve(const struct report_resolver *res,
			  const struct report_frames *fr, uint32_t i, uint32_t pid,
			  uint32_t exec_gen, struct report_sym *sym);

/**
 * struct report_host_counters - a STATUS section of the recording, summed
 * @samples: samples the host took, all vCPUs
 * @notices: notices it wrote
 * @records: callchain records it accepted
 * @nmis: pvprof NMIs it injected
 * @lost: its losses, all reasons
 * @sideband_bytes: sideband bytes it accepted
 * @sideband_refused: sideband messages it refused
 */
struct report_host_counters {
	uint64_t samples, notices, records, nmis, lost;
	uint64_t sideband_bytes, sideband_refused;
};

void report_host_counters(const struct recording_status *st,
			  struct report_host_counters *c);

/**
 * struct report_hdr - a header line being written (report_hdr_begin())
 * @f: output
 * @col: columns written on the current line
 * @sep: what goes before the next item
 */
struct report_hdr {
	FILE *f;
	size_t col;
	const char *sep;
};

void report_hdr_begin(struct report_hdr *h, FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report_hdr_item(struct report_hdr *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void report_hdr_sep(struct report_hdr *h, const char *sep);
void report_hdr_end(struct report_hdr *h);

/* Writers; each returns 0, or -1 when the output could not be written. */
int report_write_header(FILE *f, const char *path, const struct recording *r,
			const struct profile *p, const struct report_filter *flt,
			const struct report_resolver *res);
int report_write_folded(FILE *f, const struct profile *p);
int report_write_flamegraph(FILE *f, const struct profile *p, const char *title);
struct script_options;
int report_write_script(FILE *f, const struct recording *r,
			const struct report_filter *flt,
			const struct report_resolver *res,
			const struct script_options *o, struct report_stats *st);

/* pprof's profile.proto, gzipped (report_pprof.c). */
struct report_pprof;
struct report_pprof *report_pprof_create(const char *path, const char *input);
const struct profile_sink *report_pprof_sink(struct report_pprof *pp);
int report_pprof_write(struct report_pprof *pp, const char *input,
		       const struct recording *r, const struct profile *p,
		       const struct report_filter *flt,
		       const struct report_resolver *res);
void report_pprof_free(struct report_pprof *pp);

int do_report(int argc, char **argv);
int do_script(int argc, char **argv);

#endif /* KVM_PVPROF_REPORT_H */
