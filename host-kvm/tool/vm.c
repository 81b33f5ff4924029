// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof: find a VM and hold it for one control operation.
 *
 * KVM refuses VM ioctls from any process but the VM's creator, so the
 * pvprof control plane is a set of system ioctls on /dev/kvm that name the
 * VM by a VM fd the caller holds. We find the VM fd in the VMM's
 * /proc/PID/fd, copy it with pidfd_getfd() (ptrace access to the VMM), make
 * the ioctl and close it again, so the tool never keeps a VM alive.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/pvprof_ctl.h"
#include "main.h"
#include "vm.h"

#define VM_FDS_SHOWN	16

int sys_pidfd_open(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_getfd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

static bool all_digits(const char *s, size_t len)
{
	size_t i;

	if (!len)
		return false;
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* "digits" within [min, INT_MAX] into *out; false when it is not one. */
static bool parse_int(const char *s, size_t len, int min, int *out)
{
	char buf[16];
	long v;

	if (!all_digits(s, len) || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtol(buf, NULL, 10);
	if (v < min || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

static int spec_usage_err(const char *spec)
{
	return usage_err("expected VM as PID, PID:FD or a libvirt domain name, got: '%s'",
			 spec);
}

/* Fills pid and vmm_fd (-1 when not given) or domain from the VM argument. */
static int parse_spec(struct vm_session *s, const char *spec)
{
	const char *colon = strchr(spec, ':');
	size_t len = strlen(spec);

	s->vmm_fd = -1;
	s->domain[0] = '\0';
	if (all_digits(spec, len))
		return parse_int(spec, len, 1, &s->pid) ? EXIT_OK :
		       spec_usage_err(spec);
	/* Digits and a colon: PID:FD, never a domain name. */
	if (colon && all_digits(spec, colon - spec)) {
		if (!parse_int(spec, colon - spec, 1, &s->pid) ||
		    !parse_int(colon + 1, strlen(colon + 1), 0, &s->vmm_fd))
			return spec_usage_err(spec);
		return EXIT_OK;
	}
	/* libvirt domain names are file names under its run directory. */
	if (!len || strchr(spec, '/') || len >= sizeof(s->domain))
		return spec_usage_err(spec);
	memcpy(s->domain, spec, len + 1);
	return EXIT_OK;
}

static int resolve_domain(struct vm_session *s)
{
	char path[sizeof(VM_LIBVIRT_RUN_DIR) + sizeof(s->domain) + 8];
	char buf[32];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(VM_LIBVIRT_RUN_DIR, &st)) {
		p_err_hint("name the VM by its QEMU process id (see 'ps -C qemu-system-x86_64')",
			   "'%s' is not a process id, and libvirt is not running on this host (no %s)",
			   s->domain, VM_LIBVIRT_RUN_DIR);
		return EXIT_FAILED;
	}
	snprintf(path, sizeof(path), "%s/%s.pid", VM_LIBVIRT_RUN_DIR, s->domain);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			p_err_hint("'virsh list' shows the running domains",
				   "no running libvirt domain '%s' (no %s)",
				   s->domain, path);
		else
			p_err("cannot read %s: %s", path, strerror(errno));
		return EXIT_FAILED;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	if (n <= 0 || !parse_int(buf, n, 1, &s->pid)) {
		p_err("%s does not hold a process id", path);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* Checks that the process exists and is a process, and reads its name. */
static int check_process(struct vm_session *s)
{
	char path[64], line[128];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", s->pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			p_err("no such process: %d", s->pid);
		else
			p_err("cannot read %s: %s", path, strerror(errno));
		return EXIT_FAILED;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(s->comm, sizeof(s->comm), "%.*s",
				 (int)sizeof(s->comm) - 1, line + 6);
		} else if (sscanf(line, "Tgid:\t%d", &tgid) == 1) {
			break;
		}
	}
	fclose(f);
	if (tgid != s->pid) {
		p_err("%d is a thread of process %d, not a process: name the VM by %d",
		      s->pid, tgid, tgid);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* Reads the link of fd @name in @dirfd; 0 or the errno of readlinkat(). */
static int read_fd_link(int dirfd, const char *name, char *link, size_t size)
{
	ssize_t n = readlinkat(dirfd, name, link, size - 1);

	if (n < 0)
		return errno;
	link[n] = '\0';
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void fd_list(char *buf, size_t size, const int *fds, int nr)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < nr && i < VM_FDS_SHOWN && used < size; i++)
		used += snprintf(buf + used, size - used, "%s%d", i ? ", " : "",
				 fds[i]);
	if (nr > VM_FDS_SHOWN && used < size)
		snprintf(buf + used, size - used, ", ...");
}

static void perm_hint(char *hint, size_t size, int pid)
{
	snprintf(hint, size,
		 "reading /proc/%d/fd needs ptrace read access to the VMM: run %s as root",
		 pid, bin_name);
}

/*
 * Finds the VM fd in /proc/PID/fd: the one given as PID:FD, or the only
 * one. A process with several VMs needs PID:FD.
 */
static int find_vm_fd(struct vm_session *s)
{
	int fds[VM_FDS_SHOWN + 1], nr = 0, ret = EXIT_FAILED, err;
	char path[64], link[256], list[160], hint[160];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", s->pid);
	dir = opendir(path);
	if (!dir) {
		err = errno;
		if (err == EACCES || err == EPERM) {
			perm_hint(hint, sizeof(hint), s->pid);
			p_err_hint(hint, "cannot list the file descriptors of process %d (%s): %s",
				   s->pid, s->comm, strerror(err));
		} else if (err == ENOENT) {
			p_err("no such process: %d", s->pid);
		} else {
			p_err("cannot list %s: %s", path, strerror(err));
		}
		return EXIT_FAILED;
	}
	if (s->vmm_fd >= 0) {
		char name[16];

		snprintf(name, sizeof(name), "%d", s->vmm_fd);
		err = read_fd_link(dirfd(dir), name, link, sizeof(link));
		if (!err && !strcmp(link, VM_FD_LINK))
			ret = EXIT_OK;
		else if (err == ENOENT)
			p_err("process %d (%s) has no fd %d", s->pid, s->comm,
			      s->vmm_fd);
		else if (err)
			p_err("cannot read %s/%d: %s", path, s->vmm_fd,
			      strerror(err));
		else
			p_err("fd %d of process %d (%s) is not a KVM VM: it is %s",
			      s->vmm_fd, s->pid, s->comm, link);
		goto out_dir;
	}
	/* Keep counting past the array so the message gives the true number. */
	while ((de = readdir(dir))) {
		int fd;

		if (!parse_int(de->d_name, strlen(de->d_name), 0, &fd) ||
		    read_fd_link(dirfd(dir), de->d_name, link, sizeof(link)) ||
		    strcmp(link, VM_FD_LINK))
			continue;
		if (nr < (int)(sizeof(fds) / sizeof(fds[0])))
			fds[nr] = fd;
		nr++;
	}
	qsort(fds, nr < VM_FDS_SHOWN + 1 ? nr : VM_FDS_SHOWN + 1, sizeof(int),
	      cmp_int);
	if (nr == 1) {
		s->vmm_fd = fds[0];
		ret = EXIT_OK;
	} else if (!nr) {
		p_err("process %d (%s) is not a KVM process: it holds no KVM VM fd (%s)",
		      s->pid, s->comm, VM_FD_LINK);
	} else {
		fd_list(list, sizeof(list), fds, nr);
		snprintf(hint, sizeof(hint), "name one VM as PID:FD, for example %d:%d",
			 s->pid, fds[0]);
		p_err_hint(hint, "process %d (%s) holds %d KVM VMs, at fds %s",
			   s->pid, s->comm, nr, list);
	}
out_dir:
	closedir(dir);
	return ret;
}

/* Whether our effective capabilities include CAP_SYS_PTRACE (bit 19). */
static bool has_cap_sys_ptrace(void)
{
	unsigned long long eff = 0;
	char line[128];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff:\t%llx", &eff) == 1;
	fclose(f);
	return eff & (1ULL << 19);
}

static void ptrace_hint(char *hint, size_t size)
{
	const char *scope_path = "/proc/sys/kernel/yama/ptrace_scope";
	char yama[96] = "";
	int scope = -1;
	FILE *f;

	f = fopen(scope_path, "re");
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (scope >= 0)
		snprintf(yama, sizeof(yama), "; Yama's %s is %d", scope_path,
			 scope);
	if (scope == 3)
		snprintf(hint, size,
			 "Yama forbids every ptrace attach, even for root (%s is 3, and stays 3 until reboot): set kernel.yama.ptrace_scope = 1 in /etc/sysctl.d/ and reboot; until then pidfd_getfd() cannot work on this host",
			 scope_path);
	else if (has_cap_sys_ptrace())
		snprintf(hint, size,
			 "pidfd_getfd() needs ptrace access to the VMM, and even CAP_SYS_PTRACE was refused, so a security module denied it%s: look for AppArmor or SELinux denials in the kernel log ('dmesg | grep -i denied')",
			 yama);
	else
		snprintf(hint, size,
			 "pidfd_getfd() needs ptrace access to the VMM (CAP_SYS_PTRACE over it%s): run %s as root",
			 yama, bin_name);
}

/* Copies the VM fd out of the VMM. */
static int take_vm_fd(struct vm_session *s)
{
	char path[64], link[256], hint[400];
	int pidfd, err;
	ssize_t n;

	pidfd = sys_pidfd_open(s->pid);
	if (pidfd < 0) {
		if (errno == ESRCH)
			p_err("no such process: %d (it exited)", s->pid);
		else
			p_err("pidfd_open(%d): %s", s->pid, strerror(errno));
		return EXIT_FAILED;
	}
	s->vm_fd = sys_pidfd_getfd(pidfd, s->vmm_fd);
	err = errno;
	close(pidfd);
	if (s->vm_fd < 0) {
		if (err == EPERM || err == EACCES) {
			ptrace_hint(hint, sizeof(hint));
			p_err_hint(hint, "cannot take fd %d from process %d (%s): %s",
				   s->vmm_fd, s->pid, s->comm, strerror(err));
		} else if (err == ESRCH) {
			p_err("no such process: %d (it exited)", s->pid);
		} else if (err == EBADF) {
			p_err("process %d (%s) closed fd %d", s->pid, s->comm,
			      s->vmm_fd);
		} else {
			p_err("pidfd_getfd(%d, fd %d): %s", s->pid, s->vmm_fd,
			      strerror(err));
		}
		return EXIT_FAILED;
	}
	/* The VMM may have reused the number since we read its link. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->vm_fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0 || (link[n] = '\0', strcmp(link, VM_FD_LINK))) {
		p_err("fd %d of process %d (%s) stopped being a KVM VM while it was taken",
		      s->vmm_fd, s->pid, s->comm);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/*
 * Opens /dev/kvm and checks it answers pvprof: a STATUS naming no VM fails
 * with EBADF (or EPERM when unprivileged) on a pvprof host, and with
 * KVM's EINVAL for unknown system ioctls on a stock one.
 */
static int open_pvprof_kvm(struct vm_session *s)
{
	struct pvprof_ctl_status probe = { .vm_fd = -1 };

	s->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (s->kvm_fd < 0) {
		if (errno == ENOENT)
			p_err("/dev/kvm does not exist: KVM is not loaded on this host");
		else if (errno == EACCES || errno == EPERM)
			p_err_hint("the pvprof ioctls need CAP_SYS_ADMIN or CAP_PERFMON: run as root",
				   "cannot open /dev/kvm: %s", strerror(errno));
		else
			p_err("cannot open /dev/kvm: %s", strerror(errno));
		return EXIT_FAILED;
	}
	if (!ioctl(s->kvm_fd, PVPROF_CTL_STATUS, &probe)) {
		p_err("/dev/kvm accepted PVPROF_CTL_STATUS for vm_fd -1: not a pvprof host");
		return EXIT_FAILED;
	}
	if (errno == EBADF || errno == EPERM)
		return EXIT_OK;
	if (errno == EINVAL || errno == ENOTTY)
		p_err("host KVM does not support pvprof: load the pvprof KVM modules (make host-install)");
	else
		p_err("/dev/kvm answered PVPROF_CTL_STATUS for vm_fd -1 with an unexpected error: %s",
		      strerror(errno));
	return EXIT_FAILED;
}

/**
 * vm_session__open() - find the VM named by @spec and hold it
 * @s: the session, filled in
 * @spec: PID, PID:FD, or a libvirt domain name
 *
 * Prints what went wrong. On success the caller makes its ioctls on
 * @s->kvm_fd with @s->vm_fd and calls vm_session__close() right after.
 *
 * Return: EXIT_OK, EXIT_USAGE for a malformed @spec, else EXIT_FAILED.
 */
int vm_session__open(struct vm_session *s, const char *spec)
{
	int ret;

	s->kvm_fd = -1;
	s->vm_fd = -1;
	s->comm[0] = '\0';
	ret = parse_spec(s, spec);
	if (ret)
		return ret;
	if (s->domain[0]) {
		ret = resolve_domain(s);
		if (ret)
			return ret;
	}
	ret = check_process(s);
	if (ret)
		return ret;
	ret = find_vm_fd(s);
	if (ret)
		return ret;
	if (s->domain[0])
		snprintf(s->label, sizeof(s->label), "%s (%d:%d, %s)",
			 s->domain, s->pid, s->vmm_fd, s->comm);
	else
		snprintf(s->label, sizeof(s->label), "%d:%d (%s)", s->pid,
			 s->vmm_fd, s->comm);
	ret = take_vm_fd(s);
	if (ret)
		goto out_close;
	ret = open_pvprof_kvm(s);
	if (ret)
		goto out_close;
	return EXIT_OK;

out_close:
	vm_session__close(s);
	return ret;
}

/**
 * vm_session__close() - drop our VM fd and /dev/kvm
 * @s: an opened, or partly opened, session
 */
void vm_session__close(struct vm_session *s)
{
	if (s->vm_fd >= 0)
		close(s->vm_fd);
	if (s->kvm_fd >= 0)
		close(s->kvm_fd);
	s->vm_fd = -1;
	s->kvm_fd = -1;
}

/**
 * vm_session__ioctl_err() - report a failed pvprof ioctl
 * @s: the session
 * @op: what was attempted, e.g. "enable"
 * @err: the errno
 *
 * Covers the errors every pvprof ioctl shares; callers report their own
 * first.
 *
 * Return: EXIT_FAILED.
 */
int vm_session__ioctl_err(const struct vm_session *s, const char *op, int err)
{
	if (err == EPERM || err == EACCES)
		p_err_hint("the pvprof ioctls need CAP_SYS_ADMIN or CAP_PERFMON: run as root",
			   "%s VM %s: %s", op, s->label, strerror(err));
	else
		p_err("%s VM %s: %s", op, s->label, strerror(err));
	return EXIT_FAILED;
}
