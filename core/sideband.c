// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof sideband: framing (spec pvprof-sideband-framing) and payloads
 * (spec pvprof-sideband-payloads).
 *
 * Every check reads only inside [msg, msg + len) and copies each fixed
 * part before looking at it, so the same code is safe on a message that
 * another party may still be changing (it then answers for one consistent
 * copy of each field, never reads out of bounds).
 */
#include "sideband.h"

static const char * const sb_error_names[PVPROF_SB_ERR_NR] = {
	[PVPROF_SB_OK]		= "ok",
	[PVPROF_SB_SHORT]	= "short",
	[PVPROF_SB_LONG]	= "too_long",
	[PVPROF_SB_BAD_TYPE]	= "bad_type",
	[PVPROF_SB_BAD_VERSION]	= "bad_version",
	[PVPROF_SB_BAD_SIZE]	= "bad_size",
	[PVPROF_SB_BAD_LENGTH]	= "bad_length",
	[PVPROF_SB_BAD_RESERVED] = "bad_reserved",
	[PVPROF_SB_BAD_STRING]	= "bad_string",
	[PVPROF_SB_BAD_BUILD_ID] = "bad_build_id",
	[PVPROF_SB_BAD_RANGE]	= "bad_range",
	[PVPROF_SB_BAD_SYMBOLS]	= "bad_symbols",
};

/**
 * pvprof_budget_refill() - a token bucket of one second after some time
 * @tokens: what is left of the budget, at most @rate
 * @elapsed_ns: nanoseconds since the budget was last refilled
 * @rate: what the budget gains a second, and holds at most
 *
 * The host's budgets for what a guest drives (sideband bytes per VM,
 * registrations per vCPU) are buckets of one second.
 *
 * Return: the refilled budget.
 */
__u64 pvprof_budget_refill(__u64 tokens, __u64 elapsed_ns, __u32 rate)
{
	/* Below a second the product stays under 2^62. */
	if (elapsed_ns >= PVPROF_NSEC_PER_SEC)
		return rate;
	tokens += elapsed_ns * rate / PVPROF_NSEC_PER_SEC;
	return tokens < rate ? tokens : rate;
}

/**
 * pvprof_sideband_range_check() - check the SIDEBAND hypercall's arguments
 * @gpa: guest physical address of the message
 * @len: its length in bytes
 *
 * Return: 0 when 16 <= @len <= PVPROF_SIDEBAND_MAX_SIZE and the range lies
 * inside one 4 KiB page; -PVPROF_E2BIG when @len is too large;
 * -PVPROF_EINVAL otherwise.
 */
int pvprof_sideband_range_check(__u64 gpa, __u64 len)
{
	if (len > PVPROF_SIDEBAND_MAX_SIZE)
		return -PVPROF_E2BIG;
	if (len < sizeof(struct pvprof_sideband_hdr))
		return -PVPROF_EINVAL;
	if ((gpa & (PVPROF_PAGE_SIZE - 1)) + len > PVPROF_PAGE_SIZE)
		return -PVPROF_EINVAL;
	return 0;
}

/**
 * pvprof_sideband_check() - check a copied sideband message's framing
 * @msg: host-private copy of the message
 * @len: bytes in @msg
 *
 * Reads only the header inside [@msg, @msg + @len).  This is all the host
 * kernel checks: it never interprets payloads.
 *
 * Return: PVPROF_SB_OK or the first framing rule broken.
 */
enum pvprof_sb_error pvprof_sideband_check(const void *msg, __u64 len)
{
	struct pvprof_sideband_hdr sb;

	if (len < sizeof(sb))
		return PVPROF_SB_SHORT;
	if (len > PVPROF_SIDEBAND_MAX_SIZE)
		return PVPROF_SB_LONG;
	pvprof_memcpy(&sb, msg, sizeof(sb));
	if (sb.type < PVPROF_SB_KERNEL || sb.type > PVPROF_SB_TYPE_MAX)
		return PVPROF_SB_BAD_TYPE;
	if (sb.version != PVPROF_SIDEBAND_VERSION)
		return PVPROF_SB_BAD_VERSION;
	if (sb.size != len)
		return PVPROF_SB_BAD_SIZE;
	return PVPROF_SB_OK;
}

