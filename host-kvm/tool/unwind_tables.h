/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host tool's store of guest unwind tables: assembles the .eh_frame_hdr,
 * .eh_frame and .debug_frame sections of the guest's ELF files, keyed by
 * build-id, from PVPROF_SB_UNWIND parts (spec pvprof-sb-unwind), so that user
 * stack snapshots of code without frame pointers can be unwound offline.
 *
 * The parts come from the guest: each message is checked with the shared
 * core, parts may arrive in any order and more than once (the agent sends
 * everything again at each publication), and a section is handed out only
 * when every byte of it arrived.  Memory follows the bytes that actually
 * arrived, never a size the guest merely claims, and stays under a cap.
 * No global state: one store per recording, not shared between threads
 * without a lock.
 */
#ifndef _PVPROF_TOOL_UNWIND_TABLES_H
#define _PVPROF_TOOL_UNWIND_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default cap on the bytes a store holds, complete sections and parts. */
#define PVPROF_UNWIND_TABLES_DEFAULT_MAX	(512ULL << 20)

struct pvprof_unwind_tables;
struct unwind_tables;

/**
 * struct pvprof_unwind_section - one complete section
 * @data: its bytes, NULL when the section is absent, incomplete or invalid;
 *	valid until pvprof_unwind_tables_free()
 * @size: bytes at @data (0 with @data NULL)
 * @vaddr: its sh_addr in the ELF (0 for .debug_frame)
 */
struct pvprof_unwind_section {
	const uint8_t *data;
	uint32_t size;
	uint64_t vaddr;
};

/**
 * struct pvprof_unwind_set - the complete sections of one build-id
 * @eh_frame_hdr: .eh_frame_hdr, the binary-search table of .eh_frame
 * @eh_frame: .eh_frame
 * @debug_frame: .debug_frame
 */
struct pvprof_unwind_set {
	struct pvprof_unwind_section eh_frame_hdr;
	struct pvprof_unwind_section eh_frame;
	struct pvprof_unwind_section debug_frame;
};

/**
 * struct pvprof_unwind_tables_stats - what the store took in, for reports
 * @parts: parts that brought bytes not seen before
 * @duplicate_parts: parts whose bytes had all arrived already
 * @invalid_parts: parts refused: payload rules broken, section_size or
 *	vaddr disagreeing with an earlier part (which makes the section
 *	invalid), a part of an invalid section, a section fragmented beyond
 *	reason, or no memory
 * @over_limit_parts: parts dropped because the store's cap was reached
 * @complete_sections: sections whose every byte arrived
 * @incomplete_sections: sections still missing bytes (unusable)
 * @invalid_sections: sections made invalid by a conflicting part
 * @build_ids: ELF files with at least one section
 * @bytes: bytes held, complete sections and parts
 */
struct pvprof_unwind_tables_stats {
	uint64_t parts;
	uint64_t duplicate_parts;
	uint64_t invalid_parts;
	uint64_t over_limit_parts;
	uint64_t complete_sections;
	uint64_t incomplete_sections;
	uint64_t invalid_sections;
	uint64_t build_ids;
	uint64_t bytes;
};

struct pvprof_unwind_tables *pvprof_unwind_tables_new(uint64_t max_bytes);
void pvprof_unwind_tables_free(struct pvprof_unwind_tables *t);
int pvprof_unwind_tables_add(struct pvprof_unwind_tables *t, const void *msg,
			     size_t len);
int pvprof_unwind_tables_find(const struct pvprof_unwind_tables *t,
			      const uint8_t *build_id, size_t build_id_size,
			      struct pvprof_unwind_set *out);
bool pvprof_unwind_tables_get(const struct pvprof_unwind_tables *t,
			      const uint8_t *build_id, size_t build_id_size,
			      const void *key, struct unwind_tables *out);
void pvprof_unwind_tables_stats(const struct pvprof_unwind_tables *t,
				struct pvprof_unwind_tables_stats *st);

#endif /* _PVPROF_TOOL_UNWIND_TABLES_H */
