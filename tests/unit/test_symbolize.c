// SPDX-License-Identifier: GPL-2.0
/*
 * The host-side symbolizer (host-kvm/tool/symbolize.c) fed with sideband
 * messages built here with the core's encoder: kernel, modules, process
 * images across fork and exec, overlapping mappings, republished tables,
 * hostile messages, and which messages change the generations of its
 * answers.  Its own program with its own main.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "core/sideband.h"
#include "host-kvm/tool/symbolize.h"
#include "runner.h"

#define STEXT		0xffffffff81000000ULL
#define ETEXT		0xffffffff81e00000ULL
#define MOD_BASE	0xffffffffc0400000ULL

struct named {
	__u64 addr;
	__u64 size;
	const char *name;
};

static void hdr(void *msg, __u16 type, __u32 size)
{
	struct pvprof_sideband_hdr *sb = msg;

	sb->type = type;
	sb->version = PVPROF_SIDEBAND_VERSION;
	sb->size = size;
	sb->time_ns = 0;
}

static void add_ok(struct pvprof_symbolizer *s, const void *msg)
{
	const struct pvprof_sideband_hdr *sb = msg;

	ck_assert_int_eq(pvprof_symbolizer_add(s, msg, sb->size), 0);
}

static void send_kernel(struct pvprof_symbolizer *s, __u64 stext, __u64 etext, __u32 nr)
{
	struct pvprof_sb_kernel k = { 0 };

	hdr(&k, PVPROF_SB_KERNEL, sizeof(k));
	k.stext = stext;
	k.etext = etext;
	k.nr_syms = nr;
	strcpy(k.release, "6.1.0-56-amd64");
	add_ok(s, &k);
}

static void send_module(struct pvprof_symbolizer *s, const char *name, __u64 base, __u64 size)
{
	struct pvprof_sb_module m = { 0 };

	hdr(&m, PVPROF_SB_MODULE, sizeof(m));
	m.base = base;
	m.size = size;
	strcpy(m.name, name);
	add_ok(s, &m);
}

/* KSYMS (module != NULL: module symbols) or ELF_SYMS (build-id byte != 0). */
static void send_syms(struct pvprof_symbolizer *s, const char *module, __u8 build_id,
		      const struct named *v, unsigned int n)
{
	__u8 msg[PVPROF_SIDEBAND_MAX_SIZE] = { 0 };
	bool elf = build_id != 0;
	__u32 fixed = elf ? sizeof(struct pvprof_sb_elf_syms) : sizeof(struct pvprof_sb_ksyms);
	struct pvprof_sb_sym_writer w;
	unsigned int i;

	pvprof_sb_sym_writer_init(&w, msg, fixed, sizeof(msg), elf, v[0].addr);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(pvprof_sb_sym_put(&w, v[i].addr, v[i].size, v[i].name,
						   strlen(v[i].name)), 0);
	if (elf) {
		struct pvprof_sb_elf_syms *e = (void *)msg;

		hdr(e, PVPROF_SB_ELF_SYMS, w.len);
		e->build_id.size = 20;
		memset(e->build_id.bytes, build_id, 20);
		e->first = v[0].addr;
		e->nr = w.nr;
	} else {
		struct pvprof_sb_ksyms *k = (void *)msg;

		hdr(k, PVPROF_SB_KSYMS, w.len);
		if (module)
			strcpy(k->module, module);
		k->first = v[0].addr;
		k->nr = w.nr;
	}
	add_ok(s, msg);
}

static void send_process(struct pvprof_symbolizer *s, __u32 pid, __u32 gen,
			 __u32 parent, const char *comm)
{
	struct pvprof_sb_process p = { 0 };

	hdr(&p, PVPROF_SB_PROCESS, sizeof(p));
	p.pid = pid;
	p.exec_gen = gen;
	p.parent_pid = parent;
	p.flags = parent ? PVPROF_SB_PROC_F_FORK : 0;
	strncpy(p.comm, comm, sizeof(p.comm));
	add_ok(s, &p);
}

