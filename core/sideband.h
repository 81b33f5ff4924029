/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof sideband: the hypercall's range check, the framing check the host
 * applies, and the payload rules (spec pvprof-sideband-payloads) that the
 * guest driver and the host tool apply.  The host kernel checks framing only.
 */
#ifndef _PVPROF_CORE_SIDEBAND_H
#define _PVPROF_CORE_SIDEBAND_H

#include "pvprof_core.h"

/**
 * enum pvprof_sb_error - why a sideband message was refused
 * @PVPROF_SB_OK: the message is valid
 * @PVPROF_SB_SHORT: fewer bytes than the header
 * @PVPROF_SB_LONG: more than PVPROF_SIDEBAND_MAX_SIZE bytes
 * @PVPROF_SB_BAD_TYPE: type not a known PVPROF_SB_*
 * @PVPROF_SB_BAD_VERSION: version != PVPROF_SIDEBAND_VERSION
 * @PVPROF_SB_BAD_SIZE: size field != bytes supplied
 * @PVPROF_SB_BAD_LENGTH: size does not fit the type's payload
 * @PVPROF_SB_BAD_RESERVED: a reserved field or unknown flag is set
 * @PVPROF_SB_BAD_STRING: a string field breaks its padding or length rule
 * @PVPROF_SB_BAD_BUILD_ID: build-id size above the maximum, or dirty tail
 * @PVPROF_SB_BAD_RANGE: an address, range, size or section number outside
 *	its allowed space
 * @PVPROF_SB_BAD_SYMBOLS: a symbol chunk does not decode to exactly nr entries
 * @PVPROF_SB_ERR_NR: number of errors
 */
enum pvprof_sb_error {
	PVPROF_SB_OK,
	PVPROF_SB_SHORT,
	PVPROF_SB_LONG,
	PVPROF_SB_BAD_TYPE,
	PVPROF_SB_BAD_VERSION,
	PVPROF_SB_BAD_SIZE,
	PVPROF_SB_BAD_LENGTH,
	PVPROF_SB_BAD_RESERVED,
	PVPROF_SB_BAD_STRING,
	PVPROF_SB_BAD_BUILD_ID,
	PVPROF_SB_BAD_RANGE,
	PVPROF_SB_BAD_SYMBOLS,
	PVPROF_SB_ERR_NR,
};

/**
 * struct pvprof_sb_sym_iter - decoder of a KSYMS or ELF_SYMS entry list
 * @p: next unread byte
 * @end: end of the entry list
 * @left: entries still to decode
 * @with_size: entries carry a size (ELF_SYMS)
 * @addr: address of the entry last decoded (the base before the first)
 * @size: its size (ELF_SYMS; 0 for KSYMS)
 * @name_len: length of @name
 * @name: its name, NUL-terminated
 */
struct pvprof_sb_sym_iter {
	const __u8 *p;
	const __u8 *end;
	__u32 left;
	bool with_size;
	__u64 addr;
	__u64 size;
	__u32 name_len;
	char name[PVPROF_SB_NAME_MAX + 1];
};

/**
 * struct pvprof_sb_sym_writer - encoder of a KSYMS or ELF_SYMS entry list
 * @buf: the message being built; its fixed part is the caller's
 * @len: bytes used in @buf (the fixed part, then the entries)
 * @cap: bytes available in @buf, at most PVPROF_SIDEBAND_MAX_SIZE
 * @nr: entries written
 * @with_size: entries carry a size (ELF_SYMS)
 * @addr: address of the last entry (the chunk's first before any)
 * @name_len: length of @name
 * @name: the last entry's name
 */
struct pvprof_sb_sym_writer {
	__u8 *buf;
	__u32 len;
	__u32 cap;
	__u16 nr;
	bool with_size;
	__u64 addr;
	__u32 name_len;
	char name[PVPROF_SB_NAME_MAX + 1];
};

__u64 pvprof_budget_refill(__u64 tokens, __u64 elapsed_ns, __u32 rate);
int pvprof_sideband_range_check(__u64 gpa, __u64 len);
enum pvprof_sb_error pvprof_sideband_check(const void *msg, __u64 len);
enum pvprof_sb_error pvprof_sideband_payload_check(const void *msg, __u64 len);
const char *pvprof_sb_error_name(enum pvprof_sb_error err);

void pvprof_sb_sym_iter_init(struct pvprof_sb_sym_iter *it, const void *msg,
			     __u64 len);
int pvprof_sb_sym_next(struct pvprof_sb_sym_iter *it);

__u32 pvprof_sb_put_uleb128(__u8 *p, __u64 v);
void pvprof_sb_sym_writer_init(struct pvprof_sb_sym_writer *w, void *buf,
			       __u32 fixed, __u32 cap, bool with_size,
			       __u64 first);
int pvprof_sb_sym_put(struct pvprof_sb_sym_writer *w, __u64 addr, __u64 size,
		      const char *name, __u32 name_len);

#endif /* _PVPROF_CORE_SIDEBAND_H */
