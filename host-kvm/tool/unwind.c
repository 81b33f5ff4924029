// SPDX-License-Identifier: GPL-2.0
/*
 * Offline user-stack unwinding with libdwfl from unwind tables sent as raw
 * section bytes.  See unwind.h for the contract.
 *
 * Design, after perf's unwind-libdw.c and ddprof's unwind_dwfl.cc:
 * - one Dwfl per process image, attached once (dwfl_attach_state) with
 *   callbacks that read the sample the image's state points to, so the
 *   modules and libdw's parsed CFI survive from sample to sample;
 * - one synthesized ELF image per tables key, shared by every module that
 *   maps those tables: its first PT_LOAD has p_vaddr 0, so the module is
 *   reported at the load bias (start - vaddr) and libdwfl's bias is exactly
 *   the mapping's;
 * - modules are reported lazily, from the frame callback, for the pc the
 *   next step will look up, because the caller only answers "which mapping
 *   holds this address".
 */
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* x86-64 DWARF register numbers. */
#define DW_RBX	3
#define DW_RBP	6
#define DW_RSP	7
#define DW_R12	12

/* libdwfl wants a thread id; the sample is the only thread. */
#define UNWIND_TID	1

/* A synthesized ELF image, shared by the modules that map its tables. */
struct uw_tables {
	struct uw_tables *next;		/* in the unwinder's cache */
	const void *key;
	int refs;			/* the cache's and each module's */
	/* What the image was built from, to notice a key reused. */
	size_t hdr_len, eh_len, debug_len;
	uint64_t hdr_vaddr, eh_vaddr;
	bool hdr_kept;			/* libdw searches .eh_frame with it */
	char *image;
	size_t image_len;
};

/* A module reported to an image's Dwfl: libdwfl's userdata for it. */
struct uw_module {
	struct uw_module *next;
	struct uw_tables *t;
	uint64_t bias, end;		/* it spans [bias, end) */
	/* libdw read its .eh_frame, .debug_frame through (cfi_frame()). */
	bool eh_read, debug_read;
};

/* One process image: its Dwfl, and the sample being walked. */
struct uw_image {
	struct uw_image *next;
	const void *image;
	Dwfl *dwfl;
	Elf *arch_elf;			/* tells dwfl_attach_state the machine */
	struct uw_module *modules;
	struct unwinder *u;
	/* Per sample, set before dwfl_getthread_frames(). */
	const struct unwind_sample *s;
	unwind_find_fn find;
	void *ctx;
	uint64_t *frames;
	int max, n;
	uint64_t last_sp;
	enum unwind_end end;
	bool ended;			/* the callback chose end */
	bool mem_failed;
	bool next_activation;		/* the next frame was interrupted */
};

struct unwinder {
	struct uw_image *images;
	struct uw_tables *tables;
	/* An ELF header only, for arch_elf: libelf may keep pointers into it. */
	char arch_image[sizeof(Elf64_Ehdr)];
};

/*
 * Layout of a synthesized image: ELF header, program headers, section name
 * strings, the sections' bytes, section headers.  .eh_frame_hdr comes
 * before .eh_frame because libdw only pairs them in that order.
 */
enum { SEC_NULL, SEC_HDR, SEC_EH, SEC_DEBUG, SEC_SHSTRTAB, SEC_NR };
static const char shstrtab[] = "\0.eh_frame_hdr\0.eh_frame\0.debug_frame\0.shstrtab";
static const Elf64_Word shname[SEC_NR] = { 0, 1, 15, 25, 38 };

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static bool range_ok(const void *p, size_t len, uint64_t vaddr)
{
	if (!len)
		return true;
	return p && len <= UNWIND_MAX_TABLE_LEN && vaddr + len > vaddr;
}

/*
 * Whether an .eh_frame_hdr is the form linkers write (version 1, eh_frame_ptr
 * pcrel sdata4, fde_count udata4, table datarel sdata4 pairs), names the
 * .eh_frame sent with it, and holds its whole table, not empty (libdw then
 * reads .eh_frame in order, as without a hdr: see cfi_frame()).  libdw
 * rejects all CFI of a file whose hdr it cannot use, so a doubtful hdr is
 * better dropped: without one libdw searches .eh_frame itself, slower but
 * as right.
 */