static void send_mmap(struct pvprof_symbolizer *s, __u32 pid, __u32 gen, __u64 start,
		      __u64 len, __u64 pgoff, __u64 vaddr, __u8 build_id, const char *path)
{
	__u8 msg[sizeof(struct pvprof_sb_mmap) + PVPROF_SB_NAME_MAX] = { 0 };
	struct pvprof_sb_mmap *m = (void *)msg;

	m->pid = pid;
	m->exec_gen = gen;
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	m->vaddr = vaddr;
	if (build_id) {
		m->build_id.size = 20;
		memset(m->build_id.bytes, build_id, 20);
	}
	m->path_len = strlen(path);
	memcpy(msg + sizeof(*m), path, m->path_len);
	hdr(m, PVPROF_SB_MMAP, sizeof(*m) + m->path_len);
	add_ok(s, msg);
}

static void expect(struct pvprof_symbolizer *s, bool kernel, __u32 pid, __u32 gen,
		   __u64 addr, const char *symbol, const char *dso, __u64 offset)
{
	struct pvprof_sym r;

	pvprof_symbolizer_resolve(s, kernel, pid, gen, addr, &r);
	if (symbol)
		ck_assert_pstr_eq(r.symbol, symbol);
	else
		ck_assert_ptr_null(r.symbol);
	if (dso)
		ck_assert_pstr_eq(r.dso, dso);
	else
		ck_assert_ptr_null(r.dso);
	ck_assert_uint_eq(r.offset, offset);
}

static const struct named ksyms[] = {
	{ STEXT, 0, "_stext" },
	{ STEXT + 0x100, 0, "do_syscall_64" },
	{ STEXT + 0x100, 0, "an_alias" },
	{ STEXT + 0x400, 0, "do_sys_openat2" },
	{ STEXT + 0x900, 0, "entry_SYSCALL_64" },
};

START_TEST(symbolize_kernel_and_modules)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	static const struct named msyms[] = {
		{ MOD_BASE + 0x10, 0, "pvprof_nmi" },
		{ MOD_BASE + 0x200, 0, "pvprof_capture" },
	};
	struct pvprof_symbolizer_stats st;

	ck_assert_ptr_nonnull(s);
	/* Before the KERNEL message nothing kernel-side resolves. */
	expect(s, true, 0, 0, STEXT + 0x120, NULL, NULL, STEXT + 0x120);
	send_kernel(s, STEXT, ETEXT, 5);
	send_syms(s, NULL, 0, ksyms + 3, 2);	/* chunks arrive in any order */
	send_syms(s, NULL, 0, ksyms, 3);
	send_module(s, "pvprof_guest", MOD_BASE, 0x1000);
	send_syms(s, "pvprof_guest", 0, msyms, 2);

	expect(s, true, 0, 0, STEXT + 0x120, "an_alias", "[kernel.kallsyms]", 0x20);
	expect(s, true, 0, 0, STEXT + 0x400, "do_sys_openat2", "[kernel.kallsyms]", 0);
	/* The last symbol extends to _etext, not beyond. */
	expect(s, true, 0, 0, ETEXT - 1, "entry_SYSCALL_64", "[kernel.kallsyms]",
	       ETEXT - 1 - (STEXT + 0x900));
	/* Past _etext (idle, .noinstr): an offset into the kernel image. */
	expect(s, true, 0, 0, ETEXT, NULL, "[kernel.kallsyms]", ETEXT - STEXT);
	expect(s, true, 0, 0, MOD_BASE + 0x20, "pvprof_nmi", "[pvprof_guest]", 0x10);
	expect(s, true, 0, 0, MOD_BASE + 0x5, NULL, "[pvprof_guest]", 0x5);
	expect(s, true, 0, 0, MOD_BASE + 0x1000, NULL, NULL, MOD_BASE + 0x1000);
	/* A kernel frame never looks at user tables, and the reverse. */
	expect(s, false, 1, 0, STEXT + 0x120, NULL, NULL, STEXT + 0x120);

	/* Republished: the same entries collapse; nothing changes. */
	send_kernel(s, STEXT, ETEXT, 5);
	send_syms(s, NULL, 0, ksyms, 5);
	expect(s, true, 0, 0, STEXT + 0x120, "an_alias", "[kernel.kallsyms]", 0x20);
	pvprof_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.kernel_syms, 12);
	ck_assert_uint_eq(st.kernel_syms_expected, 5);

	/* The module reloaded elsewhere: the old symbols are gone. */
	send_module(s, "pvprof_guest", MOD_BASE + 0x10000, 0x1000);
	expect(s, true, 0, 0, MOD_BASE + 0x10020, NULL, "[pvprof_guest]", 0x20);
	expect(s, true, 0, 0, MOD_BASE + 0x20, NULL, NULL, MOD_BASE + 0x20);
	/* Another boot with another KASLR base. */
	send_kernel(s, STEXT + 0x200000, ETEXT + 0x200000, 5);
	expect(s, true, 0, 0, STEXT + 0x200120, NULL, "[kernel.kallsyms]", 0x120);
	pvprof_symbolizer_free(s);
}
END_TEST