/* A NUL-padded field: after the first NUL every byte is zero. */
static bool padded_ok(const char *s, __u32 size, bool need_nonempty)
{
	__u32 i = 0;

	while (i < size && s[i])
		i++;
	if (need_nonempty && i == 0)
		return false;
	for (; i < size; i++)
		if (s[i])
			return false;
	return true;
}

static bool zero_ok(const void *p, __u32 size)
{
	const __u8 *b = p;
	__u32 i;

	for (i = 0; i < size; i++)
		if (b[i])
			return false;
	return true;
}

static bool build_id_ok(const struct pvprof_sb_build_id *b)
{
	return b->size <= PVPROF_SB_BUILD_ID_MAX &&
	       zero_ok(b->reserved0, sizeof(b->reserved0)) &&
	       zero_ok(b->bytes + b->size, PVPROF_SB_BUILD_ID_MAX - b->size);
}

static bool kernel_addr(__u64 a)
{
	return a >= PVPROF_KERNEL_HALF_START;
}

/* Decode an unsigned LEB128 of at most 10 bytes whose value fits 64 bits. */
static bool get_uleb128(const __u8 **pp, const __u8 *end, __u64 *v)
{
	const __u8 *p = *pp;
	__u64 r = 0;
	__u32 shift = 0, n;

	for (n = 0; n < PVPROF_SB_ULEB128_MAX; n++) {
		__u8 b;

		if (p == end)
			return false;
		b = *p++;
		/* The tenth byte may only carry bit 63. */
		if (shift == 63 && (b & 0x7e))
			return false;
		r |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = r;
			return true;
		}
		shift += 7;
	}
	return false;
}

/**
 * pvprof_sb_put_uleb128() - encode an unsigned LEB128
 * @p: at least PVPROF_SB_ULEB128_MAX bytes
 * @v: the value
 *
 * Return: bytes written.
 */
__u32 pvprof_sb_put_uleb128(__u8 *p, __u64 v)
{
	__u32 n = 0;

	do {
		__u8 b = v & 0x7f;

		v >>= 7;
		p[n++] = b | (v ? 0x80 : 0);
	} while (v);
	return n;
}

/**
 * pvprof_sb_sym_iter_init() - start decoding a symbol chunk
 * @it: the iterator
 * @msg: a KSYMS or ELF_SYMS message whose framing was checked
 * @len: its length, at least the type's fixed part
 *
 * A message of another type or shorter than its fixed part yields an
 * iterator that fails at once.
 */
void pvprof_sb_sym_iter_init(struct pvprof_sb_sym_iter *it, const void *msg,
			     __u64 len)
{
	struct pvprof_sideband_hdr sb;
	const __u8 *m = msg;
	__u32 fixed;
	__u16 nr;

	pvprof_memset(it, 0, sizeof(*it));
	it->p = m;
	it->end = m;
	it->left = 1;	/* fails unless set up below */
	if (len < sizeof(sb))
		return;
	pvprof_memcpy(&sb, m, sizeof(sb));
	if (sb.type == PVPROF_SB_KSYMS) {
		fixed = sizeof(struct pvprof_sb_ksyms);
		if (len < fixed)
			return;
		pvprof_memcpy(&it->addr, m + __builtin_offsetof(struct pvprof_sb_ksyms, first), 8);
		pvprof_memcpy(&nr, m + __builtin_offsetof(struct pvprof_sb_ksyms, nr), 2);
	} else if (sb.type == PVPROF_SB_ELF_SYMS) {
		fixed = sizeof(struct pvprof_sb_elf_syms);
		if (len < fixed)
			return;
		pvprof_memcpy(&it->addr, m + __builtin_offsetof(struct pvprof_sb_elf_syms, first), 8);
		pvprof_memcpy(&nr, m + __builtin_offsetof(struct pvprof_sb_elf_syms, nr), 2);
		it->with_size = true;
	} else {
		return;
	}
	it->p = m + fixed;
	it->end = m + len;
	it->left = nr;
}

