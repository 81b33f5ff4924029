// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the DWARF user-stack unwinder (unwind.c), natively, no VM.
 *
 *   unwind-test DIR    DIR holds the snapshots tests/unwind/fixture.c wrote,
 *                      {dyn,static}-{chain,rec,qsort,tail,signal,thread}.snap
 *                      and debug-chain.snap (a build with .debug_frame only)
 *
 * The oracle is not the unwinder: each fixture was built to have a known
 * chain at its snapshot point, and the frames found are named with the
 * mapped files' own symbol tables (libelf).  The unwind tables are taken
 * from the mapped files the way the guest agent takes them: the bytes and
 * virtual addresses of .eh_frame_hdr and .eh_frame, nothing else.  Then
 * hostile input: empty and misplaced stacks, missing, garbage and truncated
 * tables, hand-made CFI whose frames loop or go backwards, and random
 * mutations, which must all end cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host-kvm/tool/unwind.h"
#include "check.h"

#ifdef __SANITIZE_ADDRESS__
#define SANITIZED	", ASan+UBSan build"
#else
#define SANITIZED	""
#endif

#define MAX_FRAMES	128
#define MAX_MAPS	32
#define REC_DEPTH	10	/* as in fixture.c */

/* ------------------------------------------------------------------ */
/* The guest agent's side: tables and symbols of the mapped files      */
/* ------------------------------------------------------------------ */

struct sym {
	uint64_t value, size;
	const char *name;
};

struct file {
	struct file *next;
	char *path;
	int fd;
	Elf *elf;
	struct unwind_tables tables;
	struct sym *syms;
	size_t nsyms;
};

static struct file *files;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return (x->value > y->value) - (x->value < y->value);
}

static void load_symbols(struct file *f, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym s;

	f->syms = calloc(n + 1, sizeof(*f->syms));
	for (i = 0; d && i < n; i++) {
		if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    !s.st_value)
			continue;
		f->syms[f->nsyms++] = (struct sym){ s.st_value, s.st_size,
			elf_strptr(f->elf, sh->sh_link, s.st_name) };
	}
	qsort(f->syms, f->nsyms, sizeof(*f->syms), sym_cmp);
}

