// SPDX-License-Identifier: GPL-2.0
/*
 * freeze_nmi_sink: NMIs for the freeze study's L2 on a host that does not
 * sample it with pvprof (tests/nested/freeze/README.md), and a handler that
 * claims them.
 *
 * rate=N sends the CPU that wrote it N self-NMIs a second from a pinned
 * hrtimer, through the local APIC: each is a KVM NMI injection (the ICR
 * write exits to L1's KVM, which injects the NMI as it does one from the
 * VMM), the host-side path of pvprof's NMIs without pvprof. QMP's
 * inject-nmi reaches only about 56 a second in L1, too few for the rates
 * studied. Every NMI that nothing else claims is claimed and counted here:
 * unclaimed, each would print two emergency lines on the serial console,
 * thousands of port-I/O exits a second that the pvprof configuration does
 * not have. Test only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#define FREEZE_NMI_MAX_RATE 20000

static atomic_long_t claimed;
static atomic_long_t sent;
static unsigned int rate;
static struct hrtimer nmi_timer;
static DEFINE_MUTEX(rate_lock);

/* NMI_UNKNOWN handlers run only for an NMI that no NMI_LOCAL handler took. */
static int freeze_nmi_sink_claim(unsigned int type, struct pt_regs *regs)
{
	atomic_long_inc(&claimed);
	return NMI_HANDLED;
}

static enum hrtimer_restart freeze_nmi_tick(struct hrtimer *timer)
{
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	atomic_long_inc(&sent);
	hrtimer_forward_now(timer, ns_to_ktime(NSEC_PER_SEC / READ_ONCE(rate)));
	return HRTIMER_RESTART;
}

static int rate_set(const char *val, const struct kernel_param *kp)
{
	unsigned int new_rate;
	int ret;

	ret = kstrtouint(val, 0, &new_rate);
	if (ret)
		return ret;
	if (new_rate > FREEZE_NMI_MAX_RATE)
		return -ERANGE;
	mutex_lock(&rate_lock);
	/* rate= given to insmod comes before init; init then starts it. */
	if (!nmi_timer.function) {
		WRITE_ONCE(rate, new_rate);
		mutex_unlock(&rate_lock);
		return 0;
	}
	hrtimer_cancel(&nmi_timer);
	WRITE_ONCE(rate, new_rate);
	if (new_rate)
		hrtimer_start(&nmi_timer, ns_to_ktime(NSEC_PER_SEC / new_rate),
			      HRTIMER_MODE_REL_PINNED);
	mutex_unlock(&rate_lock);
	return 0;
}

static int rate_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(rate));
}

static const struct kernel_param_ops rate_ops = {
	.set = rate_set,
	.get = rate_get,
};
module_param_cb(rate, &rate_ops, NULL, 0644);
MODULE_PARM_DESC(rate, "self-NMIs a second on the writing CPU (0 stops them)");

static int counter_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops counter_ops = {
	.get = counter_get,
};
module_param_cb(claimed, &counter_ops, &claimed, 0444);
MODULE_PARM_DESC(claimed, "unknown NMIs claimed so far");
module_param_cb(sent, &counter_ops, &sent, 0444);
MODULE_PARM_DESC(sent, "self-NMIs sent so far");

static int __init freeze_nmi_sink_init(void)
{
	int ret;

	ret = register_nmi_handler(NMI_UNKNOWN, freeze_nmi_sink_claim, 0,
				   "freeze_nmi_sink");
	if (ret)
		return ret;
	mutex_lock(&rate_lock);
	hrtimer_init(&nmi_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	nmi_timer.function = freeze_nmi_tick;
	if (rate)
		hrtimer_start(&nmi_timer, ns_to_ktime(NSEC_PER_SEC / rate),
			      HRTIMER_MODE_REL_PINNED);
	mutex_unlock(&rate_lock);
	return 0;
}

static void __exit freeze_nmi_sink_exit(void)
{
	hrtimer_cancel(&nmi_timer);
	unregister_nmi_handler(NMI_UNKNOWN, "freeze_nmi_sink");
}

module_init(freeze_nmi_sink_init);
module_exit(freeze_nmi_sink_exit);
MODULE_DESCRIPTION("Self-NMIs at a rate, claimed and counted (pvprof freeze study)");
MODULE_LICENSE("GPL");
