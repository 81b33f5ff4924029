// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF unwinding of the user stack snapshots in a recording, for report
 * and script (--call-graph dwarf).
 *
 * The guest agent sends each ELF file's unwind tables (PVPROF_SB_UNWIND)
 * once per build-id; they are all read into one store in a first walk of
 * the recording, like the symbolizer's complete tables, so a sample taken
 * before its file's tables went out is unwound like a later one, and the
 * tables behind a build-id never change during the report.  The mappings
 * come from the symbolizer, in stream order: when an image's mappings
 * change (a new MMAP), the unwinder's cached session for it is dropped.
 *
 * A sample's user frames become the unwound ones when the walk got past
 * frame 0; otherwise the guest's frame-pointer chain stays, and the reason
 * is counted for the report header.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/sideband.h"
#include "hash.h"
#include "main.h"
#include "report_cache.h"
#include "report_hdr.h"
#include "report_resolve.h"
#include "report_unwind.h"
#include "symbolize.h"
#include "unwind.h"
#include "unwind_tables.h"

_Static_assert(UNWIND_NR_REGS == PVPROF_UREG_NR &&
	       UNWIND_REG_IP == PVPROF_UREG_IP && UNWIND_REG_SP == PVPROF_UREG_SP &&
	       UNWIND_REG_BP == PVPROF_UREG_BP && UNWIND_REG_BX == PVPROF_UREG_BX &&
	       UNWIND_REG_R12 == PVPROF_UREG_R12 && UNWIND_REG_R15 == PVPROF_UREG_R15,
	       "the unwinder takes the registers in the ABI's order");

#define UW_BUCKETS	1024U

/* One build-id's tables, as the unwinder takes them; @tables.key is itself. */
struct uw_file {
	struct uw_file *next;
	uint8_t id_size;
	uint8_t id[PVPROF_SB_BUILD_ID_MAX];
	bool usable;		/* .eh_frame or .debug_frame complete */
	struct unwind_tables tables;
};

/* One process image's mappings as given to the unwinder. */
struct uw_image {
	struct uw_image *next;
	const void *image;	/* the symbolizer's */
	uint64_t gen;		/* its maps_gen when @maps was built */
	struct unwind_mapping *maps;
	struct uw_file **files;	/* per mapping, NULL without a build-id entry */
	size_t nr_maps;
};

struct report_unwind {
	struct pvprof_symbolizer *sym;
	struct pvprof_unwind_tables *store;
	struct unwinder *u;
	struct uw_file *files[UW_BUCKETS];
	struct uw_image *images[UW_BUCKETS];
	struct report_unwind_stats st;
};

static struct uw_file *file_find(struct report_unwind *ru, const uint8_t *id,
				 size_t size, bool create)
{
	size_t b;
	struct uw_file *f;

	if (!size || size > PVPROF_SB_BUILD_ID_MAX)
		return NULL;
	b = hash_bytes(id, size, HASH_INIT) & (UW_BUCKETS - 1);
	for (f = ru->files[b]; f; f = f->next)
		if (f->id_size == size && !memcmp(f->id, id, size))
			return f;
	if (!create)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->id_size = (uint8_t)size;
	memcpy(f->id, id, size);
	f->next = ru->files[b];
	ru->files[b] = f;
	return f;
}

/**
 * report_unwind_add() - take one sideband message into the table store
 * @ru: the state
 * @msg: the message, header included
 * @len: its length
 *
 * Messages other than UNWIND are ignored, bad parts are counted by the
 * store and leave no file behind.
 * Return: 0, or -ENOMEM.
 */
int report_unwind_add(struct report_unwind *ru, const void *msg, size_t len)
{
	struct pvprof_sb_unwind m;

	if (len < sizeof(m))
		return 0;
	memcpy(&m, msg, sizeof(m));
	if (m.hdr.type != PVPROF_SB_UNWIND)
		return 0;
	if (pvprof_unwind_tables_add(ru->store, msg, len) < 0)
		return 0;
	if (!file_find(ru, m.build_id.bytes, m.build_id.size, true))
		return -ENOMEM;
	return 0;
}

/**
 * report_unwind_settle() - fix each file's complete tables, after the walk
 *	that fed report_unwind_add() every sideband message of the recording
 * @ru: the state
 */
void report_unwind_settle(struct report_unwind *ru)
{
	struct uw_file *f;
	size_t b;

	for (b = 0; b < UW_BUCKETS; b++)
		for (f = ru->files[b]; f; f = f->next)
			f->usable = pvprof_unwind_tables_get(ru->store, f->id, f->id_size, f,
							     &f->tables);
}

