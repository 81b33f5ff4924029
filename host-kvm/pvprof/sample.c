// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof sampling: one kernel perf event per vCPU, its overflow handler,
 * and the vCPU-thread work before each entry (notices, the NMI, draining).
 *
 * The overflow handler runs in hardirq (cpu-clock) or NMI (hardware
 * events) context on the vCPU's CPU.  It takes no lock and touches no
 * guest memory: it reads the guest state KVM has cached, leaves one sample
 * in the vCPU's slot and raises KVM_REQ_PVPROF.  Everything else runs on
 * the vCPU's own thread in the request block of vcpu_enter_guest() (process
 * context, kvm->srcu held) or when KVM_RUN returns, so guest memory is
 * only ever written by the vCPU's thread, through KVM's cached accessors
 * that mark the pages dirty.
 *
 * The order of that work (which guest memory is read and written when,
 * when the sample is taken and the NMI injected) is the core's host
 * sequence (core/host_vcpu.c), which the unit tests' model drives too;
 * this file gives it KVM's operations (struct pvprof_host_ops).
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/timekeeping.h>

#include <linux/kvm_host.h>

#include "kvm_cache_regs.h"
#include "x86.h"
#include "pvprof_compat.h"
#include "pvprof_hooks.h"
#include "pvprof_host.h"
#include "pvprof-core/stream.h"

/* Samples per second the whole host takes for pvprof, over all VMs. */
static unsigned int pvprof_host_rate = 100000;
module_param(pvprof_host_rate, uint, 0644);
MODULE_PARM_DESC(pvprof_host_rate,
		 "Samples per second pvprof takes over all VMs (default 100000); the rest count as throttled");

/*
 * Whether an interrupt due at a pvprof NMI waits for the interrupt window
 * (__kvm_pvprof_irq_waits_for_window()).  It saves an exit per such
 * interrupt, but a host that itself ran under QEMU's emulation froze with
 * it (4 freezes in 60 rounds, none in 45 without it:
 * tests/nested/freeze/README.md), so by default only a host on hardware
 * uses it.  -1: only without X86_FEATURE_HYPERVISOR; 0: never (KVM's own
 * immediate exit); 1: always.
 */
static int pvprof_irq_waits_for_nmi = -1;
module_param(pvprof_irq_waits_for_nmi, int, 0644);
MODULE_PARM_DESC(pvprof_irq_waits_for_nmi,
		 "An interrupt due at a pvprof NMI waits for the interrupt window: -1 (default) on hardware only, 0 never, 1 always");

static bool pvprof_irq_may_wait(void)
{
	int mode = READ_ONCE(pvprof_irq_waits_for_nmi);

	if (mode < 0)
		return !boot_cpu_has(X86_FEATURE_HYPERVISOR);
	return mode;
}

static unsigned long pvprof_host_window_start;
static atomic_t pvprof_host_window_samples = ATOMIC_INIT(0);

static struct perf_event_attr pvprof_event_attr(const struct pvprof_config *cfg)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.pinned		= 1,
		.sample_period	= cfg->period,
	};

	switch (cfg->event) {
	case PVPROF_EVENT_CPU_CLOCK:
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		break;
	case PVPROF_EVENT_HW_CYCLES:
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.exclude_host = 1;
		break;
	default:
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_INSTRUCTIONS;
		attr.exclude_host = 1;
		break;
	}
	if (cfg->freq) {
		attr.freq = 1;
		attr.sample_freq = cfg->freq;
	}
	return attr;
}

/**
 * pvprof_sampling_supported() - can this host count the event
 * @event: PVPROF_EVENT_*
 *
 * Return: 0, or -EOPNOTSUPP for a hardware event without a host PMU.
 */
int pvprof_sampling_supported(u32 event)
{
	struct pvprof_config cfg = { .event = event, .period = 1000000 };
	struct perf_event_attr attr;
	struct perf_event *pe;

	if (event == PVPROF_EVENT_CPU_CLOCK)
		return 0;
	attr = pvprof_event_attr(&cfg);
	attr.disabled = 1;
	pe = perf_event_create_kernel_counter(&attr, -1, current, NULL, NULL);
	if (IS_ERR(pe))
		return -EOPNOTSUPP;
	perf_event_release_kernel(pe);
	return 0;
}

/**
 * pvprof_vcpu_stop_sampling() - release the vCPU's perf event
 * @pv: the vCPU, lock held
 *
 * Safe from any thread: perf waits for a running overflow handler.  The
 * vCPU is never waited on.
 */
