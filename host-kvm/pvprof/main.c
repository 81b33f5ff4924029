// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof setup and teardown, called from kvm.ko's module init and exit.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/utsname.h>

#include "pvprof_hooks.h"
#include "pvprof_src_version.h"

/*
 * The modules replace the distro's KVM, built from its linux-source
 * package: a kernel of the same ABI name (and so the same vermagic) but of
 * another package version may differ in what KVM relies on.  Debian's
 * kernels carry the package version in their version string
 * ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16)").  A build
 * against a kernel tree notes no version and is not checked.
 */
static int __init pvprof_check_kernel_version(void)
{
	const char *running = init_utsname()->version;
	size_t len = strlen(PVPROF_SRC_PKG_VERSION);
	const char *deb;

	if (!len)
		return 0;
	deb = strstr(running, "Debian ");
	if (deb) {
		deb += strlen("Debian ");
		if (!strncmp(deb, PVPROF_SRC_PKG_VERSION, len) &&
		    (deb[len] == ' ' || deb[len] == '\0'))
			return 0;
	}
	pr_err("built from linux-source %s, but the running kernel is \"%s\": refusing to load; rebuild the pvprof KVM modules for this kernel (make host-install, or dkms autoinstall)\n",
	       PVPROF_SRC_PKG_VERSION, running);
	return -EINVAL;
}

/**
 * kvm_pvprof_init() - set pvprof up when kvm.ko loads
 *
 * Refuses a kernel whose package version is not the source's, then
 * announces the ABI version and the hypercall number, so a log shows
 * whether the loaded kvm.ko is a pvprof build at all.
 *
 * Return: 0, or -EINVAL (which fails the load of kvm.ko) for another kernel.
 */
int __init kvm_pvprof_init(void)
{
	int ret = pvprof_check_kernel_version();

	if (ret)
		return ret;
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