/**
 * pvprof_sb_sym_next() - decode the next entry of a symbol chunk
 * @it: the iterator
 *
 * Fills @it->addr, @it->size, @it->name and @it->name_len.
 *
 * Return: 1 for an entry, 0 at the end of a well-formed list (exactly nr
 * entries filling the message), -1 when the list is malformed.
 */
int pvprof_sb_sym_next(struct pvprof_sb_sym_iter *it)
{
	__u64 delta, size = 0;
	__u8 prefix, suffix;
	__u32 i;

	if (!it->left)
		return it->p == it->end ? 0 : -1;
	if (!get_uleb128(&it->p, it->end, &delta) ||
	    delta > ~0ULL - it->addr)
		return -1;
	if (it->with_size && !get_uleb128(&it->p, it->end, &size))
		return -1;
	if (it->end - it->p < 2)
		return -1;
	prefix = it->p[0];
	suffix = it->p[1];
	it->p += 2;
	if (prefix > it->name_len || !suffix ||
	    (__u32)prefix + suffix > PVPROF_SB_NAME_MAX ||
	    it->end - it->p < suffix)
		return -1;
	for (i = 0; i < suffix; i++) {
		char c = (char)it->p[i];

		if (!c)
			return -1;
		it->name[prefix + i] = c;
	}
	it->p += suffix;
	it->name_len = prefix + suffix;
	it->name[it->name_len] = '\0';
	it->addr += delta;
	it->size = size;
	it->left--;
	return 1;
}

/**
 * pvprof_sb_sym_writer_init() - start encoding a symbol chunk
 * @w: the writer
 * @buf: the message; the caller fills its fixed part, nr and hdr.size
 * @fixed: size of the fixed part (sizeof(struct pvprof_sb_ksyms) or
 *	sizeof(struct pvprof_sb_elf_syms))
 * @cap: bytes available in @buf
 * @with_size: the entries carry sizes (ELF_SYMS)
 * @first: the chunk's first field; no entry may lie below it
 */
void pvprof_sb_sym_writer_init(struct pvprof_sb_sym_writer *w, void *buf,
			       __u32 fixed, __u32 cap, bool with_size,
			       __u64 first)
{
	pvprof_memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->len = fixed;
	w->cap = cap < PVPROF_SIDEBAND_MAX_SIZE ? cap : PVPROF_SIDEBAND_MAX_SIZE;
	w->with_size = with_size;
	w->addr = first;
}

/**
 * pvprof_sb_sym_put() - append one entry to a symbol chunk
 * @w: the writer
 * @addr: the symbol's address, not below the previous entry's
 * @size: its size (ignored without @w->with_size)
 * @name: its name, @name_len bytes, no NUL among them
 * @name_len: 1..PVPROF_SB_NAME_MAX
 *
 * Return: 0 when appended; -1 when the entry does not fit (finish this
 * chunk and start another); -2 when the entry can never be encoded.
 */
int pvprof_sb_sym_put(struct pvprof_sb_sym_writer *w, __u64 addr, __u64 size,
		      const char *name, __u32 name_len)
{
	__u8 tmp[2 * PVPROF_SB_ULEB128_MAX + 2];
	__u32 n, prefix = 0, suffix, i;

	if (addr < w->addr || !name_len || name_len > PVPROF_SB_NAME_MAX ||
	    w->nr == 0xffff)
		return -2;
	for (i = 0; i < name_len; i++)
		if (!name[i])
			return -2;
	if (w->nr)
		while (prefix < name_len && prefix < w->name_len &&
		       name[prefix] == w->name[prefix])
			prefix++;
	/* At least one suffix byte: a name equal to the previous one repeats its last. */
	if (prefix == name_len)
		prefix--;
	suffix = name_len - prefix;
	n = pvprof_sb_put_uleb128(tmp, addr - w->addr);
	if (w->with_size)
		n += pvprof_sb_put_uleb128(tmp + n, size);
	tmp[n++] = (__u8)prefix;
	tmp[n++] = (__u8)suffix;
	if (w->len + n + suffix > w->cap)
		return -1;
	pvprof_memcpy(w->buf + w->len, tmp, n);
	pvprof_memcpy(w->buf + w->len + n, name + prefix, suffix);
	w->len += n + suffix;
	pvprof_memcpy(w->name, name, name_len);
	w->name_len = name_len;
	w->addr = addr;
	w->nr++;
	return 0;
}