void pvprof_vcpu_stop_sampling(struct pvprof_vcpu *pv)
{
	lockdep_assert_held(&pv->lock);
	if (!pv->event)
		return;
	perf_event_release_kernel(pv->event);
	pv->event = NULL;
	pv->event_owner = NULL;
}

/* Is a rate window of one second at @start still running; else restart it. */
static bool window_open(unsigned long *start)
{
	unsigned long now = jiffies;

	if (time_before(now, READ_ONCE(*start) + HZ))
		return true;
	WRITE_ONCE(*start, now);
	return false;
}

static bool pvprof_throttled(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	if (!window_open(&pv->window_start))
		pv->window_samples = 0;
	if (++pv->window_samples > PVPROF_MAX_FREQ)
		return true;
	if (!window_open(&pvm->window_start))
		atomic_set(&pvm->window_samples, 0);
	if (atomic_inc_return(&pvm->window_samples) > READ_ONCE(pvm->config.vm_rate_cap))
		return true;
	if (!window_open(&pvprof_host_window_start))
		atomic_set(&pvprof_host_window_samples, 0);
	return atomic_inc_return(&pvprof_host_window_samples) >
	       READ_ONCE(pvprof_host_rate);
}

static void pvprof_irq_lost(struct pvprof_vcpu *pv, unsigned int reason)
{
	WRITE_ONCE(pv->irq_losses[reason], pv->irq_losses[reason] + 1);
}

/*
 * The overflow handler.  Counts only overflows that interrupted this
 * vCPU's guest code: the vCPU is the one running here and KVM is handling
 * an interrupt (IRQ for cpu-clock's hrtimer) or NMI (PMI) that arrived
 * while the guest ran.  KVM keeps RIP and the CPL readable in that window.
 */
static void pvprof_overflow(struct perf_event *event,
			    struct perf_sample_data *data, struct pt_regs *regs)
{
	struct pvprof_vcpu *pv = event->overflow_handler_context;
	struct kvm_vcpu *vcpu = pv->vcpu;
	struct pvprof_vm *pvm;
	bool in_own_nmi;
	u8 handling;

	if (kvm_get_running_vcpu() != vcpu)
		return;
	handling = READ_ONCE(vcpu->arch.handling_intr_from_guest);
	if (handling != (in_nmi() ? KVM_HANDLING_NMI : KVM_HANDLING_IRQ))
		return;

	if (vcpu->arch.guest_state_protected) {
		pvprof_irq_lost(pv, PVPROF_LOSS_PROTECTED);
		goto request;
	}
	if (is_guest_mode(vcpu)) {
		pvprof_irq_lost(pv, PVPROF_LOSS_NESTED);
		goto request;
	}
	if (is_smm(vcpu)) {
		pvprof_irq_lost(pv, PVPROF_LOSS_SMM);
		goto request;
	}
	/* The table's reference keeps it while the vCPU runs. */
	pvm = pv->pvm;
	if (pvprof_throttled(pvm, pv)) {
		pvprof_irq_lost(pv, PVPROF_LOSS_THROTTLED);
		goto request;
	}
	in_own_nmi = pvprof_host_in_own_nmi(&pv->ring,
					    static_call(kvm_x86_get_nmi_mask)(vcpu));
	/*
	 * Acquire: the vCPU thread finished copying the slot before clearing.
	 * Folding into a full slot races with nothing: the vCPU thread takes
	 * the slot on this same thread, outside this window.
	 */
	if (smp_load_acquire(&pv->slot_full)) {
		if (!pvprof_sample_fold(&pv->slot, in_own_nmi))
			pvprof_irq_lost(pv, PVPROF_LOSS_SLOT_BUSY);
		goto request;
	}
	pv->slot.host_time_ns = ktime_get_mono_fast_ns();
	pv->slot.guest_tsc = kvm_read_l1_tsc(vcpu, rdtsc());
	pv->slot.ip = kvm_rip_read(vcpu);
	pv->slot.cpl = static_call(kvm_x86_get_cpl)(vcpu);
	pv->slot.event = pvm->config.event;
	pv->slot.period = event->hw.last_period;
	pv->slot.flags = in_own_nmi ? PVPROF_ST_SAMPLE_F_OWN_NMI : 0;
	pv->slot.own_nmi_samples = 0;
	/* Release: the slot is complete before the vCPU thread sees it full. */
	smp_store_release(&pv->slot_full, 1);
request:
	kvm_make_request(KVM_REQ_PVPROF, vcpu);
}

