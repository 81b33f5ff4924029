// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof guest driver: detection, per-CPU registration, the NMI handler.
 *
 * Each online CPU registers one zeroed buffer with the host
 * (spec pvprof-guest-states).  All state changes of a CPU's registration run
 * on that CPU with IRQs off: the hotplug callbacks, the periodic check (a
 * work item bound to the CPU), the reboot path (an IPI) and syscore
 * suspend/resume.  The only thing that can interleave with them is this CPU's
 * NMI handler, which touches the buffer only while pvprof_cpu.active is set.
 * The flag is set after the zeroing and before REGISTER, and cleared only
 * after UNREGISTER returned: the host can attribute an NMI to a registration
 * from the entry that returns from REGISTER until the exit for UNREGISTER,
 * and the handler must be there to claim it (spec pvprof-guest-nmi-handler).
 * The buffer is freed only after UNREGISTER succeeded and the handler is
 * gone, so the host never writes a page the driver freed or reuses.
 */
#define pr_fmt(fmt) "pvprof: " fmt

#include <linux/cc_platform.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/gfp.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/reboot.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <asm/nmi.h>

#include "compat.h"
#include "pvprof_guest.h"

/* How often each CPU asks the host whether it is still registered. */
#define PVPROF_CHECK_PERIOD	HZ

DEFINE_PER_CPU(struct pvprof_cpu, pvprof_cpus);

struct pvprof_host pvprof_host;

unsigned int pvprof_buf_size;
module_param_named(buf_size, pvprof_buf_size, uint, 0444);
MODULE_PARM_DESC(buf_size, "Bytes per CPU buffer: a power of two, 8192..65536 (default 65536 when the host takes user stack snapshots, else 16384)");

static bool pvprof_register_featureless;
module_param_named(register_featureless, pvprof_register_featureless, bool, 0444);
MODULE_PARM_DESC(register_featureless,
		 "Register even when the host offers no sampling feature, to test a host's registration path before its data path exists (default N)");

static enum cpuhp_state pvprof_hp_state;
static bool pvprof_sampling;		/* registrations, NMI handler, check work */
static bool pvprof_sideband;		/* the misc device is registered */
static bool pvprof_stopping;		/* reboot or kexec: never register again */

static void pvprof_check_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pvprof_check_work, pvprof_check_fn);

/*
 * The period's check of each CPU runs in a work item bound to that CPU:
 * waiting for it from one thread, as a synchronous cross-CPU call would,
 * stalls that thread for as long as the host does not run the other vCPU.
 * A CPU whose previous check has not run yet is not queued again.
 */
static DEFINE_PER_CPU(struct work_struct, pvprof_cpu_check_works);
static bool pvprof_check_probe_ok;	/* this period's PROBE allows REGISTER */

/*
 * PROBE and its validity rules (spec pvprof-detection).  Returns the
 * result, or a negative value when pvprof must be treated as absent.
 */
static long pvprof_probe(void)
{
	long r = pvprof_hypercall(PVPROF_OP_PROBE, PVPROF_ABI_VERSION, 0, 0);
	u32 version;

	if (r < 0)
		return r;
	version = PVPROF_PROBE_VERSION(r);
	if ((r >> 48) || version < 1 || version > PVPROF_ABI_VERSION)
		return -PVPROF_EINVAL;
	return r;
}

/*
 * Sampling needs a sample source, and the host's attribution of NMI
 * deliveries: without it the handler cannot tell its NMIs from others'.
 */
static bool pvprof_can_sample(u32 features)
{
	return ((features & (PVPROF_FEAT_CPU_CLOCK | PVPROF_FEAT_HW_EVENTS)) &&
		(features & PVPROF_FEAT_NMI_DELIVERED)) ||
	       pvprof_register_featureless;
}

/* Results after which the host no longer touches the buffer. */
static bool pvprof_unregistered(long r)
{
	return r == 0 || r == -PVPROF_ENOTEXPOSED || r == -PVPROF_ENOSYS;
}

static void pvprof_deactivate(struct pvprof_cpu *pc)
{
	WRITE_ONCE(pc->active, false);
	/* The NMI handler runs on this CPU: it sees the store or ran before. */
	barrier();
}

