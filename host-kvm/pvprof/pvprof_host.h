/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof host state kept beside KVM's own: one object per VM that uses
 * pvprof, found from its struct kvm, and one per registered vCPU slot.
 * Nothing here is part of struct kvm or struct kvm_vcpu, so no KVM export
 * changes its CRC.
 */
#ifndef _PVPROF_HOST_H
#define _PVPROF_HOST_H

#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/kvm_host.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "pvprof-core/host_vcpu.h"

struct perf_event;

/* The largest callchain, with a user stack snapshot (spec pvprof-ustack). */
#define PVPROF_MAX_CHAIN_SIZE	(sizeof(struct pvprof_callchain) + 8 * PVPROF_MAX_DEPTH + \
				 sizeof(struct pvprof_ustack) + PVPROF_USTACK_MAX)
/* A callchain stream entry's bytes before its pvprof_callchain. */
#define PVPROF_ST_CALLCHAIN_FIXED \
	(sizeof(struct pvprof_st_callchain) - sizeof(struct pvprof_callchain))
#define PVPROF_SPAN_COPY_SIZE	(PVPROF_CHAIN_SPAN(PVPROF_MAX_CHAIN_SIZE) * \
				 PVPROF_CHAIN_SLOT_SIZE)
#define PVPROF_SPAN_STREAM_SIZE	(PVPROF_ST_CALLCHAIN_FIXED + PVPROF_MAX_CHAIN_SIZE)

/**
 * struct pvprof_vcpu - pvprof state of one vCPU
 * @rcu: frees the state after finders that may still compare a hint to it
 * @lock: serialises the vCPU thread and control-plane threads; the vCPU
 *	thread only trylocks it before entries and, when it is busy, sets
 *	@work_deferred and retries after the next exit
 * @pvm: the VM's pvprof object
 * @vcpu: the vCPU
 * @vcpu_id: the id given to KVM_CREATE_VCPU
 * @registered: a buffer is registered
 * @gpa: its guest physical address
 * @cookie: the last cookie chosen for this vCPU (a new one must differ)
 * @buf: cached translation of the whole buffer
 * @page0: cached translation of its first page, which holds every index
 * @ring: host side of the registration (core/host.h)
 * @acct: counters, kept across registrations
 * @work: what the host sequence keeps between passes (core/host_vcpu.h):
 *	line 1 as last published, the NMI window awaited, callchain copies
 * @register_tokens: REGISTERs the vCPU may still make now
 * @register_refill_ns: when that budget was last refilled
 * @event: this vCPU's perf event, NULL when not sampling
 * @event_owner: the thread @event counts
 * @config_gen: pvm->config_gen when @event was made
 * @slot: the sample the overflow handler left for the next entry
 * @slot_full: @slot holds a sample (set by the handler, cleared by the vCPU)
 * @work_deferred: the vCPU thread found @lock busy before an entry
 * @irq_losses: samples lost in the overflow handler, by PVPROF_LOSS_*
 * @folded_losses: @irq_losses already added to @acct
 * @window_start: jiffies when the per-vCPU rate window began
 * @window_samples: samples taken in that window
 * @loss_flush_at: jiffies after which changed losses are queued again
 * @stream_entry: the stream entry of a one-slot callchain being built
 * @span_stream: the stream entry of a callchain with a user stack snapshot
 *	being built (PVPROF_SPAN_STREAM_SIZE bytes, NULL until registered),
 *	right after the PVPROF_SPAN_COPY_SIZE bytes of @work.span_copy in
 *	the same allocation
 *
 * The overflow handler writes only @slot, @slot_full, @irq_losses and
 * @window_*:
 * it never takes @lock and never touches @acct.
 */
struct pvprof_vcpu {
	struct rcu_head rcu;
	struct mutex lock;
	struct pvprof_vm *pvm;
	struct kvm_vcpu *vcpu;
	u32 vcpu_id;
	bool registered;
	gpa_t gpa;
	u64 cookie;
	struct gfn_to_hva_cache buf;
	struct gfn_to_hva_cache page0;
	struct pvprof_host_ring ring;
	struct pvprof_vcpu_acct acct;
	struct pvprof_host_work work;
	u64 register_tokens;
	u64 register_refill_ns;
	struct perf_event *event;
	struct task_struct *event_owner;
	u64 config_gen;
	struct pvprof_sample slot;
	int slot_full;
	bool work_deferred;
	u64 irq_losses[PVPROF_LOSS_NR];
	u64 folded_losses[PVPROF_LOSS_NR];
	unsigned long window_start;
	u32 window_samples;
	unsigned long loss_flush_at;
	u64 stream_entry[(PVPROF_ST_CALLCHAIN_FIXED + PVPROF_CHAIN_SLOT_SIZE) / 8];
	void *span_stream;
};


