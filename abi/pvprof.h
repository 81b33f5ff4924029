/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pvprof guest <-> host ABI, version 1.
 *
 * The guest registers one shared buffer per vCPU with the PVPROF hypercall.
 * The host writes overflow notices into it and injects an NMI; the guest
 * answers each notice with a callchain in the same buffer.  The
 * normative description is spec/pvprof.rst; this header is the single source
 * of truth for numbers and layouts and must change together with it.
 *
 * Every multi-byte field is little-endian.  No struct has implicit padding;
 * fields named reserved* must be written as zero and are checked by the
 * reader that owns the validation (the host for guest-written fields).
 *
 * No struct ends in a flexible array member: a variable-length part follows
 * its struct at offset sizeof(struct), a multiple of 8.  So every struct
 * can be embedded in another, and the headers are ISO C11 and ISO C++ (a
 * flexible array member is a GNU extension in C++, and in C inside another
 * struct).
 */
#ifndef _PVPROF_ABI_PVPROF_H
#define _PVPROF_ABI_PVPROF_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PVPROF_ABI_VERSION		1

/* ------------------------------------------------------------------ */
/* Transport (x86): vmcall/vmmcall, rax = nr, rbx = op, rcx/rdx/rsi = args */
/* ------------------------------------------------------------------ */

/*
 * Far from upstream KVM's KVM_HC_* numbers (1..12 in 6.1): ASCII "pv" in the
 * upper bytes.  Stock KVM answers it with -KVM_ENOSYS.
 */
#define PVPROF_HC_NR			0x70760001UL

/* Operations, passed in a0 (rbx). */
#define PVPROF_OP_PROBE			0	/* a1 = highest ABI version the guest speaks */
#define PVPROF_OP_REGISTER		1	/* a1 = gpa, a2 = size in bytes, a3 = flags (0) */
#define PVPROF_OP_UNREGISTER		2	/* a1..a3 = 0 */
#define PVPROF_OP_QUERY			3	/* a1 = gpa: is this vCPU registered at gpa? */
#define PVPROF_OP_SIDEBAND		4	/* a1 = gpa, a2 = length in bytes, a3 = 0 */
#define PVPROF_OP_MAX			PVPROF_OP_SIDEBAND

/*
 * PROBE returns a non-negative value:
 *   bits  0..15  ABI version the host will use (min of host and guest)
 *   bits 16..47  PVPROF_FEAT_* bits
 *   bits 48..63  zero
 * Feature bit 15 (result bit 31) is never assigned, so that a result cut to
 * 32 bits outside 64-bit mode is never mistaken for a negative error.
 */
#define PVPROF_PROBE_VERSION(r)		((__u32)((r) & 0xffff))
#define PVPROF_PROBE_FEATURES(r)	((__u32)(((r) >> 16) & 0xffffffff))
#define PVPROF_PROBE_MAKE(ver, feat)	((__u64)(ver) | ((__u64)(feat) << 16))

#define PVPROF_FEAT_CPU_CLOCK		(1U << 0)	/* timer-based sampling */
#define PVPROF_FEAT_HW_EVENTS		(1U << 1)	/* host PMU events */
#define PVPROF_FEAT_SIDEBAND		(1U << 2)	/* PVPROF_OP_SIDEBAND */
#define PVPROF_FEAT_NMI_DELIVERED	(1U << 3)	/* header nmi_delivered */
#define PVPROF_FEAT_USER_STACK		(1U << 4)	/* header ustack_size, callchains with a pvprof_ustack */
#define PVPROF_FEAT_ALL			(PVPROF_FEAT_CPU_CLOCK | \
					 PVPROF_FEAT_HW_EVENTS | \
					 PVPROF_FEAT_SIDEBAND | \
					 PVPROF_FEAT_NMI_DELIVERED | \
					 PVPROF_FEAT_USER_STACK)

/* QUERY returns one of these (or a negative error). */
#define PVPROF_QUERY_UNREGISTERED	0
#define PVPROF_QUERY_REGISTERED		1

/*
 * Return codes are negated in rax.  The first six are KVM's own (the only
 * -KVM_E* values guests know); the rest are pvprof's, far above them.
 */
