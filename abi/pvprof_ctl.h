/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pvprof host control plane and stream, version 1.
 *
 * VM ioctls from a process other than the VMM fail with -EIO in KVM, so
 * control goes through system ioctls on /dev/kvm that name the VM by a VM
 * file descriptor the caller holds (obtained with pidfd_getfd()).  The
 * normative description is spec/pvprof.rst.
 */
#ifndef _PVPROF_ABI_PVPROF_CTL_H
#define _PVPROF_ABI_PVPROF_CTL_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include "pvprof.h"

#define PVPROF_KVMIO			0xAE	/* KVMIO */

/* ------------------------------------------------------------------ */
/* System ioctls on /dev/kvm                                           */
/* ------------------------------------------------------------------ */

/* Enable flags. */
#define PVPROF_ENABLE_F_FREQ		(1U << 0)	/* sample_freq is in Hz, else sample_period */
#define PVPROF_ENABLE_F_ALL		PVPROF_ENABLE_F_FREQ

#define PVPROF_DEFAULT_FREQ		1000	/* Hz */
#define PVPROF_MAX_FREQ			10000	/* Hz per vCPU */
#define PVPROF_USTACK_DEFAULT		8192	/* bytes, as perf's --call-graph dwarf */
#define PVPROF_DEFAULT_VM_RATE		20000	/* samples/s per VM */

/**
 * struct pvprof_ctl_enable - PVPROF_CTL_ENABLE argument
 *
 * Enabling a VM that is already enabled reconfigures it.
 */
struct pvprof_ctl_enable {
	__s32 vm_fd;			/* a KVM VM fd held by the caller */
	__u32 flags;			/* PVPROF_ENABLE_F_* */
	__u32 event;			/* PVPROF_EVENT_* */
	__u32 max_depth;		/* 1..PVPROF_MAX_DEPTH, 0 = maximum */
	__u64 sample_freq;		/* Hz when F_FREQ */
	__u64 sample_period;		/* ns (cpu-clock) or events, without F_FREQ */
	__u32 vm_rate_cap;		/* samples/s for the whole VM, 0 = default */
	__u32 ustack_size;		/* user stack bytes per sample, 0 = none */
	__u64 reserved1[2];
};

/**
 * struct pvprof_ctl_vm - PVPROF_CTL_DISABLE and PVPROF_CTL_STREAM argument
 */
struct pvprof_ctl_vm {
	__s32 vm_fd;
	__u32 flags;			/* 0 */
	__u64 reserved0;
};

/* Exposure: does the VM see pvprof at all (PVPROF_CTL_EXPOSE). */
#define PVPROF_EXPOSE_DEFAULT		0	/* follow the module parameter */
#define PVPROF_EXPOSE_VISIBLE		1
#define PVPROF_EXPOSE_HIDDEN		2

struct pvprof_ctl_expose {
	__s32 vm_fd;
	__u32 mode;			/* PVPROF_EXPOSE_* */
	__u64 reserved0;
};

/* Why a sample or a callchain did not become a callchain entry in the stream. */
#define PVPROF_LOSS_NOTICE_RING_FULL	0	/* guest had not consumed notices */
#define PVPROF_LOSS_THROTTLED		1	/* per-VM or host-wide rate cap */
#define PVPROF_LOSS_UNREGISTERED	2	/* vCPU had no buffer */
#define PVPROF_LOSS_PROTECTED		3	/* SEV-ES/SNP state unreadable */
#define PVPROF_LOSS_NESTED		4	/* vCPU was running its own nested guest */
#define PVPROF_LOSS_SMM			5	/* vCPU was in SMM */
#define PVPROF_LOSS_STALE		6	/* guest answered without a stack */
#define PVPROF_LOSS_INVALID		7	/* notice resolved by a callchain that failed validation */
#define PVPROF_LOSS_BUFFER_GONE		8	/* magic/cookie mismatch, registration dropped */
#define PVPROF_LOSS_UNANSWERED		9	/* skipped by the guest, or still open when the registration ended */
#define PVPROF_LOSS_STREAM_OVERFLOW	10	/* stream buffer full */
#define PVPROF_LOSS_SLOT_BUSY		11	/* a sample was already pending on this vCPU */
#define PVPROF_LOSS_NR			12

