// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd: an ELF file's function symbols as PVPROF_SB_ELF_SYMS messages.
 *
 * Only encodes, like unwind.c: it needs libelf and the core, not
 * /dev/pvprof or the agent's threads, so that the host tool's tests build
 * their recordings with the agent's own messages.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pvprofd.h"

struct fsym {
	uint64_t addr;
	uint64_t size;
	const char *name;
};

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Function symbols of one section of type @type; returns how many. */
static size_t collect(Elf *elf, Elf64_Word type, struct fsym **out)
{
	Elf_Scn *scn = NULL;
	size_t n = 0;

	*out = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		count = sh.sh_size / sh.sh_entsize;
		*out = calloc(count ? count : 1, sizeof(**out));
		if (!*out)
			return 0;
		for (i = 0; i < count; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !name[0])
				continue;
			(*out)[n++] = (struct fsym){ s.st_value, s.st_size, name };
		}
		break;
	}
	return n;
}

/**
 * symbol_messages() - encode an ELF file's function symbols
 * @elf: the file, opened for reading
 * @id: its build-id, size >= 1
 * @emit: called once per message, in order of address; the message (its
 *	time_ns 0) is valid only during the call
 * @ctx: passed to @emit
 *
 * Takes .symtab, else .dynsym (a stripped file), sorted by address with
 * exact duplicates dropped, and fills each message as far as it goes.
 *
 * Return: the symbols encoded.
 */
size_t symbol_messages(Elf *elf, const struct pvprof_sb_build_id *id,
		       void (*emit)(void *ctx, const void *msg, size_t len), void *ctx)
{
	union {
		struct pvprof_sb_elf_syms e;
		uint8_t raw[PVPROF_SIDEBAND_MAX_SIZE];
	} m;
	struct pvprof_sb_sym_writer w;
	bool open = false;
	struct fsym *v;
	size_t n, i, encoded = 0;

	n = collect(elf, SHT_SYMTAB, &v);
	if (!n) {
		free(v);
		n = collect(elf, SHT_DYNSYM, &v);
	}
	qsort(v, n, sizeof(*v), fsym_cmp);
	for (i = 0; i < n; i++) {
		int r;

		if (i && v[i].addr == v[i - 1].addr && !strcmp(v[i].name, v[i - 1].name))
			continue;
		if (!open) {
			memset(&m.e, 0, sizeof(m.e));
			m.e.hdr.type = PVPROF_SB_ELF_SYMS;
			m.e.hdr.version = PVPROF_SIDEBAND_VERSION;
			m.e.build_id = *id;
			m.e.first = v[i].addr;
			pvprof_sb_sym_writer_init(&w, &m, sizeof(m.e), sizeof(m), true, v[i].addr);
			open = true;
		}
		r = pvprof_sb_sym_put(&w, v[i].addr, v[i].size, v[i].name,
				      strnlen(v[i].name, PVPROF_SB_NAME_MAX));
		if (r == -1) {
			/* Full: send it, and put this symbol into the next. */
			m.e.nr = w.nr;
			m.e.hdr.size = w.len;
			emit(ctx, &m, w.len);
			open = false;
			i--;
			continue;
		}
		if (!r)
			encoded++;
	}
	if (open && w.nr) {
		m.e.nr = w.nr;
		m.e.hdr.size = w.len;
		emit(ctx, &m, w.len);
	}
	free(v);
	return encoded;
}