/*
 * (Re)create the perf event on this thread when the configuration or the
 * thread running the vCPU changed; release it when sampling is off.
 */
static void pvprof_sync_event(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	u64 gen = READ_ONCE(pvm->config_gen);
	bool enabled = READ_ONCE(pvm->enabled);
	struct perf_event_attr attr;
	struct perf_event *pe;

	if (pv->config_gen == gen && (!enabled || pv->event_owner == current))
		return;
	pvprof_vcpu_stop_sampling(pv);
	pv->config_gen = gen;
	if (!enabled)
		return;
	attr = pvprof_event_attr(&pvm->config);
	pe = perf_event_create_kernel_counter(&attr, -1, current,
					      pvprof_overflow, pv);
	if (IS_ERR(pe)) {
		pr_warn_ratelimited("vCPU %u: cannot create the sampling event: %ld\n",
				    pv->vcpu_id, PTR_ERR(pe));
		return;
	}
	pv->event = pe;
	pv->event_owner = current;
}

/*
 * The host sequence of a vCPU is the core's (core/host_vcpu.c); these are
 * its operations on the real vCPU, with @ctx its struct pvprof_vcpu.
 *
 * 8-byte index accesses are single loads and stores at the cached host
 * address of the buffer's first page (which holds every index), so the
 * guest never sees a torn index.  The caches are refreshed when memslots
 * changed; -EFAULT means the buffer is no longer writable guest RAM.
 */
static int pvprof_buf_refresh(struct kvm *kvm, struct pvprof_vcpu *pv)
{
	u64 gen = kvm_memslots(kvm)->generation;

	if (likely(pv->page0.generation == gen && pv->page0.memslot &&
		   pv->buf.generation == gen))
		return 0;
	if (kvm_gfn_to_hva_cache_init(kvm, &pv->page0, pv->gpa, PAGE_SIZE) ||
	    kvm_gfn_to_hva_cache_init(kvm, &pv->buf, pv->gpa, pv->ring.geo.size))
		return -EFAULT;
	return 0;
}

/*
 * Copy @len bytes of guest memory at @gpa through the VMM's mm, from a
 * thread that does not share it (DISABLE's caller), page by page: the
 * buffer may span memslots.  kvm->srcu held; sleeps.
 */
static int pvprof_read_vmm(struct kvm *kvm, gpa_t gpa, void *dst, size_t len)
{
	struct mm_struct *mm = kvm->mm;
	int ret = 0;

	if (!mmget_not_zero(mm))
		return -EFAULT;
	while (len) {
		size_t off = offset_in_page(gpa);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		unsigned long hva = gfn_to_hva(kvm, gpa_to_gfn(gpa));
		struct page *page;
		void *src;
		long got;

		if (kvm_is_error_hva(hva)) {
			ret = -EFAULT;
			break;
		}
		mmap_read_lock(mm);
		got = pvprof_get_user_page_remote(mm, hva, &page);
		mmap_read_unlock(mm);
		if (got != 1) {
			ret = -EFAULT;
			break;
		}
		src = kmap_local_page(page);
		memcpy(dst, src + off, n);
		kunmap_local(src);
		put_page(page);
		gpa += n;
		dst += n;
		len -= n;
	}
	mmput(mm);
	return ret;
}

/*
 * KVM holds an NMI for the vCPU, from any source, not yet delivered: being
 * injected, pending (in nmi_pending or, with vNMI, in the VMCB) or queued.
 */
static bool pvprof_nmi_held(struct kvm_vcpu *vcpu)
{
	return vcpu->arch.nmi_injected || pvprof_nmis_pending(vcpu) ||
	       atomic_read(&vcpu->arch.nmi_queued);
}

/* Take the sample out of the slot; false when there is none. */
static bool pvprof_take_sample(struct pvprof_vcpu *pv,
			       struct pvprof_sample *sample)
{
	/* Pairs with the handler's release of a full slot. */
	if (!smp_load_acquire(&pv->slot_full))
		return false;
	*sample = pv->slot;
	/* The copy is complete before the handler may refill it. */
	smp_store_release(&pv->slot_full, 0);
	return true;
}

static int pvprof_op_refresh(void *ctx)
{
	struct pvprof_vcpu *pv = ctx;

	return pvprof_buf_refresh(pv->vcpu->kvm, pv);
}