/**
 * report_unwind_alloc() - empty unwinding state, to be fed the tables
 * @sym: the symbolizer that report or script feeds in stream order (the
 *	mappings come from it); it must outlive the result
 *
 * Return: the state, or NULL after printing that memory ran out.
 */
struct report_unwind *report_unwind_alloc(struct pvprof_symbolizer *sym)
{
	struct report_unwind *ru = calloc(1, sizeof(*ru));

	if (!ru)
		goto oom;
	ru->sym = sym;
	ru->store = pvprof_unwind_tables_new(PVPROF_UNWIND_TABLES_DEFAULT_MAX);
	ru->u = unwinder_new();
	if (!ru->store || !ru->u)
		goto oom;
	return ru;

oom:
	p_err("out of memory for the unwinder");
	report_unwind_free(ru);
	return NULL;
}

static int feed_unwind(void *ru, const struct pvprof_st_view *v, uint64_t off)
{
	(void)off;
	if (v->hdr.type == PVPROF_ST_SIDEBAND && report_unwind_add(ru, v->sb_msg, v->sb_len))
		return 1;
	return 0;
}

/**
 * report_unwind_new() - the unwinding state for one recording, in a walk
 *	of its own (recording_resolver() shares one with the symbolizer)
 * @r: the recording; its unwind tables are read here
 * @sym: as for report_unwind_alloc()
 *
 * Return: the state, or NULL after printing why (out of memory, a read
 * error).
 */
struct report_unwind *report_unwind_new(const struct recording *r,
					struct pvprof_symbolizer *sym)
{
	struct report_unwind *ru = report_unwind_alloc(sym);
	int ret;

	if (!ru)
		return NULL;
	ret = recording_for_each(r, feed_unwind, ru);
	if (ret) {
		/* A read error (-1) is printed by recording_for_each(). */
		if (ret > 0)
			p_err("out of memory for the unwinder");
		report_unwind_free(ru);
		return NULL;
	}
	report_unwind_settle(ru);
	return ru;
}

/**
 * report_unwind_free() - free the unwinding state, its tables and caches
 * @ru: the state, or NULL
 */
void report_unwind_free(struct report_unwind *ru)
{
	size_t b;

	if (!ru)
		return;
	unwinder_free(ru->u);
	for (b = 0; b < UW_BUCKETS; b++) {
		while (ru->images[b]) {
			struct uw_image *im = ru->images[b];

			ru->images[b] = im->next;
			free(im->maps);
			free(im->files);
			free(im);
		}
		while (ru->files[b]) {
			struct uw_file *f = ru->files[b];

			ru->files[b] = f->next;
			free(f);
		}
	}
	pvprof_unwind_tables_free(ru->store);
	free(ru);
}

/**
 * report_unwind_stats() - what happened to the snapshots so far
 * @ru: the state
 * @st: filled in
 */
void report_unwind_stats(const struct report_unwind *ru, struct report_unwind_stats *st)
{
	*st = ru->st;
}

/* Rebuild @im's mappings from the symbolizer's; false when out of memory. */
static bool image_fill(struct report_unwind *ru, struct uw_image *im, size_t nr)
{
	size_t i;

	free(im->maps);
	free(im->files);
	im->nr_maps = 0;
	im->maps = calloc(nr ? nr : 1, sizeof(*im->maps));
	im->files = calloc(nr ? nr : 1, sizeof(*im->files));
	if (!im->maps || !im->files)
		return false;
	for (i = 0; i < nr; i++) {
		struct pvprof_sym_map m;
		struct uw_file *f;

		pvprof_symbolizer_image_map(im->image, i, &m);
		f = file_find(ru, m.build_id, m.build_id_size, false);
		im->maps[i] = (struct unwind_mapping){
			.start = m.start,
			.end = m.end,
			.vaddr = m.vaddr,
			.tables = f && f->usable ? &f->tables : NULL,
			.name = m.path,
		};
		im->files[i] = f;
	}
	im->nr_maps = nr;
	return true;
}