static long pvprof_unregister_hc(struct pvprof_cpu *pc)
{
	long r = pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0);

	if (!pvprof_unregistered(r)) {
		pc->stats.unreg_failures++;
		if (!pc->leaked)
			pr_warn("CPU %d: UNREGISTER failed (%ld); its buffer is never freed\n",
				smp_processor_id(), r);
		pc->leaked = true;
	}
	return r;
}

/* Context: on the buffer's CPU, IRQs off; the buffer is not registered. */
static long pvprof_register_hc(struct pvprof_cpu *pc)
{
	long r;

	pvprof_deactivate(pc);
	memset(page_address(pc->pages), 0, pvprof_buf_size);
	/* The size was checked by pvprof_guest_buf_init() at load. */
	pvprof_guest_buf_init(&pc->gb, page_address(pc->pages), pvprof_buf_size);
	if (pc->scratch)
		pvprof_guest_set_ustack(&pc->gb, pvprof_capture_ustack, pc->scratch,
					PVPROF_SCRATCH_SIZE);
	barrier();
	WRITE_ONCE(pc->active, true);
	r = pvprof_hypercall(PVPROF_OP_REGISTER, pc->gpa, pvprof_buf_size, 0);
	if (r)
		pvprof_deactivate(pc);
	return r;
}

/*
 * Zero and register this CPU's buffer (spec pvprof-guest-states, rules 1-3).
 * Context: on the buffer's CPU, IRQs off.
 */
static void pvprof_cpu_register(struct pvprof_cpu *pc)
{
	long r;

	r = pvprof_register_hc(pc);
	if (r == -PVPROF_EALREADY) {
		/* A previous kernel (crash kexec) left a registration behind. */
		r = pvprof_unregister_hc(pc);
		if (pvprof_unregistered(r))
			r = pvprof_register_hc(pc);
	}
	if (r) {
		pc->state = PVPROF_CPU_FAILED;
		pc->stats.reg_failures++;
		if (!pc->failing)
			pr_warn("CPU %d: REGISTER failed (%ld), retrying every second\n",
				smp_processor_id(), r);
		pc->failing = true;
		return;
	}
	pc->state = PVPROF_CPU_ACTIVE;
	pc->failing = false;
	pc->stats.registrations++;
}

/* Context: on the buffer's CPU, IRQs off. */
static void pvprof_cpu_unregister(struct pvprof_cpu *pc)
{
	if (pc->state == PVPROF_CPU_ACTIVE) {
		/* Every NMI the host attributed is delivered once it returns. */
		pvprof_unregister_hc(pc);
		pvprof_deactivate(pc);
	}
	pc->state = PVPROF_CPU_OFF;
}

static void pvprof_cpu_unregister_ipi(void *unused)
{
	pvprof_cpu_unregister(this_cpu_ptr(&pvprof_cpus));
}

/*
 * The periodic check on one CPU (spec pvprof-guest-states, rule 4).  @probe_ok
 * says whether the PROBE of this period allows a new registration attempt.
 * Context: on the buffer's CPU, IRQs off.
 */
static void pvprof_cpu_check(struct pvprof_cpu *pc, bool probe_ok)
{
	long r;

	if (READ_ONCE(pvprof_stopping) || !pc->pages)
		return;
	switch (pc->state) {
	case PVPROF_CPU_ACTIVE:
		r = pvprof_hypercall(PVPROF_OP_QUERY, pc->gpa, 0, 0);
		pc->stats.queries++;
		if (r == PVPROF_QUERY_REGISTERED)
			return;
		pvprof_deactivate(pc);
		if (r == PVPROF_QUERY_UNREGISTERED) {
			/* Host reset, snapshot restore, migration, buffer gone. */
			pc->stats.reregistrations++;
			pr_info("CPU %d: the host dropped the registration, registering again\n",
				smp_processor_id());
			pvprof_cpu_register(pc);
			return;
		}
		/* Hidden from this VM: the host has dropped the registration. */
		pc->stats.query_failures++;
		pc->state = PVPROF_CPU_FAILED;
		pr_warn("CPU %d: QUERY failed (%ld), retrying when PROBE succeeds\n",
			smp_processor_id(), r);
		return;
	case PVPROF_CPU_FAILED:
		if (probe_ok)
			pvprof_cpu_register(pc);
		return;
	case PVPROF_CPU_OFF:
		return;
	}
}