/* Opens PATH once: its CFI sections (as sent) and its function symbols. */
static struct file *file_get(const char *path)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, symsh;
	struct file *f;
	size_t shstrndx;

	for (f = files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	f = calloc(1, sizeof(*f));
	f->path = strdup(path);
	f->fd = open(path, O_RDONLY);
	f->elf = f->fd < 0 ? NULL : elf_begin(f->fd, ELF_C_READ, NULL);
	f->next = files;
	files = f;
	if (!f->elf || elf_getshdrstrndx(f->elf, &shstrndx))
		return f;
	f->tables.key = f;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		if (strcmp(name, ".eh_frame_hdr") && strcmp(name, ".eh_frame") &&
		    strcmp(name, ".debug_frame"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		if (!strcmp(name, ".debug_frame")) {
			f->tables.debug_frame = d->d_buf;
			f->tables.debug_frame_len = d->d_size;
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			f->tables.eh_frame_hdr = d->d_buf;
			f->tables.eh_frame_hdr_len = d->d_size;
			f->tables.eh_frame_hdr_vaddr = sh.sh_addr;
		} else {
			f->tables.eh_frame = d->d_buf;
			f->tables.eh_frame_len = d->d_size;
			f->tables.eh_frame_vaddr = sh.sh_addr;
		}
	}
	scn = symtab ? symtab : dynsym;
	if (scn && gelf_getshdr(scn, &symsh))
		load_symbols(f, scn, &symsh);
	return f;
}

/* The ELF virtual address a mapping at file offset OFF starts at. */
static bool map_vaddr(struct file *f, uint64_t off, uint64_t *vaddr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (!f->elf || elf_getphdrnum(f->elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(f->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= (ph.p_offset & ~0xfffULL) && off < ph.p_offset + ph.p_filesz) {
			*vaddr = ph.p_vaddr - ph.p_offset + off;
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */
/* ------------------------------------------------------------------ */

struct snapshot {
	char name[64];
	uint64_t regs[UNWIND_NR_REGS];
	struct unwind_mapping maps[MAX_MAPS];
	struct file *files[MAX_MAPS];
	uint64_t offs[MAX_MAPS];
	int nmaps;
	uint8_t *stack;
	size_t stack_len;
};

static const struct unwind_mapping *find_map(void *ctx, uint64_t addr)
{
	struct snapshot *s = ctx;
	int i;

	for (i = 0; i < s->nmaps; i++)
		if (addr >= s->maps[i].start && addr < s->maps[i].end)
			return &s->maps[i];
	return NULL;
}

static bool snapshot_read(struct snapshot *s, const char *dir, const char *name)
{
	char path[4096], line[4096], file[4096];
	uint64_t start, end, off;
	FILE *in;
	int i;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s.snap", dir, name);
	in = fopen(path, "r");
	if (!in)
		return false;
	while (fgets(line, sizeof(line), in)) {
		if (!strncmp(line, "regs ", 5)) {
			char *p = line + 5;

			for (i = 0; i < UNWIND_NR_REGS; i++)
				s->regs[i] = strtoull(p, &p, 16);
		} else if (sscanf(line, "map %" SCNx64 " %" SCNx64 " %" SCNx64 " %4095s",
				  &start, &end, &off, file) == 4 && s->nmaps < MAX_MAPS) {
			struct unwind_mapping *m = &s->maps[s->nmaps];
			struct file *f = file[0] == '/' ? file_get(file) : NULL;

			m->start = start;
			m->end = end;
			m->name = strdup(file);
			/* [vdso], [vsyscall]: no file, no tables. */
			if (f && map_vaddr(f, off, &m->vaddr) &&
			    (f->tables.eh_frame || f->tables.debug_frame))
				m->tables = &f->tables;
			s->offs[s->nmaps] = off;
			s->files[s->nmaps++] = f;
		} else if (sscanf(line, "stack %zu", &s->stack_len) == 1) {
			s->stack = malloc(s->stack_len + 1);
			if (fread(s->stack, 1, s->stack_len, in) != s->stack_len)
				break;
			fclose(in);
			return true;
		}
	}
	fclose(in);
	return false;
}

static struct unwind_sample sample_of(const struct snapshot *s)
{
	struct unwind_sample us;

	memcpy(us.regs, s->regs, sizeof(us.regs));
	us.stack = s->stack;
	us.stack_len = s->stack_len;
	return us;
}

/* Names ADDR with the symbols of the file mapped there: "?" when unknown. */
static const char *symbolize(const struct snapshot *s, uint64_t addr, const char **path)
{
	const struct unwind_mapping *m = find_map((void *)s, addr);
	struct file *f;
	uint64_t v;
	size_t lo = 0, hi;

	*path = "";
	if (!m)
		return "?";
	f = s->files[m - s->maps];
	if (!f)
		return "?";
	*path = f->path;
	v = addr - m->start + m->vaddr;
	hi = f->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->syms[mid].value <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return "?";
	return f->syms[lo - 1].name;
}

struct result {
	uint64_t frames[MAX_FRAMES];
	const char *sym[MAX_FRAMES];
	const char *path[MAX_FRAMES];
	const char *raw_sym[MAX_FRAMES];	/* named at the address itself */
	int n;
	enum unwind_end end;
};

static void unwind_named(struct unwinder *u, const void *image, struct snapshot *s,
			 const struct unwind_sample *us, struct result *r)
{
	const char *raw_path;
	int i;

	r->n = unwind_sample(u, image, find_map, s, us, r->frames, MAX_FRAMES, &r->end);
	for (i = 0; i < r->n; i++) {
		/* The call is the byte before a return address. */
		r->sym[i] = symbolize(s, r->frames[i] - (i > 0), &r->path[i]);
		r->raw_sym[i] = symbolize(s, r->frames[i], &raw_path);
	}
}

static char *describe(const struct result *r)
{
	static char buf[4096];
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < r->n && len < sizeof(buf) - 100; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", r->sym[i]);
	snprintf(buf + len, sizeof(buf) - len, " [%d frames, end %s]", r->n,
		 unwind_end_name(r->end));
	return buf;
}

/*
 * Matches the frames from I against the pattern from P.  Tokens: a symbol
 * name; "=NAME" a frame whose own address is in NAME (a signal trampoline:
 * the handler returns to its first byte); "+" one or more frames;
 * "+in:TEXT" one or more frames of files whose path contains TEXT;
 * "+sym:TEXT" one or more frames whose symbol contains TEXT.  Frames after
 * the pattern are not looked at.
 */
static bool match(const struct result *r, int i, const char *const *p)
{
	const char *tok = *p;
	int j;

	if (!tok)
		return true;
	if (tok[0] == '=')
		return i < r->n && !strcmp(r->raw_sym[i], tok + 1) && match(r, i + 1, p + 1);
	if (tok[0] != '+')
		return i < r->n && !strcmp(r->sym[i], tok) && match(r, i + 1, p + 1);
	for (j = i; j < r->n; j++) {
		if (!strncmp(tok, "+in:", 4) && !strstr(r->path[j], tok + 4))
			return false;
		if (!strncmp(tok, "+sym:", 5) && !strstr(r->sym[j], tok + 5))
			return false;
		if (match(r, j + 1, p + 1))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* The fixture chains                                                  */
/* ------------------------------------------------------------------ */

struct chain_case {
	const char *snap;
	const char *what;
	const char *pattern[REC_DEPTH + 8];
	const char *last;	/* the outermost frame, NULL: not checked */
};

static const struct chain_case chain_cases[] = {
	{ "dyn-chain", "hot leaf main->fx_a->fx_b->fx_c",
	  { "fx_c", "fx_b", "fx_a", "main", "+in:libc.so" }, "_start" },
	{ "static-chain", "hot leaf main->fx_a->fx_b->fx_c",
	  { "fx_c", "fx_b", "fx_a", "main", "+sym:libc_start" }, "_start" },
	{ "dyn-rec", "recursion, 11 fx_rec frames",
	  { "fx_rec", "fx_rec", "fx_rec", "fx_rec", "fx_rec", "fx_rec", "fx_rec",
	    "fx_rec", "fx_rec", "fx_rec", "fx_rec", "main", "+in:libc.so" }, "_start" },
	{ "static-rec", "recursion, 11 fx_rec frames",
	  { "fx_rec", "fx_rec", "fx_rec", "fx_rec", "fx_rec", "fx_rec", "fx_rec",
	    "fx_rec", "fx_rec", "fx_rec", "fx_rec", "main" }, "_start" },
	{ "dyn-qsort", "qsort callback, libc frames, then qsort's caller",
	  { "fx_cmp", "+in:libc.so", "fx_sort_caller", "main" }, "_start" },
	{ "static-qsort", "qsort callback, glibc's sort frames, then qsort's caller",
	  { "fx_cmp", "+sym:sort", "fx_sort_caller", "main" }, "_start" },
	{ "dyn-tail", "tail call: fx_tb is gone, fx_tc returns to fx_ta",
	  { "fx_tc", "fx_ta", "main" }, "_start" },
	{ "static-tail", "tail call: fx_tb is gone, fx_tc returns to fx_ta",
	  { "fx_tc", "fx_ta", "main" }, "_start" },
	{ "dyn-signal", "signal handler through the signal frame to the raiser",
	  { "fx_handler", "+in:libc.so", "fx_sig_caller", "main" }, "_start" },
	{ "static-signal", "signal handler, __restore_rt, raise, the raiser",
	  { "fx_handler", "=__restore_rt", "+", "fx_sig_caller", "main" }, "_start" },
	{ "dyn-thread", "thread: fx_tleaf, fx_thread, libc's thread start",
	  { "fx_tleaf", "fx_thread", "+in:libc.so" }, NULL },
	{ "static-thread", "thread: fx_tleaf, fx_thread, start_thread, clone3",
	  { "fx_tleaf", "fx_thread", "start_thread" }, "clone3" },
	{ "debug-chain", "fx_* with .debug_frame only (-fno-asynchronous-unwind-tables -g)",
	  { "fx_c", "fx_b", "fx_a", "main", "+in:libc.so" }, "_start" },
};

#define NR_CHAIN_CASES	(sizeof(chain_cases) / sizeof(chain_cases[0]))

static struct snapshot snaps[NR_CHAIN_CASES];
static bool have_snap[NR_CHAIN_CASES];

static void test_chains(struct unwinder *u)
{
	struct result r;
	char name[256];
	size_t i;

	for (i = 0; i < NR_CHAIN_CASES; i++) {
		const struct chain_case *c = &chain_cases[i];
		struct unwind_sample us;

		snprintf(name, sizeof(name), "%s: %s", c->snap, c->what);
		if (!have_snap[i]) {
			fail(name, "no snapshot %s.snap", c->snap);
			continue;
		}
		us = sample_of(&snaps[i]);
		unwind_named(u, &snaps[i], &snaps[i], &us, &r);
		if (!match(&r, 0, c->pattern))
			fail(name, "frames %s", describe(&r));
		else if (r.end != UNWIND_END_OUTERMOST)
			fail(name, "does not end at the outermost frame: %s", describe(&r));
		else if (c->last && strcmp(r.sym[r.n - 1], c->last))
			fail(name, "outermost frame is not %s: %s", c->last, describe(&r));
		else
			pass(name);
	}
}

static struct snapshot *snap_named(const char *name)
{
	size_t i;

	for (i = 0; i < NR_CHAIN_CASES; i++)
		if (have_snap[i] && !strcmp(chain_cases[i].snap, name))
			return &snaps[i];
	return NULL;
}

/* The full unwind of S, for comparisons. */
static void reference(struct unwinder *u, struct snapshot *s, struct result *r)
{
	struct unwind_sample us = sample_of(s);

	unwind_named(u, s, s, &us, r);
}

/* ------------------------------------------------------------------ */
/* Caching, depth, and the frames' form                                */
/* ------------------------------------------------------------------ */

static void test_cache_and_depth(struct unwinder *u)
{
	struct snapshot *s = snap_named("dyn-chain");
	struct result ref, r;
	struct unwind_sample us;
	static char key;

	if (!s) {
		fail("cache and depth", "no dyn-chain snapshot");
		return;
	}
	us = sample_of(s);
	reference(u, s, &ref);

	unwind_named(u, s, s, &us, &r);
	if (r.n == ref.n && !memcmp(r.frames, ref.frames, r.n * sizeof(r.frames[0])))
		pass("cache: the same sample again on the cached image gives the same frames");
	else
		fail("cache: the same sample again", "%s", describe(&r));

	unwinder_forget(u, s);
	unwinder_forget(u, &key);	/* unknown: ignored */
	unwind_named(u, s, s, &us, &r);
	if (r.n == ref.n && !memcmp(r.frames, ref.frames, r.n * sizeof(r.frames[0])))
		pass("cache: after unwinder_forget the image is rebuilt, same frames");
	else
		fail("cache: after unwinder_forget", "%s", describe(&r));

	/* Two images sharing the cached tables. */
	unwind_named(u, &key, s, &us, &r);
	if (r.n == ref.n && !memcmp(r.frames, ref.frames, r.n * sizeof(r.frames[0])))
		pass("cache: a second image sharing the tables, same frames");
	else
		fail("cache: a second image", "%s", describe(&r));
	unwinder_forget(u, &key);

	/* Raw return addresses: fx_b calls fx_c with e8 rel32, 5 bytes before. */
	if (ref.n > 1 && ref.frames[0] == s->regs[UNWIND_REG_IP]) {
		const struct unwind_mapping *m = find_map(s, ref.frames[1]);
		int k = m - s->maps;
		uint8_t insn[5] = { 0 };

		if (pread(s->files[k]->fd, insn, 5,
			  ref.frames[1] - m->start + s->offs[k] - 5) == 5 && insn[0] == 0xe8)
			pass("frames: [0] is regs[IP], [1] is the raw return address (after the call)");
		else
			fail("frames: raw return address", "byte at ra-5 is %02x, not a call",
			     insn[0]);
	} else {
		fail("frames: [0] is regs[IP]", "%s", describe(&ref));
	}

	r.n = unwind_sample(u, s, find_map, s, &us, r.frames, 3, &r.end);
	if (r.n == 3 && r.end == UNWIND_END_DEPTH && !memcmp(r.frames, ref.frames, 24))
		pass("depth: max 3 gives 3 frames, end depth");
	else
		fail("depth: max 3", "%d frames, end %s", r.n, unwind_end_name(r.end));
	r.n = unwind_sample(u, s, find_map, s, &us, r.frames, 1, &r.end);
	if (r.n == 1 && r.end == UNWIND_END_DEPTH && r.frames[0] == ref.frames[0])
		pass("depth: max 1 gives regs[IP], end depth");
	else
		fail("depth: max 1", "%d frames, end %s", r.n, unwind_end_name(r.end));
	r.n = unwind_sample(u, s, find_map, s, &us, r.frames, 0, &r.end);
	if (r.n == 0)
		pass("depth: max 0 gives no frame");
	else
		fail("depth: max 0", "%d frames", r.n);
}

/* ------------------------------------------------------------------ */
/* Hostile snapshots and tables                                        */
/* ------------------------------------------------------------------ */

static void expect(const char *name, const struct result *r, int min_n, int max_n,
		   int end)
{
	if (r->n < min_n || r->n > max_n)
		fail(name, "%d frames, expected %d..%d: %s", r->n, min_n, max_n, describe(r));
	else if (end >= 0 && r->end != (enum unwind_end)end)
		fail(name, "end %s, expected %s: %s", unwind_end_name(r->end),
		     unwind_end_name(end), describe(r));
	else
		pass(name);
}

static void test_hostile_stacks(struct unwinder *u)
{
	struct snapshot *s = snap_named("dyn-chain");
	struct unwind_sample us;
	struct result ref, r;
	static char img;

	if (!s) {
		fail("hostile stacks", "no dyn-chain snapshot");
		return;
	}
	reference(u, s, &ref);

	us = sample_of(s);
	us.stack_len = 0;
	unwind_named(u, s, s, &us, &r);
	expect("stack_len 0: regs[IP] only, end memory", &r, 1, 1, UNWIND_END_MEMORY);

	us = sample_of(s);
	us.stack = NULL;
	us.stack_len = 0;
	unwind_named(u, s, s, &us, &r);
	expect("stack NULL, stack_len 0: regs[IP] only, end memory", &r, 1, 1,
	       UNWIND_END_MEMORY);

	us = sample_of(s);
	us.stack_len = 40;
	unwind_named(u, s, s, &us, &r);
	if (r.end == UNWIND_END_MEMORY && r.n >= 1 && r.n < ref.n &&
	    !memcmp(r.frames, ref.frames, r.n * sizeof(r.frames[0])))
		pass("stack cut at 40 bytes: a prefix of the full chain, end memory");
	else
		fail("stack cut at 40 bytes", "%s", describe(&r));

	us = sample_of(s);
	us.regs[UNWIND_REG_SP] = UINT64_MAX - 15;
	unwind_named(u, s, s, &us, &r);
	expect("sp at the top of the address space (the window wraps): ends", &r, 1, 2, -1);

	us = sample_of(s);
	us.regs[UNWIND_REG_SP] = 8;
	unwind_named(u, s, s, &us, &r);
	expect("sp near 0 with the real stack bytes: ends", &r, 1, MAX_FRAMES, -1);

	us = sample_of(s);
	us.regs[UNWIND_REG_SP] += 0x100000;
	unwind_named(u, s, s, &us, &r);
	expect("sp 1 MiB off its stack: ends", &r, 1, MAX_FRAMES, -1);

	us = sample_of(s);
	us.regs[UNWIND_REG_IP] = 0x1000;
	unwind_named(u, s, s, &us, &r);
	expect("ip in no mapping: 1 frame, end no-tables", &r, 1, 1, UNWIND_END_NO_TABLES);

	us = sample_of(s);
	us.regs[UNWIND_REG_IP] = 0;
	unwind_named(u, s, s, &us, &r);
	expect("ip 0: no frame, end error", &r, 0, 0, UNWIND_END_ERROR);

	/* All mappings without tables, on a fresh image. */
	{
		struct snapshot bare = *s;
		int i;

		for (i = 0; i < bare.nmaps; i++)
			bare.maps[i].tables = NULL;
		us = sample_of(&bare);
		unwind_named(u, &img, &bare, &us, &r);
		expect("tables NULL: 1 frame, end no-tables", &r, 1, 1, UNWIND_END_NO_TABLES);
		unwinder_forget(u, &img);

		/* Only libc without tables: the walk stops at main's caller. */
		bare = *s;
		for (i = 0; i < bare.nmaps; i++)
			if (strstr(bare.maps[i].name, "libc.so"))
				bare.maps[i].tables = NULL;
		us = sample_of(&bare);
		unwind_named(u, &img, &bare, &us, &r);
		if (r.end == UNWIND_END_NO_TABLES && r.n >= 5 &&
		    !strcmp(r.sym[3], "main") && strstr(r.path[r.n - 1], "libc.so"))
			pass("libc's tables NULL: fx_c..main, then main's caller in libc, end no-tables");
		else
			fail("libc's tables NULL", "%s", describe(&r));
		unwinder_forget(u, &img);
	}

	/* The stack bytes all 0xff: return addresses nowhere. */
	{
		uint8_t *junk = malloc(s->stack_len);

		memset(junk, 0xff, s->stack_len);
		us = sample_of(s);
		us.stack = junk;
		unwind_named(u, s, s, &us, &r);
		expect("stack bytes all 0xff: ends", &r, 1, 2, -1);
		free(junk);
	}
}

/* A copy of S whose mappings use modified copies of their files' tables. */
struct mod_tables {
	struct snapshot s;
	struct unwind_tables t[MAX_MAPS];
	uint8_t *bufs[MAX_MAPS][2];
};

enum tables_damage { GARBAGE, TRUNCATE_EH, TRUNCATE_HDR, NO_HDR, GARBAGE_HDR, CUT_HDR_TAIL };

static void mod_tables_init(struct mod_tables *mt, const struct snapshot *s,
			    enum tables_damage how, uint64_t *seed)
{
	int i, k;

	memset(mt, 0, sizeof(*mt));
	mt->s = *s;
	for (i = 0; i < s->nmaps; i++) {
		const struct unwind_tables *o = s->maps[i].tables;
		struct unwind_tables *t = &mt->t[i];

		if (!o)
			continue;
		*t = *o;
		t->key = t;
		mt->bufs[i][0] = malloc(o->eh_frame_hdr_len + 1);
		mt->bufs[i][1] = malloc(o->eh_frame_len + 1);
		if (o->eh_frame_hdr)
			memcpy(mt->bufs[i][0], o->eh_frame_hdr, o->eh_frame_hdr_len);
		memcpy(mt->bufs[i][1], o->eh_frame, o->eh_frame_len);
		t->eh_frame_hdr = mt->bufs[i][0];
		t->eh_frame = mt->bufs[i][1];
		switch (how) {
		case GARBAGE:
			for (k = 0; k < (int)o->eh_frame_len; k++) {
				*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
				mt->bufs[i][1][k] = *seed >> 56;
			}
			/* fall through */
		case GARBAGE_HDR:
			for (k = 0; k < (int)o->eh_frame_hdr_len; k++) {
				*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
				mt->bufs[i][0][k] = *seed >> 56;
			}
			break;
		case TRUNCATE_EH:
			t->eh_frame_len /= 2;
			break;
		case TRUNCATE_HDR:
			t->eh_frame_hdr_len = t->eh_frame_hdr_len > 12 ? 12 : 0;
			break;
		case CUT_HDR_TAIL:
			t->eh_frame_hdr_len = t->eh_frame_hdr_len / 2;
			break;
		case NO_HDR:
			t->eh_frame_hdr = NULL;
			t->eh_frame_hdr_len = 0;
			break;
		}
		mt->s.maps[i].tables = t;
	}
}

static void mod_tables_free(struct unwinder *u, struct mod_tables *mt)
{
	int i;

	unwinder_forget(u, mt);
	for (i = 0; i < mt->s.nmaps; i++) {
		unwinder_forget_tables(u, &mt->t[i]);
		free(mt->bufs[i][0]);
		free(mt->bufs[i][1]);
	}
}

/* Without the .debug_frame that alone describes fx_*, the walk cannot start. */
static void test_debug_frame_needed(struct unwinder *u)
{
	struct snapshot *s = snap_named("debug-chain"), bare;
	struct unwind_tables t[MAX_MAPS];
	struct unwind_sample us;
	struct result r;
	int i;

	if (!s) {
		fail("debug-chain without .debug_frame", "no debug-chain snapshot");
		return;
	}
	bare = *s;
	for (i = 0; i < bare.nmaps; i++) {
		if (!bare.maps[i].tables)
			continue;
		t[i] = *bare.maps[i].tables;
		t[i].key = &t[i];
		t[i].debug_frame = NULL;
		t[i].debug_frame_len = 0;
		bare.maps[i].tables = &t[i];
	}
	us = sample_of(&bare);
	unwind_named(u, &bare, &bare, &us, &r);
	expect("debug-chain without its .debug_frame: fx_c only, end error (CFI is what walks)",
	       &r, 1, 1, UNWIND_END_ERROR);
	unwinder_forget(u, &bare);
	for (i = 0; i < bare.nmaps; i++)
		unwinder_forget_tables(u, &t[i]);
}

static void test_hostile_tables(struct unwinder *u)
{
	struct snapshot *s = snap_named("dyn-chain");
	struct mod_tables *mt = malloc(sizeof(*mt));
	struct unwind_sample us;
	struct result ref, r;
	uint64_t seed = 42;

	if (!s) {
		fail("hostile tables", "no dyn-chain snapshot");
		free(mt);
		return;
	}
	reference(u, s, &ref);
	us = sample_of(s);

	mod_tables_init(mt, s, NO_HDR, &seed);
	unwind_named(u, mt, &mt->s, &us, &r);
	if (r.n == ref.n && !memcmp(r.frames, ref.frames, r.n * sizeof(r.frames[0])) &&
	    r.end == UNWIND_END_OUTERMOST)
		pass("no .eh_frame_hdr (libdw searches .eh_frame): the full chain");
	else
		fail("no .eh_frame_hdr", "%s", describe(&r));
	mod_tables_free(u, mt);

	mod_tables_init(mt, s, GARBAGE_HDR, &seed);
	unwind_named(u, mt, &mt->s, &us, &r);
	if (r.n == ref.n && !memcmp(r.frames, ref.frames, r.n * sizeof(r.frames[0])))
		pass("garbage .eh_frame_hdr, good .eh_frame: the full chain");
	else
		fail("garbage .eh_frame_hdr", "%s", describe(&r));
	mod_tables_free(u, mt);

	mod_tables_init(mt, s, GARBAGE, &seed);
	unwind_named(u, mt, &mt->s, &us, &r);
	if (r.n >= 1 && r.end != UNWIND_END_OUTERMOST)
		pass("garbage .eh_frame_hdr and .eh_frame: ends, not at an outermost frame");
	else
		fail("garbage .eh_frame_hdr and .eh_frame", "%s", describe(&r));
	mod_tables_free(u, mt);

	mod_tables_init(mt, s, TRUNCATE_EH, &seed);
	unwind_named(u, mt, &mt->s, &us, &r);
	expect("truncated .eh_frame (half), hdr intact: ends", &r, 1, MAX_FRAMES, -1);
	mod_tables_free(u, mt);

	mod_tables_init(mt, s, TRUNCATE_HDR, &seed);
	unwind_named(u, mt, &mt->s, &us, &r);
	expect("truncated .eh_frame_hdr (12 bytes): ends", &r, 1, MAX_FRAMES, -1);
	mod_tables_free(u, mt);

	mod_tables_init(mt, s, CUT_HDR_TAIL, &seed);
	unwind_named(u, mt, &mt->s, &us, &r);
	expect("truncated .eh_frame_hdr (half its table): ends", &r, 1, MAX_FRAMES, -1);
	mod_tables_free(u, mt);
	free(mt);
}

/*
 * Hand-made CFI: one FDE over ELF [0x1000, 0x2000) whose rule is that of a
 * frame-pointer function (CFA = rbp + 16, ra at CFA - 8, rbp at CFA - 16),
 * in .eh_frame at ELF 0x2000 without a hdr, mapped at 0x401000 (bias
 * 0x400000).  The stack decides where the walk goes.
 */
static const uint8_t synth_eh_frame[] = {
	/* CIE: length 20, id 0, version 1, "zR", code 1, data -8, ra 16, */
	20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16,
	/* aug 1: pcrel|sdata4; def_cfa rbp 16; offset ra 1; offset rbp 2 */
	1, 0x1b, 0x0c, 6, 16, 0x90, 1, 0x86, 2,
	/* FDE: length 20, CIE at -28, pc_begin 0x1000 (pcrel to 0x2020), range 0x1000 */
	20, 0, 0, 0, 28, 0, 0, 0, 0xe0, 0xef, 0xff, 0xff, 0, 0x10, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0,	/* terminator */
};

static const struct unwind_tables synth_tables = {
	.key = synth_eh_frame,
	.eh_frame = synth_eh_frame,
	.eh_frame_len = sizeof(synth_eh_frame),
	.eh_frame_vaddr = 0x2000,
};

static const struct unwind_mapping synth_map = {
	.start = 0x401000, .end = 0x403000, .vaddr = 0x1000,
	.tables = &synth_tables, .name = "synthetic",
};

static const struct unwind_mapping *synth_find(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr >= synth_map.start && addr < synth_map.end ? &synth_map : NULL;
}

static void put64(uint8_t *stack, size_t off, uint64_t v)
{
	memcpy(stack + off, &v, 8);
}

static void test_synthetic(struct unwinder *u)
{
	const uint64_t sp = 0x7fff0000;
	struct unwind_sample us = { .regs = { 0x401100, sp, sp + 0x10 } };
	uint8_t stack[256] = { 0 };
	uint64_t frames[MAX_FRAMES];
	enum unwind_end end;
	static char img;
	int n;

	us.stack = stack;
	us.stack_len = sizeof(stack);

	/* rbp chain up the stack, then a zero return address. */
	put64(stack, 0x10, sp + 0x40);
	put64(stack, 0x18, 0x401200);
	put64(stack, 0x40, sp + 0x80);
	put64(stack, 0x48, 0x401300);
	n = unwind_sample(u, &img, synth_find, NULL, &us, frames, MAX_FRAMES, &end);
	if (n == 3 && frames[0] == 0x401100 && frames[1] == 0x401200 &&
	    frames[2] == 0x401300 && end == UNWIND_END_OUTERMOST)
		pass("hand-made CFI (CFA = rbp + 16): 3 frames, then ra 0 is the outermost");
	else
		fail("hand-made CFI", "%d frames, end %s", n, unwind_end_name(end));

	/* The saved rbp points at itself: the CFA stops growing. */
	memset(stack, 0, sizeof(stack));
	put64(stack, 0x10, sp + 0x10);
	put64(stack, 0x18, 0x401200);
	n = unwind_sample(u, &img, synth_find, NULL, &us, frames, MAX_FRAMES, &end);
	if (n == 2 && end == UNWIND_END_ERROR)
		pass("hand-made CFI, saved rbp loops on itself: 2 frames, end error");
	else
		fail("hand-made CFI, loop", "%d frames, end %s", n, unwind_end_name(end));

	/* A saved rbp that points back down the stack. */
	memset(stack, 0, sizeof(stack));
	put64(stack, 0x10, sp + 0x40);
	put64(stack, 0x18, 0x401200);
	put64(stack, 0x40, sp);
	put64(stack, 0x48, 0x401300);
	put64(stack, 0x08, 0x401400);
	n = unwind_sample(u, &img, synth_find, NULL, &us, frames, MAX_FRAMES, &end);
	if (n == 3 && end == UNWIND_END_ERROR)
		pass("hand-made CFI, CFA going backwards: 3 frames, end error");
	else
		fail("hand-made CFI, backwards", "%d frames, end %s", n, unwind_end_name(end));

	/* The return address leaves the FDE's range: no CFI for it. */
	memset(stack, 0, sizeof(stack));
	put64(stack, 0x10, sp + 0x40);
	put64(stack, 0x18, 0x402800);
	n = unwind_sample(u, &img, synth_find, NULL, &us, frames, MAX_FRAMES, &end);
	if (n == 2 && frames[1] == 0x402800 && end == UNWIND_END_ERROR)
		pass("hand-made CFI, a return address without an FDE: 2 frames, end error");
	else
		fail("hand-made CFI, no FDE", "%d frames, end %s", n, unwind_end_name(end));
	unwinder_forget(u, &img);
}

/* ------------------------------------------------------------------ */
/* Random input                                                        */
/* ------------------------------------------------------------------ */

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_fuzz(struct unwinder *u, int iterations)
{
	struct mod_tables *mt = malloc(sizeof(*mt));
	uint64_t x = 0x9e3779b97f4a7c15ULL, seed = 7, frames[MAX_FRAMES];
	struct snapshot *pool[NR_CHAIN_CASES];
	int npool = 0, it, bad = 0, total = 0;
	size_t i;
	enum unwind_end end;

	for (i = 0; i < NR_CHAIN_CASES; i++)
		if (have_snap[i])
			pool[npool++] = &snaps[i];
	if (!npool) {
		fail("fuzz", "no snapshots");
		free(mt);
		return;
	}
	for (it = 0; it < iterations; it++) {
		struct snapshot *s = pool[rnd(&x) % npool];
		struct unwind_sample us = sample_of(s);
		uint8_t *stack = malloc(s->stack_len + 1);
		int k, n, what = rnd(&x) % 6;
		const void *image = s;
		struct snapshot *view = s;

		memcpy(stack, s->stack, s->stack_len);
		us.stack = stack;
		switch (what) {
		case 0:	/* flip stack bytes */
			for (k = 0; k < 32 && s->stack_len; k++)
				stack[rnd(&x) % s->stack_len] = rnd(&x);
			break;
		case 1:	/* random words over the whole stack */
			for (k = 0; k + 8 <= (int)s->stack_len; k += 8)
				if (rnd(&x) % 4 == 0)
					put64(stack, k, rnd(&x));
			break;
		case 2:	/* registers anywhere, ip in some mapping */
			for (k = 0; k < UNWIND_NR_REGS; k++)
				if (rnd(&x) % 2)
					us.regs[k] = rnd(&x);
			if (s->nmaps) {
				const struct unwind_mapping *m = &s->maps[rnd(&x) % s->nmaps];

				us.regs[UNWIND_REG_IP] = m->start + rnd(&x) % (m->end - m->start);
			}
			break;
		case 3:	/* a cut stack, sp shifted */
			us.stack_len = s->stack_len ? rnd(&x) % s->stack_len : 0;
			us.regs[UNWIND_REG_SP] += (int64_t)(rnd(&x) % 64) - 32;
			break;
		case 4:	/* mutated tables */
		case 5:
			mod_tables_init(mt, s, NO_HDR, &seed);
			for (k = 0; k < mt->s.nmaps; k++) {
				struct unwind_tables *t = &mt->t[k];
				int f, flips = 1 + rnd(&x) % 16;

				if (!mt->s.maps[k].tables)
					continue;
				t->eh_frame_hdr = mt->bufs[k][0];
				t->eh_frame_hdr_len = s->maps[k].tables->eh_frame_hdr_len;
				for (f = 0; f < flips; f++) {
					if (what == 4 && t->eh_frame_len)
						mt->bufs[k][1][rnd(&x) % t->eh_frame_len] = rnd(&x);
					else if (t->eh_frame_hdr_len)
						mt->bufs[k][0][rnd(&x) % t->eh_frame_hdr_len] = rnd(&x);
				}
				if (rnd(&x) % 4 == 0)
					t->eh_frame_len = rnd(&x) % (t->eh_frame_len + 1);
			}
			image = mt;
			view = &mt->s;
			break;
		}
		n = unwind_sample(u, image, find_map, view, &us, frames, MAX_FRAMES, &end);
		if (n < 0 || n > MAX_FRAMES || (n == 0 && us.regs[UNWIND_REG_IP]))
			bad++;
		total += n;
		if (what >= 4)
			mod_tables_free(u, mt);
		free(stack);
	}
	free(mt);
	if (bad)
		fail("fuzz", "%d of %d samples gave a bad frame count", bad, iterations);
	else {
		char name[128];

		snprintf(name, sizeof(name),
			 "fuzz: %d mutated samples and tables end cleanly (%d frames in all)",
			 iterations, total);
		pass(name);
	}
}

static void measure(struct unwinder *u)
{
	struct snapshot *s = snap_named("dyn-chain");
	struct timespec t0, t1;
	uint64_t frames[MAX_FRAMES];
	struct unwind_sample us;
	enum unwind_end end;
	int i, n = 0, runs = 20000;
	double secs;

	if (!s)
		return;
	us = sample_of(s);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < runs; i++)
		n = unwind_sample(u, s, find_map, s, &us, frames, MAX_FRAMES, &end);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("INFO speed: %.0f samples/s (dyn-chain, %d frames each, %zu stack bytes, cached image%s)\n",
	       runs / secs, n, s->stack_len, SANITIZED);
}

int main(int argc, char **argv)
{
	struct unwinder *u;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: unwind-test SNAPSHOT_DIR\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (i = 0; i < NR_CHAIN_CASES; i++)
		have_snap[i] = snapshot_read(&snaps[i], argv[1], chain_cases[i].snap);
	u = unwinder_new();
	if (!u) {
		fail("unwinder_new", "NULL");
		return 1;
	}
	test_chains(u);
	test_cache_and_depth(u);
	test_hostile_stacks(u);
	test_hostile_tables(u);
	test_debug_frame_needed(u);
	test_synthetic(u);
	test_fuzz(u, getenv("UNWIND_FUZZ_ITERATIONS") ?
		  atoi(getenv("UNWIND_FUZZ_ITERATIONS")) : 3000);
	measure(u);
	unwinder_free(u);
	return check_finish();
}