/* On the vCPU's thread: through KVM's cache. */
static int pvprof_op_read(void *ctx, u32 off, void *dst, u32 len)
{
	struct pvprof_vcpu *pv = ctx;

	return kvm_read_guest_offset_cached(pv->vcpu->kvm, &pv->buf, dst, off, len) ?
	       -EFAULT : 0;
}

/* On another thread (DISABLE's caller): through the VMM's mm. */
static int pvprof_op_read_remote(void *ctx, u32 off, void *dst, u32 len)
{
	struct pvprof_vcpu *pv = ctx;

	return pvprof_read_vmm(pv->vcpu->kvm, pv->gpa + off, dst, len);
}

static int pvprof_op_write(void *ctx, u32 off, const void *src, u32 len)
{
	struct pvprof_vcpu *pv = ctx;

	return kvm_write_guest_offset_cached(pv->vcpu->kvm, &pv->buf, (void *)src,
					     off, len) ? -EFAULT : 0;
}

static int pvprof_op_load_index(void *ctx, u32 off, u64 *val)
{
	struct pvprof_vcpu *pv = ctx;

	return get_user(*val, (u64 __user *)(pv->page0.hva + off)) ? -EFAULT : 0;
}

static int pvprof_op_store_index(void *ctx, u32 off, u64 val)
{
	struct pvprof_vcpu *pv = ctx;

	if (put_user(val, (u64 __user *)(pv->page0.hva + off)))
		return -EFAULT;
	mark_page_dirty_in_slot(pv->vcpu->kvm, pv->page0.memslot, gpa_to_gfn(pv->gpa));
	return 0;
}

static bool pvprof_op_sample_pending(void *ctx)
{
	struct pvprof_vcpu *pv = ctx;

	return READ_ONCE(pv->slot_full);
}

static bool pvprof_op_take_sample(void *ctx, struct pvprof_sample *s)
{
	return pvprof_take_sample(ctx, s);
}

static void pvprof_op_nmi_state(void *ctx, bool *held, bool *masked)
{
	struct pvprof_vcpu *pv = ctx;

	*held = pvprof_nmi_held(pv->vcpu);
	*masked = static_call(kvm_x86_get_nmi_mask)(pv->vcpu);
}

static void pvprof_op_inject_nmi(void *ctx)
{
	struct pvprof_vcpu *pv = ctx;

	kvm_inject_nmi(pv->vcpu);
}

static bool pvprof_op_open_nmi_window(void *ctx)
{
	struct pvprof_vcpu *pv = ctx;

	/* In SMM or a nested guest the mask is not this guest's handler. */
	if (is_guest_mode(pv->vcpu) || is_smm(pv->vcpu))
		return false;
	/*
	 * With vNMI the guest's IRET is not intercepted: KVM has no NMI
	 * window while NMIs are blocked (svm_enable_nmi_window() WARNs), so
	 * the notices wait for the next exit (doc/kvm-6.12-facts.md).
	 */
	if (pvprof_host_has_vnmi())
		return false;
	static_call(kvm_x86_enable_nmi_window)(pv->vcpu);
	return true;
}

static bool pvprof_op_emit(void *ctx, const struct pvprof_notice_facts *facts,
			   const struct pvprof_callchain *chain, u32 slots)
{
	struct pvprof_vcpu *pv = ctx;
	struct pvprof_stream *st = READ_ONCE(pv->pvm->stream);
	void *out = pv->stream_entry;
	u32 cap = sizeof(pv->stream_entry), len;

	if (slots > 1) {
		out = pv->span_stream;
		cap = PVPROF_SPAN_STREAM_SIZE;
	}
	len = pvprof_st_put_callchain(out, cap, pv->vcpu_id, ktime_get_ns(), facts, chain);
	return st && len && pvprof_stream_append(st, pv, out, len);
}

static const struct pvprof_host_ops pvprof_vcpu_ops = {
	.refresh		= pvprof_op_refresh,
	.read			= pvprof_op_read,
	.write			= pvprof_op_write,
	.load_index		= pvprof_op_load_index,
	.store_index		= pvprof_op_store_index,
	.sample_pending		= pvprof_op_sample_pending,
	.take_sample		= pvprof_op_take_sample,
	.nmi_state		= pvprof_op_nmi_state,
	.inject_nmi		= pvprof_op_inject_nmi,
	.open_nmi_window	= pvprof_op_open_nmi_window,
	.emit			= pvprof_op_emit,
};