#define PVPROF_EPERM			1	/* KVM_EPERM: CPL != 0 */
#define PVPROF_E2BIG			7	/* KVM_E2BIG: size above a limit */
#define PVPROF_EFAULT			14	/* KVM_EFAULT: gpa not guest RAM */
#define PVPROF_EINVAL			22	/* KVM_EINVAL: bad argument */
#define PVPROF_EOPNOTSUPP		95	/* KVM_EOPNOTSUPP: unknown op */
#define PVPROF_ENOSYS			1000	/* KVM_ENOSYS: no pvprof here */
#define PVPROF_EALREADY			4001	/* this vCPU is already registered */
#define PVPROF_ERATELIMIT		4002	/* sideband over its budget, retry later */
#define PVPROF_ENOTEXPOSED		4003	/* use of pvprof refused for this VM */
#define PVPROF_EPROTECTED		4004	/* guest state protected (SEV-ES/SNP) */

/* ------------------------------------------------------------------ */
/* The per-vCPU shared buffer                                          */
/* ------------------------------------------------------------------ */

#define PVPROF_PAGE_SIZE		4096U
#define PVPROF_BUF_MIN_SIZE		(2U * PVPROF_PAGE_SIZE)
#define PVPROF_BUF_MAX_SIZE		(16U * PVPROF_PAGE_SIZE)

#define PVPROF_BUF_MAGIC		0x46505650U	/* "PVPF" */

/*
 * Layout of a buffer of size S (a power of two, MIN <= S <= MAX, aligned to
 * S's first page):
 *
 *   [0, 2048)            struct pvprof_buf_header
 *   [2048, 4096)         notice ring: PVPROF_NOTICE_SLOTS x pvprof_notice
 *   [4096, S)            callchain ring: PVPROF_CHAIN_SLOTS(S) x 1024 bytes
 *
 * Both sides derive the geometry from S; neither reads it back from the
 * shared header.
 */
#define PVPROF_HEADER_SIZE		2048U
#define PVPROF_NOTICE_OFFSET		2048U
#define PVPROF_NOTICE_SIZE		64U
#define PVPROF_NOTICE_SLOTS		32U
#define PVPROF_CHAIN_OFFSET		4096U
#define PVPROF_CHAIN_SLOT_SIZE		1024U
#define PVPROF_CHAIN_SLOTS(size)	(((size) - PVPROF_CHAIN_OFFSET) / \
					 PVPROF_CHAIN_SLOT_SIZE)
/*
 * Slots a callchain of size bytes occupies: consecutive, wrapping at the
 * ring's end.  Only a callchain with a pvprof_ustack is larger than one slot.
 */
#define PVPROF_CHAIN_SPAN(size)		(((size) + PVPROF_CHAIN_SLOT_SIZE - 1) / \
					 PVPROF_CHAIN_SLOT_SIZE)

/* Sampling state the host publishes in the header (active). */
#define PVPROF_STATE_ACTIVE		(1U << 0)

/* Events (notice.event, ctl enable.event). */
#define PVPROF_EVENT_CPU_CLOCK		0	/* host cpu-clock timer */
#define PVPROF_EVENT_HW_CYCLES		1	/* host PMU cycles */
#define PVPROF_EVENT_HW_INSTRUCTIONS	2	/* host PMU retired instructions */
#define PVPROF_EVENT_MAX		PVPROF_EVENT_HW_INSTRUCTIONS

/**
 * struct pvprof_buf_header - first 2048 bytes of a registered buffer
 *
 * Cache line 0 is written by the host once, at registration.  Cache line 1
 * is written only by the host, cache line 2 only by the guest, cache line 3
 * holds guest-maintained statistics the host reads but never trusts.
 * Indices are free-running 64-bit counters; a slot is index % slots.
 */
struct pvprof_buf_header {
	/* line 0: identity (host-written at registration) */
	__u32 magic;			/* PVPROF_BUF_MAGIC */
	__u16 version;			/* ABI version in use */
	__u16 header_size;		/* PVPROF_HEADER_SIZE */
	__u64 cookie;			/* host-chosen, nonzero, per registration */
	__u32 size;			/* buffer size in bytes, as registered */
	__u32 max_depth;		/* frames per callchain the host accepts */
	__u8  reserved0[40];

	/* line 1: host-written */
	__u32 state;			/* PVPROF_STATE_* */
	__u32 event;			/* PVPROF_EVENT_* */
	__u64 period;			/* ns for cpu-clock, events otherwise */
	__u64 notice_head;		/* notices written (release) */
	__u64 chain_tail;		/* callchain slots consumed (release) */
	__u64 nmi_head;			/* notice_head when the last pvprof NMI was injected */
	__u64 nmi_delivered;		/* NMI deliveries that are pvprof's */
	__u32 ustack_size;		/* user stack bytes asked per callchain, 0 = none */
	__u8  reserved1[12];

