/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof guest driver: state shared between the driver's files.
 */
#ifndef _PVPROF_GUEST_H
#define _PVPROF_GUEST_H

#include <linux/percpu.h>
#include <linux/types.h>
#include <asm/kvm_para.h>

#include "core/guest.h"

/* Handler time histogram: bucket b counts runs of [2^(b-1), 2^b) ns. */
#define PVPROF_HIST_BUCKETS	32

/**
 * struct pvprof_cpu_stats - one CPU's counters
 * @nmis_claimed: NMIs the handler claimed (the host attributed a delivery)
 * @nmis_merged: claims that covered two or more deliveries (an NMI nested
 *	in the handler after an IRET in it)
 * @notices: notices consumed
 * @callchains: callchains posted with a stack (stale ones not counted)
 * @stale: stale callchains posted
 * @dropped: notices left unanswered because the callchain ring was full
 * @garbage: NMIs that found an out-of-bounds notice_head
 * @registrations: successful REGISTER calls
 * @queries: QUERY calls of the periodic check (one per period while
 *	registered: shows the check is alive)
 * @reregistrations: registrations the host had dropped (QUERY said so)
 * @reg_failures: failed REGISTER calls and buffer allocation failures
 * @query_failures: QUERY calls that returned an error
 * @unreg_failures: UNREGISTER calls that returned an error
 * @handler_ns: claimed handler runs by duration, log2 buckets of ns
 *
 * Written only on the CPU the counters belong to (NMI, IRQ-off or hotplug
 * context), read racily by debugfs.
 */
struct pvprof_cpu_stats {
	u64 nmis_claimed;
	u64 nmis_merged;
	u64 notices;
	u64 callchains;
	u64 stale;
	u64 dropped;
	u64 garbage;
	u64 registrations;
	u64 queries;
	u64 reregistrations;
	u64 reg_failures;
	u64 query_failures;
	u64 unreg_failures;
	u64 handler_ns[PVPROF_HIST_BUCKETS];
};

/**
 * enum pvprof_cpu_state - where one CPU is in the registration lifecycle
 * @PVPROF_CPU_OFF: not registered and not trying (offline, suspended)
 * @PVPROF_CPU_ACTIVE: registered; the NMI handler answers notices
 * @PVPROF_CPU_FAILED: online but not registered; retried every period
 */
enum pvprof_cpu_state {
	PVPROF_CPU_OFF,
	PVPROF_CPU_ACTIVE,
	PVPROF_CPU_FAILED,
};

/*
 * A callchain with a snapshot stays within half the largest ring
 * (spec pvprof-ustack): 30 slots.
 */
#define PVPROF_SCRATCH_SIZE	(PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) / 2 * \
				 PVPROF_CHAIN_SLOT_SIZE)

/**
 * struct pvprof_cpu - one CPU's buffer and registration
 * @gb: the buffer as the shared core sees it
 * @pages: the buffer's pages, allocated when the CPU first comes online
 * @scratch: PVPROF_SCRATCH_SIZE bytes where the NMI handler builds a
 *	callchain with a user stack snapshot (NULL without PVPROF_FEAT_USER_STACK)
 * @gpa: guest physical address of @pages
 * @active: the NMI handler may touch the buffer (set after REGISTER
 *	returned 0, cleared before UNREGISTER and before zeroing)
 * @state: lifecycle state, changed only on this CPU with IRQs off
 * @leaked: an UNREGISTER failed: the host may still write the buffer, so
 *	it is never freed
 * @failing: the last registration attempt failed (logged once per streak)
 * @stats: counters
 */
struct pvprof_cpu {
	struct pvprof_guest_buf gb;
	struct page *pages;
	void *scratch;
	phys_addr_t gpa;
	bool active;
	enum pvprof_cpu_state state;
	bool leaked;
	bool failing;
	struct pvprof_cpu_stats stats;
};

DECLARE_PER_CPU(struct pvprof_cpu, pvprof_cpus);

/**
 * struct pvprof_host - what PROBE told the driver
 * @version: ABI version in use
 * @features: PVPROF_FEAT_* bits the host offers
 */
struct pvprof_host {
	u32 version;
	u32 features;
};

/**
 * struct pvprof_sb_stats - sideband counters, under the chardev's mutex
 * @sent: messages the host accepted
 * @bytes: bytes in them
 * @ratelimited: messages refused with -PVPROF_ERATELIMIT (-EAGAIN)
 * @invalid: writes with bad framing (never sent)
 * @failed: messages the host refused otherwise
 */
struct pvprof_sb_stats {
	u64 sent;
	u64 bytes;
	u64 ratelimited;
	u64 invalid;
	u64 failed;
};

extern struct pvprof_host pvprof_host;
extern struct pvprof_sb_stats pvprof_sb_stats;
extern unsigned int pvprof_buf_size;

/**
 * pvprof_hypercall() - issue one pvprof operation on the calling vCPU
 * @op: PVPROF_OP_*
 * @a1: first argument
 * @a2: second argument
 * @a3: third argument
 *
 * kvm_hypercall4() patches in vmcall or vmmcall for the CPU at boot.
 *
 * Context: any; the operation acts on the CPU this runs on.
 * Return: the host's result, negative PVPROF_E* on failure.
 */
static inline long pvprof_hypercall(unsigned long op, unsigned long a1,
				    unsigned long a2, unsigned long a3)
{
	return kvm_hypercall4(PVPROF_HC_NR, op, a1, a2, a3);
}

int pvprof_capture_ustack(void *ctx, const struct pvprof_callchain *chain,
			  __u64 *regs, __u8 *data, __u32 max);
void pvprof_capture(void *ctx, const struct pvprof_notice *n,
		    struct pvprof_callchain *chain, __u32 max_frames);

int pvprof_chardev_init(void);
void pvprof_chardev_exit(void);

void pvprof_debugfs_init(bool inert);
void pvprof_debugfs_exit(void);

#endif /* _PVPROF_GUEST_H */
