/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof: naming a VM (QEMU pid, PID:FD, libvirt domain), taking its VM
 * fd from the VMM with pidfd_getfd(), and opening a pvprof-capable /dev/kvm.
 */
#ifndef KVM_PVPROF_VM_H
#define KVM_PVPROF_VM_H

#define VM_LIBVIRT_RUN_DIR	"/run/libvirt/qemu"
#define VM_FD_LINK		"anon_inode:kvm-vm"

/**
 * struct vm_session - one VM, held for one control operation
 * @pid: the VMM process
 * @vmm_fd: the VM's fd number inside the VMM
 * @domain: the libvirt domain name, or "" when named by pid
 * @comm: the VMM's command name, for messages
 * @label: how messages name the VM ("PID:FD (comm)", with the domain)
 * @kvm_fd: our /dev/kvm, on which the pvprof system ioctls are made
 * @vm_fd: our copy of the VM fd, passed in the ioctls' vm_fd
 */
struct vm_session {
	int pid;
	int vmm_fd;
	char domain[256];
	char comm[32];
	char label[320];
	int kvm_fd;
	int vm_fd;
};

/* pidfd_open(2): readable once the process has exited. */
int sys_pidfd_open(int pid);

int vm_session__open(struct vm_session *s, const char *spec);
void vm_session__close(struct vm_session *s);
int vm_session__ioctl_err(const struct vm_session *s, const char *op, int err);

#endif /* KVM_PVPROF_VM_H */