/**
 * struct pvprof_vcpu_status - one vCPU in PVPROF_CTL_STATUS
 */
struct pvprof_vcpu_status {
	__u32 vcpu_id;
	__u32 registered;		/* 0 or 1 */
	__u64 gpa;			/* buffer gpa when registered */
	__u32 size;			/* buffer size when registered */
	__u32 nmis_withheld;		/* pvprof NMIs withheld from a silent guest (saturates) */
	__u64 samples;			/* overflows attributed to this vCPU's guest code */
	__u64 notices;			/* notices written */
	__u64 callchains;		/* callchains accepted, stale ones not counted */
	__u64 nmis;			/* pvprof NMIs injected */
	__u64 losses[PVPROF_LOSS_NR];
};

#define PVPROF_STATUS_F_ENABLED		(1U << 0)
#define PVPROF_STATUS_F_HIDDEN		(1U << 1)

/**
 * struct pvprof_ctl_status - PVPROF_CTL_STATUS argument
 *
 * The kernel fills at most nr_vcpus entries at vcpus and sets nr_vcpus to
 * the number of vCPUs the VM has; call again with a larger array if it grew.
 */
struct pvprof_ctl_status {
	__s32 vm_fd;
	__u32 flags;			/* out: PVPROF_STATUS_F_* */
	__u32 nr_vcpus;			/* in: array length; out: vCPUs in the VM */
	__u32 event;			/* out */
	__u64 sample_period;		/* out: ns or events */
	__u64 sample_freq;		/* out: Hz, 0 when period-based */
	__u64 vcpus;			/* in: user pointer to pvprof_vcpu_status[] */
	__u64 losses[PVPROF_LOSS_NR];	/* out: VM totals by reason */
	__u64 sideband_bytes;		/* out: sideband bytes accepted */
	__u64 sideband_refused;		/* out: SIDEBAND calls refused (rate, size, framing) */
};

#define PVPROF_CTL_ENABLE	_IOW(PVPROF_KVMIO, 0xf0, struct pvprof_ctl_enable)
#define PVPROF_CTL_DISABLE	_IOW(PVPROF_KVMIO, 0xf1, struct pvprof_ctl_vm)
#define PVPROF_CTL_STATUS	_IOWR(PVPROF_KVMIO, 0xf2, struct pvprof_ctl_status)
#define PVPROF_CTL_STREAM	_IOW(PVPROF_KVMIO, 0xf3, struct pvprof_ctl_vm)
#define PVPROF_CTL_EXPOSE	_IOW(PVPROF_KVMIO, 0xf4, struct pvprof_ctl_expose)

/* ------------------------------------------------------------------ */
/* The stream: read(2) from the fd PVPROF_CTL_STREAM returns            */
/* ------------------------------------------------------------------ */

#define PVPROF_STREAM_VERSION		2
#define PVPROF_STREAM_ALIGN		8
#define PVPROF_STREAM_MAX_ENTRY	40960U
#define PVPROF_STREAM_MAX_READERS	8	/* stream fds open at once per VM */

#define PVPROF_ST_HELLO			1	/* first entry of every stream */
#define PVPROF_ST_CALLCHAIN		2
#define PVPROF_ST_LOSS			3
#define PVPROF_ST_VCPU			4	/* registration change */
#define PVPROF_ST_SIDEBAND		5
#define PVPROF_ST_TYPE_MAX		PVPROF_ST_SIDEBAND

/**
 * struct pvprof_stream_hdr - frames every stream entry
 *
 * size covers header and payload and is a multiple of PVPROF_STREAM_ALIGN;
 * readers skip types they do not know by size.
 */