/*
 * A lost KSYMS message: the symbol before the gap does not stretch over it,
 * and a symbol inside a message still extends to the next one.
 */
START_TEST(symbolize_lost_ksyms)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();

	ck_assert_ptr_nonnull(s);
	send_kernel(s, STEXT, ETEXT, 5);
	send_syms(s, NULL, 0, ksyms, 2);
	/* ksyms[2..3] lost */
	send_syms(s, NULL, 0, ksyms + 4, 1);
	expect(s, true, 0, 0, STEXT + 0x80, "_stext", "[kernel.kallsyms]", 0x80);
	expect(s, true, 0, 0, STEXT + 0x500, NULL, "[kernel.kallsyms]", 0x500);
	expect(s, true, 0, 0, STEXT + 0x950, NULL, "[kernel.kallsyms]", 0x950);
	/* Republished whole: every symbol reaches the next one again. */
	send_syms(s, NULL, 0, ksyms, 5);
	expect(s, true, 0, 0, STEXT + 0x500, "do_sys_openat2", "[kernel.kallsyms]", 0x100);
	expect(s, true, 0, 0, STEXT + 0x950, "entry_SYSCALL_64", "[kernel.kallsyms]", 0x50);
	pvprof_symbolizer_free(s);
}
END_TEST

START_TEST(symbolize_user_fork_exec)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	static const struct named demo[] = {
		{ 0x1100, 0x40, "main" },
		{ 0x1200, 0x80, "spin_user" },
		{ 0x1300, 0, "no_size" },
	};
	static const struct named libc[] = { { 0x28000, 0x100, "write" } };
	struct pvprof_symbolizer_stats st;

	send_process(s, 100, 1, 0, "sh");
	send_mmap(s, 100, 1, 0x555555554000ULL, 0x2000, 0x1000, 0x1000, 0xaa, "/usr/bin/demo");
	send_mmap(s, 100, 1, 0x7ffff7dd0000ULL, 0x10000, 0x26000, 0x26000, 0xbb, "/lib/libc.so.6");
	send_syms(s, NULL, 0xaa, demo, 3);
	send_syms(s, NULL, 0xbb, libc, 1);

	/* start 0x...4000 is ELF address 0x1000. */
	expect(s, false, 100, 1, 0x555555554210ULL, "spin_user", "/usr/bin/demo", 0x10);
	/* Past spin_user's size: the file offset only. */
	expect(s, false, 100, 1, 0x555555554290ULL, NULL, "/usr/bin/demo", 0x1290);
	/* A symbol without size reaches the next symbol or the mapping's end. */
	expect(s, false, 100, 1, 0x555555554f00ULL, "no_size", "/usr/bin/demo", 0xc00);
	expect(s, false, 100, 1, 0x7ffff7dd2010ULL, "write", "/lib/libc.so.6", 0x10);
	expect(s, false, 100, 1, 0x1000, NULL, NULL, 0x1000);
	/* Another exec generation of the same pid is another image. */
	expect(s, false, 100, 2, 0x555555554210ULL, NULL, NULL, 0x555555554210ULL);
	ck_assert_str_eq(pvprof_symbolizer_comm(s, 100, 1), "sh");
	ck_assert_ptr_null(pvprof_symbolizer_comm(s, 100, 2));

	/* fork: the child starts with the parent's mappings. */
	send_process(s, 101, 1, 100, "sh");
	expect(s, false, 101, 1, 0x555555554210ULL, "spin_user", "/usr/bin/demo", 0x10);
	/* exec in the child: a new image, the old one still resolves. */
	send_process(s, 101, 2, 0, "demo2");
	send_mmap(s, 101, 2, 0x555555554000ULL, 0x1000, 0, 0, 0, "/tmp/nobuildid");
	expect(s, false, 101, 2, 0x555555554210ULL, NULL, "/tmp/nobuildid", 0x210);
	expect(s, false, 101, 1, 0x555555554210ULL, "spin_user", "/usr/bin/demo", 0x10);
	ck_assert_str_eq(pvprof_symbolizer_comm(s, 101, 2), "demo2");
	/* A known image's PROCESS message updates its comm only. */
	send_process(s, 101, 2, 0, "renamed");
	ck_assert_str_eq(pvprof_symbolizer_comm(s, 101, 2), "renamed");
	expect(s, false, 101, 2, 0x555555554210ULL, NULL, "/tmp/nobuildid", 0x210);

	pvprof_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.processes, 3);
	ck_assert_uint_eq(st.mappings, 3);
	ck_assert_uint_eq(st.elf_syms, 4);
	ck_assert_uint_eq(st.rejected, 0);
	pvprof_symbolizer_free(s);
}
END_TEST