static void pvprof_cpu_check_fn(struct work_struct *work)
{
	unsigned long flags;

	local_irq_save(flags);
	/*
	 * A CPU going offline hands its pending work items to another CPU,
	 * whose registration is not this item's to check.
	 */
	if (work == this_cpu_ptr(&pvprof_cpu_check_works))
		pvprof_cpu_check(this_cpu_ptr(&pvprof_cpus),
				 READ_ONCE(pvprof_check_probe_ok));
	local_irq_restore(flags);
}

static void pvprof_check_fn(struct work_struct *work)
{
	bool probe_ok = false;
	unsigned int cpu;
	long r;

	cpus_read_lock();
	/* Only a CPU without a registration needs PROBE's go-ahead. */
	for_each_online_cpu(cpu) {
		if (READ_ONCE(per_cpu_ptr(&pvprof_cpus, cpu)->state) == PVPROF_CPU_FAILED) {
			r = pvprof_probe();
			probe_ok = r >= 0 && pvprof_can_sample(PVPROF_PROBE_FEATURES(r));
			break;
		}
	}
	WRITE_ONCE(pvprof_check_probe_ok, probe_ok);
	for_each_online_cpu(cpu)
		queue_work_on(cpu, system_freezable_wq,
			      per_cpu_ptr(&pvprof_cpu_check_works, cpu));
	cpus_read_unlock();
	if (!READ_ONCE(pvprof_stopping))
		queue_delayed_work(system_freezable_wq, &pvprof_check_work,
				   round_jiffies_relative(PVPROF_CHECK_PERIOD));
}

static int pvprof_cpu_online(unsigned int cpu)
{
	struct pvprof_cpu *pc = per_cpu_ptr(&pvprof_cpus, cpu);
	unsigned long flags;

	if (!pc->pages) {
		pc->pages = alloc_pages_node(cpu_to_node(cpu), GFP_KERNEL | __GFP_ZERO,
					     get_order(pvprof_buf_size));
		if (!pc->pages) {
			pc->state = PVPROF_CPU_FAILED;
			pc->stats.reg_failures++;
			pr_warn("CPU %u: no memory for a %u-byte buffer\n",
				cpu, pvprof_buf_size);
			return 0;
		}
		pc->gpa = page_to_phys(pc->pages);
	}
	/* Without it the CPU still samples, with frame-pointer chains only. */
	if (!pc->scratch && (pvprof_host.features & PVPROF_FEAT_USER_STACK))
		pc->scratch = kmalloc_node(PVPROF_SCRATCH_SIZE, GFP_KERNEL,
					   cpu_to_node(cpu));
	if (READ_ONCE(pvprof_stopping))
		return 0;
	/* AP online callbacks run on the CPU coming up. */
	if (WARN_ON_ONCE(cpu != raw_smp_processor_id()))
		return 0;
	local_irq_save(flags);
	pvprof_cpu_register(pc);
	local_irq_restore(flags);
	return 0;
}

static int pvprof_cpu_offline(unsigned int cpu)
{
	unsigned long flags;

	if (WARN_ON_ONCE(cpu != raw_smp_processor_id()))
		return 0;
	local_irq_save(flags);
	pvprof_cpu_unregister(this_cpu_ptr(&pvprof_cpus));
	local_irq_restore(flags);
	return 0;
}

/*
 * The NMI handler (spec pvprof-guest-nmi-handler).  core/guest.c answers
 * whatever notices it finds and claims exactly the deliveries the host
 * attributed to pvprof.
 *
 * An IRET inside an NMI handler (returning from a page fault, a breakpoint
 * of text patching) ends NMI blocking, for KVM as for the CPU, and another
 * NMI can arrive before the handler ends.  x86's entry code makes that one
 * a second run of all handlers over the same registers; if it arrived
 * before this run read nmi_delivered, this run claims both deliveries and
 * the second run finds nothing.  pvprof_guest_nmi() then returns 2, and
 * default_do_nmi() swallows that back-to-back run instead of reporting it
 * unknown.
 */
