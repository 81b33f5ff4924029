/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host-side helpers of the pvprof data-path tests: the control plane on a
 * test VM, the per-vCPU books (spec pvprof-loss-invariants) and a checking
 * stream reader. Everything asserts: a failure ends the current case.
 */
#ifndef PVPROF_HOST_UTIL_H
#define PVPROF_HOST_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/pvprof_ctl.h"
#include "core/stream.h"
#include "kvm_util.h"

/* An ioctl on /dev/kvm: 0 or -errno. */
int pvprof_ctl(struct kvm_vm *vm, unsigned long cmd, void *arg);

/* ENABLE with @en (vm_fd is filled in), and DISABLE. */
void pvprof_enable(struct kvm_vm *vm, struct pvprof_ctl_enable *en);
void pvprof_disable(struct kvm_vm *vm);

/* STATUS of vCPU @idx (index in KVM's vCPU order) of a VM with @nr_vcpus. */
void pvprof_vcpu_status(struct kvm_vm *vm, uint32_t nr_vcpus, uint32_t idx,
			struct pvprof_vcpu_status *vs);

uint64_t pvprof_sample_losses(const struct pvprof_vcpu_status *vs);
uint64_t pvprof_notice_losses(const struct pvprof_vcpu_status *vs);

/*
 * The books of a quiescent vCPU (no registration, no pending sample):
 *   samples == notices + sample-level losses
 *   notices == callchains + stale + invalid + unanswered
 */
void pvprof_assert_books(const struct pvprof_vcpu_status *vs, const char *when);

/* "# measured: <label>: samples ... notices ... losses by name" on stderr. */
void pvprof_print_books(const char *label, const struct pvprof_vcpu_status *vs);

/* PVPROF_CTL_STREAM, non-blocking. */
int pvprof_stream_open(struct kvm_vm *vm);

/*
 * What a stream reader saw. Every callchain is checked as it is read:
 * the callchain's own validation rules hold for the copy the host queued
 * (depth, size, canonical frames), and seq grows per registration.
 */
struct pvprof_stream_counts {
	uint64_t hello, callchains, registered, unregistered, dropped, other;
	uint64_t losses[PVPROF_LOSS_NR];
	uint64_t last_seq;
	bool eof;
	/*
	 * Per vCPU (by the header's vcpu_id, which must be < GUEST_MAX_VCPUS
	 * for a callchain): callchains, and the last seq of the vCPU's current
	 * registration (seq grows per registration, so per vCPU).
	 */
	uint64_t vcpu_callchains[GUEST_MAX_VCPUS];
	uint64_t vcpu_last_seq[GUEST_MAX_VCPUS];
	/* Optional: called with every callchain after the checks above. */
	void (*on_callchain)(void *arg, const struct pvprof_st_view *v);
	void *arg;
};

/*
 * Read what is queued (until EAGAIN), or with @until_eof block until end
 * of file. Fails the case on bad framing or a callchain the host should
 * never have queued.
 */
void pvprof_stream_read(int fd, struct pvprof_stream_counts *c, bool until_eof);

#endif
