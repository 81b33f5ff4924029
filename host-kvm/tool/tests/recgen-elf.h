/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recgen.h's recordings with real ELF files mapped: what the guest agent
 * publishes for a mapping, the MMAP message with the file's build-id and
 * ELF address, then the ELF_SYMS and UNWIND messages of its own encoders
 * (guest-agent/elfsyms.c, guest-agent/unwind.c), which the includer links
 * with libelf.  Shared by dwarf-report-gen.c and
 * tests/bench-core/pvprof-gen.c.
 */
#ifndef _PVPROF_TOOL_TESTS_RECGEN_ELF_H
#define _PVPROF_TOOL_TESTS_RECGEN_ELF_H

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "guest-agent/pvprofd.h"
#include "recgen.h"

/* An ELF file as the agent reads it. */
struct gen_file {
	int fd;
	Elf *elf;
	struct pvprof_sb_build_id id;
};

static inline bool gen_file_build_id(Elf *elf, struct pvprof_sb_build_id *id)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) || !nh.n_descsz ||
			    nh.n_descsz > PVPROF_SB_BUILD_ID_MAX)
				continue;
			id->size = (uint8_t)nh.n_descsz;
			memcpy(id->bytes, (char *)d->d_buf + desc_off, nh.n_descsz);
			return true;
		}
	}
	return false;
}

/* Opens @path; exits unless it is an ELF file with a GNU build-id. */
static inline void gen_file_open(struct gen_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	if (elf_version(EV_CURRENT) == EV_NONE)
		gen_die("libelf");
	f->fd = open(path, O_RDONLY);
	f->elf = f->fd < 0 ? NULL : elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf || !gen_file_build_id(f->elf, &f->id)) {
		fprintf(stderr, "%s: %s: not readable or without a build-id\n", gen_prog, path);
		exit(2);
	}
}

static inline void gen_file_close(struct gen_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* The ELF address that file offset @pgoff is loaded at. */
static inline uint64_t gen_file_vaddr(const struct gen_file *f, uint64_t pgoff)
{
	size_t n, i;

	if (elf_getphdrnum(f->elf, &n))
		return pgoff;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pgoff >= (ph.p_offset & ~0xfffULL) && pgoff < ph.p_offset + ph.p_filesz)
			return pgoff + ph.p_vaddr - ph.p_offset;
	}
	return pgoff;
}

/*
 * The encoders' emit callback: one of the agent's messages into the
 * stream as it is, the type its header's; @ctx is the struct gen.
 */
static inline void gen_emit(void *ctx, const void *msg, size_t len)
{
	uint8_t copy[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sideband_hdr h;

	if (len < sizeof(h) || len > sizeof(copy))
		gen_die("the agent's encoder wrote a message of a bad size");
	memcpy(&h, msg, sizeof(h));
	memcpy(copy, msg, len);
	gen_message(ctx, copy, h.type, (uint32_t)len);
}

#endif /* _PVPROF_TOOL_TESTS_RECGEN_ELF_H */