static int pvprof_nmi(unsigned int type, struct pt_regs *regs)
{
	struct pvprof_cpu *pc = this_cpu_ptr(&pvprof_cpus);
	struct pvprof_nmi_result res;
	u64 start, ns;
	int handled;

	if (!READ_ONCE(pc->active))
		return NMI_DONE;
	start = ktime_get_mono_fast_ns();
	handled = pvprof_guest_nmi(&pc->gb, pvprof_capture, regs, &res);
	if (!handled && !res.consumed && !res.garbage)
		return NMI_DONE;
	ns = ktime_get_mono_fast_ns() - start;
	pc->stats.garbage += res.garbage;
	pc->stats.notices += res.consumed;
	pc->stats.callchains += res.callchains;
	pc->stats.stale += res.stale;
	pc->stats.dropped += res.dropped;
	pc->stats.handler_ns[min_t(u32, fls64(ns), PVPROF_HIST_BUCKETS - 1)]++;
	if (!handled)
		return NMI_DONE;
	pc->stats.nmis_claimed++;
	if (handled > 1)
		pc->stats.nmis_merged++;
	return handled;
}
NOKPROBE_SYMBOL(pvprof_nmi);

/* After it, no check runs or is queued; pvprof_stopping must be set. */
static void pvprof_cancel_checks(void)
{
	unsigned int cpu;

	cancel_delayed_work_sync(&pvprof_check_work);
	for_each_possible_cpu(cpu)
		cancel_work_sync(per_cpu_ptr(&pvprof_cpu_check_works, cpu));
}

/* Stop the periodic check and unregister every online CPU. */
static void pvprof_stop_sampling(void)
{
	WRITE_ONCE(pvprof_stopping, true);
	pvprof_cancel_checks();
	cpus_read_lock();
	on_each_cpu(pvprof_cpu_unregister_ipi, NULL, 1);
	cpus_read_unlock();
}

/*
 * Reboot, power off and kexec (kernel_kexec() runs the reboot notifiers).
 * A crash kexec runs none of this: the crash kernel finds the registration
 * with -PVPROF_EALREADY and the host's INIT and cookie checks drop the rest
 * (spec pvprof-reboot-migration).
 */
static int pvprof_reboot(struct notifier_block *nb, unsigned long action,
			 void *data)
{
	pvprof_stop_sampling();
	return NOTIFY_DONE;
}

static struct notifier_block pvprof_reboot_nb = {
	.notifier_call = pvprof_reboot,
};

/*
 * Suspend and hibernation: the other CPUs are already offline (their
 * hotplug callbacks unregistered them); this runs on the last one, IRQs off.
 */
static int pvprof_suspend(PVPROF_SYSCORE_ARGS)
{
	pvprof_cpu_unregister(this_cpu_ptr(&pvprof_cpus));
	return 0;
}

static void pvprof_resume(PVPROF_SYSCORE_ARGS)
{
	struct pvprof_cpu *pc = this_cpu_ptr(&pvprof_cpus);

	if (!READ_ONCE(pvprof_stopping) && pc->pages)
		pvprof_cpu_register(pc);
}

static DEFINE_PVPROF_SYSCORE(pvprof_syscore, pvprof_suspend, pvprof_resume);

static void pvprof_free_buffers(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct pvprof_cpu *pc = per_cpu_ptr(&pvprof_cpus, cpu);

		if (pc->pages && !pc->leaked)
			__free_pages(pc->pages, get_order(pvprof_buf_size));
		pc->pages = NULL;
		/* The NMI handler is unregistered: nothing uses it any more. */
		kfree(pc->scratch);
		pc->scratch = NULL;
	}
}

static int pvprof_start_sampling(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu)
		INIT_WORK(per_cpu_ptr(&pvprof_cpu_check_works, cpu), pvprof_cpu_check_fn);
	ret = register_nmi_handler(NMI_LOCAL, pvprof_nmi, 0, "pvprof");
	if (ret)
		return ret;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pvprof:online",
				pvprof_cpu_online, pvprof_cpu_offline);
	if (ret < 0)
		goto out_nmi;
	pvprof_hp_state = ret;
	ret = register_reboot_notifier(&pvprof_reboot_nb);
	if (ret)
		goto out_hotplug;
	pvprof_register_syscore(&pvprof_syscore);
	queue_delayed_work(system_freezable_wq, &pvprof_check_work,
			   round_jiffies_relative(PVPROF_CHECK_PERIOD));
	return 0;

out_hotplug:
	cpuhp_remove_state(pvprof_hp_state);