/* A new mapping cuts what it overlaps out of older ones. */
START_TEST(symbolize_overlapping_mappings)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	const __u64 b = 0x400000;

	send_mmap(s, 5, 0, b, 0x10000, 0, 0, 0, "/old");
	send_mmap(s, 5, 0, b + 0x4000, 0x2000, 0, 0, 0, "/middle");
	expect(s, false, 5, 0, b + 0x1000, NULL, "/old", 0x1000);
	expect(s, false, 5, 0, b + 0x4100, NULL, "/middle", 0x100);
	/* The tail of the split keeps its file offset. */
	expect(s, false, 5, 0, b + 0x7000, NULL, "/old", 0x7000);
	send_mmap(s, 5, 0, b, 0x5000, 0x3000, 0, 0, "/front");
	expect(s, false, 5, 0, b + 0x4100, NULL, "/front", 0x7100);
	expect(s, false, 5, 0, b + 0x5100, NULL, "/middle", 0x1100);
	send_mmap(s, 5, 0, b, 0x10000, 0, 0, 0, "/all");
	expect(s, false, 5, 0, b + 0x5100, NULL, "/all", 0x5100);
	expect(s, false, 5, 0, b + 0x10000, NULL, NULL, b + 0x10000);
	pvprof_symbolizer_free(s);
}
END_TEST