	/* line 2: guest-written */
	__u64 notice_tail;		/* notices consumed (release) */
	__u64 chain_head;		/* callchain slots posted (release) */
	__u8  reserved2[48];

	/* line 3: guest statistics (advisory, untrusted) */
	__u64 guest_nmis_claimed;
	__u64 guest_callchains;
	__u64 guest_stale;
	__u64 guest_errors;
	__u8  reserved3[32];

	__u8  reserved4[PVPROF_HEADER_SIZE - 256];
};

/* Notice flags. */
#define PVPROF_NOTICE_F_USER		(1U << 0)	/* CPL was 3 */
#define PVPROF_NOTICE_F_LOST_BEFORE	(1U << 1)	/* the host dropped samples since the last notice */

/**
 * struct pvprof_notice - host to guest: one sample of this vCPU
 */
struct pvprof_notice {
	__u64 seq;			/* per-registration, starts at 1, +1 per notice */
	__u64 host_time_ns;		/* host CLOCK_MONOTONIC at the sample */
	__u64 guest_tsc;		/* guest TSC at the sample */
	__u64 ip;			/* guest RIP at the sample */
	__u8  cpl;			/* guest CPL at the sample, 0..3 */
	__u8  event;			/* PVPROF_EVENT_* */
	__u16 flags;			/* PVPROF_NOTICE_F_* */
	__u32 reserved0;
	__u64 period;			/* event period this sample stands for */
	__u64 reserved1[2];
};

#define PVPROF_MAX_DEPTH		120	/* kernel + user frames per callchain */

/* Callchain flags. */
#define PVPROF_CHAIN_F_USER		(1U << 0)	/* interrupted context was user mode */
#define PVPROF_CHAIN_F_TRUNCATED	(1U << 1)	/* a stack ended early (depth, bad fp) */
#define PVPROF_CHAIN_F_SKEWED		(1U << 2)	/* interrupted IP != notice IP */
#define PVPROF_CHAIN_F_STALE		(1U << 3)	/* notice answered without a stack */
#define PVPROF_CHAIN_F_KTHREAD		(1U << 4)	/* kernel thread or idle: no user stack */
#define PVPROF_CHAIN_F_COMPAT		(1U << 5)	/* 32-bit user task */
#define PVPROF_CHAIN_F_USTACK		(1U << 6)	/* a pvprof_ustack follows the frames */
#define PVPROF_CHAIN_F_ALL		((1U << 7) - 1)

/**
 * struct pvprof_callchain - guest to host: the answer to one notice
 *
 * The callchain's fixed part.  nr = nr_kernel + nr_user __u64 frames follow it
 * (at offset 40): frames[0 .. nr_kernel) are kernel return addresses,
 * innermost first, then frames[nr_kernel .. nr) user ones.  When the
 * interrupted context was kernel mode, frames[0] is the interrupted IP; in
 * user mode the first user frame is.  size = sizeof(struct pvprof_callchain) +
 * 8 * nr, plus a pvprof_ustack part after the frames when
 * PVPROF_CHAIN_F_USTACK is set.
 */
struct pvprof_callchain {
	__u64 seq;			/* seq of the notice answered */
	__u64 time_ns;			/* guest monotonic time at capture */
	__u32 pid;			/* init-namespace tgid, 0 for idle */
	__u32 tid;			/* init-namespace pid of the thread */
	__u32 exec_gen;			/* guest exec generation of the task */
	__u32 flags;			/* PVPROF_CHAIN_F_* */
	__u16 size;			/* bytes used in the slot */
	__u16 nr_kernel;
	__u16 nr_user;
	__u16 reserved0;
};

/* User registers in a pvprof_ustack, in this order. */
#define PVPROF_UREG_IP			0
#define PVPROF_UREG_SP			1
#define PVPROF_UREG_BP			2
#define PVPROF_UREG_BX			3
#define PVPROF_UREG_R12			4
#define PVPROF_UREG_R13			5
#define PVPROF_UREG_R14			6
#define PVPROF_UREG_R15			7
#define PVPROF_UREG_NR			8

/* Upper bound of ustack_size (bytes; a multiple of 8). */
#define PVPROF_USTACK_MAX		32768U