/*
 * From a thread other than the vCPU's, for pvprof_host_vcpu_drain() without
 * publishing chain_tail, which reads and emits only: such a thread never
 * writes guest memory.
 */
static const struct pvprof_host_ops pvprof_remote_ops = {
	.read			= pvprof_op_read_remote,
	.emit			= pvprof_op_emit,
};

/* The vCPU as the core's host sequence sees it, for one call; pv->lock held. */
static struct pvprof_host_vcpu pvprof_host_view(struct pvprof_vcpu *pv,
						const struct pvprof_host_ops *ops)
{
	/*
	 * The core copies a callchain into work.span_copy whole before judging
	 * it, up to every slot of the largest ring; span_stream follows it
	 * in the same allocation and is built only from callchains that fit
	 * PVPROF_SPAN_COPY_SIZE.
	 */
	BUILD_BUG_ON(PVPROF_SPAN_COPY_SIZE + PVPROF_SPAN_STREAM_SIZE <
		     PVPROF_CHAIN_SLOTS(PVPROF_BUF_MAX_SIZE) * PVPROF_CHAIN_SLOT_SIZE);
	lockdep_assert_held(&pv->lock);
	return (struct pvprof_host_vcpu) {
		.ring		= &pv->ring,
		.acct		= &pv->acct,
		.work		= &pv->work,
		.registered	= pv->registered,
		.ops		= ops,
		.ctx		= pv,
	};
}

/* Add the losses the overflow handler counted since the last fold. */
static void pvprof_fold_irq_counts(struct pvprof_vcpu *pv)
{
	struct pvprof_host_vcpu v = pvprof_host_view(pv, &pvprof_vcpu_ops);

	pvprof_host_vcpu_fold_losses(&v, pv->irq_losses, pv->folded_losses);
}

/*
 * DISABLE: no sample after it returns, and what the vCPU's guest posted and
 * lost is in the stream.  It runs on the caller's thread and never waits
 * for the vCPU, which may be halted or stopped by its VMM and then
 * processes no request: callchains are copied from the VMM's memory, and
 * chain_tail is left for the vCPU's next entry to publish.
 */
static void pvprof_vcpu_quiesce(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	struct kvm *kvm = pvm->kvm;
	struct pvprof_host_vcpu v;
	int idx;

	mutex_lock(&pv->lock);
	pvprof_vcpu_stop_sampling(pv);
	pvprof_fold_irq_counts(pv);
	if (pv->registered && !pvprof_host_indices_exhausted(&pv->ring)) {
		v = pvprof_host_view(pv, &pvprof_remote_ops);
		idx = srcu_read_lock(&kvm->srcu);
		/* A buffer the host cannot read now is the vCPU's to drain. */
		pvprof_host_vcpu_drain(&v, false);
		srcu_read_unlock(&kvm->srcu, idx);
	}
	pvprof_stream_put_losses(pvm, pv);
	mutex_unlock(&pv->lock);
}

/**
 * pvprof_sampling_changed() - ENABLE or DISABLE changed the configuration
 * @pvm: the VM, lock held
 *
 * Every vCPU re-creates or releases its event at its next entry.  A vCPU
 * that is halted takes no samples until then anyway; DISABLE releases the
 * events itself so that no sample is taken after it returns, and drains.
 */
void pvprof_sampling_changed(struct pvprof_vm *pvm)
{
	unsigned int idx;

	lockdep_assert_held(&pvm->lock);
	WRITE_ONCE(pvm->config_gen, pvm->config_gen + 1);
	if (!pvm->enabled) {
		for (idx = 0; idx < KVM_MAX_VCPUS; idx++) {
			struct pvprof_vcpu *pv = pvm->vcpus[idx];

			if (pv)
				pvprof_vcpu_quiesce(pvm, pv);
		}
	}
	kvm_make_all_cpus_request(pvm->kvm, KVM_REQ_PVPROF);
}

/**
 * pvprof_published_want() - line 1's configuration as the VM's says now
 * @pvm: the VM
 * @want: filled with state, event, period and ustack_size
 *
 * A disabled VM asks for no user stack: callchains answering its last
 * notices stay as small as they can.
 */
