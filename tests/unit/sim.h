/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host and a guest sharing one buffer in process memory, each driven by
 * the real core code.  The host's work is the core's own sequence
 * (core/host_vcpu.c), the one the KVM module runs, given simulated
 * operations: guest memory is this process's buffer, KVM's NMI state is
 * the counters below.  The host side reads guest memory only through
 * those operations, once per item, like kvm_read_guest() into a private
 * copy, and checks on every write that the buffer is still its
 * registration's.
 */
#ifndef _PVPROF_TEST_SIM_H
#define _PVPROF_TEST_SIM_H

#include "test_util.h"

struct sim_vcpu {
	__u8 *buf;
	__u32 size;
	__u32 vcpu_id;
	struct pvprof_host_ring ring;
	struct pvprof_vcpu_acct acct;
	struct pvprof_host_work work;
	bool registered;
	struct pvprof_published want;	/* the VM's configuration */
	struct pvprof_guest_buf gb;

	/* KVM's side of the vCPU, which the host's operations see. */
	struct pvprof_sample slot;	/* left by the overflow handler */
	bool slot_full;
	__u64 irq_losses[PVPROF_LOSS_NR];	/* samples the handler lost */
	__u64 folded_losses[PVPROF_LOSS_NR];
	unsigned int nmi_queued;
	unsigned int nmi_pending;
	bool nmi_masked;		/* the guest is handling an NMI */
	bool nmi_window;		/* an exit is due when NMIs unmask */
	__u64 nmi_windows_opened;

	/* The host's stream, as a reader would get it. */
	__u8 *stream;
	size_t stream_len;
	size_t stream_cap;
	__u64 losses_emitted[PVPROF_LOSS_NR];
	__u64 identity_drops;	/* registrations dropped on a magic/cookie mismatch */
	__u64 nmis_attributed;	/* deliveries the host attributed, all registrations */
};

/* The interrupted context the guest's capture callback reports. */
struct sim_context {
	bool user;
	__u32 depth;
	__u64 time_ns;
};

void sim_init(struct sim_vcpu *v, __u32 vcpu_id);
int sim_register(struct sim_vcpu *v, __u32 size, __u32 max_depth);

/* The host as the KVM module runs it. */
enum sim_sample { SIM_SAMPLE_PENDING, SIM_SAMPLE_FOLDED, SIM_SAMPLE_LOST };
enum sim_sample sim_overflow(struct sim_vcpu *v, __u64 ip, __u8 cpl);
int sim_host_entry(struct sim_vcpu *v);
__u32 sim_host_drain(struct sim_vcpu *v);
bool sim_host_nmi_delivery(struct sim_vcpu *v, bool more_nmis_pending);
void sim_host_unregister(struct sim_vcpu *v);
void sim_emit_losses(struct sim_vcpu *v);

/*
 * One host step on its own, for the guest's unit tests (test_guest.c),
 * which set up states the host's sequence passes through but does not
 * stop at (three notices behind one NMI).  The model, and any test of the
 * host's order, uses sim_host_entry() instead.
 */
bool sim_put_notice(struct sim_vcpu *v, __u64 ip, __u8 cpl);
enum pvprof_nmi_gate sim_ring_gate(struct sim_vcpu *v, bool nmi_held,
				   bool nmi_masked);

void sim_free(struct sim_vcpu *v);
void sim_capture(void *ctx, const struct pvprof_notice *n,
		 struct pvprof_callchain *chain, __u32 max_frames);

#endif /* _PVPROF_TEST_SIM_H */