static bool eh_frame_hdr_ok(const struct unwind_tables *src)
{
	const uint8_t *h = src->eh_frame_hdr;
	int32_t ptr;
	uint32_t count;

	if (src->eh_frame_hdr_len < 12 || h[0] != 1 || h[1] != 0x1b ||
	    h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(&ptr, h + 4, 4);
	memcpy(&count, h + 8, 4);
	return src->eh_frame_hdr_vaddr + 4 + (int64_t)ptr == src->eh_frame_vaddr &&
	       count && count <= (src->eh_frame_hdr_len - 12) / 8;
}

static void tables_put(struct uw_tables *t)
{
	if (t && --t->refs == 0) {
		free(t->image);
		free(t);
	}
}

static struct uw_tables *tables_build(const struct unwind_tables *src)
{
	size_t hdr_len = src->eh_frame_hdr ? src->eh_frame_hdr_len : 0;
	size_t eh_len = src->eh_frame ? src->eh_frame_len : 0;
	size_t debug_len = src->debug_frame ? src->debug_frame_len : 0;
	Elf64_Shdr sh[SEC_NR] = { 0 };
	Elf64_Phdr ph[2] = { 0 };
	Elf64_Ehdr *eh;
	struct uw_tables *t;
	size_t off, shoff, nph = 0;
	uint64_t top = 0;
	int i;

	/* Without .eh_frame libdw ignores the hdr; .debug_frame alone works. */
	if (!range_ok(src->eh_frame_hdr, hdr_len, src->eh_frame_hdr_vaddr) ||
	    !range_ok(src->eh_frame, eh_len, src->eh_frame_vaddr) ||
	    debug_len > UNWIND_MAX_TABLE_LEN || (!eh_len && !debug_len))
		return NULL;
	if (!eh_len || (hdr_len && !eh_frame_hdr_ok(src)))
		hdr_len = 0;

	off = sizeof(*eh) + sizeof(ph) + sizeof(shstrtab);
	sh[SEC_SHSTRTAB] = (Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_addralign = 1,
		.sh_offset = sizeof(*eh) + sizeof(ph), .sh_size = sizeof(shstrtab) };
	if (hdr_len) {
		off = align_up(off, 4);
		sh[SEC_HDR] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			.sh_addr = src->eh_frame_hdr_vaddr, .sh_offset = off,
			.sh_size = hdr_len, .sh_addralign = 4 };
		off += hdr_len;
		top = src->eh_frame_hdr_vaddr + hdr_len;
	}
	if (eh_len) {
		off = align_up(off, 8);
		sh[SEC_EH] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			.sh_addr = src->eh_frame_vaddr, .sh_offset = off,
			.sh_size = eh_len, .sh_addralign = 8 };
		off += eh_len;
		if (src->eh_frame_vaddr + eh_len > top)
			top = src->eh_frame_vaddr + eh_len;
	}
	if (debug_len) {
		off = align_up(off, 8);
		sh[SEC_DEBUG] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS,
			.sh_offset = off, .sh_size = debug_len, .sh_addralign = 8 };
		off += debug_len;
	}
	/* Absent sections stay as headers of type SHT_NULL, never matched. */
	for (i = 0; i < SEC_NR; i++)
		sh[i].sh_name = (sh[i].sh_type == SHT_NULL) ? 0 : shname[i];
	shoff = align_up(off, 8);

	/*
	 * libdwfl takes the bias from the first PT_LOAD: with p_vaddr 0 the
	 * module's low address is the bias.  PT_GNU_EH_FRAME is what a loader
	 * would see; libdw finds the sections first.
	 */
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_memsz = top, .p_align = 1 };
	if (hdr_len)
		ph[nph++] = (Elf64_Phdr){ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R,
			.p_offset = sh[SEC_HDR].sh_offset,
			.p_vaddr = src->eh_frame_hdr_vaddr,
			.p_filesz = hdr_len, .p_memsz = hdr_len, .p_align = 4 };

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->image_len = shoff + sizeof(sh);
	t->image = calloc(1, t->image_len);
	if (!t->image) {
		free(t);
		return NULL;
	}
	eh = (Elf64_Ehdr *)t->image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = nph;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = SEC_NR;
	eh->e_shstrndx = SEC_SHSTRTAB;
	memcpy(t->image + sizeof(*eh), ph, sizeof(ph));
	memcpy(t->image + sh[SEC_SHSTRTAB].sh_offset, shstrtab, sizeof(shstrtab));
	if (hdr_len)
		memcpy(t->image + sh[SEC_HDR].sh_offset, src->eh_frame_hdr, hdr_len);
	if (eh_len)
		memcpy(t->image + sh[SEC_EH].sh_offset, src->eh_frame, eh_len);
	if (debug_len)
		memcpy(t->image + sh[SEC_DEBUG].sh_offset, src->debug_frame, debug_len);
	memcpy(t->image + shoff, sh, sizeof(sh));

	t->key = src->key;
	t->hdr_len = src->eh_frame_hdr_len;
	t->eh_len = src->eh_frame_len;
	t->debug_len = src->debug_frame_len;
	t->hdr_vaddr = src->eh_frame_hdr_vaddr;
	t->eh_vaddr = src->eh_frame_vaddr;
	t->hdr_kept = hdr_len != 0;
	return t;
}

