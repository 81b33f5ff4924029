// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module (tests/host/nmi_context_test.c): runs pvprof's perf
 * overflow handler, pvprof_overflow() in host-kvm/pvprof/sample.c, from
 * real NMI context, which hardware PMU events would do and which the
 * nested test host (no PMU) cannot otherwise exercise.
 *
 * The test injects NMIs into L1 through QMP (inject-nmi) while a vCPU
 * spins in guest mode.  No NMI_LOCAL handler claims such an NMI (no PMI, no
 * backtrace request), so the kernel reads its reason from port 0x61: on
 * QEMU's microvm, which has no device there, that reads 0xff and the NMI
 * goes to the NMI_SERR handlers ("PCI system error"); on a PC machine it
 * reads no reason bit and goes to the NMI_UNKNOWN handlers ("Uhhuh").  This
 * module's handler is registered for both and claims every NMI it gets (no
 * such line in the log while the module is loaded); when the NMI arrived
 * while a vCPU ran guest code (on SVM: the NMI exit, with KVM handling it
 * between its stgi and kvm_after_interrupt(), interrupts off, so the
 * cpu-clock hrtimer that normally calls the same handler cannot be running
 * on this CPU) it calls the overflow handler of that vCPU's pvprof perf
 * event exactly as perf would for a PMI.
 *
 * The event is found without any pvprof export: pvprof creates it as a
 * kernel counter on the vCPU's thread, i.e. in current's task context here,
 * and its overflow_handler is pvprof_overflow, whose address the test reads
 * from /proc/kallsyms and passes as the handler parameter; the module checks
 * that name at load and the NMI path only compares pointers.  Its context is
 * the vCPU's struct pvprof_vcpu (pvprof_host.h), whose vcpu must be the
 * running one.
 *
 * Counters in debugfs, pvprof_nmi_test/: nmis (NMIs claimed),
 * forwarded (overflow handler called), not_in_guest (no vCPU in guest mode
 * when the NMI arrived), no_event (a vCPU in guest mode without a pvprof
 * event).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/version.h>

#include <asm/nmi.h>

#include "x86.h"		/* KVM_HANDLING_NMI */
#include "pvprof_host.h"

#define PVPROF_OVERFLOW_SYMBOL	"pvprof_overflow [kvm]"

static unsigned long handler;
module_param(handler, ulong, 0444);
MODULE_PARM_DESC(handler, "Address of pvprof_overflow in kvm.ko (from /proc/kallsyms)");

static atomic_t nmis, forwarded, not_in_guest, no_event;
static struct dentry *dir;

/*
 * The running vCPU's pvprof event: an active kernel counter of this (the
 * vCPU's) thread whose overflow handler is pvprof_overflow and whose
 * context is this vCPU's pvprof state.  RCU: perf adds and removes events
 * of a context with list_add_rcu()/list_del_rcu() and frees them after a
 * grace period.
 */
static struct perf_event *ctx_pvprof_event(struct perf_event_context *ctx,
					    struct kvm_vcpu *vcpu)
{
	struct perf_event *event;

	if (!ctx)
		return NULL;
	list_for_each_entry_rcu(event, &ctx->event_list, event_entry) {
		struct pvprof_vcpu *pv;

		if ((unsigned long)READ_ONCE(event->overflow_handler) != handler)
			continue;
		if (READ_ONCE(event->state) != PERF_EVENT_STATE_ACTIVE ||
		    READ_ONCE(event->oncpu) != smp_processor_id())
			continue;
		pv = event->overflow_handler_context;
		if (pv && pv->vcpu == vcpu)
			return event;
	}
	return NULL;
}

static struct perf_event *pvprof_event(struct kvm_vcpu *vcpu)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	/* One perf context per task since 6.2. */
	return ctx_pvprof_event(rcu_dereference(current->perf_event_ctxp), vcpu);
#else
	struct perf_event *event;
	int ctxn;

	for (ctxn = 0; ctxn < perf_nr_task_contexts; ctxn++) {
		event = ctx_pvprof_event(rcu_dereference(current->perf_event_ctxp[ctxn]), vcpu);
		if (event)
			return event;
	}
	return NULL;
#endif
}

static int pvprof_nmi_test_handler(unsigned int type, struct pt_regs *regs)
{
	struct kvm_vcpu *vcpu = kvm_get_running_vcpu();
	struct perf_sample_data data;
	struct perf_event *event;

	atomic_inc(&nmis);
	if (!vcpu ||
	    READ_ONCE(vcpu->arch.handling_intr_from_guest) != KVM_HANDLING_NMI) {
		atomic_inc(&not_in_guest);
		return NMI_HANDLED;
	}
	rcu_read_lock();
	event = pvprof_event(vcpu);
	if (event) {
		perf_sample_data_init(&data, 0, event->hw.last_period);
		event->overflow_handler(event, &data, regs);
		atomic_inc(&forwarded);
	} else {
		atomic_inc(&no_event);
	}
	rcu_read_unlock();
	return NMI_HANDLED;
}

static int __init pvprof_nmi_test_init(void)
{
	char name[KSYM_SYMBOL_LEN];
	int ret;

	if (!handler) {
		pr_err("handler=<address of pvprof_overflow> is required\n");
		return -EINVAL;
	}
	sprint_symbol_no_offset(name, handler);
	if (strcmp(name, PVPROF_OVERFLOW_SYMBOL)) {
		pr_err("handler=%#lx is %s, not %s\n", handler, name,
		       PVPROF_OVERFLOW_SYMBOL);
		return -EINVAL;
	}
	dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_atomic_t("nmis", 0444, dir, &nmis);
	debugfs_create_atomic_t("forwarded", 0444, dir, &forwarded);
	debugfs_create_atomic_t("not_in_guest", 0444, dir, &not_in_guest);
	debugfs_create_atomic_t("no_event", 0444, dir, &no_event);
	ret = register_nmi_handler(NMI_SERR, pvprof_nmi_test_handler, 0,
				   KBUILD_MODNAME);
	if (ret)
		goto out_debugfs;
	ret = register_nmi_handler(NMI_UNKNOWN, pvprof_nmi_test_handler, 0,
				   KBUILD_MODNAME);
	if (ret)
		goto out_serr;
	return 0;

out_serr:
	unregister_nmi_handler(NMI_SERR, KBUILD_MODNAME);
out_debugfs:
	debugfs_remove_recursive(dir);
	return ret;
}

static void __exit pvprof_nmi_test_exit(void)
{
	/* Each waits for a handler still running on another CPU. */
	unregister_nmi_handler(NMI_UNKNOWN, KBUILD_MODNAME);
	unregister_nmi_handler(NMI_SERR, KBUILD_MODNAME);
	debugfs_remove_recursive(dir);
	pr_info("nmis %d, forwarded %d, not in guest %d, no event %d\n",
		atomic_read(&nmis), atomic_read(&forwarded),
		atomic_read(&not_in_guest), atomic_read(&no_event));
}

module_init(pvprof_nmi_test_init);
module_exit(pvprof_nmi_test_exit);

MODULE_DESCRIPTION("pvprof test: the perf overflow handler from real NMI context");
MODULE_LICENSE("GPL");