void pvprof_published_want(const struct pvprof_vm *pvm, struct pvprof_published *want)
{
	bool enabled = READ_ONCE(pvm->enabled);

	memset(want, 0, sizeof(*want));
	want->state = enabled ? PVPROF_STATE_ACTIVE : 0;
	want->event = pvm->config.event;
	want->period = pvm->config.period;
	want->ustack_size = enabled ? pvm->config.ustack_size : 0;
}

/*
 * Everything the vCPU thread does for pvprof, pv->lock held: the core's
 * host sequence (spec pvprof-host-sequence), between the losses the overflow
 * handler counted and the drop of a registration the VM may no longer
 * use.  When only the guest's NMI handler keeps the NMI gate shut, KVM's
 * NMI window brings an exit as soon as the handler has returned;
 * kvm_pvprof_vcpu_exited() asks again after every exit while a sample
 * waits or the gate awaits that window.
 */
static void pvprof_vcpu_work(struct pvprof_vm *pvm, struct pvprof_vcpu *pv,
			     bool entering)
{
	struct pvprof_published want;
	struct pvprof_host_vcpu v;

	if (entering)
		pvprof_sync_event(pvm, pv);
	pvprof_fold_irq_counts(pv);
	if (pv->registered && pvprof_vm_hides(pvm))
		pvprof_vcpu_drop(pvm, pv, PVPROF_VCPU_DROPPED);
	pvprof_published_want(pvm, &want);
	v = pvprof_host_view(pv, &pvprof_vcpu_ops);
	if (pvprof_host_vcpu_work(&v, &want))
		pvprof_vcpu_drop(pvm, pv, PVPROF_VCPU_DROPPED);
}

/*
 * Changed loss counts reach the stream at least once a second, and at once
 * while sampling is disabled: no later sample's work would bring them.
 */
static void pvprof_flush_losses(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	if (READ_ONCE(pvm->enabled) && time_before(jiffies, pv->loss_flush_at))
		return;
	pv->loss_flush_at = jiffies + HZ;
	pvprof_stream_put_losses(pvm, pv);
}

static void pvprof_vcpu_run(struct kvm_vcpu *vcpu, bool entering)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);
	struct pvprof_vm *pvm;

	if (!pv) {
		/* A vCPU without state yet gets it once the VM streams. */
		pvm = entering ? pvprof_vm_find(vcpu->kvm) : NULL;
		if (!pvm || !READ_ONCE(pvm->stream))
			return;
		pv = pvprof_vcpu_get_or_create(vcpu);
		if (!pv)
			return;
	}
	pvm = pv->pvm;
	if (!mutex_trylock(&pv->lock)) {
		/*
		 * A control thread holds it (DISABLE, across perf's release
		 * and reads of guest memory).  Raising the request again here
		 * would cancel every entry until the lock is free, a livelock
		 * for a vCPU thread that outranks the holder on its CPU: the
		 * work waits for the next exit instead.
		 */
		WRITE_ONCE(pv->work_deferred, true);
		return;
	}
	if (entering)
		WRITE_ONCE(pv->work_deferred, false);
	pvprof_vcpu_work(pvm, pv, entering);
	pvprof_flush_losses(pvm, pv);
	mutex_unlock(&pv->lock);
}

/**
 * kvm_pvprof_handle_request() - KVM_REQ_PVPROF before an entry
 * @vcpu: the vCPU, on its own thread, kvm->srcu held
 *
 * Creates or releases the perf event, writes the pending notice, injects
 * the pvprof NMI through the gate, and drains posted callchains.
 */
void kvm_pvprof_handle_request(struct kvm_vcpu *vcpu)
{
	pvprof_vcpu_run(vcpu, true);
}

/**
 * __kvm_pvprof_vcpu_exited() - the vCPU left guest mode
 * @vcpu: the vCPU, on its own thread, kvm->srcu held, preemptible
 *
 * A sample waiting in its slot until the guest has read the notices before
 * it, a gate awaiting the end of the guest's NMI handler (pvprof_notice()),
 * and work a busy lock deferred (pvprof_vcpu_run()) ask again before the
 * next entry: once per exit, never from the request itself.  Once sampling is
 * disabled no sample's request comes to drain the answers to the notices
 * still outstanding: they are drained here, on the exit after the guest's
 * NMI handler (its IRET, or the HLT of a vCPU that goes idle, which would
 * otherwise keep them in its buffer until it next returns to user space).
 */