/**
 * struct pvprof_ustack - the user stack snapshot part of a callchain
 *
 * Present when the callchain has PVPROF_CHAIN_F_USTACK: the user registers that
 * DWARF call frame information needs and the bytes of the user stack from
 * regs[PVPROF_UREG_SP] upward, so that the host can unwind code without
 * frame pointers.  The stack bytes follow the part (at offset 72), padded
 * with zeros to round_up(size, 8).
 */
struct pvprof_ustack {
	__u64 regs[PVPROF_UREG_NR];	/* user registers at the sample */
	__u32 size;			/* bytes copied, <= the header's ustack_size */
	__u32 reserved0;
};

/* Successful REGISTERs per second per vCPU the host accepts (token bucket). */
#define PVPROF_REGISTER_RATE		16U

/* ------------------------------------------------------------------ */
/* Sideband (guest agent -> host tool): framing and payloads           */
/* ------------------------------------------------------------------ */

#define PVPROF_SIDEBAND_VERSION		1
#define PVPROF_SIDEBAND_MAX_SIZE	4096U	/* one hypercall, one page */
#define PVPROF_SIDEBAND_DEFAULT_RATE	262144U	/* bytes/s per VM the host accepts */

/* Sideband types. */
#define PVPROF_SB_KERNEL		1	/* kernel identity, KASLR base */
#define PVPROF_SB_KSYMS			2	/* a chunk of kernel text symbols */
#define PVPROF_SB_MODULE		3	/* a loaded module */
#define PVPROF_SB_PROCESS		4	/* a process image: pid, exec_gen, comm */
#define PVPROF_SB_MMAP			5	/* an executable mapping with build-id */
#define PVPROF_SB_ELF_SYMS		6	/* a chunk of an ELF's function symbols */
#define PVPROF_SB_EXIT			7	/* a process image ended */
#define PVPROF_SB_AGENT			8	/* the agent's own counters */
#define PVPROF_SB_UNWIND		9	/* a chunk of an ELF's unwind tables */
#define PVPROF_SB_TYPE_MAX		PVPROF_SB_UNWIND

/**
 * struct pvprof_sideband_hdr - header of every sideband message
 */
struct pvprof_sideband_hdr {
	__u16 type;			/* PVPROF_SB_* */
	__u16 version;			/* PVPROF_SIDEBAND_VERSION */
	__u32 size;			/* header + payload, <= SIDEBAND_MAX_SIZE */
	__u64 time_ns;			/* guest monotonic time */
};

/* Caps on the strings of the payloads (bytes, no terminator counted). */
#define PVPROF_SB_BUILD_ID_MAX		32	/* GNU build-id note bytes */
#define PVPROF_SB_NAME_MAX		255	/* a symbol name or a path */
#define PVPROF_SB_RELEASE_SIZE		64	/* kernel release, NUL-padded */
#define PVPROF_SB_MODULE_NAME_SIZE	56	/* module name, NUL-padded */
#define PVPROF_SB_COMM_SIZE		16	/* task comm, NUL-padded */

/**
 * struct pvprof_sb_build_id - a GNU build-id, @size == 0 when unknown
 *
 * bytes[size .. 32) and reserved0 are zero.
 */
struct pvprof_sb_build_id {
	__u8  size;			/* 0..PVPROF_SB_BUILD_ID_MAX */
	__u8  reserved0[7];
	__u8  bytes[PVPROF_SB_BUILD_ID_MAX];
};

/**
 * struct pvprof_sb_kernel - PVPROF_SB_KERNEL: the running kernel
 *
 * stext is the runtime address of _stext, i.e. the KASLR text base.
 */
struct pvprof_sb_kernel {
	struct pvprof_sideband_hdr hdr;
	__u64 stext;			/* runtime _stext */
	__u64 etext;			/* runtime _etext, > stext */
	__u32 nr_syms;			/* text symbols the agent publishes in KSYMS */
	__u32 reserved0;
	struct pvprof_sb_build_id build_id;
	char  release[PVPROF_SB_RELEASE_SIZE];	/* uname -r, NUL-padded */
};

/*
 * Symbol chunks (KSYMS, ELF_SYMS) carry nr entries sorted by address after
 * their fixed part, filling the message exactly:
 *
 *   uleb128 delta      address - previous address (first entry: - first)
 *   uleb128 size       ELF_SYMS only: the symbol's size in bytes
 *   u8      prefix     bytes shared with the previous entry's name
 *   u8      suffix     bytes that follow, 1 <= prefix + suffix <= 255
 *   suffix bytes       the rest of the name (any byte but NUL)
 *
 * A uleb128 is at most 10 bytes and its value fits 64 bits.
 */