START_TEST(symbolize_hostile_messages)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	__u8 junk[PVPROF_SIDEBAND_MAX_SIZE + 16];
	struct pvprof_sb_process p = { 0 };
	struct pvprof_sb_agent a = { 0 };
	struct pvprof_symbolizer_stats st;
	unsigned int i;

	ck_assert_int_eq(pvprof_symbolizer_add(s, junk, 3), -EINVAL);
	srand(7);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = rand();
	ck_assert_int_eq(pvprof_symbolizer_add(s, junk, sizeof(junk)), -EINVAL);
	hdr(junk, PVPROF_SB_KSYMS, 200);
	ck_assert_int_eq(pvprof_symbolizer_add(s, junk, 200), -EINVAL);
	/* A comm with bytes after its terminator. */
	hdr(&p, PVPROF_SB_PROCESS, sizeof(p));
	p.pid = 3;
	p.comm[0] = 'a';
	p.comm[5] = 'b';
	ck_assert_int_eq(pvprof_symbolizer_add(s, &p, sizeof(p)), -EINVAL);
	/* A full 16-byte comm with no NUL comes back terminated. */
	memset(p.comm, '<', sizeof(p.comm));
	ck_assert_int_eq(pvprof_symbolizer_add(s, &p, sizeof(p)), 0);
	ck_assert_uint_eq(strlen(pvprof_symbolizer_comm(s, 3, 0)), 16);

	hdr(&a, PVPROF_SB_AGENT, sizeof(a));
	a.pid = 50;
	a.lost_messages = 3;
	a.lost_bytes = 300;
	add_ok(s, &a);
	a.lost_messages = 4;
	a.lost_bytes = 400;
	add_ok(s, &a);
	a.pid = 51;	/* a restarted agent adds its own */
	a.lost_messages = 1;
	a.lost_bytes = 10;
	add_ok(s, &a);
	pvprof_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.rejected, 4);
	ck_assert_uint_eq(st.messages, 4);
	ck_assert_uint_eq(st.agent_lost_messages, 5);
	ck_assert_uint_eq(st.agent_lost_bytes, 410);
	pvprof_symbolizer_free(s);
	pvprof_symbolizer_free(NULL);
}
END_TEST

/* Many images and symbols: hash tables grow, lookups stay right. */
/*
 * What the stream symbolizer has seen at a sample, and what the whole
 * recording brought (the agent's chunks still arriving): names come from
 * the complete table of the image the stream says the address is in.
 */