static bool tables_match(const struct uw_tables *t, const struct unwind_tables *src)
{
	return t->key == src->key && t->hdr_len == src->eh_frame_hdr_len &&
	       t->eh_len == src->eh_frame_len && t->debug_len == src->debug_frame_len &&
	       t->hdr_vaddr == src->eh_frame_hdr_vaddr && t->eh_vaddr == src->eh_frame_vaddr;
}

static void tables_uncache(struct unwinder *u, struct uw_tables *t)
{
	struct uw_tables **pp;

	for (pp = &u->tables; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			tables_put(t);
			return;
		}
	}
}

/* The cached image of @src, built on first use; not referenced for the caller. */
static struct uw_tables *tables_get(struct unwinder *u, const struct unwind_tables *src)
{
	struct uw_tables *t;

	if (!src->key)
		return NULL;	/* uncacheable: refused, see unwind.h */
	for (t = u->tables; t; t = t->next) {
		if (t->key != src->key)
			continue;
		if (tables_match(t, src))
			return t;
		/* The key now names other bytes: modules using the old keep it. */
		tables_uncache(u, t);
		break;
	}
	t = tables_build(src);
	if (!t)
		return NULL;
	t->refs = 1;
	t->next = u->tables;
	u->tables = t;
	return t;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct uw_module *m = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	*file_name = NULL;
	/* libdwfl owns this Elf (elf_end at dwfl_end); the image stays ours. */
	*elfp = m ? elf_memory(m->t->image, m->t->image_len) : NULL;
	return -1;
}