/* The VM's stream and its readers, private to stream.c. */
struct pvprof_stream;

/**
 * struct pvprof_config - what PVPROF_CTL_ENABLE set
 * @event: PVPROF_EVENT_*
 * @period: ns (cpu-clock) or events; with @freq the perf event adapts it
 * @freq: Hz, 0 when period-based
 * @max_depth: frames per callchain for new registrations
 * @vm_rate_cap: samples/s for the VM
 * @ustack_size: user stack bytes asked per callchain, 0 for none
 */
struct pvprof_config {
	u32 event;
	u64 period;
	u64 freq;
	u32 max_depth;
	u32 vm_rate_cap;
	u32 ustack_size;
};

/**
 * struct pvprof_vm - pvprof state of one VM
 * @node: in the table keyed by @kvm
 * @rcu: frees the object after lookups that may still see it
 * @ref: held by the table (until the VM is destroyed) and by stream fds
 * @kvm: the VM; only valid while the object is in the table
 * @lock: protects @vcpus allocation and the configuration
 * @expose: PVPROF_EXPOSE_* for this VM
 * @enabled: sampling is enabled
 * @config: the last ENABLE's configuration, defaults resolved
 * @config_gen: incremented by every ENABLE and DISABLE
 * @window_start: jiffies when the per-VM rate window began
 * @window_samples: samples the VM took in that window
 * @stream: created by the first ENABLE, NULL before
 * @sideband_lock: protects the sideband token bucket
 * @sideband_tokens: bytes the VM may still send now
 * @sideband_refill_ns: when the bucket was last refilled
 * @sideband_bytes: sideband bytes appended to the stream
 * @sideband_refused: SIDEBAND calls answered with an error
 * @vcpus: per-vCPU state by vcpu_idx, allocated on first use
 */
struct pvprof_vm {
	struct hlist_node node;
	struct rcu_head rcu;
	struct kref ref;
	struct kvm *kvm;
	struct mutex lock;
	u32 expose;
	bool enabled;
	struct pvprof_config config;
	u64 config_gen;
	unsigned long window_start;
	atomic_t window_samples;
	struct pvprof_stream *stream;
	spinlock_t sideband_lock;
	u64 sideband_tokens;
	u64 sideband_refill_ns;
	atomic64_t sideband_bytes;
	atomic64_t sideband_refused;
	struct pvprof_vcpu *vcpus[KVM_MAX_VCPUS];
};

struct pvprof_vm *pvprof_vm_find(struct kvm *kvm);
struct pvprof_vm *pvprof_vm_get_or_create(struct kvm *kvm);
struct pvprof_vcpu *pvprof_vcpu_find(struct kvm_vcpu *vcpu);
struct pvprof_vcpu *pvprof_vcpu_get_or_create(struct kvm_vcpu *vcpu);
bool pvprof_vm_hidden(struct kvm *kvm);
bool pvprof_vm_hides(const struct pvprof_vm *pvm);
void pvprof_vcpu_drop(struct pvprof_vm *pvm, struct pvprof_vcpu *pv, u32 event);
void pvprof_vcpu_drop_registration(struct kvm_vcpu *vcpu);
void pvprof_vm_put(struct pvprof_vm *pvm);

int pvprof_sampling_supported(u32 event);
void pvprof_sampling_changed(struct pvprof_vm *pvm);
void pvprof_vcpu_stop_sampling(struct pvprof_vcpu *pv);
void pvprof_published_want(const struct pvprof_vm *pvm, struct pvprof_published *want);
void pvprof_vcpu_unregister(struct kvm_vcpu *vcpu, struct pvprof_vcpu *pv);

long pvprof_sideband(struct kvm_vcpu *vcpu, u64 gpa, u64 len);

struct pvprof_stream *pvprof_stream_create(void);
void pvprof_stream_free(struct pvprof_stream *st);
bool pvprof_stream_append(struct pvprof_stream *st, const struct pvprof_vcpu *pv,
			  const void *entry, u32 len);
void pvprof_stream_put_vcpu(struct pvprof_vm *pvm, const struct pvprof_vcpu *pv,
			    u32 event);
void pvprof_stream_put_losses(struct pvprof_vm *pvm, struct pvprof_vcpu *pv);
void pvprof_stream_finish(struct pvprof_stream *st);
int pvprof_stream_open(struct pvprof_vm *pvm, u32 nr_vcpus);

#endif /* _PVPROF_HOST_H */
