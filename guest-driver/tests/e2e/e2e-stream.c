// SPDX-License-Identifier: GPL-2.0
/*
 * e2e-stream: the end-to-end suite's reader and checker of a VM's pvprof
 * stream (a test tool; kvm-pvprof record is the product's reader).
 *
 *   e2e-stream capture PID FILE
 *	Takes the VM fd from the QEMU process PID (pidfd_getfd), opens the
 *	VM's stream with PVPROF_CTL_STREAM and copies it to FILE until end of
 *	file (the VM is destroyed) or SIGINT/SIGTERM.
 *
 *   e2e-stream check [--ksyms FILE] [--fp PID:NM] [--sys PID:NM]
 *		      [--nofp PID:NM] [--dump PID] FILE...
 *	Decodes the captured streams with the shared core decoder and checks
 *	every callchain against the guest's kernel symbols (lines
 *	"KSYM start end name", "KTEXT start end" and "KMOD start end name"
 *	as the L2 printed them from /proc/kallsyms and /proc/modules) and
 *	the workloads' own symbol tables ("nm -n" output).  Prints
 *	"FACT key value" lines and one "RESULT name 0|1 detail" line per
 *	check for the calling script.  --dump PID also prints every
 *	callchain of PID (0: all) with its frames' kernel symbols, for
 *	looking into a failure.
 *
 * Exit status: 0 when it ran (results say pass or fail), 1 on an error,
 * 2 on bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/host.h"
#include "core/stream.h"

#define USER_HALF_END		0x0000800000000000ULL
#define KERNEL_HALF_START	0xffff800000000000ULL

static void usage(FILE *f)
{
	fprintf(f,
		"usage: e2e-stream capture PID FILE\n"
		"       e2e-stream check [--ksyms FILE] [--fp PID:NM] [--sys PID:NM]\n"
		"                        [--nofp PID:NM] [--dump PID] FILE...\n"
		"capture copies the pvprof stream of the KVM VM of QEMU process PID to\n"
		"FILE until the VM ends or SIGINT/SIGTERM; check decodes captured\n"
		"streams and prints FACT and RESULT lines (see the file's header).\n");
}

static void err(const char *fmt, ...)
{
	va_list ap;

	fputs("e2e-stream: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---------------------------------------------------------------- */
/* capture                                                            */
/* ---------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* The VMM's fd number of its KVM VM, or -1. */
static int find_vm_fd(int pid)
{
	char dir[64], path[PATH_MAX], link[64];
	struct dirent *de;
	int found = -1;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d) {
		err("cannot list %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, "anon_inode:kvm-vm")) {
			found = atoi(de->d_name);
			break;
		}
	}
	closedir(d);
	if (found < 0)
		err("process %d holds no KVM VM fd", pid);
	return found;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static int do_capture(int argc, char **argv)
{
	static unsigned char buf[16 * PVPROF_STREAM_MAX_ENTRY];
	struct pvprof_ctl_vm arg = { 0 };
	int pid, vmm_fd, pidfd = -1, vm_fd = -1, kvm_fd = -1, st_fd = -1, out = -1;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t total = 0;
	int ret = 1;
	ssize_t n;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	pid = atoi(argv[0]);
	if (pid <= 0) {
		err("PID must be a positive number, got '%s'", argv[0]);
		return 2;
	}
	/* No SA_RESTART: a signal ends the blocking read. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	vmm_fd = find_vm_fd(pid);
	if (vmm_fd < 0)
		return 1;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		err("pidfd_open(%d): %s", pid, strerror(errno));
		goto out;
	}
	vm_fd = syscall(SYS_pidfd_getfd, pidfd, vmm_fd, 0);
	if (vm_fd < 0) {
		err("pidfd_getfd(%d, fd %d): %s", pid, vmm_fd, strerror(errno));
		goto out;
	}
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0) {
		err("open /dev/kvm: %s", strerror(errno));
		goto out;
	}
	arg.vm_fd = vm_fd;
	st_fd = ioctl(kvm_fd, PVPROF_CTL_STREAM, &arg);
	if (st_fd < 0) {
		err("PVPROF_CTL_STREAM on VM %d:%d: %s%s", pid, vmm_fd, strerror(errno),
		    errno == ENOENT ? " (enable sampling first)" : "");
		goto out;
	}
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err("cannot create %s: %s", argv[1], strerror(errno));
		goto out;
	}
	/* The VM fd must not keep the VM alive past its QEMU. */
	close(vm_fd);
	vm_fd = -1;
	/* From here every entry the host streams reaches this reader. */
	fprintf(stderr, "e2e-stream: attached to the stream of VM %d\n", pid);
	while (!stop_requested) {
		n = read(st_fd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err("stream read: %s", strerror(errno));
			goto out;
		}
		if (write_all(out, buf, n)) {
			err("write %s: %s", argv[1], strerror(errno));
			goto out;
		}
		total += n;
	}
	if (fsync(out) && errno != EINVAL) {
		err("fsync %s: %s", argv[1], strerror(errno));
		goto out;
	}
	fprintf(stderr, "e2e-stream: captured %" PRIu64 " bytes (%s)\n", total,
		stop_requested ? "stopped" : "end of stream");
	ret = 0;
out:
	if (out >= 0)
		close(out);
	if (st_fd >= 0)
		close(st_fd);
	if (kvm_fd >= 0)
		close(kvm_fd);
	if (vm_fd >= 0)
		close(vm_fd);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

/* ---------------------------------------------------------------- */
/* symbols                                                            */
/* ---------------------------------------------------------------- */

struct sym {
	uint64_t start, end;
	char name[128];
};

struct symtab {
	struct sym *syms;
	size_t nr, cap;
};

static int symtab_add(struct symtab *t, uint64_t start, uint64_t end, const char *name)
{
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct sym *s = realloc(t->syms, cap * sizeof(*s));

		if (!s)
			return -1;
		t->syms = s;
		t->cap = cap;
	}
	t->syms[t->nr].start = start;
	t->syms[t->nr].end = end;
	snprintf(t->syms[t->nr].name, sizeof(t->syms[t->nr].name), "%s", name);
	t->nr++;
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The symbol containing addr, or NULL. */
static const struct sym *symtab_find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Aliases share a start: any of them containing addr will do. */
	for (size_t i = lo; i-- > 0 && t->syms[i].start == t->syms[lo - 1].start;)
		if (addr < t->syms[i].end)
			return &t->syms[i];
	return NULL;
}