#define PVPROF_SB_ULEB128_MAX		10

/**
 * struct pvprof_sb_ksyms - PVPROF_SB_KSYMS: kernel text symbols
 *
 * module is empty for the kernel image, else the module's name.  The
 * entries follow (at offset 88), up to hdr.size.
 */
struct pvprof_sb_ksyms {
	struct pvprof_sideband_hdr hdr;
	char  module[PVPROF_SB_MODULE_NAME_SIZE];	/* NUL-padded */
	__u64 first;			/* address the first delta is relative to */
	__u16 nr;			/* entries, >= 1 */
	__u16 reserved0;
	__u32 reserved1;
};

/**
 * struct pvprof_sb_module - PVPROF_SB_MODULE: a loaded module's text
 */
struct pvprof_sb_module {
	struct pvprof_sideband_hdr hdr;
	__u64 base;			/* runtime address of its core layout */
	__u64 size;			/* bytes of its core layout, > 0 */
	struct pvprof_sb_build_id build_id;
	char  name[PVPROF_SB_MODULE_NAME_SIZE];	/* NUL-padded, not empty */
};

/* Process flags. */
#define PVPROF_SB_PROC_F_FORK		(1U << 0)	/* copies (parent_pid, exec_gen)'s mappings */
#define PVPROF_SB_PROC_F_ALL		((1U << 1) - 1)

/**
 * struct pvprof_sb_process - PVPROF_SB_PROCESS: one process image
 *
 * (pid, exec_gen) names the image exactly as pvprof_callchain does.  A
 * message for a known image updates its comm.
 */
struct pvprof_sb_process {
	struct pvprof_sideband_hdr hdr;
	__u32 pid;			/* init-namespace tgid */
	__u32 exec_gen;			/* as pvprof_callchain.exec_gen */
	__u32 parent_pid;		/* with PVPROF_SB_PROC_F_FORK, else 0 */
	__u32 flags;			/* PVPROF_SB_PROC_F_* */
	char  comm[PVPROF_SB_COMM_SIZE];	/* NUL-padded */
};

/**
 * struct pvprof_sb_mmap - PVPROF_SB_MMAP: an executable mapping
 *
 * An address a in [start, start + len) is the ELF virtual address
 * a - start + vaddr of the file with build_id (or file offset
 * a - start + pgoff when the build-id is unknown).  The path's path_len
 * bytes follow (at offset 104), without a NUL.
 */
struct pvprof_sb_mmap {
	struct pvprof_sideband_hdr hdr;
	__u32 pid;
	__u32 exec_gen;
	__u64 start;			/* user address, page aligned */
	__u64 len;			/* > 0 */
	__u64 pgoff;			/* file offset of start in bytes */
	__u64 vaddr;			/* ELF virtual address of start */
	struct pvprof_sb_build_id build_id;
	__u16 path_len;			/* 0..PVPROF_SB_NAME_MAX */
	__u16 reserved0;
	__u32 reserved1;
};

/**
 * struct pvprof_sb_elf_syms - PVPROF_SB_ELF_SYMS: an ELF's function symbols
 *
 * Addresses are the ELF's virtual addresses (st_value).  The entries follow
 * (at offset 72), up to hdr.size.
 */
struct pvprof_sb_elf_syms {
	struct pvprof_sideband_hdr hdr;
	struct pvprof_sb_build_id build_id;	/* size >= 1 */
	__u64 first;			/* address the first delta is relative to */
	__u16 nr;			/* entries, >= 1 */
	__u16 reserved0;
	__u32 reserved1;
};

/**
 * struct pvprof_sb_exit - PVPROF_SB_EXIT: a process image ended
 *
 * Callchains of the image that were captured before may still follow.
 */
struct pvprof_sb_exit {
	struct pvprof_sideband_hdr hdr;
	__u32 pid;
	__u32 exec_gen;
};

/**
 * struct pvprof_sb_agent - PVPROF_SB_AGENT: the agent's counters so far
 *
 * Messages the agent produced but could not send (the host's rate limit
 * persisted, its own queue was full) are lost; the host tool reports them.
 */
struct pvprof_sb_agent {
	struct pvprof_sideband_hdr hdr;
	__u32 pid;			/* the agent's pid */
	__u32 republish;		/* times it published its whole state */
	__u64 sent_messages;
	__u64 sent_bytes;
	__u64 lost_messages;
	__u64 lost_bytes;
};

