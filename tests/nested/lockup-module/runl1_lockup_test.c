// SPDX-License-Identifier: GPL-2.0
/*
 * runl1_lockup_test: hold a CPU of the nested test host (L1) with preemption
 * off, or with interrupts off, for a bounded time, so that the nested
 * self-test can check that run-l1 stops a run on a soft lockup and keeps the
 * watchdog's report, and that it stops a run whose L1 takes no interrupt;
 * or triple-fault it, a death that looks like the emulation's own.
 * Test only: loading it is meant to make the kernel complain.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/desc.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/preempt.h>

static unsigned int seconds = 60;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "how long to hold the CPU (default 60, at most 600)");

static bool irqs_off;
module_param(irqs_off, bool, 0444);
MODULE_PARM_DESC(irqs_off, "hold it with interrupts off (no watchdog sees that)");

static bool triple_fault;
module_param(triple_fault, bool, 0444);
MODULE_PARM_DESC(triple_fault, "reset the machine with a triple fault instead");

static noinline void runl1_lockup_spin(ktime_t until)
{
	while (ktime_before(ktime_get(), until))
		cpu_relax();
}

static int __init runl1_lockup_init(void)
{
	if (seconds > 600)
		return -EINVAL;

	if (triple_fault) {
		/* An exception with no IDT to deliver it through. */
		struct desc_ptr no_idt = {};

		pr_emerg("triple-faulting CPU %d\n", raw_smp_processor_id());
		local_irq_disable();
		native_load_idt(&no_idt);
		asm volatile("int3");
	}

	pr_info("holding CPU %d for %u s with %s off\n", raw_smp_processor_id(),
		seconds, irqs_off ? "interrupts" : "preemption");
	if (irqs_off) {
		unsigned long flags;

		local_irq_save(flags);
		runl1_lockup_spin(ktime_add_ms(ktime_get(), seconds * MSEC_PER_SEC));
		local_irq_restore(flags);
	} else {
		preempt_disable();
		runl1_lockup_spin(ktime_add_ms(ktime_get(), seconds * MSEC_PER_SEC));
		preempt_enable();
	}
	/* Nothing to keep loaded. */
	return -EAGAIN;
}
module_init(runl1_lockup_init);

MODULE_DESCRIPTION("run-l1 self-test: a bounded soft lockup, or a CPU deaf to interrupts");
MODULE_LICENSE("GPL");