START_TEST(symbolize_complete_tables)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	struct pvprof_symbolizer *all = pvprof_symbolizer_new();
	static const struct named elf[] = {
		{ 0x1000, 0x80, "main" },
		{ 0x1100, 0x40, "late_fn" },
	};

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(all);
	send_kernel(all, STEXT, ETEXT, 5);
	send_syms(all, NULL, 0, ksyms, 3);
	send_syms(all, NULL, 0, ksyms + 3, 2);
	send_module(all, "pvprof_guest", MOD_BASE, 0x1000);
	send_syms(all, "pvprof_guest", 0, &(struct named){ MOD_BASE + 0x10, 0, "pvprof_nmi" }, 1);
	send_process(all, 10, 1, 0, "prog");
	send_mmap(all, 10, 1, 0x400000, 0x2000, 0, 0x1000, 7, "/bin/prog");
	send_syms(all, NULL, 7, elf, 2);

	/* The stream so far: the KERNEL message and the first chunk. */
	send_kernel(s, STEXT, ETEXT, 5);
	send_syms(s, NULL, 0, ksyms, 3);
	send_process(s, 10, 1, 0, "prog");
	send_mmap(s, 10, 1, 0x400000, 0x2000, 0, 0x1000, 7, "/bin/prog");
	send_syms(s, NULL, 7, elf, 1);
	/*
	 * Alone it cannot tell where the first chunk's last symbol ends: the
	 * next one has not arrived.  Symbols before it reach the next one.
	 */
	expect(s, true, 0, 0, STEXT + 0x910, NULL, "[kernel.kallsyms]", 0x910);
	expect(s, true, 0, 0, STEXT + 0x120, NULL, "[kernel.kallsyms]", 0x120);
	expect(s, true, 0, 0, STEXT + 0x80, "_stext", "[kernel.kallsyms]", 0x80);
	expect(s, false, 10, 1, 0x400110, NULL, "/bin/prog", 0x110);

	pvprof_symbolizer_complete(s, all);
	expect(s, true, 0, 0, STEXT + 0x910, "entry_SYSCALL_64", "[kernel.kallsyms]", 0x10);
	expect(s, false, 10, 1, 0x400110, "late_fn", "/bin/prog", 0x10);
	/* No MODULE message yet: the module's only range in the recording. */
	expect(s, true, 0, 0, MOD_BASE + 0x20, "pvprof_nmi", "[pvprof_guest]", 0x10);
	/* A process image the stream has not described yet. */
	send_process(all, 11, 1, 0, "early");
	send_mmap(all, 11, 1, 0x400000, 0x2000, 0, 0x1000, 7, "/bin/prog");
	ck_assert_pstr_eq(pvprof_symbolizer_comm(s, 11, 1), "early");
	expect(s, false, 11, 1, 0x400010, "main", "/bin/prog", 0x10);
	expect(s, false, 11, 2, 0x400010, NULL, NULL, 0x400010);

	/* The module went elsewhere later: its early range is no longer sure. */
	send_module(all, "pvprof_guest", MOD_BASE + 0x10000, 0x1000);
	expect(s, true, 0, 0, MOD_BASE + 0x20, NULL, NULL, MOD_BASE + 0x20);
	/* The stream knows the old range; the complete table is another's. */
	send_module(s, "pvprof_guest", MOD_BASE, 0x1000);
	expect(s, true, 0, 0, MOD_BASE + 0x20, NULL, "[pvprof_guest]", 0x20);

	/* Another boot later: the first boot keeps the stream's own table. */
	send_kernel(all, STEXT + 0x200000, ETEXT + 0x200000, 5);
	expect(s, true, 0, 0, STEXT + 0x910, NULL, "[kernel.kallsyms]", 0x910);
	expect(s, true, 0, 0, STEXT + 0x80, "_stext", "[kernel.kallsyms]", 0x80);
	pvprof_symbolizer_free(s);

	/* With two boots, an address before any KERNEL message stays unnamed. */
	s = pvprof_symbolizer_new();
	all = pvprof_symbolizer_new();
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(all);
	send_kernel(all, STEXT, ETEXT, 5);
	send_syms(all, NULL, 0, ksyms, 5);
	pvprof_symbolizer_complete(s, all);
	expect(s, true, 0, 0, STEXT + 0x120, "an_alias", "[kernel.kallsyms]", 0x20);
	send_kernel(all, STEXT + 0x200000, ETEXT + 0x200000, 5);
	expect(s, true, 0, 0, STEXT + 0x120, NULL, NULL, STEXT + 0x120);
	pvprof_symbolizer_free(s);
}
END_TEST

START_TEST(symbolize_many)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	char name[32];
	struct named one;
	struct pvprof_sym r;
	unsigned int i;

	for (i = 1; i <= 3000; i++) {
		send_mmap(s, i, i % 7, 0x10000, 0x1000, 0, 0x1000, (__u8)(i % 251 + 1), "/bin/x");
		if (i <= 251) {
			snprintf(name, sizeof(name), "f%u", i);
			one = (struct named){ 0x1000, 0x1000, name };
			send_syms(s, NULL, (__u8)(i % 251 + 1), &one, 1);
		}
	}
	for (i = 1; i <= 3000; i++) {
		pvprof_symbolizer_resolve(s, false, i, i % 7, 0x10010, &r);
		snprintf(name, sizeof(name), "f%u", i % 251 ? i % 251 : 251);
		ck_assert_pstr_eq(r.symbol, name);
	}
	pvprof_symbolizer_free(s);
}
END_TEST

/* The generations of kernel and user answers, as they are when called. */
struct gens {
	__u64 kernel, user;
};

static struct gens gens_of(const struct pvprof_symbolizer *s)
{
	return (struct gens){ pvprof_symbolizer_generation(s, true),
			      pvprof_symbolizer_generation(s, false) };
}