/* Sections of PVPROF_SB_UNWIND. */
#define PVPROF_SB_UNWIND_EH_FRAME_HDR	1	/* .eh_frame_hdr */
#define PVPROF_SB_UNWIND_EH_FRAME	2	/* .eh_frame */
#define PVPROF_SB_UNWIND_DEBUG_FRAME	3	/* .debug_frame */
#define PVPROF_SB_UNWIND_SECTION_MAX	PVPROF_SB_UNWIND_DEBUG_FRAME
#define PVPROF_SB_UNWIND_MAX_SIZE	(16U << 20)	/* bytes of one section */

/**
 * struct pvprof_sb_unwind - PVPROF_SB_UNWIND: part of an unwind table
 *
 * The bytes [offset, offset + hdr.size - 80) of one section of the ELF
 * with build_id, which the ELF maps at vaddr (0 for .debug_frame), follow
 * (at offset 80).  A section arrives whole only when all its parts did.
 */
struct pvprof_sb_unwind {
	struct pvprof_sideband_hdr hdr;
	struct pvprof_sb_build_id build_id;	/* size >= 1 */
	__u64 vaddr;			/* the section's sh_addr */
	__u32 section_size;		/* bytes of the whole section, > 0 */
	__u32 offset;			/* of this part in the section */
	__u16 section;			/* PVPROF_SB_UNWIND_* */
	__u16 reserved0;
	__u32 reserved1;
};

/* ------------------------------------------------------------------ */
/* /dev/pvprof, the guest driver's device for the agent (guest-local)  */
/* ------------------------------------------------------------------ */

/**
 * struct pvprof_dev_state - what read() on /dev/pvprof returns
 *
 * generation counts the times the driver saw sampling switch on (or its
 * configuration change while on); poll() reports POLLIN while it differs
 * from the value this open file last read.
 */
struct pvprof_dev_state {
	__u64 generation;
	__u32 state;			/* PVPROF_STATE_* as the host last published */
	__u32 event;			/* PVPROF_EVENT_* */
	__u64 period;
	__u64 reserved0;
};

/**
 * struct pvprof_dev_exec_gen - PVPROF_DEV_EXEC_GEN argument
 */
struct pvprof_dev_exec_gen {
	__u32 pid;			/* in: init-namespace tgid */
	__u32 exec_gen;			/* out: as pvprof_callchain.exec_gen */
};

#define PVPROF_DEV_IOC_MAGIC		0xb7
#define PVPROF_DEV_EXEC_GEN		_IOWR(PVPROF_DEV_IOC_MAGIC, 0x01, \
					      struct pvprof_dev_exec_gen)

/* ------------------------------------------------------------------ */
/* Compile-time layout checks                                          */
/* ------------------------------------------------------------------ */