/*
 * Function symbols of a workload from "nm -n" output: each ends where the
 * next symbol with a higher address starts.
 */
static int load_nm(const char *path, struct symtab *t)
{
	char line[512], name[256], type;
	uint64_t addr;
	FILE *f = fopen(path, "r");

	if (!f) {
		err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		/* Every defined symbol bounds the one before it. */
		if (symtab_add(t, addr, UINT64_MAX, strchr("tTwW", type) ? name : "")) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	qsort(t->syms, t->nr, sizeof(*t->syms), sym_cmp);
	for (size_t i = 0; i < t->nr; i++) {
		size_t j = i + 1;

		while (j < t->nr && t->syms[j].start == t->syms[i].start)
			j++;
		t->syms[i].end = j < t->nr ? t->syms[j].start : t->syms[i].start;
	}
	/* Keep only the functions. */
	size_t k = 0;

	for (size_t i = 0; i < t->nr; i++)
		if (t->syms[i].name[0] && t->syms[i].end > t->syms[i].start)
			t->syms[k++] = t->syms[i];
	t->nr = k;
	if (!k) {
		err("%s: no function symbols", path);
		return -1;
	}
	return 0;
}

/* The guest kernel as its L2 described it. */
struct kernel_view {
	struct symtab syms;		/* KSYM: the functions the checks name */
	struct symtab text;		/* KTEXT and KMOD: where code lives */
};

static int load_ksyms(const char *path, struct kernel_view *k)
{
	char line[512], kind[16], name[128];
	uint64_t start, end;
	FILE *f = fopen(path, "r");
	int n;

	if (!f) {
		err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		name[0] = 0;
		n = sscanf(line, "%15s %" SCNx64 " %" SCNx64 " %127s", kind, &start, &end, name);
		if (n < 3 || end <= start)
			continue;
		if (!strcmp(kind, "KSYM") && n == 4)
			symtab_add(&k->syms, start, end, name);
		else if (!strcmp(kind, "KTEXT"))
			symtab_add(&k->text, start, end, "[kernel]");
		else if (!strcmp(kind, "KMOD") && n == 4)
			symtab_add(&k->text, start, end, name);
	}
	fclose(f);
	qsort(k->syms.syms, k->syms.nr, sizeof(*k->syms.syms), sym_cmp);
	qsort(k->text.syms, k->text.nr, sizeof(*k->text.syms), sym_cmp);
	if (!k->text.nr) {
		err("%s: no KTEXT line", path);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* check                                                              */
/* ---------------------------------------------------------------- */

/*
 * The NMI path: the kernel's NMI entry and dispatch, the unwinder the
 * driver runs, and the driver's own handler.  A sample's callchain must
 * never contain any of them.  The unwinder also runs outside NMIs (a debug
 * kernel's KASAN, kmemleak and lockdep save a stack trace on most
 * allocations and lock acquisitions, from syscalls): its frames count only
 * in a chain that also has an NMI entry or driver frame (nmi_path[] before
 * NMI_PATH_UNWINDER).
 */
static const char *const nmi_path[] = {
	"asm_exc_nmi", "exc_nmi", "default_do_nmi", "nmi_handle", "repeat_nmi",
	"end_repeat_nmi", "nested_nmi", "nested_nmi_out", "first_nmi",
	"pvprof_nmi", "pvprof_guest_nmi", "pvprof_capture",
	"pvprof_capture_kernel", "pvprof_callchain_init", "pvprof_callchain_finish",
	"pvprof_notice_check",
	/* NMI_PATH_UNWINDER */
	"unwind_next_frame", "__unwind_start", "unwind_get_return_address",
	"copy_from_user_nmi",
};
#define NMI_PATH_UNWINDER 16

/* 0: not in the NMI path; 1: NMI entry or driver; 2: the unwinder. */
static int in_nmi_path(const struct kernel_view *k, uint64_t addr)
{
	const struct sym *s = symtab_find(&k->syms, addr);

	if (!s)
		return 0;
	for (size_t i = 0; i < sizeof(nmi_path) / sizeof(nmi_path[0]); i++)
		if (!strcmp(s->name, nmi_path[i]))
			return i < NMI_PATH_UNWINDER ? 1 : 2;
	return 0;
}

static const char *ksym_name(const struct kernel_view *k, uint64_t addr)
{
	const struct sym *s = symtab_find(&k->syms, addr);

	return s ? s->name : NULL;
}

/* Return addresses point after the call: look up the call itself. */
static uint64_t lookup_addr(uint32_t i, uint64_t frame)
{
	return i ? frame - 1 : frame;
}

/*
 * A kernel frame's lookup address.  The frame after an interrupt or
 * exception entry (asm_*) is the interrupted context's regs->ip, exact like
 * frame 0: taken at a function's first instruction, its address less one
 * would name the function before it.
 */
static uint64_t kernel_lookup_addr(const struct kernel_view *k,
				   const struct pvprof_st_view *v, uint32_t i)
{
	uint64_t frame = pvprof_st_frame(v, i);
	const char *below;

	if (!i)
		return frame;
	below = ksym_name(k, lookup_addr(i - 1, pvprof_st_frame(v, i - 1)));
	return below && !strncmp(below, "asm_", 4) ? frame : frame - 1;
}

struct workload {
	const char *role;
	int pid;
	struct symtab syms;
	const char *const *chain;	/* expected user chain, innermost first */
	uint64_t callchains, user_callchains, kernel_callchains;
	uint32_t exec_gen;		/* the workload's image: the pid's last exec */
	uint64_t pre_exec;		/* callchains of the pid before that exec */
	uint64_t hot_first;		/* user part starts in chain[0] */
	uint64_t user_hot;		/* ... among user-mode callchains */
	uint64_t chain_ok;		/* ... and the frames follow the chain */
	uint64_t chain_prologue;	/* ... of them taken in its prologue */
	uint64_t chain_bad;
	uint64_t garbage_frames;	/* user frames outside the binary's functions */
	uint64_t garbage_unflagged;	/* ... in callchains not flagged TRUNCATED */
	uint64_t garbage_own_code;	/* ... in samples of the program's own code */
	uint64_t truncated;
	uint64_t hot_truncated;
	uint64_t syscall_path_ok, syscall_path_bad, syscall_full_path;
	uint64_t syscall_other_entry;
	uint64_t syscall_unwind_stopped;
	char first_stopped[128];
	uint64_t per_vcpu[2];
	char first_bad[256];
	char first_garbage[256];
	char first_path[256];
};

static const char *const fp_chain[] = {
	"e2e_fp_hot", "e2e_fp_inner", "e2e_fp_middle", "e2e_fp_outer", "main", NULL
};
static const char *const sys_chain[] = {
	"e2e_sys_leaf", "e2e_sys_inner", "e2e_sys_outer", "main", NULL
};
static const char *const nofp_chain[] = { "e2e_nofp_hot", NULL };

/*
 * The read(2) path of /dev/zero, innermost first (__x64_sys_read
 * tail-calls ksys_read and leaves no frame).
 */
static const char *const read_path[] = {
	"vfs_read", "ksys_read", "do_syscall_64", NULL
};

struct totals {
	uint64_t entries, callchains, losses[PVPROF_LOSS_NR];
	uint64_t skewed, skew_consistent, skew_bad;
	uint64_t stale_flagged, truncated;
	uint64_t ctx_bad, nmi_frames, kernel_garbage;
	uint64_t per_vcpu[2];
	uint64_t vcpu_events[2][4];
	uint64_t decode_errors;
	char ctx_first[256], nmi_first[256], skew_first[256], kgarbage_first[256];
};

static void note_first(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (buf[0])
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/*
 * Module space holds only module code and data (and BPF programs): a
 * module's init code, run by insmod while sampling, is listed nowhere
 * once it is freed.
 */
#define MODULES_START		0xffffffffc0000000ULL
#define MODULES_END		0xffffffffff000000ULL

static bool kernel_addr_ok(const struct kernel_view *k, uint64_t addr)
{
	return symtab_find(&k->text, addr) != NULL ||
	       (addr >= MODULES_START && addr < MODULES_END);
}

/* Returns whether the user part starts in the workload's hot function. */
static bool check_user_part(struct workload *w, const struct pvprof_st_view *v,
			    uint32_t nr_kernel, uint32_t nr_user)
{
	const struct sym *s;
	uint64_t ip_off;
	uint32_t i, c, skip;
	bool hot, ok = true, own, garbage = false;

	if (!nr_user)
		return false;
	s = symtab_find(&w->syms, pvprof_st_frame(v, nr_kernel));
	own = s && (!strncmp(s->name, "e2e_", 4) || !strcmp(s->name, "main"));
	for (i = 0; i < nr_user; i++) {
		uint64_t f = pvprof_st_frame(v, nr_kernel + i);

		if (!symtab_find(&w->syms, lookup_addr(i, f))) {
			w->garbage_frames++;
			garbage = true;
			note_first(w->first_garbage, sizeof(w->first_garbage),
				   "seq %" PRIu64 " flags %#x user frame %u %#" PRIx64 " outside %s's functions",
				   (uint64_t)v->u.callchain.chain.seq, v->u.callchain.chain.flags,
				   i, f, w->role);
		}
	}
	if (garbage && !(v->u.callchain.chain.flags & PVPROF_CHAIN_F_TRUNCATED))
		w->garbage_unflagged++;
	if (garbage && own)
		w->garbage_own_code++;
	hot = s && !strcmp(s->name, w->chain[0]);
	if (!hot)
		return false;
	w->hot_first++;
	if (!nr_kernel)
		w->user_hot++;
	if (v->u.callchain.chain.flags & PVPROF_CHAIN_F_TRUNCATED)
		w->hot_truncated++;
	/*
	 * At the function's push %rbp (+0) and mov %rsp,%rbp (+1), rbp still
	 * holds its caller's frame: the frame-pointer walk goes on from the
	 * caller's return address, and the caller is not in the chain, as
	 * with perf's own unwinder.
	 */
	ip_off = pvprof_st_frame(v, nr_kernel) - s->start;
	skip = w->chain[1] && ip_off < 4 ? 1 : 0;
	for (c = 1; w->chain[c + skip]; c++) {
		if (c >= nr_user) {
			ok = false;
			break;
		}
		s = symtab_find(&w->syms, lookup_addr(c, pvprof_st_frame(v, nr_kernel + c)));
		if (!s || strcmp(s->name, w->chain[c + skip])) {
			ok = false;
			break;
		}
	}
	if (ok) {
		w->chain_ok++;
		w->chain_prologue += skip;
	} else {
		w->chain_bad++;
		note_first(w->first_bad, sizeof(w->first_bad),
			   "seq %" PRIu64 " user frame %u is %s, expected %s (frame 0 at %s+%#" PRIx64 ")",
			   (uint64_t)v->u.callchain.chain.seq, c, c < nr_user && s ? s->name : "missing",
			   w->chain[c + skip], w->chain[0], ip_off);
	}
	return true;
}

static bool is_syscall_entry(const char *name)
{
	return !strncmp(name, "entry_SYSCALL_64", 16) || !strncmp(name, "entry_SYSRETQ", 13);
}

/* Return thunks and untraining sequences the entry and exit code run. */
static bool is_mitigation_thunk(const char *name)
{
	return strstr(name, "thunk") || strstr(name, "untrain_ret") || !strncmp(name, "srso_", 5);
}

/*
 * A kernel-mode sample of the syscall loop: unless it stopped in the entry
 * code itself, its chain passes through do_syscall_64 and ends in
 * entry_SYSCALL_64 (the unwinder stops at the user's pt_regs).
 */
static void check_syscall_path(struct workload *w, const struct kernel_view *k,
			       const struct pvprof_st_view *v, uint32_t nr_kernel,
			       uint32_t flags)
{
	const char *first = ksym_name(k, pvprof_st_frame(v, 0));
	const char *last = ksym_name(k, kernel_lookup_addr(k, v, nr_kernel - 1));
	bool do_syscall = false;
	uint32_t i, p = 0;

	/*
	 * Stopped in the entry code itself, before or after do_syscall_64, or
	 * in a return thunk (do_syscall_64's own return goes through one).
	 */
	if (first && (is_syscall_entry(first) || is_mitigation_thunk(first))) {
		w->syscall_path_ok++;
		return;
	}
	/*
	 * An interrupt or exception taken from user mode, not the syscall
	 * (the unwinder may stop in the entry code that saves its registers).
	 */
	if (last && ((!strncmp(last, "asm_", 4) && strcmp(last, "asm_exc_nmi")) ||
		     !strcmp(last, "error_entry") || !strcmp(last, "error_return") ||
		     !strcmp(last, "paranoid_entry") || !strcmp(last, "paranoid_exit"))) {
		w->syscall_other_entry++;
		return;
	}
	/*
	 * The unwinder stopped in a mitigation thunk (no ORC data there): the
	 * IP an interrupt entry frame reports is exact, not a return address.
	 */
	if (nr_kernel > 1 && (flags & PVPROF_CHAIN_F_TRUNCATED)) {
		const char *stop = ksym_name(k, pvprof_st_frame(v, nr_kernel - 1));

		if (stop && is_mitigation_thunk(stop)) {
			w->syscall_path_ok++;
			return;
		}
	}
	/*
	 * The unwinder found nothing beyond the interrupted IP (code without
	 * ORC data): flagged truncated, which is honest, not garbage.  Allowed
	 * up to 1% of the kernel-mode callchains.
	 */
	if (nr_kernel == 1 && (flags & PVPROF_CHAIN_F_TRUNCATED)) {
		w->syscall_unwind_stopped++;
		note_first(w->first_stopped, sizeof(w->first_stopped), "seq %" PRIu64 " ip %#" PRIx64,
			   (uint64_t)v->u.callchain.chain.seq, (uint64_t)pvprof_st_frame(v, 0));
		return;
	}
	for (i = 0; i < nr_kernel; i++) {
		const char *name = ksym_name(k, kernel_lookup_addr(k, v, i));

		if (!name)
			continue;
		if (!strcmp(name, "do_syscall_64"))
			do_syscall = true;
		if (read_path[p] && !strcmp(name, read_path[p]))
			p++;
	}
	if (do_syscall && last && is_syscall_entry(last)) {
		w->syscall_path_ok++;
	} else {
		w->syscall_path_bad++;
		note_first(w->first_path, sizeof(w->first_path),
			   "seq %" PRIu64 ": %u kernel frames from %s to %s%s",
			   (uint64_t)v->u.callchain.chain.seq, nr_kernel, first ? first : "?",
			   last ? last : "?", do_syscall ? "" : ", no do_syscall_64");
	}
	if (!read_path[p])
		w->syscall_full_path++;
}

static void dump_callchain(const struct kernel_view *k, const struct pvprof_st_view *v)
{
	const struct pvprof_st_callchain *cc = &v->u.callchain;
	uint32_t nr_kernel = cc->chain.nr_kernel, nr = nr_kernel + cc->chain.nr_user;

	printf("DUMP vcpu %u pid %u seq %" PRIu64 " flags %#x cpl %u ip %#" PRIx64 ":",
	       v->hdr.vcpu_id, cc->chain.pid, (uint64_t)cc->chain.seq, cc->chain.flags,
	       cc->notice_cpl, (uint64_t)cc->notice_ip);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t f = pvprof_st_frame(v, i);
		const char *name = i < nr_kernel && k ?
			ksym_name(k, kernel_lookup_addr(k, v, i)) : NULL;

		printf(" %s%#" PRIx64 "%s%s", i == nr_kernel ? "| " : "", f,
		       name ? "=" : "", name ? name : "");
	}
	putchar('\n');
}

static void check_callchain(struct totals *t, const struct kernel_view *k,
			    struct workload *works, size_t nr_works,
			    const struct pvprof_st_view *v)
{
	const struct pvprof_st_callchain *cc = &v->u.callchain;
	uint32_t flags = cc->chain.flags, nr_kernel = cc->chain.nr_kernel;
	uint32_t nr_user = cc->chain.nr_user, vcpu = v->hdr.vcpu_id, i;
	bool user = flags & PVPROF_CHAIN_F_USER, ctx_ok = true, nmi_entry = false;
	uint64_t first;
	struct workload *w = NULL;

	t->callchains++;
	if (vcpu < 2)
		t->per_vcpu[vcpu]++;
	if (flags & PVPROF_CHAIN_F_STALE)
		t->stale_flagged++;
	if (flags & PVPROF_CHAIN_F_TRUNCATED)
		t->truncated++;

	/* Context flags against the addresses. */
	if (user ? nr_kernel != 0 || nr_user == 0 : nr_kernel == 0)
		ctx_ok = false;
	for (i = 0; i < nr_kernel && ctx_ok; i++)
		if (pvprof_st_frame(v, i) < KERNEL_HALF_START)
			ctx_ok = false;
	for (i = 0; i < nr_user && ctx_ok; i++)
		if (pvprof_st_frame(v, nr_kernel + i) >= USER_HALF_END)
			ctx_ok = false;
	if ((flags & PVPROF_CHAIN_F_KTHREAD) && nr_user)
		ctx_ok = false;
	if (!(flags & PVPROF_CHAIN_F_SKEWED) && (cc->notice_cpl == 3) != user)
		ctx_ok = false;
	if (!ctx_ok) {
		t->ctx_bad++;
		note_first(t->ctx_first, sizeof(t->ctx_first),
			   "seq %" PRIu64 " flags %#x cpl %u nr_kernel %u nr_user %u frame0 %#" PRIx64,
			   (uint64_t)cc->chain.seq, flags, cc->notice_cpl, nr_kernel, nr_user,
			   nr_kernel + nr_user ? pvprof_st_frame(v, 0) : 0);
	}

	/* The first frame is the interrupted IP; SKEWED says when it is not the notice's. */
	if (nr_kernel + nr_user) {
		first = pvprof_st_frame(v, 0);
		if (flags & PVPROF_CHAIN_F_SKEWED) {
			t->skewed++;
			if (first != cc->notice_ip) {
				t->skew_consistent++;
			} else {
				t->skew_bad++;
				note_first(t->skew_first, sizeof(t->skew_first),
					   "seq %" PRIu64 " SKEWED but frame0 == notice ip %#" PRIx64,
					   (uint64_t)cc->chain.seq, first);
			}
		} else if (first != cc->notice_ip) {
			t->skew_bad++;
			note_first(t->skew_first, sizeof(t->skew_first),
				   "seq %" PRIu64 " frame0 %#" PRIx64 " != notice ip %#" PRIx64 " without SKEWED",
				   (uint64_t)cc->chain.seq, first, (uint64_t)cc->notice_ip);
		}
	}

	/* Kernel frames: in the guest's text, never in the NMI path. */
	for (i = 0; i < nr_kernel && k; i++)
		if (in_nmi_path(k, kernel_lookup_addr(k, v, i)) == 1)
			nmi_entry = true;
	for (i = 0; i < nr_kernel && k; i++) {
		uint64_t f = pvprof_st_frame(v, i);
		uint64_t addr = kernel_lookup_addr(k, v, i);
		int nmi = in_nmi_path(k, addr);

		if (!kernel_addr_ok(k, addr)) {
			t->kernel_garbage++;
			note_first(t->kgarbage_first, sizeof(t->kgarbage_first),
				   "seq %" PRIu64 " kernel frame %u %#" PRIx64 " outside kernel and module text",
				   (uint64_t)cc->chain.seq, i, f);
		}
		if (nmi == 1 || (nmi == 2 && nmi_entry)) {
			t->nmi_frames++;
			note_first(t->nmi_first, sizeof(t->nmi_first),
				   "seq %" PRIu64 " kernel frame %u in %s", (uint64_t)cc->chain.seq, i,
				   ksym_name(k, addr));
		}
	}

	for (i = 0; i < nr_works; i++)
		if (works[i].pid > 0 && (uint32_t)works[i].pid == cc->chain.pid)
			w = &works[i];
	if (!w)
		return;
	/* Before its exec the pid ran the shell that started it. */
	if (cc->chain.exec_gen != w->exec_gen) {
		w->pre_exec++;
		return;
	}
	w->callchains++;
	if (vcpu < 2)
		w->per_vcpu[vcpu]++;
	if (flags & PVPROF_CHAIN_F_TRUNCATED)
		w->truncated++;
	if (user)
		w->user_callchains++;
	else
		w->kernel_callchains++;
	/* The kernel path is known while the loop runs, not in start-up. */
	if (check_user_part(w, v, nr_kernel, nr_user) && !user && nr_kernel && k &&
	    w->chain == sys_chain)
		check_syscall_path(w, k, v, nr_kernel, flags);
}

static void result(const char *name, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("RESULT %s %d ", name, ok);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

static int parse_workload(const char *arg, struct workload *w)
{
	char *colon;
	long pid = strtol(arg, &colon, 10);

	if (pid <= 0 || *colon != ':' || !colon[1]) {
		err("--%s wants PID:NMFILE, got '%s'", w->role, arg);
		return -1;
	}
	w->pid = (int)pid;
	return load_nm(colon + 1, &w->syms);
}

static int read_file(const char *path, unsigned char **buf, uint64_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 20, n;

	*len = 0;
	*buf = NULL;
	if (!f) {
		err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		unsigned char *b = realloc(*buf, cap);

		if (!b) {
			fclose(f);
			return -1;
		}
		*buf = b;
		n = fread(*buf + *len, 1, cap - *len, f);
		*len += n;
		if (*len < cap)
			break;
		cap *= 2;
	}
	fclose(f);
	return 0;
}

static void report_workload(const struct workload *w, const struct kernel_view *k)
{
	char name[64];

	if (w->pid <= 0)
		return;
	printf("FACT %s_exec_gen %u\nFACT %s_pre_exec_callchains %" PRIu64 "\n",
	       w->role, w->exec_gen, w->role, w->pre_exec);
	printf("FACT %s_callchains %" PRIu64 "\nFACT %s_user_callchains %" PRIu64 "\n"
	       "FACT %s_kernel_callchains %" PRIu64 "\nFACT %s_hot_first %" PRIu64 "\n"
	       "FACT %s_truncated %" PRIu64 "\nFACT %s_vcpu0 %" PRIu64 "\nFACT %s_vcpu1 %" PRIu64 "\n",
	       w->role, w->callchains, w->role, w->user_callchains, w->role, w->kernel_callchains,
	       w->role, w->hot_first, w->role, w->truncated, w->role, w->per_vcpu[0],
	       w->role, w->per_vcpu[1]);
	snprintf(name, sizeof(name), "%s-has-callchains", w->role);
	result(name, w->callchains >= 20, "%" PRIu64 " callchains of pid %d (want >= 20)",
	       w->callchains, w->pid);
	printf("FACT %s_garbage_frames %" PRIu64 "\n", w->role, w->garbage_frames);
	snprintf(name, sizeof(name), "%s-garbage-flagged-truncated", w->role);
	result(name, !w->garbage_unflagged,
	       "%" PRIu64 " callchains with user frames outside the binary's functions lack TRUNCATED "
	       "(%" PRIu64 " such frames in all); first: %s",
	       w->garbage_unflagged, w->garbage_frames, w->first_garbage);
	snprintf(name, sizeof(name), "%s-no-garbage-in-own-code", w->role);
	result(name, !w->garbage_own_code,
	       "%" PRIu64 " samples in the program's own functions carry frames outside them; first: %s",
	       w->garbage_own_code, w->first_garbage);
	if (w->chain == nofp_chain) {
		snprintf(name, sizeof(name), "%s-flagged-truncated", w->role);
		result(name, w->hot_first > 0 && w->hot_truncated == w->hot_first,
		       "%" PRIu64 " of %" PRIu64 " samples in %s flagged truncated",
		       w->hot_truncated, w->hot_first, w->chain[0]);
		return;
	}
	if (w->chain == fp_chain) {
		snprintf(name, sizeof(name), "%s-hot-loop", w->role);
		result(name, w->user_callchains && pct(w->user_hot, w->user_callchains) >= 95.0,
		       "%" PRIu64 " of %" PRIu64 " user-mode callchains start in %s (want >= 95%%)",
		       w->user_hot, w->user_callchains, w->chain[0]);
	}
	snprintf(name, sizeof(name), "%s-user-chain", w->role);
	result(name, w->chain_ok > 0 && !w->chain_bad,
	       "%" PRIu64 " callchains follow %s..main (%" PRIu64 " of them taken in its prologue, without its caller), %" PRIu64 " do not; first: %s",
	       w->chain_ok, w->chain[0], w->chain_prologue, w->chain_bad, w->first_bad);
	if (w->chain == sys_chain && k) {
		printf("FACT %s_full_read_path %" PRIu64 "\nFACT %s_irq_from_user %" PRIu64 "\n",
		       w->role, w->syscall_full_path, w->role, w->syscall_other_entry);
		snprintf(name, sizeof(name), "%s-kernel-path", w->role);
		result(name, w->syscall_path_ok > 0 && !w->syscall_path_bad &&
		       w->syscall_full_path > 0 &&
		       w->syscall_unwind_stopped * 100 <= w->syscall_path_ok,
		       "%" PRIu64 " kernel-mode callchains pass through do_syscall_64 to entry_SYSCALL_64, "
		       "%" PRIu64 " do not, %" PRIu64 " show vfs_read..do_syscall_64; first: %s; "
		       "%" PRIu64 " stop at the IP, flagged truncated (at most 1%%); first: %s",
		       w->syscall_path_ok, w->syscall_path_bad, w->syscall_full_path, w->first_path,
		       w->syscall_unwind_stopped, w->first_stopped);
	}
}

static int do_check(int argc, char **argv)
{
	static struct kernel_view kview;
	struct workload works[3] = {
		{ .role = "fp", .chain = fp_chain },
		{ .role = "sys", .chain = sys_chain },
		{ .role = "nofp", .chain = nofp_chain },
	};
	const struct kernel_view *k = NULL;
	struct totals t = { 0 };
	long dump_pid = -1;
	int i;

	for (i = 0; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc) {
			err("%s needs an argument", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--ksyms")) {
			if (load_ksyms(argv[i + 1], &kview))
				return 1;
			k = &kview;
		} else if (!strcmp(argv[i], "--fp")) {
			if (parse_workload(argv[i + 1], &works[0]))
				return 1;
		} else if (!strcmp(argv[i], "--sys")) {
			if (parse_workload(argv[i + 1], &works[1]))
				return 1;
		} else if (!strcmp(argv[i], "--nofp")) {
			if (parse_workload(argv[i + 1], &works[2]))
				return 1;
		} else if (!strcmp(argv[i], "--dump")) {
			dump_pid = strtol(argv[i + 1], NULL, 10);
		} else {
			err("unknown option %s", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	for (; i < argc; i++) {
		struct pvprof_st_iter it;
		struct pvprof_st_view v;
		enum pvprof_st_status st;
		unsigned char *buf;
		uint64_t len;

		if (read_file(argv[i], &buf, &len))
			return 1;
		/* First pass: each workload's image is its pid's last exec. */
		pvprof_st_iter_init(&it, buf, len);
		while (pvprof_st_iter_next(&it, &v) == PVPROF_ST_OK) {
			if (v.hdr.type != PVPROF_ST_CALLCHAIN)
				continue;
			for (int j = 0; j < 3; j++)
				if (works[j].pid > 0 && (uint32_t)works[j].pid == v.u.callchain.chain.pid &&
				    v.u.callchain.chain.exec_gen > works[j].exec_gen)
					works[j].exec_gen = v.u.callchain.chain.exec_gen;
		}
		pvprof_st_iter_init(&it, buf, len);
		while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK) {
			t.entries++;
			switch (v.hdr.type) {
			case PVPROF_ST_CALLCHAIN:
				check_callchain(&t, k, works, 3, &v);
				if (dump_pid == 0 || dump_pid == v.u.callchain.chain.pid)
					dump_callchain(k, &v);
				break;
			case PVPROF_ST_LOSS:
				if (v.u.loss.reason < PVPROF_LOSS_NR)
					t.losses[v.u.loss.reason] += v.u.loss.count;
				break;
			case PVPROF_ST_VCPU:
				if (v.hdr.vcpu_id < 2 && v.u.vcpu.event < 4)
					t.vcpu_events[v.hdr.vcpu_id][v.u.vcpu.event]++;
				break;
			}
		}
		if (st != PVPROF_ST_END) {
			t.decode_errors++;
			err("%s: decoding stopped at offset %" PRIu64 ": %s", argv[i], it.pos,
			    pvprof_st_status_name(st));
		}
		free(buf);
	}

	printf("FACT stream_entries %" PRIu64 "\nFACT callchains %" PRIu64 "\n",
	       t.entries, t.callchains);
	printf("FACT callchains_vcpu0 %" PRIu64 "\nFACT callchains_vcpu1 %" PRIu64 "\n",
	       t.per_vcpu[0], t.per_vcpu[1]);
	printf("FACT skewed %" PRIu64 "\nFACT skewed_pct %.2f\nFACT truncated %" PRIu64 "\n",
	       t.skewed, pct(t.skewed, t.callchains), t.truncated);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		printf("FACT stream_loss_%s %" PRIu64 "\n", pvprof_loss_name(i), t.losses[i]);
	for (i = 0; i < 2; i++)
		printf("FACT vcpu%d_registered %" PRIu64 "\nFACT vcpu%d_unregistered %" PRIu64
		       "\nFACT vcpu%d_dropped %" PRIu64 "\n", i,
		       t.vcpu_events[i][PVPROF_VCPU_REGISTERED], i,
		       t.vcpu_events[i][PVPROF_VCPU_UNREGISTERED], i,
		       t.vcpu_events[i][PVPROF_VCPU_DROPPED]);

	result("stream-decodes", !t.decode_errors && t.entries > 1,
	       "%" PRIu64 " stream entries, %" PRIu64 " decode errors", t.entries, t.decode_errors);
	result("first-frame-is-ip", t.callchains && !t.skew_bad,
	       "%" PRIu64 " of %" PRIu64 " callchains disagree with their SKEWED flag; first: %s",
	       t.skew_bad, t.callchains, t.skew_first);
	result("context-flags-agree", t.callchains && !t.ctx_bad,
	       "%" PRIu64 " of %" PRIu64 " callchains have USER/KTHREAD/cpl against their addresses; first: %s",
	       t.ctx_bad, t.callchains, t.ctx_first);
	result("no-stale-callchains", !t.stale_flagged,
	       "%" PRIu64 " callchains flagged STALE", t.stale_flagged);
	if (k) {
		result("no-nmi-path-frames", t.callchains && !t.nmi_frames,
		       "%" PRIu64 " kernel frames in the NMI path; first: %s", t.nmi_frames, t.nmi_first);
		result("kernel-frames-in-text", t.callchains && !t.kernel_garbage,
		       "%" PRIu64 " kernel frames outside kernel/module text; first: %s",
		       t.kernel_garbage, t.kgarbage_first);
	}
	for (i = 0; i < 3; i++)
		report_workload(&works[i], k);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "capture"))
		return do_capture(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return do_check(argc - 2, argv + 2);
	usage(stderr);
	return 2;
}