/* Whether each generation moved since @before; @before becomes now. */
static void expect_gens(const struct pvprof_symbolizer *s, struct gens *before,
			bool kernel, bool user)
{
	struct gens now = gens_of(s);

	ck_assert_int_eq(now.kernel != before->kernel, kernel);
	ck_assert_int_eq(now.user != before->user, user);
	ck_assert_uint_ge(now.kernel, before->kernel);
	ck_assert_uint_ge(now.user, before->user);
	*before = now;
}

START_TEST(symbolize_generation)
{
	static const struct named ksyms[] = { { STEXT + 0x100, 0, "a" } };
	static const struct named elf[] = { { 0x1000, 0x100, "f" } };
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	struct pvprof_symbolizer *all = pvprof_symbolizer_new();
	struct pvprof_sb_exit x = { 0 };
	struct pvprof_sb_agent a = { 0 };
	struct gens g;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(all);
	g = gens_of(s);
	send_kernel(s, STEXT, ETEXT, 1);
	expect_gens(s, &g, true, false);
	send_syms(s, NULL, 0, ksyms, 1);
	expect_gens(s, &g, true, false);
	send_module(s, "m", MOD_BASE, 0x1000);
	expect_gens(s, &g, true, false);
	send_process(s, 10, 1, 0, "prog");
	expect_gens(s, &g, false, true);
	send_mmap(s, 10, 1, 0x400000, 0x2000, 0, 0x1000, 7, "/bin/prog");
	expect_gens(s, &g, false, true);
	send_syms(s, NULL, 7, elf, 1);
	expect_gens(s, &g, false, true);
	/* Neither an exit, the agent's counters nor a rejected message changes an answer. */
	hdr(&x, PVPROF_SB_EXIT, sizeof(x));
	x.pid = 10;
	x.exec_gen = 1;
	add_ok(s, &x);
	hdr(&a, PVPROF_SB_AGENT, sizeof(a));
	add_ok(s, &a);
	x.hdr.size = 3;
	ck_assert_int_eq(pvprof_symbolizer_add(s, &x, sizeof(x)), -EINVAL);
	expect_gens(s, &g, false, false);

	/* The complete tables' changes are the symbolizer's. */
	send_kernel(all, STEXT, ETEXT, 1);
	pvprof_symbolizer_complete(s, all);
	expect_gens(s, &g, true, true);
	send_mmap(all, 10, 1, 0x400000, 0x2000, 0, 0x1000, 7, "/bin/prog");
	expect_gens(s, &g, false, true);
	send_module(all, "m", MOD_BASE + 0x10000, 0x1000);
	expect_gens(s, &g, true, false);
	/* Other complete tables, with fewer messages: still past every earlier one. */
	all = pvprof_symbolizer_new();
	ck_assert_ptr_nonnull(all);
	pvprof_symbolizer_complete(s, all);
	expect_gens(s, &g, true, true);
	pvprof_symbolizer_free(s);
}
END_TEST

static Suite *symbolize_suite(void)
{
	Suite *s = suite_create("symbolize");

	PVPROF_ADD_TEST(s, symbolize_kernel_and_modules);
	PVPROF_ADD_TEST(s, symbolize_lost_ksyms);
	PVPROF_ADD_TEST(s, symbolize_user_fork_exec);
	PVPROF_ADD_TEST(s, symbolize_overlapping_mappings);
	PVPROF_ADD_TEST(s, symbolize_hostile_messages);
	PVPROF_ADD_TEST(s, symbolize_many);
	PVPROF_ADD_TEST(s, symbolize_complete_tables);
	PVPROF_ADD_TEST(s, symbolize_generation);
	return s;
}

int main(int argc, char **argv)
{
	Suite *suites[] = { symbolize_suite() };

	if (argc > 2) {
		fprintf(stderr, "usage: %s [RESULTS_FILE]\n", argv[0]);
		return 2;
	}
	return pvprof_run_suites(suites, 1, argc == 2 ? argv[1] : NULL);
}
