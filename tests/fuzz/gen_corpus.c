// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzzers' seed corpus: well-formed inputs of every kind and a
 * few that break one rule each, so the fuzzers start next to every branch.
 *
 *   gen_corpus CALLCHAIN_DIR STREAM_DIR [UNWIND_DIR]
 *
 * The unwind seeds are real snapshots: unwind-test's fixture, built as
 * the Makefile builds it for fuzz_unwind, run once per case, takes its own
 * registers, stack and mappings at a known chain (see its header), each
 * cut to the stack bytes its walk reads; then copies with table edits.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/callchain.h"
#include "core/stream.h"
#include "unwind_input.h"

static const char *chain_dir, *stream_dir;

static void write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gen_corpus: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Host state prefix, then the slot: see fuzz_callchain.c. */
static void chain_seed(const char *name, __u8 max_depth, __u16 answered, __u8 ahead,
		       const struct pvprof_callchain *chain, __u32 len)
{
	static __u8 buf[4 + PVPROF_CHAIN_SLOTS(16384) * PVPROF_CHAIN_SLOT_SIZE];

	buf[0] = max_depth;
	buf[1] = answered & 0xff;
	buf[2] = answered >> 8;
	buf[3] = ahead;
	memcpy(buf + 4, chain, len);
	write_file(chain_dir, name, buf, 4 + len);
}

static void fill(struct pvprof_callchain *chain, __u64 seq, __u32 flags, __u32 nk, __u32 nu)
{
	__u32 i;

	pvprof_callchain_init(chain, seq, flags);
	chain->pid = 1234;
	chain->tid = 1235;
	chain->time_ns = 1000000;
	chain->nr_kernel = nk;
	chain->nr_user = nu;
	for (i = 0; i < nk; i++)
		pvprof_callchain_frames(chain)[i] = 0xffffffff81000000ULL + 0x40 * i;
	for (; i < nk + nu; i++)
		pvprof_callchain_frames(chain)[i] = 0x0000555555554000ULL + 0x40 * i;
	pvprof_callchain_finish(chain, PVPROF_MAX_DEPTH);
}

/* A syscall's callchain with 1500 bytes of user stack: two slots. */
static void ustack_seed(void)
{
	static __u64 span[2 * PVPROF_CHAIN_SLOT_SIZE / 8];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)span;
	struct pvprof_ustack *us;
	__u32 i;

	fill(chain, 11, 0, 2, 2);
	us = pvprof_callchain_ustack(chain);
	us->regs[PVPROF_UREG_IP] = pvprof_callchain_frame(chain, 2);
	us->regs[PVPROF_UREG_SP] = 0x00007ffffffde000ULL;
	us->size = 1500;
	for (i = 0; i < us->size; i++)
		pvprof_ustack_data(us)[i] = (__u8)i;
	chain->flags |= PVPROF_CHAIN_F_USTACK;
	chain->size = pvprof_callchain_ustack_bytes(4, us->size);
	/* Top bit of the first byte: the host asks for 8192 bytes. */
	chain_seed("ustack_two_slots", 0x80, 10, 1, chain, sizeof(span));
}

static void callchains(void)
{
	__u64 slot[PVPROF_CHAIN_SLOT_SIZE / 8];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)slot;

	fill(chain, 11, 0, 6, 4);
	chain_seed("kernel_syscall", 0, 10, 3, chain, chain->size);
	fill(chain, 11, PVPROF_CHAIN_F_USER, 0, 8);
	chain_seed("user", 32, 10, 1, chain, chain->size);
	fill(chain, 300, PVPROF_CHAIN_F_KTHREAD | PVPROF_CHAIN_F_TRUNCATED, 3, 0);
	chain_seed("kthread_whole_slot", 0, 299, 5, chain, sizeof(slot));
	fill(chain, 11, PVPROF_CHAIN_F_STALE, 0, 0);
	chain_seed("stale", 0, 10, 2, chain, chain->size);
	fill(chain, 11, PVPROF_CHAIN_F_USER | PVPROF_CHAIN_F_COMPAT, 0, PVPROF_MAX_DEPTH);
	chain_seed("user_max_depth", 0, 10, 1, chain, chain->size);
	fill(chain, 11, 0, 4, 0);
	chain_seed("too_deep", 3, 10, 1, chain, chain->size);
	fill(chain, 10, 0, 1, 0);
	chain_seed("seq_old", 0, 10, 1, chain, chain->size);
	fill(chain, 12, 0, 1, 0);
	chain_seed("seq_future", 0, 10, 1, chain, chain->size);
	fill(chain, 11, 0, 2, 2);
	pvprof_callchain_frames(chain)[3] = 0xffff800000000000ULL;
	chain_seed("user_frame_range", 0, 10, 1, chain, chain->size);
	fill(chain, 11, 0, 2, 0);
	chain->size += 8;
	chain_seed("size_mismatch", 0, 10, 1, chain, chain->size);
	ustack_seed();
}