/* The unwinder's view of an image, rebuilt when its mappings changed. */
static struct uw_image *image_get(struct report_unwind *ru, const void *image,
				  uint64_t gen, size_t nr)
{
	size_t b = hash_bytes(&image, sizeof(image), HASH_INIT) & (UW_BUCKETS - 1);
	struct uw_image *im;

	for (im = ru->images[b]; im; im = im->next)
		if (im->image == image)
			break;
	if (!im) {
		im = calloc(1, sizeof(*im));
		if (!im)
			return NULL;
		im->image = image;
		im->next = ru->images[b];
		ru->images[b] = im;
	} else if (im->gen == gen && im->maps) {
		return im;
	}
	/* The cached session knows the old modules: correctness first. */
	unwinder_forget(ru->u, im);
	im->gen = gen;
	return image_fill(ru, im, nr) ? im : NULL;
}

static ssize_t map_index(const struct uw_image *im, uint64_t addr)
{
	size_t lo = 0, hi = im->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < im->maps[lo - 1].end ? (ssize_t)lo - 1 : -1;
}

static const struct unwind_mapping *find_mapping(void *ctx, uint64_t addr)
{
	const struct uw_image *im = ctx;
	ssize_t i = map_index(im, addr);

	return i < 0 ? NULL : &im->maps[i];
}

static void frames_from_entry(const struct pvprof_st_view *v, struct report_frames *out)
{
	uint32_t i, n = v->nr_frames;

	if (n > PVPROF_MAX_DEPTH)
		n = PVPROF_MAX_DEPTH;
	for (i = 0; i < n; i++)
		out->addr[i] = pvprof_st_frame(v, i);
	out->nr = n;
	out->nr_kernel = v->u.callchain.chain.nr_kernel < n ? v->u.callchain.chain.nr_kernel : n;
	out->first_return = n;
	out->cut = 0;
}

/*
 * The guest's frame-pointer walk cannot tell a saved frame pointer from
 * any other word: past a function built without frame pointers it reads
 * data, and every "return address" after that is noise (ASCII text, stack
 * addresses).  Cut the chain at the first return address outside the
 * image's executable mappings; the first user frame is the interrupted IP,
 * not read from the stack, and stays.  Without any known mapping of the
 * image nothing can be judged and the chain stays whole.
 */
static void cut_fp_chain(const struct report_resolver *res, struct report_cache *cache,
			 const struct pvprof_callchain *chain, struct report_frames *out)
{
	uint32_t i;

	if (!res || !res->user_code)
		return;
	for (i = out->nr_kernel + 1; i < out->nr; i++) {
		int in = cache ? report_cache_user_code(cache, chain->pid, chain->exec_gen,
							out->addr[i]) :
				 res->user_code(res->ctx, chain->pid, chain->exec_gen, out->addr[i]);

		if (in < 0)
			return;
		if (!in) {
			out->cut = out->nr - i;
			out->nr = i;
			out->first_return = i;
			return;
		}
	}
}

/* Why a walk that stopped at frame 0 did, for the header. */
static enum report_uw_fallback fallback_reason(const struct uw_image *im, uint64_t ip,
					       enum unwind_end end)
{
	ssize_t i;

	switch (end) {
	case UNWIND_END_NO_TABLES:
		i = im ? map_index(im, ip) : -1;
		if (i >= 0 && im->files[i] && !im->files[i]->usable)
			return REPORT_UW_INCOMPLETE;
		return REPORT_UW_NO_TABLES;
	case UNWIND_END_MEMORY:
		return REPORT_UW_MEMORY;
	case UNWIND_END_OUTERMOST:
		return REPORT_UW_NO_CALLER;
	default:
		return REPORT_UW_ERROR;
	}
}

/**
 * report_sample_frames() - the frames a callchain is shown with
 * @res: the resolver; its @unwind, when set, unwinds user stack snapshots
 * @cache: the answers of @res kept (report_cache_new()), or NULL
 * @v: the callchain entry
 * @out: filled in: the callchain's kernel frames, then its user frames,
 *	DWARF-unwound when the callchain has a snapshot that unwinds past its
 *	first frame, else the guest's frame-pointer chain, cut at its first
 *	return address outside the image's code when @res can tell
 *	(report_resolver.user_code; @out->cut counts the frames left out)
 *
 * Return: 0, or -1 when out of memory.
 */