void __kvm_pvprof_vcpu_exited(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);

	if (!pv)
		return;
	if (READ_ONCE(pv->slot_full) || READ_ONCE(pv->work.awaits_nmi_window) ||
	    READ_ONCE(pv->work_deferred)) {
		kvm_make_request(KVM_REQ_PVPROF, vcpu);
		return;
	}
	/* Unlocked: a hint; the drain itself runs under pv->lock. */
	if (!READ_ONCE(pv->pvm->enabled) &&
	    READ_ONCE(pv->ring.notice_head) != READ_ONCE(pv->ring.resolved_seq))
		pvprof_vcpu_run(vcpu, false);
}

/*
 * KVM is about to deliver an NMI; @more: KVM still holds NMIs for the vCPU
 * that reach the guest after this one.  Attributes the delivery to pvprof
 * when pvprof owes an NMI and this is the last one (spec
 * pvprof-host-sequence), and stores the new count in nmi_delivered before
 * the entry that delivers it, so the guest's handler can tell this NMI is
 * pvprof's.
 */
static void pvprof_nmi_delivery(struct kvm_vcpu *vcpu, bool more)
{
	struct pvprof_host_vcpu v;
	struct pvprof_vcpu *pv;

	if (is_guest_mode(vcpu))
		return;
	pv = pvprof_vcpu_find(vcpu);
	if (!pv)
		return;
	/*
	 * Not a trylock: a delivery the guest cannot see as pvprof's is an
	 * unknown NMI in the guest.  Control threads hold the lock briefly
	 * and never wait for a vCPU.
	 */
	mutex_lock(&pv->lock);
	v = pvprof_host_view(pv, &pvprof_vcpu_ops);
	if (pvprof_host_vcpu_nmi_delivery(&v, more) < 0)
		pvprof_vcpu_drop(pv->pvm, pv, PVPROF_VCPU_DROPPED);
	mutex_unlock(&pv->lock);
}

/**
 * __kvm_pvprof_nmi_delivery() - KVM is about to inject an NMI into the vCPU
 * @vcpu: the vCPU, on its own thread, kvm->srcu held, preemptible; called
 *	where kvm_check_and_inject_events() moves a pending NMI into the
 *	VMCB/VMCS for the next entry
 *
 * An NMI the VMCB holds for the hardware (vNMI) comes after this one: the
 * injected NMI blocks NMIs until the guest's IRET.
 */
void __kvm_pvprof_nmi_delivery(struct kvm_vcpu *vcpu)
{
	pvprof_nmi_delivery(vcpu, vcpu->arch.nmi_pending ||
			    pvprof_vnmi_pending(vcpu) ||
			    atomic_read(&vcpu->arch.nmi_queued));
}

/**
 * __kvm_pvprof_vnmi_delivery() - KVM handed an NMI to the hardware (vNMI)
 * @vcpu: the vCPU, vcpu->mutex held, preemptible; called where
 *	process_nmi() has set V_NMI_PENDING in the VMCB (6.12 and vNMI only),
 *	before KVM_REQ_NMI's entry or from KVM_{GET,SET}_VCPU_EVENTS
 *
 * The hardware delivers it once the guest can take an NMI, after an NMI
 * kvm_check_and_inject_events() injects on the same entry (nmi_pending),
 * so only NMIs still queued come after it.  Untested: no vNMI host.
 */
void __kvm_pvprof_vnmi_delivery(struct kvm_vcpu *vcpu)
{
	int idx;

	/* The ioctl callers of process_nmi() do not hold kvm->srcu. */
	idx = srcu_read_lock(&vcpu->kvm->srcu);
	pvprof_nmi_delivery(vcpu, atomic_read(&vcpu->arch.nmi_queued));
	srcu_read_unlock(&vcpu->kvm->srcu, idx);
}

/**
 * __kvm_pvprof_irq_waits_for_window() - may an interrupt wait behind this entry's NMI?
 * @vcpu: the vCPU, on its own thread, kvm->srcu held; called where KVM
 *	finds an interrupt due that it cannot inject on this entry
 *
 * An entry injects one event.  When it is an NMI (new or re-injected), KVM
 * would force an immediate exit for the interrupt; that exit finds the guest
 * in its NMI handler, whose gate cleared IF, and only opens the interrupt
 * window.  Opening the window at once saves the exit; where the gate left IF
 * set, the window exits at once instead.  Only for vCPUs pvprof knows,
 * outside guest mode (where an interrupt may have to become an exit to the
 * guest's own hypervisor) (spec pvprof-host-sequence, at delivery).
 *
 * Return: true when the interrupt waits for KVM's interrupt window.
 */