static void streams(void)
{
	static __u8 buf[65536];
	__u64 slot[PVPROF_CHAIN_SLOT_SIZE / 8];
	struct pvprof_callchain *chain = (struct pvprof_callchain *)slot;
	struct pvprof_notice_facts f = { .ip = 0xffffffff81000000ULL, .guest_tsc = 5,
					 .event = PVPROF_EVENT_CPU_CLOCK };
	__u8 msg[16 + 29];
	struct pvprof_sideband_hdr *sb = (struct pvprof_sideband_hdr *)msg;
	size_t len = 0, one;
	unsigned int i;

	memset(msg, 'a', sizeof(msg));
	sb->type = PVPROF_SB_MODULE;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = sizeof(msg);
	sb->time_ns = 77;

	len += pvprof_st_put_hello(buf + len, sizeof(buf) - len, 1, 2);
	write_file(stream_dir, "hello", buf, len);
	len += pvprof_st_put_vcpu(buf + len, sizeof(buf) - len, 0, 2,
				  PVPROF_VCPU_REGISTERED, 16384, 0x12340000);
	fill(chain, 1, 0, 5, 3);
	len += pvprof_st_put_callchain(buf + len, sizeof(buf) - len, 0, 3, &f, chain);
	fill(chain, 2, PVPROF_CHAIN_F_USER, 0, 7);
	len += pvprof_st_put_callchain(buf + len, sizeof(buf) - len, 1, 4, &f, chain);
	for (i = 0; i < PVPROF_LOSS_NR; i += 3)
		len += pvprof_st_put_loss(buf + len, sizeof(buf) - len, 0, 5, i, i + 1);
	len += pvprof_st_put_sideband(buf + len, sizeof(buf) - len, 1, 6, msg, sizeof(msg));
	len += pvprof_st_put_vcpu(buf + len, sizeof(buf) - len, 1, 7,
				  PVPROF_VCPU_DROPPED, 16384, 0x12340000);
	write_file(stream_dir, "every_type", buf, len);

	/* A newer host's type, skipped by size. */
	one = pvprof_st_put_hello(buf, sizeof(buf), 1, 1);
	memset(buf + one, 0, 48);
	((struct pvprof_stream_hdr *)(buf + one))->type = 77;
	((struct pvprof_stream_hdr *)(buf + one))->size = 48;
	write_file(stream_dir, "unknown_type", buf, one + 48);

	/* The deepest callchain, cut one byte short. */
	one = pvprof_st_put_hello(buf, sizeof(buf), 1, 1);
	fill(chain, 9, 0, 60, 60);
	len = one + pvprof_st_put_callchain(buf + one, sizeof(buf) - one, 0, 3, &f, chain);
	write_file(stream_dir, "deep_truncated", buf, len - 1);
}

/* ------------------------------------------------------------------ */
/* fuzz_unwind                                                         */
/* ------------------------------------------------------------------ */

static const char *unwind_dir;
static struct ui_sets sets;
static struct unwinder *uw;

struct snap {
	char name[64];
	struct ui_input in;
	uint8_t *stack;		/* as taken, up to PVPROF_USTACK_MAX bytes */
	size_t stack_len;
	uint64_t frames[255];
	int n;
	enum unwind_end end;
};

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "gen_corpus: %s: %s\n", what, detail);
	exit(1);
}