/* Never look for debuginfo on the host: it would be the host's files. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name,
			  const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	*debuginfo_file_name = NULL;
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return UNWIND_TID;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uw_image *im = arg;
	const uint64_t *r = im->s->regs;
	Dwarf_Word v;
	int i;

	/* Only the registers we have: the others stay unknown to the CFI. */
	v = r[UNWIND_REG_BX];
	if (!dwfl_thread_state_registers(thread, DW_RBX, 1, &v))
		return false;
	v = r[UNWIND_REG_BP];
	if (!dwfl_thread_state_registers(thread, DW_RBP, 1, &v))
		return false;
	v = r[UNWIND_REG_SP];
	if (!dwfl_thread_state_registers(thread, DW_RSP, 1, &v))
		return false;
	for (i = 0; i < 4; i++) {
		v = r[UNWIND_REG_R12 + i];
		if (!dwfl_thread_state_registers(thread, DW_R12 + i, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, r[UNWIND_REG_IP]);
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_image *im = arg;
	const struct unwind_sample *s = im->s;
	uint64_t sp = s->regs[UNWIND_REG_SP];
	uint64_t off = addr - sp;

	(void)dwfl;
	/*
	 * Once a read failed, the step that needed it failed: refusing the
	 * rest keeps libdwfl's frame-pointer fallback from inventing a caller
	 * out of whatever rbp holds.
	 */
	if (im->mem_failed || addr < sp || off > s->stack_len ||
	    s->stack_len - off < sizeof(*result)) {
		im->mem_failed = true;
		return false;
	}
	memcpy(result, s->stack + off, sizeof(*result));
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void image_free(struct uw_image *im)
{
	struct uw_module *m, *next;

	if (im->dwfl)
		dwfl_end(im->dwfl);	/* ends the modules' Elfs first */
	if (im->arch_elf)
		elf_end(im->arch_elf);
	for (m = im->modules; m; m = next) {
		next = m->next;
		tables_put(m->t);
		free(m);
	}
	free(im);
}

static struct uw_image *image_get(struct unwinder *u, const void *image)
{
	struct uw_image **pp, *im;

	for (pp = &u->images; (im = *pp); pp = &im->next) {
		if (im->image == image) {
			/* Samples come in runs per process: keep it in front. */
			*pp = im->next;
			im->next = u->images;
			u->images = im;
			return im;
		}
	}
	im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->image = image;
	im->u = u;
	im->dwfl = dwfl_begin(&dwfl_callbacks);
	im->arch_elf = elf_memory(u->arch_image, sizeof(u->arch_image));
	if (!im->dwfl || !im->arch_elf ||
	    !dwfl_attach_state(im->dwfl, im->arch_elf, UNWIND_TID, &thread_callbacks, im)) {
		image_free(im);
		return NULL;
	}
	im->next = u->images;
	u->images = im;
	return im;
}

static struct uw_module *module_data(Dwfl_Module *mod)
{
	void **userdata = NULL;

	if (!dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) ||
	    !userdata)
		return NULL;
	return *userdata;
}

/*
 * Without a search table libdw reads a section's entries in order as
 * lookups need them, and one that meets a malformed FDE fails, leaving the
 * next lookup to go on past it: the answer would depend on the lookups of
 * earlier samples.  Asking until the whole section was read (each try gets
 * past one entry of at least 8 bytes, or ends) gives the answer of a fresh
 * image.  @len is 0 when libdw has a search table.  A lookup that failed
 * every try read the section through (*@read): libdw then knows every
 * entry it can parse, and one try gives that same answer (an address
 * without CFI, common in a .debug_frame, would otherwise cost len / 8
 * lookups each time).
 */
static bool cfi_frame(Dwarf_CFI *cfi, Dwarf_Addr addr, size_t len, bool *read,
		      Dwarf_Frame **frame)
{
	size_t i, tries = *read ? 1 : len / 8 + 1;

	for (i = 0; i < tries; i++)
		if (dwarf_cfi_addrframe(cfi, addr, frame) == 0)
			return true;
	*read = true;
	return false;
}

/*
 * Make sure the next step, which looks up CFI at @addr, finds the module of
 * the mapping that holds it, and that the module has CFI for @addr: without
 * it libdwfl would fall back to frame pointers and trust whatever rbp holds.
 */
static enum unwind_end prepare_step(struct uw_image *im, uint64_t addr)
{
	const struct unwind_mapping *map = im->find(im->ctx, addr);
	struct uw_tables *t;
	struct uw_module *m;
	Dwfl_Module *mod;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame;
	Dwarf_Addr bias;
	uint64_t low;
	void **userdata;
	bool found = false;

	if (!map || !map->tables || addr < map->start || addr >= map->end)
		return UNWIND_END_NO_TABLES;
	t = tables_get(im->u, map->tables);
	if (!t || map->vaddr > map->start)
		return UNWIND_END_ERROR;
	low = map->start - map->vaddr;

	mod = dwfl_addrmodule(im->dwfl, addr);
	if (mod) {
		m = module_data(mod);
		if (!m || m->t != t || m->bias != low)
			return UNWIND_END_ERROR;	/* stale: forget the image */
	} else {
		/*
		 * A module spans from the load bias, below the mapping, and
		 * libdwfl answers an address with any module that spans it: one
		 * reported over another would change the answers of every
		 * later walk of the image.
		 */
		for (m = im->modules; m; m = m->next)
			if (low < m->end && m->bias < map->end)
				return UNWIND_END_ERROR;
		m = calloc(1, sizeof(*m));
		if (!m)
			return UNWIND_END_ERROR;
		dwfl_report_begin_add(im->dwfl);
		mod = dwfl_report_module(im->dwfl, map->name ? map->name : "[unnamed]",
					 low, map->end);
		dwfl_report_end(im->dwfl, NULL, NULL);
		if (!mod || dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL,
					     NULL, NULL) == NULL || *userdata) {
			free(m);
			return UNWIND_END_ERROR;
		}
		m->t = t;
		m->bias = low;
		m->end = map->end;
		t->refs++;
		m->next = im->modules;
		im->modules = m;
		*userdata = m;
		if (dwfl_addrmodule(im->dwfl, addr) != mod)
			return UNWIND_END_ERROR;	/* overlaps another module */
	}

	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && cfi_frame(cfi, addr - bias, t->hdr_kept ? 0 : t->eh_len, &m->eh_read, &frame))
		found = true;
	else if (t->debug_len) {
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (cfi && cfi_frame(cfi, addr - bias, t->debug_len, &m->debug_read, &frame))
			found = true;
	}
	if (!found)
		return UNWIND_END_ERROR;
	/*
	 * A caller reached through a signal frame ('S' augmentation) was
	 * interrupted, not called: its pc is looked up as is.
	 */
	if (dwarf_frame_info(frame, NULL, NULL, &im->next_activation) < 0)
		im->next_activation = false;
	free(frame);
	return UNWIND_END_OUTERMOST;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct uw_image *im = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool activation;
	enum unwind_end why;

	/*
	 * Not dwfl_frame_pc()'s isactivation: to answer it libdwfl unwinds
	 * this frame, before prepare_step() reported the module it needs, and
	 * falls back to frame pointers.  The initial frame and one reached
	 * through a signal frame are activations, as libdwfl's step has it.
	 */
	activation = im->n == 0 || im->next_activation;
	if (!dwfl_frame_pc(state, &pc, NULL) ||
	    dwfl_frame_reg(state, DW_RSP, &sp) != 0) {
		why = UNWIND_END_ERROR;
		goto stop;
	}
	/* A caller's frame lies above its callee's: anything else loops. */
	if (im->n > 0 && sp <= im->last_sp) {
		why = UNWIND_END_ERROR;
		goto stop;
	}
	im->last_sp = sp;
	im->frames[im->n++] = pc;
	if (im->n >= im->max) {
		why = UNWIND_END_DEPTH;
		goto stop;
	}
	/* A return address's call is the byte before it. */
	why = prepare_step(im, activation ? pc : pc - 1);
	if (why == UNWIND_END_OUTERMOST)
		return DWARF_CB_OK;