struct pvprof_stream_hdr {
	__u16 type;			/* PVPROF_ST_* */
	__u16 flags;			/* 0 */
	__u32 size;
	__u32 vcpu_id;			/* ~0U when not about one vCPU */
	__u32 reserved0;
	__u64 host_time_ns;		/* host CLOCK_MONOTONIC when queued */
};

struct pvprof_st_hello {
	struct pvprof_stream_hdr hdr;
	__u16 stream_version;		/* PVPROF_STREAM_VERSION */
	__u16 abi_version;		/* PVPROF_ABI_VERSION */
	__u32 nr_vcpus;
	__u64 reserved0;
};

/* Sample flags of a CALLCHAIN entry (stream version 2; 0 in version 1). */
#define PVPROF_ST_SAMPLE_F_OWN_NMI	(1U << 0)	/* the guest ran pvprof's NMI path */
#define PVPROF_ST_SAMPLE_F_ALL		((1U << 1) - 1)

/*
 * Callchain: a validated copy of the guest's callchain plus the notice facts.
 * With PVPROF_ST_SAMPLE_F_OWN_NMI the sample hit the guest inside the NMI
 * that pvprof injected, and chain is the stack that NMI interrupted;
 * own_nmi_samples more samples hit it there while this one waited.
 */
struct pvprof_st_callchain {
	struct pvprof_stream_hdr hdr;
	__u64 notice_ip;		/* guest IP the host read */
	__u64 guest_tsc;		/* guest TSC at the sample */
	__u8  notice_cpl;
	__u8  event;
	__u16 sample_flags;		/* PVPROF_ST_SAMPLE_F_* */
	__u32 own_nmi_samples;		/* more samples inside pvprof's NMI path */
	struct pvprof_callchain chain;	/* followed by chain.nr_kernel + chain.nr_user frames */
};

struct pvprof_st_loss {
	struct pvprof_stream_hdr hdr;
	__u32 reason;			/* PVPROF_LOSS_* */
	__u32 reserved0;
	__u64 count;
};

#define PVPROF_VCPU_REGISTERED		1
#define PVPROF_VCPU_UNREGISTERED	2
#define PVPROF_VCPU_DROPPED		3	/* reset, buffer gone, or VM destroyed */

struct pvprof_st_vcpu {
	struct pvprof_stream_hdr hdr;
	__u32 event;			/* PVPROF_VCPU_* */
	__u32 size;
	__u64 gpa;
};

/* Sideband: the guest's message verbatim after size and framing checks. */
struct pvprof_st_sideband {
	struct pvprof_stream_hdr hdr;
	struct pvprof_sideband_hdr sb;	/* followed by sb.size - sizeof(sb) bytes */
};

PVPROF_CHECK_SIZE(pvprof_ctl_enable, 56);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, vm_fd, 0);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, flags, 4);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, event, 8);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, max_depth, 12);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, sample_freq, 16);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, sample_period, 24);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, vm_rate_cap, 32);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, ustack_size, 36);
PVPROF_CHECK_OFFSET(pvprof_ctl_enable, reserved1, 40);

PVPROF_CHECK_SIZE(pvprof_ctl_vm, 16);
PVPROF_CHECK_OFFSET(pvprof_ctl_vm, vm_fd, 0);
PVPROF_CHECK_OFFSET(pvprof_ctl_vm, flags, 4);
PVPROF_CHECK_OFFSET(pvprof_ctl_vm, reserved0, 8);

PVPROF_CHECK_SIZE(pvprof_ctl_expose, 16);
PVPROF_CHECK_OFFSET(pvprof_ctl_expose, vm_fd, 0);
PVPROF_CHECK_OFFSET(pvprof_ctl_expose, mode, 4);
PVPROF_CHECK_OFFSET(pvprof_ctl_expose, reserved0, 8);