/* The ELF virtual address a mapping at file offset @off starts at. */
static bool map_vaddr(const char *path, uint64_t off, uint64_t *vaddr)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	size_t i, n;
	GElf_Phdr ph;
	bool found = false;

	if (elf && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n && !found; i++) {
			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (off >= (ph.p_offset & ~0xfffULL) && off < ph.p_offset + ph.p_filesz) {
				*vaddr = ph.p_vaddr - ph.p_offset + off;
				found = true;
			}
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/*
 * Runs the fixture in @dir with nothing in its environment and short
 * arguments: the top of its stack (argv, envp) ends up in seeds that are
 * committed.  Without address randomization the seeds do not change from
 * one 'make corpus' to the next but for the canary and AT_RANDOM.
 */
static void run_fixture(const char *fixture, const char *kase, const char *dir)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork", strerror(errno));
	if (!pid) {
		char *const argv[] = { "fixture", (char *)kase, "s.snap", NULL };
		char *const envp[] = { NULL };

		if (chdir(dir))
			_exit(127);
		personality(ADDR_NO_RANDOMIZE);
		execve(fixture, argv, envp);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die(fixture, kase);
}

static const struct unwind_mapping *snap_find(void *ctx, uint64_t addr)
{
	struct unwind_mapping *maps = ctx;
	int i;

	for (i = 0; i < UI_MAPS_MAX && maps[i].end; i++)
		if (addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

/* The walk fuzz_unwind makes of @in (without edits), on a new image. */
static int snap_unwind(const struct ui_input *in, uint64_t *frames, enum unwind_end *end)
{
	struct unwind_mapping maps[UI_MAPS_MAX + 1] = { { 0 } };
	struct unwind_sample s;
	int i, n;

	for (i = 0; i < in->nr_maps; i++) {
		const struct ui_map *m = &in->maps[i];

		maps[i] = (struct unwind_mapping){ .start = m->start, .end = m->end,
			.vaddr = m->vaddr,
			.tables = m->set < UI_NR_SETS && sets.have[m->set] ? &sets.t[m->set] : NULL };
	}
	memcpy(s.regs, in->regs, sizeof(s.regs));
	s.stack = in->stack;
	s.stack_len = in->stack_len;
	n = unwind_sample(uw, maps, snap_find, maps, &s, frames, 255, end);
	unwinder_forget(uw, maps);
	return n;
}

static bool same_as_taken(const struct snap *sn, size_t len)
{
	struct ui_input in = sn->in;
	uint64_t frames[255];
	enum unwind_end end;
	int n;

	in.stack_len = len;
	n = snap_unwind(&in, frames, &end);
	return n == sn->n && end == sn->end && !memcmp(frames, sn->frames, n * sizeof(*frames));
}

/* Reads the fixture's snapshot (format in tests/unwind/fixture.c). */
static void snap_read(struct snap *sn, const char *path)
{
	char line[4096], file[4096];
	uint64_t start, end, off;
	FILE *f = fopen(path, "r");
	size_t len;
	int i;

	if (!f)
		die(path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "regs ", 5)) {
			char *p = line + 5;

			for (i = 0; i < UNWIND_NR_REGS; i++)
				sn->in.regs[i] = strtoull(p, &p, 16);
		} else if (sscanf(line, "map %" SCNx64 " %" SCNx64 " %" SCNx64 " %4095s",
				  &start, &end, &off, file) == 4) {
			struct ui_map *m = &sn->in.maps[sn->in.nr_maps];
			int set = ui_set_of_path(&sets, file);

			if (sn->in.nr_maps == UI_MAPS_MAX)
				die(path, "too many mappings");
			m->start = start;
			m->end = end;
			m->set = set < 0 ? 0xff : (uint8_t)set;
			if (!map_vaddr(file, off, &m->vaddr))
				m->vaddr = off;
			sn->in.nr_maps++;
		} else if (sscanf(line, "stack %zu", &len) == 1) {
			sn->stack_len = len < PVPROF_USTACK_MAX ? len : PVPROF_USTACK_MAX;
			sn->stack = malloc(sn->stack_len);
			if (!sn->stack || fread(sn->stack, 1, sn->stack_len, f) != sn->stack_len)
				die(path, "short stack");
			fclose(f);
			return;
		}
	}
	die(path, "no stack");
}

static void seed_write(const char *name, const struct ui_input *in)
{
	static uint8_t buf[UI_HDR_SIZE + UI_MAPS_MAX * UI_MAP_SIZE + PVPROF_USTACK_MAX +
			   UI_OPS_MAX * UI_OP_SIZE];
	size_t len = ui_encode(in, buf, sizeof(buf));

	if (!len)
		die(name, "does not encode");
	write_file(unwind_dir, name, buf, len);
}

/*
 * Takes a snapshot of @kase in the fixture @kind and cuts its stack to the
 * shortest that still gives the whole walk.
 */
static void snap_take(struct snap *sn, const char *kind, const char *kase, const char *tmp)
{
	char fixture[4096 + 64], path[4096 + 16];
	size_t lo = 0, hi;

	memset(sn, 0, sizeof(*sn));
	snprintf(sn->name, sizeof(sn->name), "%s-%s", kind, kase);
	snprintf(fixture, sizeof(fixture), "%s/unwind-fixture-%s", FUZZ_UNWIND_FIXTURES, kind);
	snprintf(path, sizeof(path), "%s/s.snap", tmp);
	run_fixture(fixture, kase, tmp);
	snap_read(sn, path);
	unlink(path);
	sn->in.max = 255;
	sn->in.stack = sn->stack;
	sn->in.stack_len = sn->stack_len;
	sn->n = snap_unwind(&sn->in, sn->frames, &sn->end);
	/* Binary search in words: a walk reads words, and more never hurts. */
	hi = (sn->stack_len + 7) / 8;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (same_as_taken(sn, mid * 8 < sn->stack_len ? mid * 8 : sn->stack_len))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo * 8 < sn->stack_len && same_as_taken(sn, lo * 8))
		sn->in.stack_len = lo * 8;
	printf("unwind/%s: %d frames, end %s, %zu of %zu stack bytes\n", sn->name, sn->n,
	       unwind_end_name(sn->end), sn->in.stack_len, sn->stack_len);
	if (sn->n < 3 || (sn->end != UNWIND_END_OUTERMOST && strcmp(kase, "thread")))
		die(sn->name, "the fixture's chain does not unwind: not a seed");
	seed_write(sn->name, &sn->in);
}

