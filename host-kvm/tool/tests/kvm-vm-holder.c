// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-vm-holder: a minimal VMM for kvm-pvprof's tests. It creates NR_VMS
 * KVM VMs (each with NR_VCPUS vCPUs), prints "ready PID FD..." with the VM
 * fds, and holds them until its stdin reaches end of file. Its guests never
 * run: discovery and the control plane need a VM fd, not a running guest.
 *
 * With --uid UID it creates the VMs with its own privileges (opening
 * /dev/kvm needs them) and then becomes UID, so permission tests can face a
 * VMM owned by an unprivileged user, as libvirt's QEMU is.
 *
 * usage: kvm-vm-holder [--uid UID] NR_VMS [NR_VCPUS]
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_VMS		8
#define MAX_VCPUS	16

static int count_arg(const char *arg, int max)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || v < 0 || v > max) {
		fprintf(stderr, "kvm-vm-holder: expected 0..%d, got '%s'\n", max, arg);
		exit(2);
	}
	return (int)v;
}

/* Become @uid for good; stay dumpable so /proc/PID/fd follows the new uid. */
static void become(int uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)) {
		perror("kvm-vm-holder: changing uid");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int kvm, nr_vms, nr_vcpus = 0, vm_fds[MAX_VMS], i, v, uid = -1;
	char buf[64];

	if (argc > 2 && !strcmp(argv[1], "--uid")) {
		uid = count_arg(argv[2], 65535);
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: kvm-vm-holder [--uid UID] NR_VMS [NR_VCPUS]\n");
		return 2;
	}
	nr_vms = count_arg(argv[1], MAX_VMS);
	if (argc == 3)
		nr_vcpus = count_arg(argv[2], MAX_VCPUS);
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		perror("kvm-vm-holder: /dev/kvm");
		return 1;
	}
	for (i = 0; i < nr_vms; i++) {
		vm_fds[i] = ioctl(kvm, KVM_CREATE_VM, 0);
		if (vm_fds[i] < 0) {
			perror("kvm-vm-holder: KVM_CREATE_VM");
			return 1;
		}
		for (v = 0; v < nr_vcpus; v++) {
			if (ioctl(vm_fds[i], KVM_CREATE_VCPU, v) < 0) {
				perror("kvm-vm-holder: KVM_CREATE_VCPU");
				return 1;
			}
		}
	}
	/* Only VM fds may read anon_inode:kvm-vm; /dev/kvm is no VM. */
	close(kvm);
	if (uid >= 0)
		become(uid);
	printf("ready %d", (int)getpid());
	for (i = 0; i < nr_vms; i++)
		printf(" %d", vm_fds[i]);
	printf("\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0;
}
