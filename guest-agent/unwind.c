// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd: an ELF file's unwind tables as PVPROF_SB_UNWIND parts.
 *
 * The host unwinds user stack snapshots of code built without frame
 * pointers with the file's DWARF call frame information, which it cannot
 * read from the guest itself.  This file only encodes: it needs libelf and
 * the core, not /dev/pvprof or the agent's threads, so that it is tested
 * natively (tests/unwind-encode-test.c).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>

#include "pvprofd.h"

/* Bytes of a section one message carries. */
#define UNWIND_PART_MAX	(PVPROF_SIDEBAND_MAX_SIZE - sizeof(struct pvprof_sb_unwind))

static const char * const unwind_names[PVPROF_SB_UNWIND_SECTION_MAX + 1] = {
	[PVPROF_SB_UNWIND_EH_FRAME_HDR]	= ".eh_frame_hdr",
	[PVPROF_SB_UNWIND_EH_FRAME]	= ".eh_frame",
	[PVPROF_SB_UNWIND_DEBUG_FRAME]	= ".debug_frame",
};

static Elf_Scn *find_section(Elf *elf, size_t shstrndx, const char *want)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Emit one section in parts, in offset order; returns the parts. */
static size_t emit_section(const struct pvprof_sb_build_id *id, __u16 section,
			   __u64 vaddr, const uint8_t *bytes, uint32_t size,
			   void (*emit)(void *ctx, const void *msg, size_t len),
			   void *ctx)
{
	union {
		struct pvprof_sb_unwind u;
		uint8_t raw[PVPROF_SIDEBAND_MAX_SIZE];
	} m;
	uint32_t off, n;
	size_t parts = 0;

	for (off = 0; off < size; off += n) {
		n = size - off < UNWIND_PART_MAX ? size - off : UNWIND_PART_MAX;
		memset(&m.u, 0, sizeof(m.u));
		m.u.hdr.type = PVPROF_SB_UNWIND;
		m.u.hdr.version = PVPROF_SIDEBAND_VERSION;
		m.u.hdr.size = sizeof(m.u) + n;
		m.u.build_id = *id;
		m.u.vaddr = vaddr;
		m.u.section_size = size;
		m.u.offset = off;
		m.u.section = section;
		memcpy(m.raw + sizeof(m.u), bytes + off, n);
		emit(ctx, &m, sizeof(m.u) + n);
		parts++;
	}
	return parts;
}

/**
 * unwind_messages() - encode an ELF file's unwind sections
 * @elf: the file, opened for reading (a compressed .debug_frame is
 *	decompressed in place, so the handle is changed)
 * @id: its build-id, size >= 1
 * @emit: called once per message, in order; the message (its time_ns 0)
 *	is valid only during the call
 * @ctx: passed to @emit
 *
 * Sends .eh_frame_hdr, .eh_frame and .debug_frame, each split into
 * PVPROF_SB_UNWIND parts in order of offset.  A section that is absent,
 * SHT_NOBITS (a debug-info file's copy of the loaded ones), empty, larger
 * than PVPROF_SB_UNWIND_MAX_SIZE or unreadable is skipped: the host then
 * falls back to frame pointers for that file.
 *
 * Return: the messages emitted.
 */
size_t unwind_messages(Elf *elf, const struct pvprof_sb_build_id *id,
		       void (*emit)(void *ctx, const void *msg, size_t len),
		       void *ctx)
{
	size_t shstrndx, parts = 0;
	__u16 s;

	if (!id->size || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	for (s = PVPROF_SB_UNWIND_EH_FRAME_HDR; s <= PVPROF_SB_UNWIND_SECTION_MAX; s++) {
		Elf_Scn *scn = find_section(elf, shstrndx, unwind_names[s]);
		Elf_Data *d;
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !sh.sh_size)
			continue;
		/* The host parses the CFI itself: it needs the plain bytes. */
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
			continue;
		d = elf_getdata(scn, NULL);
		/*
		 * A file read from disk has one data block per section; anything
		 * else is not what the file holds.
		 */
		if (!d || !d->d_buf || d->d_off || d->d_size != sh.sh_size ||
		    !d->d_size || d->d_size > PVPROF_SB_UNWIND_MAX_SIZE ||
		    elf_getdata(scn, d))
			continue;
		parts += emit_section(id, s, s == PVPROF_SB_UNWIND_DEBUG_FRAME ? 0 : sh.sh_addr,
				      d->d_buf, (uint32_t)d->d_size, emit, ctx);
	}
	return parts;
}
