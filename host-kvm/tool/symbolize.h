/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host-side symbolizer: builds the guest's kernel, module, process and
 * ELF symbol tables from sideband messages (spec pvprof-sideband-payloads)
 * and names the addresses of callchains with them, offline.
 *
 * Everything it is given came from the guest: every message is checked
 * with the shared core before use, a bad one is counted and ignored, and
 * no input can make it read out of bounds.  Strings it returns point into
 * the symbolizer (valid until pvprof_symbolizer_free()), are NUL-terminated
 * and at most 255 bytes long, but may contain any other byte: callers
 * escape them for their output.  No global state: one symbolizer per
 * recording, not shared between threads without a lock.
 */
#ifndef _PVPROF_TOOL_SYMBOLIZE_H
#define _PVPROF_TOOL_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pvprof_symbolizer;

/**
 * struct pvprof_sym - what an address resolved to
 * @symbol: the function's name, NULL when unknown
 * @dso: "[kernel.kallsyms]", "[module_name]", the mapped file's path, or
 *	NULL when unknown
 * @offset: from the symbol's start; from the DSO's base (kernel: _stext or
 *	the module's base; files: the file offset) when @symbol is NULL; the
 *	raw address when both are NULL
 *
 * @image_start: with @dso, the first address of the image that holds the
 *	address: the kernel's _stext, a module's base, a mapping's start
 * @image_end: the address after it (the kernel's _etext)
 * @image_pgoff: the file offset of @image_start (0 for the kernel and
 *	modules)
 * @build_id: the image's build-id as the guest agent sent it, NULL when
 *	unknown; valid for the life of the symbolizer
 * @build_id_size: its length
 *
 * A kernel frame outside every text range the agent described is still
 * "[kernel.kallsyms]", at its offset from _stext (wrapped below it), once
 * a KERNEL message gave _stext; its image is the kernel's text range all
 * the same.
 */
struct pvprof_sym {
	const char *symbol;
	const char *dso;
	uint64_t offset;
	uint64_t image_start, image_end, image_pgoff;
	const uint8_t *build_id;
	size_t build_id_size;
};

/**
 * struct pvprof_symbolizer_stats - what the symbolizer has taken in
 * @messages: sideband messages accepted
 * @rejected: messages refused by the framing or payload rules
 * @kernel_syms: kernel and module symbol entries received (each time sent)
 * @module_syms: of those, the modules' entries
 * @elf_syms: ELF symbol entries received
 * @processes: process images known
 * @mappings: mapping messages accepted
 * @kernel_syms_expected: the kernel image's symbols the agent announced in
 *	its last KERNEL message (0 before one)
 * @agent_lost_messages: messages the guest agent could not send, from its
 *	last AGENT message (summed over agent instances)
 * @agent_lost_bytes: their bytes
 */
struct pvprof_symbolizer_stats {
	uint64_t messages;
	uint64_t rejected;
	uint64_t kernel_syms;
	uint64_t module_syms;
	uint64_t elf_syms;
	uint64_t processes;
	uint64_t mappings;
	uint64_t kernel_syms_expected;
	uint64_t agent_lost_messages;
	uint64_t agent_lost_bytes;
};

/**
 * struct pvprof_sym_map - one executable mapping of a process image
 * @start: its first address
 * @end: the address after it
 * @vaddr: the ELF virtual address @start maps
 * @build_id: the mapped file's build-id, NULL when unknown
 * @build_id_size: its length
 * @path: the file's path, NULL when unknown
 */
struct pvprof_sym_map {
	uint64_t start, end, vaddr;
	const uint8_t *build_id;
	size_t build_id_size;
	const char *path;
};

struct pvprof_symbolizer *pvprof_symbolizer_new(void);
void pvprof_symbolizer_free(struct pvprof_symbolizer *s);
void pvprof_symbolizer_complete(struct pvprof_symbolizer *s,
				struct pvprof_symbolizer *complete);
int pvprof_symbolizer_add(struct pvprof_symbolizer *s, const void *msg, size_t len);
void pvprof_symbolizer_resolve(struct pvprof_symbolizer *s, bool kernel_frame,
			       uint32_t pid, uint32_t exec_gen, uint64_t addr,
			       struct pvprof_sym *out);
const void *pvprof_symbolizer_image(struct pvprof_symbolizer *s, uint32_t pid,
				    uint32_t exec_gen, uint64_t *gen, size_t *nr_maps);
void pvprof_symbolizer_image_map(const void *image, size_t i, struct pvprof_sym_map *out);
int pvprof_symbolizer_user_code(struct pvprof_symbolizer *s, uint32_t pid,
				uint32_t exec_gen, uint64_t addr);
const char *pvprof_symbolizer_comm(struct pvprof_symbolizer *s, uint32_t pid,
				   uint32_t exec_gen);
uint64_t pvprof_symbolizer_generation(const struct pvprof_symbolizer *s, bool kernel);
void pvprof_symbolizer_stats(const struct pvprof_symbolizer *s,
			     struct pvprof_symbolizer_stats *st);

#endif /* _PVPROF_TOOL_SYMBOLIZE_H */