/* The ELF address of the snapshot's pc, and the set it is in. */
static uint32_t leaf(const struct snap *sn, int *set)
{
	uint64_t ip = sn->in.regs[UNWIND_REG_IP];
	int i;

	for (i = 0; i < sn->in.nr_maps; i++) {
		const struct ui_map *m = &sn->in.maps[i];

		if (ip >= m->start && ip < m->end) {
			*set = m->set;
			return (uint32_t)(ip - m->start + m->vaddr);
		}
	}
	die(sn->name, "pc in no mapping");
	return 0;
}

/* The .eh_frame_hdr entry of the FDE that covers @addr. */
static uint32_t hdr_entry(const struct unwind_tables *t, uint32_t addr)
{
	uint32_t i, count, found = 0;

	if (t->eh_frame_hdr_len < 12)
		return 0;
	count = ui_get32(t->eh_frame_hdr + 8);
	for (i = 0; i < count && 12 + 8 * (size_t)i + 8 <= t->eh_frame_hdr_len; i++)
		if (t->eh_frame_hdr_vaddr + (int32_t)ui_get32(t->eh_frame_hdr + 12 + 8 * i) <= addr)
			found = i;
	return found;
}

/* @sn with one table edit of its leaf's set. */
static void edit_seed(const struct snap *sn, const char *what, uint8_t kind, uint8_t sec,
		      uint8_t arg, uint32_t a, uint32_t b)
{
	struct ui_input in = sn->in;
	uint8_t op[UI_OP_SIZE];
	char name[128];
	int set;

	leaf(sn, &set);
	ui_put_op(op, kind, (uint8_t)set, sec, arg, a, b);
	in.flags |= UI_F_MUTATE;
	in.ops = op;
	in.nr_ops = 1;
	snprintf(name, sizeof(name), "%s-%s", sn->name, what);
	seed_write(name, &in);
}