stop:
	im->end = why;
	im->ended = true;
	return DWARF_CB_ABORT;
}

int unwind_sample(struct unwinder *u, const void *image, unwind_find_fn find,
		  void *ctx, const struct unwind_sample *s, uint64_t *frames,
		  int max, enum unwind_end *end)
{
	struct uw_image *im;
	int rc;

	*end = UNWIND_END_ERROR;
	if (max <= 0 || !s->regs[UNWIND_REG_IP])
		return 0;
	frames[0] = s->regs[UNWIND_REG_IP];
	im = image_get(u, image);
	if (!im)
		return 1;

	im->s = s;
	im->find = find;
	im->ctx = ctx;
	im->frames = frames;
	im->max = max;
	im->n = 0;
	im->last_sp = 0;
	im->ended = false;
	im->mem_failed = false;
	im->next_activation = false;
	rc = dwfl_getthread_frames(im->dwfl, UNWIND_TID, frame_cb, im);
	/*
	 * libdwfl takes a return address it could not read for an undefined
	 * one, the mark of the outermost frame: a failed read says otherwise.
	 */
	if (im->ended)
		*end = im->end;
	else if (im->mem_failed)
		*end = UNWIND_END_MEMORY;
	else
		*end = rc == 0 ? UNWIND_END_OUTERMOST : UNWIND_END_ERROR;
	im->s = NULL;
	im->frames = NULL;
	return im->n ? im->n : 1;
}

struct unwinder *unwinder_new(void)
{
	struct unwinder *u;
	Elf64_Ehdr eh = { 0 };

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	memcpy(u->arch_image, &eh, sizeof(eh));
	return u;
}

void unwinder_forget(struct unwinder *u, const void *image)
{
	struct uw_image **pp, *im;

	for (pp = &u->images; (im = *pp); pp = &im->next) {
		if (im->image == image) {
			*pp = im->next;
			image_free(im);
			return;
		}
	}
}

void unwinder_forget_tables(struct unwinder *u, const void *key)
{
	struct uw_tables *t;

	for (t = u->tables; t; t = t->next) {
		if (t->key == key) {
			tables_uncache(u, t);
			return;
		}
	}
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	while (u->images)
		unwinder_forget(u, u->images->image);
	while (u->tables)
		tables_uncache(u, u->tables);
	free(u);
}

const char *unwind_end_name(enum unwind_end end)
{
	switch (end) {
	case UNWIND_END_OUTERMOST:
		return "outermost";
	case UNWIND_END_DEPTH:
		return "depth";
	case UNWIND_END_NO_TABLES:
		return "no-tables";
	case UNWIND_END_MEMORY:
		return "memory";
	case UNWIND_END_ERROR:
		return "error";
	}
	return "?";
}
