/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Offline DWARF unwinding of guest user stacks, the way perf --call-graph
 * dwarf does it: a sample holds the user registers and a copy of the top of
 * the user stack, the guest agent sent the unwind tables (.eh_frame_hdr,
 * .eh_frame, maybe .debug_frame) of every mapped ELF file as raw bytes, and
 * elfutils' libdwfl walks the frames.  The host never sees the guest's
 * files, so each set of tables becomes a minimal ELF image in memory.
 *
 * Everything here came from the guest: memory reads are served only from
 * the stack copy, table sizes are bounded, and every walk ends (depth cap,
 * the stack pointer must grow from frame to frame).  One unwinder is not
 * shared between threads without a lock.
 */
#ifndef _PVPROF_TOOL_UNWIND_H
#define _PVPROF_TOOL_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* User registers, in the order of the ABI (abi/pvprof.h, PVPROF_UREG_*). */
enum {
	UNWIND_REG_IP,
	UNWIND_REG_SP,
	UNWIND_REG_BP,
	UNWIND_REG_BX,
	UNWIND_REG_R12,
	UNWIND_REG_R13,
	UNWIND_REG_R14,
	UNWIND_REG_R15,
	UNWIND_NR_REGS
};

/* The largest table the unwinder accepts, per section. */
#define UNWIND_MAX_TABLE_LEN	(64u << 20)

/**
 * struct unwind_tables - one ELF file's call frame information
 * @key: identifies the tables (e.g. their build-id owner), not NULL: the
 *	unwinder caches the ELF image it builds from them per key (a copy of
 *	the bytes, kept until unwinder_forget_tables() or unwinder_free()), so
 *	a key must name the same bytes until it is forgotten
 * @eh_frame_hdr: the .eh_frame_hdr bytes, NULL when the file has none
 * @eh_frame_hdr_len: their length
 * @eh_frame_hdr_vaddr: the section's ELF virtual address
 * @eh_frame: the .eh_frame bytes, NULL when the file has none
 * @eh_frame_len: their length
 * @eh_frame_vaddr: the section's ELF virtual address
 * @debug_frame: the .debug_frame bytes, NULL when not sent
 * @debug_frame_len: their length
 */
struct unwind_tables {
	const void *key;
	const uint8_t *eh_frame_hdr;
	size_t eh_frame_hdr_len;
	uint64_t eh_frame_hdr_vaddr;
	const uint8_t *eh_frame;
	size_t eh_frame_len;
	uint64_t eh_frame_vaddr;
	const uint8_t *debug_frame;
	size_t debug_frame_len;
};

/**
 * struct unwind_mapping - an executable mapping of the process
 * @start: first guest user address of the mapping
 * @end: the address after its last byte
 * @vaddr: the ELF virtual address that @start maps (addr - start + vaddr
 *	is the ELF address of addr)
 * @tables: the mapped file's tables, NULL when they are unknown
 * @name: the file's name, for libdwfl's module name (may be NULL)
 */
struct unwind_mapping {
	uint64_t start, end;
	uint64_t vaddr;
	const struct unwind_tables *tables;
	const char *name;
};

/*
 * The caller's view of one process image: the mapping that holds @addr, or
 * NULL.  The mapping must stay valid until the next unwinder_forget() of the
 * image.
 */
typedef const struct unwind_mapping *(*unwind_find_fn)(void *ctx, uint64_t addr);

/**
 * struct unwind_sample - what the guest captured
 * @regs: the user registers at the sampled point, UNWIND_REG_*
 * @stack: the bytes at regs[UNWIND_REG_SP] .. + @stack_len
 * @stack_len: their number
 */
struct unwind_sample {
	uint64_t regs[UNWIND_NR_REGS];
	const uint8_t *stack;
	size_t stack_len;
};

/* Why a walk ended. */
enum unwind_end {
	UNWIND_END_OUTERMOST,	/* CFI says no caller (_start, undefined RA) */
	UNWIND_END_DEPTH,	/* the frames array is full */
	UNWIND_END_NO_TABLES,	/* pc in a mapping without tables, or in none */
	UNWIND_END_MEMORY,	/* needed a read outside the stack copy */
	UNWIND_END_ERROR,	/* bad CFI, no CFI for pc, a loop, no memory */
};

struct unwinder;

/**
 * unwinder_new() - create an unwinder with empty caches
 *
 * Return: the unwinder, or NULL when out of memory.
 */
struct unwinder *unwinder_new(void);

/**
 * unwinder_free() - free an unwinder and everything it cached
 * @u: the unwinder, or NULL
 */
void unwinder_free(struct unwinder *u);

/**
 * unwind_sample() - walk one sample's user stack
 * @u: the unwinder
 * @image: identifies the process image (e.g. the owner of its pid and exec
 *	generation): the libdwfl session and its modules are kept per image
 *	and reused by its later samples
 * @find: finds the mapping that holds an address
 * @ctx: passed to @find
 * @s: the registers and the stack copy
 * @frames: receives regs[IP], then the return addresses as found on the
 *	stack (not minus 1), innermost first
 * @max: room in @frames
 * @end: receives why the walk ended
 *
 * Return: the number of frames written: at least 1 when regs[IP] is not 0
 * and @max is positive, 0 otherwise (then *@end is UNWIND_END_ERROR).
 */
int unwind_sample(struct unwinder *u, const void *image, unwind_find_fn find,
		  void *ctx, const struct unwind_sample *s, uint64_t *frames,
		  int max, enum unwind_end *end);

/**
 * unwinder_forget() - drop what is cached for a process image
 * @u: the unwinder
 * @image: the image, as given to unwind_sample(); unknown ones are ignored
 *
 * Call it when the image's mappings change or the process ends.
 */
void unwinder_forget(struct unwinder *u, const void *image);

/**
 * unwinder_forget_tables() - drop the ELF image cached for a tables key
 * @u: the unwinder
 * @key: the key, as in struct unwind_tables; unknown ones are ignored
 *
 * Images that still use the tables keep them until they are forgotten; the
 * next sample that names @key builds them anew.
 */
void unwinder_forget_tables(struct unwinder *u, const void *key);

/**
 * unwind_end_name() - a short name for an end reason, for messages
 * @end: the reason
 *
 * Return: a static string ("outermost", "depth", ...).
 */
const char *unwind_end_name(enum unwind_end end);

#endif /* _PVPROF_TOOL_UNWIND_H */