out_nmi:
	unregister_nmi_handler(NMI_LOCAL, "pvprof");
	pvprof_free_buffers();
	return ret;
}

static void pvprof_exit_sampling(void)
{
	pvprof_unregister_syscore(&pvprof_syscore);
	unregister_reboot_notifier(&pvprof_reboot_nb);
	WRITE_ONCE(pvprof_stopping, true);
	pvprof_cancel_checks();
	/* Runs pvprof_cpu_offline(), i.e. UNREGISTER, on every online CPU. */
	cpuhp_remove_state(pvprof_hp_state);
	/* Waits for handlers still running; after it no NMI reads a buffer. */
	unregister_nmi_handler(NMI_LOCAL, "pvprof");
	pvprof_free_buffers();
}

/*
 * Decide what this host allows.  Logs exactly one line when the driver
 * stays inert and returns false then.
 */
static bool pvprof_detect(void)
{
	struct pvprof_geometry geo;
	long r;

	if (!kvm_para_available()) {
		pr_info("host does not support pvprof (no KVM hypervisor signature)\n");
		return false;
	}
	if (cc_platform_has(CC_ATTR_GUEST_MEM_ENCRYPT)) {
		pr_info("host does not support pvprof for guests with encrypted memory\n");
		return false;
	}
	r = pvprof_probe();
	if (r < 0) {
		pr_info("host does not support pvprof (PROBE returned %ld)\n", r);
		return false;
	}
	pvprof_host.version = PVPROF_PROBE_VERSION(r);
	pvprof_host.features = PVPROF_PROBE_FEATURES(r) & PVPROF_FEAT_ALL;
	if (!pvprof_can_sample(pvprof_host.features)) {
		pr_info("host offers no usable sampling (ABI %u, features %#x; needs CPU_CLOCK or HW_EVENTS, and NMI_DELIVERED)%s\n",
			pvprof_host.version, pvprof_host.features,
			pvprof_host.features & PVPROF_FEAT_SIDEBAND ?
			"; sideband only" : "");
		return pvprof_host.features & PVPROF_FEAT_SIDEBAND;
	}
	/* Room for callchains with user stack snapshots when the host takes them. */
	if (!pvprof_buf_size)
		pvprof_buf_size = pvprof_host.features & PVPROF_FEAT_USER_STACK ?
				  PVPROF_BUF_MAX_SIZE : 16384;
	if (pvprof_geometry_init(&geo, pvprof_buf_size)) {
		pr_warn("buf_size=%u is not a power of two in %u..%u; pvprof stays inert\n",
			pvprof_buf_size, PVPROF_BUF_MIN_SIZE, PVPROF_BUF_MAX_SIZE);
		return false;
	}
	return true;
}

static int __init pvprof_init(void)
{
	int ret;

	if (!pvprof_detect())
		goto out_inert;
	if (pvprof_can_sample(pvprof_host.features)) {
		ret = pvprof_start_sampling();
		if (ret) {
			pr_err("cannot start sampling (%d)\n", ret);
			return ret;
		}
		pvprof_sampling = true;
	}
	if (pvprof_host.features & PVPROF_FEAT_SIDEBAND) {
		ret = pvprof_chardev_init();
		if (ret) {
			pr_err("cannot register /dev/pvprof (%d)\n", ret);
			goto out_sampling;
		}
		pvprof_sideband = true;
	}
	if (pvprof_sampling)
		pr_info("ABI %u, features %#x, %u-byte buffers on %u CPUs\n",
			pvprof_host.version, pvprof_host.features,
			pvprof_buf_size, num_online_cpus());
out_inert:
	pvprof_debugfs_init(!pvprof_sampling);
	return 0;

out_sampling:
	if (pvprof_sampling)
		pvprof_exit_sampling();
	return ret;
}

static void __exit pvprof_exit(void)
{
	pvprof_debugfs_exit();
	if (pvprof_sideband)
		pvprof_chardev_exit();
	if (pvprof_sampling)
		pvprof_exit_sampling();
}

module_init(pvprof_init);
module_exit(pvprof_exit);

MODULE_DESCRIPTION("pvprof guest driver: answers host samples with callchains");
MODULE_AUTHOR("The pvprof authors");
MODULE_LICENSE("GPL");
