/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host and a guest sharing one buffer in process memory, each driven by
 * the real core code the way the KVM module and the guest driver drive it.
 * The host side reads guest memory only through host_copy_in(), once per
 * item, like kvm_read_guest() into a private copy.
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
	bool registered;
	struct pvprof_guest_buf gb;
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
bool sim_host_sample(struct sim_vcpu *v, __u64 ip, __u8 cpl);
__u32 sim_host_drain(struct sim_vcpu *v);
bool sim_host_sample_waits(struct sim_vcpu *v, bool nmi_busy);
void sim_host_slot_busy(struct sim_vcpu *v);
enum pvprof_nmi_gate sim_host_nmi_gate(struct sim_vcpu *v, bool nmi_held,
				       bool nmi_masked);
bool sim_host_nmi_delivery(struct sim_vcpu *v, bool more_nmis_pending);
void sim_host_unregister(struct sim_vcpu *v);
void sim_emit_losses(struct sim_vcpu *v);
void sim_free(struct sim_vcpu *v);
void sim_capture(void *ctx, const struct pvprof_notice *n,
		 struct pvprof_record *rec, __u32 max_frames);

#endif /* _PVPROF_TEST_SIM_H */