static void unwind_seeds(void)
{
	static const char *const cases[] = { "chain", "rec", "qsort", "tail", "signal", "thread" };
	static struct snap snaps[2 * 6 + 1];
	struct snap *dyn, *stat, *dbg;
	struct ui_input in;
	char tmp[] = "/tmp/gen_corpus.XXXXXX", name[64];
	uint32_t pc;
	int i, nr = 0, set;

	if (ui_sets_load(&sets, FUZZ_UNWIND_FIXTURES) < UI_SET_LDSO + 1 ||
	    !sets.have[UI_SET_STATIC] || !sets.have[UI_SET_DYN] || !sets.have[UI_SET_DEBUG] ||
	    !sets.have[UI_SET_LIBC])
		die("unwind tables", "the fixtures or libc are missing: make build first");
	uw = unwinder_new();
	if (!uw || !mkdtemp(tmp))
		die("unwind", "no unwinder or temporary directory");
	for (i = 0; i < 6; i++)
		snap_take(&snaps[nr++], "static", cases[i], tmp);
	for (i = 0; i < 6; i++)
		snap_take(&snaps[nr++], "dyn", cases[i], tmp);
	snap_take(&snaps[nr++], "debug", "chain", tmp);
	rmdir(tmp);
	stat = &snaps[0];
	dyn = &snaps[6];
	dbg = &snaps[12];

	/* The frames array too small; a lookup that may answer the wrong mapping. */
	in = snaps[7].in;
	in.max = 3;
	seed_write("dyn-rec-depth3", &in);
	in = dyn->in;
	in.flags = UI_F_LOOSE_FIND;
	seed_write("dyn-chain-loose-find", &in);

	/* Every CFI program over the leaf's FDE, .eh_frame with a hdr. */
	pc = leaf(dyn, &set);
	for (i = 0; i < UI_NR_PROGRAMS; i++) {
		snprintf(name, sizeof(name), "prog%d", i);
		edit_seed(dyn, name, UI_OP_FDE_PROG, UI_SEC_EH, (uint8_t)i, pc, pc);
	}
	edit_seed(dyn, "cie-prog-backwards", UI_OP_CIE_PROG, UI_SEC_EH, 1, pc, 0);
	edit_seed(dyn, "fde-cie-backwards", UI_OP_FDE_CIE, UI_SEC_EH, 0, pc, 0x7ffffff0);
	edit_seed(dyn, "fde-cie-self", UI_OP_FDE_CIE, UI_SEC_EH, 0, pc, 4);
	edit_seed(dyn, "fde-pc-moved", UI_OP_FDE_PC, UI_SEC_EH, 0, pc, 0x10);
	edit_seed(dyn, "fde-length", UI_OP_LENGTH, UI_SEC_EH, 0, pc, 0x7fffffff);
	edit_seed(dyn, "eh-truncated", UI_OP_TRUNCATE, UI_SEC_EH, 0, 0x100, 0);
	edit_seed(dyn, "eh-garbage", UI_OP_GARBAGE, UI_SEC_EH, 255, 0, 1);
	edit_seed(dyn, "eh-vaddr", UI_OP_VADDR, UI_SEC_EH, 0, 0x1000, 0);
	edit_seed(dyn, "hdr-dropped", UI_OP_DROP, UI_SEC_HDR, 0, 0, 0);
	edit_seed(dyn, "hdr-garbage", UI_OP_GARBAGE, UI_SEC_HDR, 255, 12, 7);
	edit_seed(dyn, "hdr-out-of-order", UI_OP_HDR_SWAP, UI_SEC_HDR, 0,
		  hdr_entry(&sets.t[set], pc), hdr_entry(&sets.t[set], pc) + 1);
	edit_seed(dyn, "hdr-count", UI_OP_HDR_FIELD, UI_SEC_HDR, 1, 0, 0xffffffff);
	/* .eh_frame without a hdr; .debug_frame. */
	pc = leaf(stat, &set);
	edit_seed(stat, "prog1", UI_OP_FDE_PROG, UI_SEC_EH, 1, pc, 0);
	edit_seed(stat, "prog4", UI_OP_FDE_PROG, UI_SEC_EH, 4, pc, pc);
	edit_seed(stat, "eh-truncated", UI_OP_TRUNCATE, UI_SEC_EH, 0, 0x8000, 0);
	pc = leaf(dbg, &set);
	edit_seed(dbg, "prog1", UI_OP_FDE_PROG, UI_SEC_DEBUG, 1, pc, 0);
	edit_seed(dbg, "fde-cie-backwards", UI_OP_FDE_CIE, UI_SEC_DEBUG, 0, pc, 0x7ffffff0);
	edit_seed(dbg, "debug-truncated", UI_OP_TRUNCATE, UI_SEC_DEBUG, 0, 0x100, 0);
	for (i = 0; i < nr; i++)
		free(snaps[i].stack);
	unwinder_free(uw);
	ui_sets_free(&sets);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s CALLCHAIN_DIR STREAM_DIR [UNWIND_DIR]\n", argv[0]);
		return 2;
	}
	chain_dir = argv[1];
	stream_dir = argv[2];
	callchains();
	streams();
	if (argc == 4) {
		unwind_dir = argv[3];
		unwind_seeds();
	}
	return 0;
}
