// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof control plane: system ioctls on /dev/kvm naming a VM by a VM fd
 * the caller holds (spec pvprof-ctl).  KVM refuses VM ioctls from any
 * process but the VMM's, so a profiling tool cannot use the VM fd itself.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pvprof_compat.h"
#include "pvprof_hooks.h"
#include "pvprof_host.h"
#include "pvprof-core/pvprof_core.h"

/* cpu-clock period floor: 1e9 / PVPROF_MAX_FREQ ns. */
#define PVPROF_MIN_CLOCK_PERIOD	(NSEC_PER_SEC / PVPROF_MAX_FREQ)

/* The VM behind @vm_fd; the caller fdput()s @f after using the VM. */
static int pvprof_ctl_vm_get(int vm_fd, struct fd *f, struct kvm **kvm)
{
	*f = fdget(vm_fd);
	if (!fd_file(*f))
		return -EBADF;
	if (!file_is_kvm(fd_file(*f))) {
		fdput(*f);
		return -EINVAL;
	}
	*kvm = fd_file(*f)->private_data;
	return 0;
}

static int pvprof_config_from_enable(const struct pvprof_ctl_enable *en,
				     struct pvprof_config *cfg)
{
	if ((en->flags & ~PVPROF_ENABLE_F_ALL) ||
	    en->reserved1[0] || en->reserved1[1])
		return -EINVAL;
	if (en->ustack_size > PVPROF_USTACK_MAX || en->ustack_size % 8)
		return -EINVAL;
	if (en->event > PVPROF_EVENT_MAX || en->max_depth > PVPROF_MAX_DEPTH)
		return -EINVAL;

	cfg->event = en->event;
	cfg->max_depth = en->max_depth ?: PVPROF_MAX_DEPTH;
	cfg->vm_rate_cap = en->vm_rate_cap ?: PVPROF_DEFAULT_VM_RATE;
	cfg->ustack_size = en->ustack_size;
	if (en->flags & PVPROF_ENABLE_F_FREQ) {
		if (en->sample_period || en->sample_freq > PVPROF_MAX_FREQ)
			return -EINVAL;
		cfg->freq = en->sample_freq ?: PVPROF_DEFAULT_FREQ;
		cfg->period = en->event == PVPROF_EVENT_CPU_CLOCK ?
			      div64_u64(NSEC_PER_SEC, cfg->freq) : 0;
		return 0;
	}
	if (en->sample_freq || !en->sample_period)
		return -EINVAL;
	if (en->event == PVPROF_EVENT_CPU_CLOCK &&
	    en->sample_period < PVPROF_MIN_CLOCK_PERIOD)
		return -EINVAL;
	cfg->freq = 0;
	cfg->period = en->sample_period;
	return 0;
}

static long pvprof_ctl_enable(struct kvm *kvm, const struct pvprof_ctl_enable *en)
{
	struct pvprof_config cfg;
	struct pvprof_vm *pvm;
	long ret;

	ret = pvprof_config_from_enable(en, &cfg);
	if (ret)
		return ret;
	ret = pvprof_sampling_supported(cfg.event);
	if (ret)
		return ret;
	pvm = pvprof_vm_get_or_create(kvm);
	if (!pvm)
		return -ENOMEM;

	mutex_lock(&pvm->lock);
	if (!pvm->stream) {
		struct pvprof_stream *st = pvprof_stream_create();

		ret = -ENOMEM;
		if (!st)
			goto unlock;
		WRITE_ONCE(pvm->stream, st);
	}
	pvm->config = cfg;
	WRITE_ONCE(pvm->enabled, true);
	pvprof_sampling_changed(pvm);
	ret = 0;
unlock:
	mutex_unlock(&pvm->lock);
	return ret;
}

static long pvprof_ctl_disable(struct kvm *kvm)
{
	struct pvprof_vm *pvm = pvprof_vm_find(kvm);
	long ret = -ENOENT;

	if (!pvm)
		return ret;
	mutex_lock(&pvm->lock);
	if (pvm->enabled) {
		WRITE_ONCE(pvm->enabled, false);
		pvprof_sampling_changed(pvm);
		ret = 0;
	}
	mutex_unlock(&pvm->lock);
	return ret;
}

static long pvprof_ctl_stream(struct kvm *kvm)
{
	struct pvprof_vm *pvm = pvprof_vm_find(kvm);
	long ret = -ENOENT;

	if (!pvm)
		return ret;
	mutex_lock(&pvm->lock);
	if (pvm->stream)
		ret = pvprof_stream_open(pvm, atomic_read(&kvm->online_vcpus));
	mutex_unlock(&pvm->lock);
	return ret;
}

static long pvprof_ctl_expose(struct kvm *kvm, u32 mode)
{
	struct pvprof_vm *pvm;

	if (mode > PVPROF_EXPOSE_HIDDEN)
		return -EINVAL;
	pvm = pvprof_vm_get_or_create(kvm);
	if (!pvm)
		return -ENOMEM;
	/* vCPUs drop their registrations when they next see it hidden. */
	WRITE_ONCE(pvm->expose, mode);
	return 0;
}

static void pvprof_fill_vcpu_status(struct pvprof_vcpu_status *out,
				    struct kvm_vcpu *vcpu, struct pvprof_vcpu *pv)
{
	memset(out, 0, sizeof(*out));
	out->vcpu_id = vcpu->vcpu_id;
	if (!pv)
		return;
	mutex_lock(&pv->lock);
	if (pv->registered) {
		out->registered = 1;
		out->gpa = pv->gpa;
		out->size = pv->ring.geo.size;
	}
	out->samples = pv->acct.samples;
	out->notices = pv->acct.notices;
	out->callchains = pv->acct.callchains;
	out->nmis = pv->acct.nmis;
	out->nmis_withheld = min_t(u64, pv->acct.nmis_withheld, U32_MAX);
	memcpy(out->losses, pv->acct.losses, sizeof(out->losses));
	mutex_unlock(&pv->lock);
}

