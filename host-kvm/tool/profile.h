/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report: the profile of a recording, a call tree and a
 * function table built in one walk over the stream (profile.c), with the
 * totals every report's header shows.
 */
#ifndef KVM_PVPROF_PROFILE_H
#define KVM_PVPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "abi/pvprof_ctl.h"
#include "recording.h"
#include "report_resolve.h"

/**
 * struct report_stats - totals shown in every report's header
 * @entries: stream entries
 * @callchains: callchain entries
 * @samples: samples that passed the filters; a callchain entry stands for
 *	1 + own_nmi_samples of them (report_sample_parts())
 * @own_nmi: of those, the samples shown with REPORT_OWN_NMI_FRAME, taken
 *	inside pvprof's own NMI path
 * @own_nmi_recorded: samples of the recording that hit pvprof's own NMI
 *	path, whatever the filters
 * @user_mode: callchains with PVPROF_CHAIN_F_USER
 * @stale: callchains flagged stale
 * @skewed: callchains flagged skewed, but for those taken inside pvprof's
 *	own NMI path (PVPROF_ST_SAMPLE_F_OWN_NMI), whose IP was there by
 *	construction
 * @skewed_same_function: of those, the callchains whose interrupted IP
 *	(their first frame) resolves to the symbol the sample's IP (the
 *	notice's) does: the stack moved on within the function
 * @truncated: callchains flagged truncated
 * @trunc_depth: of those, the ones whose frames reached the depth limit
 * @trunc_snapshot: of those, the ones with a user stack snapshot, whose
 *	user part report unwinds instead (the guest's walk ended, not the
 *	stack shown)
 * @cut_samples: samples that passed the filters whose frame-pointer chain
 *	was cut at a return address outside the image's code
 * @cut_frames: the frames left out of them, counted for each sample
 * @empty: callchains without a frame
 * @frames: the callchains' frames in the samples that passed the filters,
 *	counted for each sample (REPORT_OWN_NMI_FRAME is none of them)
 * @unsymbolized: of those, frames without a symbol
 * @losses: LOSS entry counts by reason
 * @sideband: sideband messages
 * @sideband_bytes: their bytes
 * @sideband_rejected: messages the resolver rejected
 * @vcpu_events: VCPU entries by PVPROF_VCPU_* (index 0 unused)
 * @unknown: entries of a type this reader does not know (skipped)
 * @nr_vcpus: the stream's HELLO
 * @first_ns: host time of the first callchain
 * @last_ns: host time of the last callchain
 */
struct report_stats {
	uint64_t entries, callchains, samples, own_nmi, own_nmi_recorded, user_mode;
	uint64_t stale, skewed, skewed_same_function, truncated, empty;
	uint64_t trunc_depth, trunc_snapshot, cut_samples, cut_frames;
	uint64_t frames, unsymbolized;
	uint64_t losses[PVPROF_LOSS_NR];
	uint64_t sideband, sideband_bytes, sideband_rejected;
	uint64_t vcpu_events[4];
	uint64_t unknown;
	uint32_t nr_vcpus;
	uint64_t first_ns, last_ns;
};

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
 * @image_start: the frame's struct pvprof_sym's, copied: resolvers may
 *	reuse their buffers
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
 * struct profile_sample - samples of one callchain entry that passed the
 *	filters, with one stack (a part, report_sample_parts())
 * @v: their callchain entry
 * @comm: their command name, interned, unescaped
 * @frames: the frames that count, innermost first (kernel, then user); the
 *	first is REPORT_OWN_NMI_FRAME's function, at address 0 and in no
 *	image, for samples taken inside pvprof's own NMI path
 * @nr: their number
 * @weight: how many samples these are, at least 1
 */
struct profile_sample {
	const struct pvprof_st_view *v;
	const char *comm;
	const struct profile_frame *frames;
	uint32_t nr;
	uint64_t weight;
};

/**
 * struct profile_sink - a writer's hook on each sample profile_build_sink() counts
 * @sample: called for the samples of each part counted, in stream order;
 *	0, or -1 when out of memory
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

/*
 * The most frames of a sample: a callchain's, and REPORT_OWN_NMI_FRAME
 * above them.
 */
#define PROFILE_MAX_FRAMES	(PVPROF_MAX_DEPTH + 1)

/*
 * The most nodes on a path from a command down: the command, then at most
 * PROFILE_MAX_FRAMES frames (the root is not on it).
 */
#define PROFILE_MAX_PATH	(PROFILE_MAX_FRAMES + 1)

/**
 * typedef profile_visit_fn - profile_walk()'s visitor, called on each node
 * @ctx: profile_walk()'s @ctx
 * @p: the profile
 * @path: the nodes from the command (@path[0]) down to the node visited
 *	(@path[@len - 1]), indices into @p->nodes; valid during the call
 * @len: their number, 1 to PROFILE_MAX_PATH
 *
 * Return: 0 to go on, anything else to end the walk with it.
 */
typedef int (*profile_visit_fn)(void *ctx, const struct profile *p, const uint32_t *path,
				uint32_t len);

struct report_filter;

int profile_walk(const struct profile *p, profile_visit_fn visit, void *ctx);
int profile_build(struct profile *p, const struct recording *r,
		  const struct report_filter *f, const struct report_resolver *res);
int profile_build_sink(struct profile *p, const struct recording *r,
		       const struct report_filter *f, const struct report_resolver *res,
		       const struct profile_sink *sink);
void profile_free(struct profile *p);
const char *frame_label(const struct pvprof_sym *sym, uint64_t addr, char *buf,
			size_t size);

#endif /* KVM_PVPROF_PROFILE_H */