static enum pvprof_sb_error check_symbols(const void *msg, __u64 len,
					  bool kernel)
{
	struct pvprof_sb_sym_iter it;
	int r;

	pvprof_sb_sym_iter_init(&it, msg, len);
	if (!it.left)
		return PVPROF_SB_BAD_SYMBOLS;	/* nr == 0 */
	while ((r = pvprof_sb_sym_next(&it)) > 0)
		if (kernel && !kernel_addr(it.addr))
			return PVPROF_SB_BAD_RANGE;
	return r ? PVPROF_SB_BAD_SYMBOLS : PVPROF_SB_OK;
}

static enum pvprof_sb_error check_kernel(const void *msg, __u64 len)
{
	struct pvprof_sb_kernel k;

	if (len != sizeof(k))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&k, msg, sizeof(k));
	if (k.reserved0)
		return PVPROF_SB_BAD_RESERVED;
	if (!build_id_ok(&k.build_id))
		return PVPROF_SB_BAD_BUILD_ID;
	if (!padded_ok(k.release, sizeof(k.release), false))
		return PVPROF_SB_BAD_STRING;
	if (!kernel_addr(k.stext) || k.etext <= k.stext)
		return PVPROF_SB_BAD_RANGE;
	return PVPROF_SB_OK;
}

static enum pvprof_sb_error check_ksyms(const void *msg, __u64 len)
{
	struct pvprof_sb_ksyms k;

	if (len < sizeof(k))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&k, msg, sizeof(k));
	if (k.reserved0 || k.reserved1)
		return PVPROF_SB_BAD_RESERVED;
	if (!padded_ok(k.module, sizeof(k.module), false))
		return PVPROF_SB_BAD_STRING;
	return check_symbols(msg, len, true);
}

static enum pvprof_sb_error check_module(const void *msg, __u64 len)
{
	struct pvprof_sb_module m;

	if (len != sizeof(m))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&m, msg, sizeof(m));
	if (!build_id_ok(&m.build_id))
		return PVPROF_SB_BAD_BUILD_ID;
	if (!padded_ok(m.name, sizeof(m.name), true))
		return PVPROF_SB_BAD_STRING;
	if (!kernel_addr(m.base) || !m.size || m.size > ~0ULL - m.base)
		return PVPROF_SB_BAD_RANGE;
	return PVPROF_SB_OK;
}

static enum pvprof_sb_error check_process(const void *msg, __u64 len)
{
	struct pvprof_sb_process p;

	if (len != sizeof(p))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&p, msg, sizeof(p));
	if (p.flags & ~PVPROF_SB_PROC_F_ALL)
		return PVPROF_SB_BAD_RESERVED;
	if (!p.pid || !(p.flags & PVPROF_SB_PROC_F_FORK) != !p.parent_pid)
		return PVPROF_SB_BAD_RANGE;
	if (!padded_ok(p.comm, sizeof(p.comm), false))
		return PVPROF_SB_BAD_STRING;
	return PVPROF_SB_OK;
}

static enum pvprof_sb_error check_mmap(const void *msg, __u64 len)
{
	struct pvprof_sb_mmap m;
	const char *path = (const char *)msg + sizeof(m);
	__u32 i;

	if (len < sizeof(m))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&m, msg, sizeof(m));
	if (m.path_len > PVPROF_SB_NAME_MAX || len != sizeof(m) + m.path_len)
		return PVPROF_SB_BAD_LENGTH;
	if (m.reserved0 || m.reserved1)
		return PVPROF_SB_BAD_RESERVED;
	if (!build_id_ok(&m.build_id))
		return PVPROF_SB_BAD_BUILD_ID;
	for (i = 0; i < m.path_len; i++)
		if (!path[i])
			return PVPROF_SB_BAD_STRING;
	if (!m.pid || (m.start & (PVPROF_PAGE_SIZE - 1)) || !m.len ||
	    m.start >= PVPROF_USER_HALF_END ||
	    m.len > PVPROF_USER_HALF_END - m.start)
		return PVPROF_SB_BAD_RANGE;
	return PVPROF_SB_OK;
}