static long pvprof_ctl_status(struct kvm *kvm, struct pvprof_ctl_status *cs)
{
	struct pvprof_vm *pvm = pvprof_vm_find(kvm);
	struct pvprof_vcpu_status *vs = NULL;
	u32 nr = atomic_read(&kvm->online_vcpus);
	u32 nr_out = min(nr, cs->nr_vcpus);
	struct kvm_vcpu *vcpu;
	unsigned long i;
	long ret = 0;
	int r;

	if (nr_out) {
		vs = kvcalloc(nr_out, sizeof(*vs), GFP_KERNEL_ACCOUNT);
		if (!vs)
			return -ENOMEM;
	}
	cs->flags = pvprof_vm_hidden(kvm) ? PVPROF_STATUS_F_HIDDEN : 0;
	cs->event = 0;
	cs->sample_period = 0;
	cs->sample_freq = 0;
	memset(cs->losses, 0, sizeof(cs->losses));
	cs->sideband_bytes = pvm ? atomic64_read(&pvm->sideband_bytes) : 0;
	cs->sideband_refused = pvm ? atomic64_read(&pvm->sideband_refused) : 0;

	if (pvm)
		mutex_lock(&pvm->lock);
	if (pvm && pvm->stream) {
		if (pvm->enabled)
			cs->flags |= PVPROF_STATUS_F_ENABLED;
		cs->event = pvm->config.event;
		cs->sample_period = pvm->config.period;
		cs->sample_freq = pvm->config.freq;
	}
	kvm_for_each_vcpu(i, vcpu, kvm) {
		struct pvprof_vcpu_status one;

		if (i >= nr)
			break;
		pvprof_fill_vcpu_status(&one, vcpu,
					pvm ? pvm->vcpus[vcpu->vcpu_idx] : NULL);
		for (r = 0; r < PVPROF_LOSS_NR; r++)
			cs->losses[r] += one.losses[r];
		if (i < nr_out)
			vs[i] = one;
	}
	if (pvm)
		mutex_unlock(&pvm->lock);

	cs->nr_vcpus = nr;
	if (nr_out && copy_to_user(u64_to_user_ptr(cs->vcpus), vs,
				   nr_out * sizeof(*vs)))
		ret = -EFAULT;
	kvfree(vs);
	return ret;
}

/* Argument sizes by ioctl; all share vm_fd as their first field. */
union pvprof_ctl_arg {
	struct pvprof_ctl_enable enable;
	struct pvprof_ctl_vm vm;
	struct pvprof_ctl_status status;
	struct pvprof_ctl_expose expose;
};

static long pvprof_ctl_dispatch(unsigned int ioctl, struct kvm *kvm,
				union pvprof_ctl_arg *arg, void __user *argp)
{
	long ret;

	switch (ioctl) {
	case PVPROF_CTL_ENABLE:
		return pvprof_ctl_enable(kvm, &arg->enable);
	case PVPROF_CTL_DISABLE:
		if (arg->vm.flags || arg->vm.reserved0)
			return -EINVAL;
		return pvprof_ctl_disable(kvm);
	case PVPROF_CTL_STREAM:
		if (arg->vm.flags || arg->vm.reserved0)
			return -EINVAL;
		return pvprof_ctl_stream(kvm);
	case PVPROF_CTL_EXPOSE:
		if (arg->expose.reserved0)
			return -EINVAL;
		return pvprof_ctl_expose(kvm, arg->expose.mode);
	case PVPROF_CTL_STATUS:
		ret = pvprof_ctl_status(kvm, &arg->status);
		if (!ret && copy_to_user(argp, &arg->status, sizeof(arg->status)))
			ret = -EFAULT;
		return ret;
	}
	return -EINVAL;
}

/**
 * kvm_pvprof_dev_ioctl() - a system ioctl KVM does not know
 * @ioctl: the command
 * @arg: its argument
 *
 * Called from kvm_arch_dev_ioctl()'s default case.  Checks in the order of
 * spec pvprof-ctl-checks: copy-in, capability, VM fd, reserved fields, then
 * the command's own checks.
 *
 * Return: the ioctl's result; -EINVAL for a command that is not pvprof's,
 * as KVM answers unknown system ioctls.
 */
long kvm_pvprof_dev_ioctl(unsigned int ioctl, unsigned long arg)
{
	void __user *argp = (void __user *)arg;
	union pvprof_ctl_arg a;
	struct kvm *kvm;
	struct fd f;
	long ret;

	switch (ioctl) {
	case PVPROF_CTL_ENABLE:
	case PVPROF_CTL_DISABLE:
	case PVPROF_CTL_STATUS:
	case PVPROF_CTL_STREAM:
	case PVPROF_CTL_EXPOSE:
		break;
	default:
		return -EINVAL;
	}

	if (copy_from_user(&a, argp, _IOC_SIZE(ioctl)))
		return -EFAULT;
	/* CAP_PERFMON or CAP_SYS_ADMIN. */
	if (!perfmon_capable())
		return -EPERM;
	ret = pvprof_ctl_vm_get(a.vm.vm_fd, &f, &kvm);
	if (ret)
		return ret;
	ret = pvprof_ctl_dispatch(ioctl, kvm, &a, argp);
	fdput(f);
	return ret;
}
