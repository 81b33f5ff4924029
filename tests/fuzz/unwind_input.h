/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What fuzz_unwind and gen_corpus share: the fixed table sets the unwinder
 * is fuzzed against, and the layout of an input.
 *
 * The table sets are real files' unwind sections, sent through the guest
 * agent's encoder (guest-agent/unwind.c) into the host tool's store
 * (unwind_tables.c) and taken back out as kvm-pvprof report does, so the
 * unwinder sees exactly what it would see in a recording.
 *
 * An input (little endian; the fields are fixed-size so that libFuzzer's
 * byte mutations keep the structure):
 *
 *	0	u8	flags (UI_F_*)
 *	1	u8	room for frames (0..255): the frames array has exactly this
 *	2	u8	mappings (at most UI_MAPS_MAX are used)
 *	3	u8	reserved
 *	4	u16	stack bytes (at most PVPROF_USTACK_MAX, and what is there)
 *	6	u16	reserved
 *	8	u64[8]	registers, in struct pvprof_ustack's order
 *	72	mappings, UI_MAP_SIZE bytes each:
 *		u8 table set (>= UI_NR_SETS: a mapping without tables),
 *		u8[7] reserved, u64 start, u64 end, u64 ELF vaddr of start
 *	...	the stack bytes
 *	...	with UI_F_MUTATE, table edits, UI_OP_SIZE bytes each (see
 *		fuzz_unwind.c); a trailing partial one is ignored
 */
#ifndef _PVPROF_FUZZ_UNWIND_INPUT_H
#define _PVPROF_FUZZ_UNWIND_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host-kvm/tool/unwind.h"
#include "host-kvm/tool/unwind_tables.h"

/* The table sets; an input's mapping names one by index. */
enum {
	UI_SET_STATIC,		/* the fixture, -static: .eh_frame without a hdr */
	UI_SET_DYN,		/* the fixture, PIE: .eh_frame_hdr and .eh_frame */
	UI_SET_DEBUG,		/* the fixture with .debug_frame for its own code */
	UI_SET_LIBC,		/* the libc the dynamic fixture and the fuzzer map */
	UI_SET_LDSO,		/* the dynamic loader */
	UI_SET_SELF,		/* the program itself (fuzz_unwind: large, C++ CFI) */
	UI_NR_SETS
};

#define UI_F_MUTATE		(1u << 0)	/* table edits follow the stack */
#define UI_F_LOOSE_FIND		(1u << 1)	/* find answers a mapping that may not hold addr */

#define UI_HDR_SIZE		72
#define UI_MAP_SIZE		32
#define UI_MAPS_MAX		16
#define UI_OP_SIZE		12
#define UI_OPS_MAX		32

/* A table edit: u8 kind, u8 set, u8 section, u8 arg, u32 a, u32 b. */
enum { UI_SEC_HDR, UI_SEC_EH, UI_SEC_DEBUG, UI_SEC_NR };

enum {
	UI_OP_TRUNCATE,		/* section length a % (length + 1) */
	UI_OP_POKE,		/* the 4 bytes of b at a */
	UI_OP_GARBAGE,		/* arg + 1 random bytes from seed b at a */
	UI_OP_DROP,		/* the section is not sent */
	UI_OP_VADDR,		/* its vaddr moves by (int32)a */
	UI_OP_FDE_CIE,		/* the FDE at ELF address a (else FDE a % n): CIE pointer b */
	UI_OP_FDE_PC,		/* that FDE's pc_begin field moves by (int32)b */
	UI_OP_FDE_PROG,		/* that FDE's instructions: program arg, parameter b */
	UI_OP_CIE_PROG,		/* its CIE's initial instructions: program arg */
	UI_OP_LENGTH,		/* that FDE's length field: b */
	UI_OP_HDR_SWAP,		/* .eh_frame_hdr entries a and b swapped: out of order */
	UI_OP_HDR_FIELD,	/* .eh_frame_hdr fde_count (arg odd) or eh_frame_ptr: b */
	UI_OP_NR
};

/* The CFI programs of UI_OP_FDE_PROG and UI_OP_CIE_PROG (fuzz_unwind.c). */
#define UI_NR_PROGRAMS		19

struct ui_map {
	uint8_t set;
	uint64_t start, end, vaddr;
};

struct ui_input {
	uint8_t flags;
	int max;
	uint64_t regs[UNWIND_NR_REGS];
	int nr_maps;
	struct ui_map maps[UI_MAPS_MAX];
	const uint8_t *stack;
	size_t stack_len;
	const uint8_t *ops;		/* whole edits only */
	size_t nr_ops;
};

/* The sets and the store that holds their bytes. */
struct ui_sets {
	struct pvprof_unwind_tables *store;
	struct unwind_tables t[UI_NR_SETS];
	bool have[UI_NR_SETS];
	char path[UI_NR_SETS][4096];
};

extern const char *const ui_set_names[UI_NR_SETS];

/*
 * Fills @s from the fixtures in @fixture_dir (unwind-fixture-{static,dyn,
 * debug}), the libc and loader this process maps, and /proc/self/exe.
 * Returns the number of sets loaded; a set whose file is missing stays
 * empty (its mappings then have no tables).
 */
int ui_sets_load(struct ui_sets *s, const char *fixture_dir);
void ui_sets_free(struct ui_sets *s);

/* The set a mapped file's path is, by name as gen_corpus and the fuzzer see it. */
int ui_set_of_path(const struct ui_sets *s, const char *path);

uint64_t ui_get64(const uint8_t *p);
uint32_t ui_get32(const uint8_t *p);
uint16_t ui_get16(const uint8_t *p);
void ui_put64(uint8_t *p, uint64_t v);
void ui_put32(uint8_t *p, uint32_t v);
void ui_put16(uint8_t *p, uint16_t v);

/* False when @size cannot hold the fixed part. */
bool ui_parse(const uint8_t *data, size_t size, struct ui_input *in);

/*
 * Writes @in (with @in->nr_ops edits at @in->ops) to @buf; returns the
 * length, or 0 when @cap is too small.
 */
size_t ui_encode(const struct ui_input *in, uint8_t *buf, size_t cap);

/* Writes one table edit at @op (UI_OP_SIZE bytes). */
void ui_put_op(uint8_t *op, uint8_t kind, uint8_t set, uint8_t section, uint8_t arg,
	       uint32_t a, uint32_t b);

#endif /* _PVPROF_FUZZ_UNWIND_INPUT_H */