PVPROF_CHECK_SIZE(pvprof_vcpu_status, 56 + 8 * PVPROF_LOSS_NR);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, vcpu_id, 0);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, registered, 4);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, gpa, 8);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, size, 16);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, nmis_withheld, 20);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, samples, 24);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, notices, 32);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, callchains, 40);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, nmis, 48);
PVPROF_CHECK_OFFSET(pvprof_vcpu_status, losses, 56);

PVPROF_CHECK_SIZE(pvprof_ctl_status, 40 + 8 * PVPROF_LOSS_NR + 16);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, vm_fd, 0);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, flags, 4);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, nr_vcpus, 8);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, event, 12);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, sample_period, 16);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, sample_freq, 24);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, vcpus, 32);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, losses, 40);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, sideband_bytes, 40 + 8 * PVPROF_LOSS_NR);
PVPROF_CHECK_OFFSET(pvprof_ctl_status, sideband_refused, 48 + 8 * PVPROF_LOSS_NR);

PVPROF_CHECK_SIZE(pvprof_stream_hdr, 24);
PVPROF_CHECK_OFFSET(pvprof_stream_hdr, type, 0);
PVPROF_CHECK_OFFSET(pvprof_stream_hdr, flags, 2);
PVPROF_CHECK_OFFSET(pvprof_stream_hdr, size, 4);
PVPROF_CHECK_OFFSET(pvprof_stream_hdr, vcpu_id, 8);
PVPROF_CHECK_OFFSET(pvprof_stream_hdr, reserved0, 12);
PVPROF_CHECK_OFFSET(pvprof_stream_hdr, host_time_ns, 16);

PVPROF_CHECK_SIZE(pvprof_st_hello, 40);
PVPROF_CHECK_OFFSET(pvprof_st_hello, stream_version, 24);
PVPROF_CHECK_OFFSET(pvprof_st_hello, abi_version, 26);
PVPROF_CHECK_OFFSET(pvprof_st_hello, nr_vcpus, 28);
PVPROF_CHECK_OFFSET(pvprof_st_hello, reserved0, 32);

PVPROF_CHECK_SIZE(pvprof_st_callchain, 48 + 40);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, notice_ip, 24);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, guest_tsc, 32);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, notice_cpl, 40);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, event, 41);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, sample_flags, 42);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, own_nmi_samples, 44);
PVPROF_CHECK_OFFSET(pvprof_st_callchain, chain, 48);

PVPROF_CHECK_SIZE(pvprof_st_loss, 40);
PVPROF_CHECK_OFFSET(pvprof_st_loss, reason, 24);
PVPROF_CHECK_OFFSET(pvprof_st_loss, reserved0, 28);
PVPROF_CHECK_OFFSET(pvprof_st_loss, count, 32);

PVPROF_CHECK_SIZE(pvprof_st_vcpu, 40);
PVPROF_CHECK_OFFSET(pvprof_st_vcpu, event, 24);
PVPROF_CHECK_OFFSET(pvprof_st_vcpu, size, 28);
PVPROF_CHECK_OFFSET(pvprof_st_vcpu, gpa, 32);

PVPROF_CHECK_SIZE(pvprof_st_sideband, 40);
PVPROF_CHECK_OFFSET(pvprof_st_sideband, sb, 24);

PVPROF_STATIC_ASSERT(sizeof(struct pvprof_st_callchain) + 8 * PVPROF_MAX_DEPTH +
	       sizeof(struct pvprof_ustack) + PVPROF_USTACK_MAX <=
	       PVPROF_STREAM_MAX_ENTRY, "largest callchain fits a stream entry");
PVPROF_STATIC_ASSERT(sizeof(struct pvprof_stream_hdr) + PVPROF_SIDEBAND_MAX_SIZE <=
	       PVPROF_STREAM_MAX_ENTRY, "largest sideband fits a stream entry");

#endif /* _PVPROF_ABI_PVPROF_CTL_H */
