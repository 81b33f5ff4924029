// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof setup and teardown, called from kvm.ko's module init and exit.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/printk.h>
#include <linux/rcupdate.h>

#include "pvprof_hooks.h"

/**
 * kvm_pvprof_init() - set pvprof up when kvm.ko loads
 *
 * Announces the ABI version and the hypercall number, so a log shows
 * whether the loaded kvm.ko is a pvprof build at all.
 *
 * Return: 0 (nothing can fail yet); a negative errno fails the load of kvm.ko.
 */
int __init kvm_pvprof_init(void)
{
	pr_info("host ABI v%d, hypercall 0x%lx\n", PVPROF_ABI_VERSION,
		PVPROF_HC_NR);
	return 0;
}

/**
 * kvm_pvprof_exit() - tear pvprof down when kvm.ko unloads
 *
 * Every VM and stream fd is gone by then (each holds a reference on
 * kvm.ko); wait for the RCU callbacks that free their pvprof objects.
 */
void __exit kvm_pvprof_exit(void)
{
	rcu_barrier();
	pr_info("unloaded\n");
}