static enum pvprof_sb_error check_elf_syms(const void *msg, __u64 len)
{
	struct pvprof_sb_elf_syms e;

	if (len < sizeof(e))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&e, msg, sizeof(e));
	if (e.reserved0 || e.reserved1)
		return PVPROF_SB_BAD_RESERVED;
	if (!e.build_id.size || !build_id_ok(&e.build_id))
		return PVPROF_SB_BAD_BUILD_ID;
	return check_symbols(msg, len, false);
}

static enum pvprof_sb_error check_exit(const void *msg, __u64 len)
{
	struct pvprof_sb_exit x;

	if (len != sizeof(x))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&x, msg, sizeof(x));
	return x.pid ? PVPROF_SB_OK : PVPROF_SB_BAD_RANGE;
}

static enum pvprof_sb_error check_agent(__u64 len)
{
	if (len != sizeof(struct pvprof_sb_agent))
		return PVPROF_SB_BAD_LENGTH;
	return PVPROF_SB_OK;
}

static enum pvprof_sb_error check_unwind(const void *msg, __u64 len)
{
	struct pvprof_sb_unwind u;
	__u64 n;

	/* A part without data would let a reader "complete" nothing. */
	if (len <= sizeof(u))
		return PVPROF_SB_BAD_LENGTH;
	pvprof_memcpy(&u, msg, sizeof(u));
	if (u.reserved0 || u.reserved1)
		return PVPROF_SB_BAD_RESERVED;
	if (!u.build_id.size || !build_id_ok(&u.build_id))
		return PVPROF_SB_BAD_BUILD_ID;
	n = len - sizeof(u);
	/* In 64 bits offset + n cannot wrap: both are below 2^32. */
	if (u.section < PVPROF_SB_UNWIND_EH_FRAME_HDR ||
	    u.section > PVPROF_SB_UNWIND_SECTION_MAX ||
	    !u.section_size || u.section_size > PVPROF_SB_UNWIND_MAX_SIZE ||
	    (__u64)u.offset + n > u.section_size ||
	    (u.section == PVPROF_SB_UNWIND_DEBUG_FRAME && u.vaddr))
		return PVPROF_SB_BAD_RANGE;
	return PVPROF_SB_OK;
}

/**
 * pvprof_sideband_payload_check() - check a message's framing and payload
 * @msg: private copy of the message
 * @len: bytes in @msg
 *
 * The guest driver applies this before its hypercall and the host tool
 * before it uses a message (spec pvprof-sideband-payloads).
 *
 * Return: PVPROF_SB_OK or the first rule broken.
 */
enum pvprof_sb_error pvprof_sideband_payload_check(const void *msg, __u64 len)
{
	enum pvprof_sb_error err = pvprof_sideband_check(msg, len);
	struct pvprof_sideband_hdr sb;

	if (err != PVPROF_SB_OK)
		return err;
	pvprof_memcpy(&sb, msg, sizeof(sb));
	switch (sb.type) {
	case PVPROF_SB_KERNEL:
		return check_kernel(msg, len);
	case PVPROF_SB_KSYMS:
		return check_ksyms(msg, len);
	case PVPROF_SB_MODULE:
		return check_module(msg, len);
	case PVPROF_SB_PROCESS:
		return check_process(msg, len);
	case PVPROF_SB_MMAP:
		return check_mmap(msg, len);
	case PVPROF_SB_ELF_SYMS:
		return check_elf_syms(msg, len);
	case PVPROF_SB_EXIT:
		return check_exit(msg, len);
	case PVPROF_SB_AGENT:
		return check_agent(len);
	case PVPROF_SB_UNWIND:
		return check_unwind(msg, len);
	}
	return PVPROF_SB_BAD_TYPE;
}

/**
 * pvprof_sb_error_name() - short name of a sideband error
 * @err: PVPROF_SB_*
 *
 * Return: a static string, "unknown" when out of range.
 */
const char *pvprof_sb_error_name(enum pvprof_sb_error err)
{
	if ((unsigned int)err >= PVPROF_SB_ERR_NR)
		return "unknown";
	return sb_error_names[err];
}