#ifdef __cplusplus
#define PVPROF_STATIC_ASSERT(expr, msg)	static_assert(expr, msg)
#else
#define PVPROF_STATIC_ASSERT(expr, msg)	_Static_assert(expr, msg)
#endif
#define PVPROF_CHECK_SIZE(type, sz) \
	PVPROF_STATIC_ASSERT(sizeof(struct type) == (sz), #type " size")
#define PVPROF_CHECK_OFFSET(type, member, off) \
	PVPROF_STATIC_ASSERT(__builtin_offsetof(struct type, member) == (off), \
			     #type "." #member " offset")

/*
 * The variable-length part of pvprof_callchain, pvprof_ustack and the sideband
 * messages with one starts at their size, which PVPROF_CHECK_SIZE pins.
 */
PVPROF_CHECK_SIZE(pvprof_buf_header, PVPROF_HEADER_SIZE);
PVPROF_CHECK_OFFSET(pvprof_buf_header, magic, 0);
PVPROF_CHECK_OFFSET(pvprof_buf_header, version, 4);
PVPROF_CHECK_OFFSET(pvprof_buf_header, header_size, 6);
PVPROF_CHECK_OFFSET(pvprof_buf_header, cookie, 8);
PVPROF_CHECK_OFFSET(pvprof_buf_header, size, 16);
PVPROF_CHECK_OFFSET(pvprof_buf_header, max_depth, 20);
PVPROF_CHECK_OFFSET(pvprof_buf_header, reserved0, 24);
PVPROF_CHECK_OFFSET(pvprof_buf_header, state, 64);
PVPROF_CHECK_OFFSET(pvprof_buf_header, event, 68);
PVPROF_CHECK_OFFSET(pvprof_buf_header, period, 72);
PVPROF_CHECK_OFFSET(pvprof_buf_header, notice_head, 80);
PVPROF_CHECK_OFFSET(pvprof_buf_header, chain_tail, 88);
PVPROF_CHECK_OFFSET(pvprof_buf_header, nmi_head, 96);
PVPROF_CHECK_OFFSET(pvprof_buf_header, nmi_delivered, 104);
PVPROF_CHECK_OFFSET(pvprof_buf_header, ustack_size, 112);
PVPROF_CHECK_OFFSET(pvprof_buf_header, reserved1, 116);
PVPROF_CHECK_OFFSET(pvprof_buf_header, notice_tail, 128);
PVPROF_CHECK_OFFSET(pvprof_buf_header, chain_head, 136);
PVPROF_CHECK_OFFSET(pvprof_buf_header, reserved2, 144);
PVPROF_CHECK_OFFSET(pvprof_buf_header, guest_nmis_claimed, 192);
PVPROF_CHECK_OFFSET(pvprof_buf_header, guest_callchains, 200);
PVPROF_CHECK_OFFSET(pvprof_buf_header, guest_stale, 208);
PVPROF_CHECK_OFFSET(pvprof_buf_header, guest_errors, 216);
PVPROF_CHECK_OFFSET(pvprof_buf_header, reserved3, 224);
PVPROF_CHECK_OFFSET(pvprof_buf_header, reserved4, 256);

PVPROF_CHECK_SIZE(pvprof_notice, PVPROF_NOTICE_SIZE);
PVPROF_CHECK_OFFSET(pvprof_notice, seq, 0);
PVPROF_CHECK_OFFSET(pvprof_notice, host_time_ns, 8);
PVPROF_CHECK_OFFSET(pvprof_notice, guest_tsc, 16);
PVPROF_CHECK_OFFSET(pvprof_notice, ip, 24);
PVPROF_CHECK_OFFSET(pvprof_notice, cpl, 32);
PVPROF_CHECK_OFFSET(pvprof_notice, event, 33);
PVPROF_CHECK_OFFSET(pvprof_notice, flags, 34);
PVPROF_CHECK_OFFSET(pvprof_notice, reserved0, 36);
PVPROF_CHECK_OFFSET(pvprof_notice, period, 40);
PVPROF_CHECK_OFFSET(pvprof_notice, reserved1, 48);

PVPROF_CHECK_SIZE(pvprof_callchain, 40);
PVPROF_CHECK_OFFSET(pvprof_callchain, seq, 0);
PVPROF_CHECK_OFFSET(pvprof_callchain, time_ns, 8);
PVPROF_CHECK_OFFSET(pvprof_callchain, pid, 16);
PVPROF_CHECK_OFFSET(pvprof_callchain, tid, 20);
PVPROF_CHECK_OFFSET(pvprof_callchain, exec_gen, 24);
PVPROF_CHECK_OFFSET(pvprof_callchain, flags, 28);
PVPROF_CHECK_OFFSET(pvprof_callchain, size, 32);
PVPROF_CHECK_OFFSET(pvprof_callchain, nr_kernel, 34);
PVPROF_CHECK_OFFSET(pvprof_callchain, nr_user, 36);
PVPROF_CHECK_OFFSET(pvprof_callchain, reserved0, 38);
PVPROF_CHECK_SIZE(pvprof_ustack, 72);
PVPROF_CHECK_OFFSET(pvprof_ustack, regs, 0);
PVPROF_CHECK_OFFSET(pvprof_ustack, size, 64);
PVPROF_CHECK_OFFSET(pvprof_ustack, reserved0, 68);
PVPROF_STATIC_ASSERT(40 + 8 * PVPROF_MAX_DEPTH + 72 + PVPROF_USTACK_MAX <= 0xffff,
	       "the largest callchain's size fits pvprof_callchain.size");
PVPROF_STATIC_ASSERT(40 + 8 * PVPROF_MAX_DEPTH + 72 + PVPROF_USTACK_MAX <=
	       PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) * PVPROF_CHAIN_SLOT_SIZE,
	       "the largest callchain fits the largest ring");
PVPROF_STATIC_ASSERT(40 + 8 * PVPROF_MAX_DEPTH <= PVPROF_CHAIN_SLOT_SIZE,
	       "a callchain of maximum depth fits its slot");
PVPROF_STATIC_ASSERT(PVPROF_NOTICE_OFFSET + PVPROF_NOTICE_SLOTS * PVPROF_NOTICE_SIZE ==
	       PVPROF_CHAIN_OFFSET, "notice ring fills page 0");
PVPROF_STATIC_ASSERT(PVPROF_CHAIN_SLOTS(PVPROF_BUF_MIN_SIZE) >= 4,
	       "smallest buffer holds four callchains");

PVPROF_CHECK_SIZE(pvprof_sideband_hdr, 16);
PVPROF_CHECK_OFFSET(pvprof_sideband_hdr, type, 0);
PVPROF_CHECK_OFFSET(pvprof_sideband_hdr, version, 2);
PVPROF_CHECK_OFFSET(pvprof_sideband_hdr, size, 4);
PVPROF_CHECK_OFFSET(pvprof_sideband_hdr, time_ns, 8);

PVPROF_CHECK_SIZE(pvprof_sb_build_id, 40);
PVPROF_CHECK_OFFSET(pvprof_sb_build_id, bytes, 8);
PVPROF_CHECK_SIZE(pvprof_sb_kernel, 144);
PVPROF_CHECK_OFFSET(pvprof_sb_kernel, stext, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_kernel, etext, 24);
PVPROF_CHECK_OFFSET(pvprof_sb_kernel, nr_syms, 32);
PVPROF_CHECK_OFFSET(pvprof_sb_kernel, build_id, 40);
PVPROF_CHECK_OFFSET(pvprof_sb_kernel, release, 80);
PVPROF_CHECK_SIZE(pvprof_sb_ksyms, 88);
PVPROF_CHECK_OFFSET(pvprof_sb_ksyms, module, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_ksyms, first, 72);
PVPROF_CHECK_OFFSET(pvprof_sb_ksyms, nr, 80);
PVPROF_CHECK_SIZE(pvprof_sb_module, 128);
PVPROF_CHECK_OFFSET(pvprof_sb_module, base, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_module, size, 24);
PVPROF_CHECK_OFFSET(pvprof_sb_module, build_id, 32);
PVPROF_CHECK_OFFSET(pvprof_sb_module, name, 72);
PVPROF_CHECK_SIZE(pvprof_sb_process, 48);
PVPROF_CHECK_OFFSET(pvprof_sb_process, pid, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_process, exec_gen, 20);
PVPROF_CHECK_OFFSET(pvprof_sb_process, parent_pid, 24);
PVPROF_CHECK_OFFSET(pvprof_sb_process, flags, 28);
PVPROF_CHECK_OFFSET(pvprof_sb_process, comm, 32);
PVPROF_CHECK_SIZE(pvprof_sb_mmap, 104);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, pid, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, start, 24);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, len, 32);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, pgoff, 40);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, vaddr, 48);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, build_id, 56);
PVPROF_CHECK_OFFSET(pvprof_sb_mmap, path_len, 96);
PVPROF_CHECK_SIZE(pvprof_sb_elf_syms, 72);
PVPROF_CHECK_OFFSET(pvprof_sb_elf_syms, build_id, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_elf_syms, first, 56);
PVPROF_CHECK_OFFSET(pvprof_sb_elf_syms, nr, 64);
PVPROF_CHECK_SIZE(pvprof_sb_exit, 24);
PVPROF_CHECK_OFFSET(pvprof_sb_exit, pid, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_exit, exec_gen, 20);
PVPROF_CHECK_SIZE(pvprof_sb_agent, 56);
PVPROF_CHECK_OFFSET(pvprof_sb_agent, pid, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_agent, sent_messages, 24);
PVPROF_CHECK_OFFSET(pvprof_sb_agent, lost_bytes, 48);
PVPROF_CHECK_SIZE(pvprof_sb_unwind, 80);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, build_id, 16);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, vaddr, 56);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, section_size, 64);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, offset, 68);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, section, 72);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, reserved0, 74);
PVPROF_CHECK_OFFSET(pvprof_sb_unwind, reserved1, 76);
PVPROF_STATIC_ASSERT(sizeof(struct pvprof_sb_mmap) + PVPROF_SB_NAME_MAX <=
	       PVPROF_SIDEBAND_MAX_SIZE, "the longest mapping fits one message");

PVPROF_CHECK_SIZE(pvprof_dev_state, 32);
PVPROF_CHECK_OFFSET(pvprof_dev_state, state, 8);
PVPROF_CHECK_OFFSET(pvprof_dev_state, period, 16);
PVPROF_CHECK_SIZE(pvprof_dev_exec_gen, 8);

#endif /* _PVPROF_ABI_PVPROF_H */