bool __kvm_pvprof_irq_waits_for_window(struct kvm_vcpu *vcpu)
{
	/* The entry carries an NMI, not an exception that kept it back. */
	if (!pvprof_irq_may_wait() || !vcpu->arch.nmi_injected ||
	    vcpu->arch.exception.injected || is_guest_mode(vcpu))
		return false;
	return pvprof_vcpu_find(vcpu);
}

/**
 * __kvm_pvprof_nmi_pending_owed() - is one of the vCPU's pending NMIs pvprof's?
 * @vcpu: the vCPU, vcpu->mutex held (KVM_GET_VCPU_EVENTS), after
 *	process_nmi()
 *
 * pvprof's NMI only means something on this host, which attributes its
 * delivery: carried by a snapshot or a migration stream to a host that
 * cannot, it would reach the guest as an unknown NMI.  KVM_GET_VCPU_EVENTS
 * leaves it out; a VMM that writes that state back drops it from KVM, and
 * the NMI gate, finding nothing in flight, injects again for the notices
 * still unconsumed (spec pvprof-host-sequence).
 *
 * Return: 1 when pvprof owes an NMI that KVM holds pending, else 0.
 */
unsigned int __kvm_pvprof_nmi_pending_owed(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv;
	unsigned int owed;

	if (!pvprof_nmis_pending(vcpu))
		return 0;
	pv = pvprof_vcpu_find(vcpu);
	if (!pv)
		return 0;
	mutex_lock(&pv->lock);
	owed = pv->ring.nmi_owed;
	mutex_unlock(&pv->lock);
	return owed;
}

/**
 * __kvm_pvprof_vcpu_run_enter() - KVM_RUN is about to run the vCPU
 * @vcpu: the vCPU, on the thread that will run it
 *
 * Raises KVM_REQ_PVPROF when the vCPU's event does not match the VM's
 * configuration or counts another thread (a vCPU added after ENABLE, or
 * QEMU running a parked vCPU from a new thread).
 */
void __kvm_pvprof_vcpu_run_enter(struct kvm_vcpu *vcpu)
{
	struct pvprof_vcpu *pv = pvprof_vcpu_find(vcpu);
	struct pvprof_vm *pvm;

	if (!pv) {
		/* A vCPU without state yet gets it once the VM streams. */
		pvm = pvprof_vm_find(vcpu->kvm);
		if (pvm && READ_ONCE(pvm->stream))
			kvm_make_request(KVM_REQ_PVPROF, vcpu);
		return;
	}
	pvm = pv->pvm;
	if (!READ_ONCE(pvm->stream))
		return;
	if (READ_ONCE(pv->work_deferred) ||
	    READ_ONCE(pv->config_gen) != READ_ONCE(pvm->config_gen) ||
	    (READ_ONCE(pvm->enabled) && READ_ONCE(pv->event_owner) != current))
		kvm_make_request(KVM_REQ_PVPROF, vcpu);
}

/**
 * __kvm_pvprof_vcpu_run_exit() - KVM_RUN returns to user space
 * @vcpu: the vCPU, on its own thread, kvm->srcu held
 *
 * Drains what the guest posted since the last entry, so a VMM that stops
 * running the vCPU does not leave callchains behind.
 */
void __kvm_pvprof_vcpu_run_exit(struct kvm_vcpu *vcpu)
{
	pvprof_vcpu_run(vcpu, false);
}

/**
 * pvprof_vcpu_unregister() - the guest's UNREGISTER (spec pvprof-op-unregister)
 * @vcpu: the vCPU, on its own thread, kvm->srcu held
 * @pv: its state, lock held
 *
 * Drains the callchain ring once, counts a pending sample as
 * PVPROF_LOSS_UNREGISTERED and the outstanding notices as unanswered, and
 * ends the registration.  No access to the buffer follows.
 */
void pvprof_vcpu_unregister(struct kvm_vcpu *vcpu, struct pvprof_vcpu *pv)
{
	struct pvprof_host_vcpu v;

	lockdep_assert_held(&pv->lock);
	pvprof_fold_irq_counts(pv);
	v = pvprof_host_view(pv, &pvprof_vcpu_ops);
	pvprof_host_vcpu_unregister(&v);
	pvprof_vcpu_drop(pv->pvm, pv, PVPROF_VCPU_UNREGISTERED);
}