int report_sample_frames(const struct report_resolver *res, struct report_cache *cache,
			 const struct pvprof_st_view *v, struct report_frames *out)
{
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	struct report_unwind *ru = res ? res->unwind : NULL;
	uint64_t user[PVPROF_MAX_DEPTH];
	struct unwind_sample s;
	struct uw_image *im = NULL;
	const void *image;
	enum unwind_end end = UNWIND_END_NO_TABLES;
	size_t nr_maps;
	uint64_t gen;
	int n = 0, max;

	frames_from_entry(v, out);
	if (!ru || !v->ustack_data) {
		cut_fp_chain(res, cache, chain, out);
		return 0;
	}
	ru->st.snapshots++;
	max = PVPROF_MAX_DEPTH - (int)out->nr_kernel;
	image = pvprof_symbolizer_image(ru->sym, chain->pid, chain->exec_gen, &gen, &nr_maps);
	if (image) {
		im = image_get(ru, image, gen, nr_maps);
		if (!im)
			return -1;
	}
	if (im && max >= 2) {
		memcpy(s.regs, v->ustack_regs, sizeof(s.regs));
		s.stack = v->ustack_data;
		s.stack_len = v->ustack_size;
		n = unwind_sample(ru->u, im, find_mapping, im, &s, user, max, &end);
	}
	if (n < 2) {
		ru->st.fallback[fallback_reason(im, v->ustack_regs[PVPROF_UREG_IP], end)]++;
		cut_fp_chain(res, cache, chain, out);
		return 0;
	}
	ru->st.unwound++;
	ru->st.outermost += end == UNWIND_END_OUTERMOST;
	memcpy(out->addr + out->nr_kernel, user, (size_t)n * sizeof(*user));
	out->nr = out->nr_kernel + (uint32_t)n;
	/* user[0] is the sampled IP, the rest return addresses. */
	out->first_return = out->nr_kernel + 1;
	return 0;
}

/**
 * report_frame_resolve() - name one frame of report_sample_frames()
 * @res: the resolver, or NULL
 * @fr: the sample's frames
 * @i: the frame
 * @pid: the sample's pid
 * @exec_gen: its exec generation
 * @sym: filled as by report_resolve()
 *
 * A return address found by unwinding is named at addr - 1: the call may
 * be a function's last instruction (a call to a noreturn function), and
 * its return address then belongs to the next function.  The offset shown
 * is still the return address's.
 */
void report_frame_resolve(const struct report_resolver *res,
			  const struct report_frames *fr, uint32_t i, uint32_t pid,
			  uint32_t exec_gen, struct pvprof_sym *sym)
{
	uint64_t addr = fr->addr[i];

	if (i < fr->first_return || !addr) {
		report_resolve(res, i < fr->nr_kernel, pid, exec_gen, addr, sym);
		return;
	}
	report_resolve(res, false, pid, exec_gen, addr - 1, sym);
	if (sym->symbol || sym->dso)
		sym->offset++;
	else
		sym->offset = addr;
}

/**
 * report_unwind_describe() - the header line on user stacks (wrapped)
 * @ru: the state
 * @f: output
 *
 * Nothing is written for a recording without snapshots, so that reports
 * of frame-pointer recordings stay as they were.
 */
void report_unwind_describe(const struct report_unwind *ru, FILE *f)
{
	const struct report_unwind_stats *st = &ru->st;
	struct report_hdr h;
	uint64_t fp = 0;
	int i;

	if (!st->snapshots)
		return;
	for (i = 0; i < REPORT_UW_NR; i++)
		fp += st->fallback[i];
	report_hdr_begin(&h, f, "user stacks: %" PRIu64 " unwound with DWARF CFI (%" PRIu64
			 " to the outermost frame),", st->unwound, st->outermost);
	report_hdr_item(&h, "%" PRIu64 " by frame pointers", fp);
	report_hdr_sep(&h, " ");
	for (i = 0; i < REPORT_UW_NR; i++)
		report_hdr_item(&h, "%s%s %" PRIu64 "%s", i ? "" : "(", report_uw_fallback_name(i),
				st->fallback[i], i == REPORT_UW_NR - 1 ? ")" : "");
	report_hdr_end(&h);
}

/**
 * report_uw_fallback_name() - a fallback reason, as the header prints it
 * @r: the reason
 *
 * Return: a static string.
 */
const char *report_uw_fallback_name(enum report_uw_fallback r)
{
	static const char *const names[REPORT_UW_NR] = {
		[REPORT_UW_NO_TABLES] = "no tables",
		[REPORT_UW_INCOMPLETE] = "tables incomplete",
		[REPORT_UW_MEMORY] = "memory",
		[REPORT_UW_ERROR] = "error",
		[REPORT_UW_NO_CALLER] = "no caller",
	};

	return (unsigned int)r < REPORT_UW_NR ? names[r] : "?";
}
