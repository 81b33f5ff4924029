// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd: processes, their exec generations and executable mappings.
 *
 * A snapshot comes from /proc; changes come from perf sideband records, as
 * `perf record` gets them: one dummy software event per CPU with the comm,
 * comm_exec, mmap2 and task bits, whose ring carries COMM, MMAP2, FORK and
 * EXIT records stamped with CLOCK_MONOTONIC.  The records of all rings are
 * merged by time before use, so that a process that moved between CPUs is
 * seen in order.
 *
 * exec_gen must equal what the driver stores (task->self_exec_id), which
 * user space cannot read: the driver's PVPROF_DEV_EXEC_GEN gives it for a
 * live process.  Between snapshots the agent derives it from the records:
 * fork copies it, exec increments it.  Each process remembers when its
 * value was last known (snapshot or record time), and an exec record older
 * than that is already counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pvprofd.h"

#define RING_PAGES	16		/* data pages per CPU ring (64 KiB) */
#define MAX_CPUS	1024
#define PROC_BUCKETS	4096
#define FILE_CACHE_MAX	4096
#define BATCH_MAX	65536

struct pent {
	struct pent *next;
	uint32_t pid;
	uint32_t exec_gen;
	uint64_t known_ns;	/* exec_gen is right as of this time */
	char comm[PVPROF_SB_COMM_SIZE];
};

struct fcache {
	struct fcache *next;
	uint32_t maj;
	uint32_t min;
	uint64_t ino;
	struct file_info fi;
};

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;
};

struct event {
	uint64_t time;
	uint32_t len;
	uint8_t *rec;
};

static struct pent *procs[PROC_BUCKETS];
static struct fcache *files;
static size_t nr_files;
static struct ring rings[MAX_CPUS];
static int nr_rings;
static int dev;
static uint64_t lost_events;
static struct event *batch;
static size_t nr_batch;
static bool want_rescan;

void procs_set_dev(int dev_fd)
{
	dev = dev_fd;
}

uint64_t procs_lost_events(void)
{
	return lost_events;
}

/* ---- the process table ------------------------------------------------- */

static struct pent **pent_slot(uint32_t pid)
{
	struct pent **p = &procs[pid % PROC_BUCKETS];

	while (*p && (*p)->pid != pid)
		p = &(*p)->next;
	return p;
}

static struct pent *pent_get(uint32_t pid, bool create)
{
	struct pent **p = pent_slot(pid);

	if (!*p && create) {
		*p = calloc(1, sizeof(**p));
		if (*p)
			(*p)->pid = pid;
	}
	return *p;
}

static void pent_remove(uint32_t pid)
{
	struct pent **p = pent_slot(pid), *e = *p;

	if (e) {
		*p = e->next;
		free(e);
	}
}

static int exec_gen_of(uint32_t pid, uint32_t *gen)
{
	struct pvprof_dev_exec_gen arg = { .pid = pid };

	if (ioctl(dev, PVPROF_DEV_EXEC_GEN, &arg))
		return -errno;
	*gen = arg.exec_gen;
	return 0;
}

static void send_process(const struct pent *e, uint32_t parent, uint64_t time)
{
	struct sb_msg *m = msg_new(PVPROF_SB_PROCESS, sizeof(struct pvprof_sb_process));
	struct pvprof_sb_process *p;

	if (!m)
		return;
	p = (struct pvprof_sb_process *)m->data;
	p->hdr.time_ns = time;
	p->pid = e->pid;
	p->exec_gen = e->exec_gen;
	p->parent_pid = parent;
	p->flags = parent ? PVPROF_SB_PROC_F_FORK : 0;
	memcpy(p->comm, e->comm, sizeof(p->comm));
	send_enqueue(m, false);
}

/* ---- mappings ------------------------------------------------------------ */

static const struct file_info *file_info(uint32_t maj, uint32_t min, uint64_t ino,
					 uint32_t pid, uint64_t start, uint64_t end,
					 const char *path)
{
	struct fcache *c;
	char alt[96];
	int fd;

	for (c = files; c; c = c->next)
		if (c->maj == maj && c->min == min && c->ino == ino)
			return &c->fi;
	if (nr_files >= FILE_CACHE_MAX) {
		while ((c = files)) {
			files = c->next;
			free(c);
		}
		nr_files = 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	/* The mapping itself, while it exists; else the path. */
	snprintf(alt, sizeof(alt), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = open(alt, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		elf_file_info(path, fd, &c->fi);
		close(fd);
	}
	c->maj = maj;
	c->min = min;
	c->ino = ino;
	c->next = files;
	files = c;
	nr_files++;
	return &c->fi;
}

/* The vDSO is published as a mapping named so, under its own build-id. */
static bool is_vdso(const char *path)
{
	return !strcmp(path, "[vdso]");
}

static void send_mmap(const struct pent *e, uint64_t start, uint64_t len, uint64_t pgoff,
		      uint32_t maj, uint32_t min, uint64_t ino, const char *path,
		      uint64_t time)
{
	size_t path_len = strlen(path);
	const char *tail = path;
	const struct file_info *fi;
	struct pvprof_sb_mmap *mm;
	struct sb_msg *m;

	if (!len || start >= PVPROF_USER_HALF_END || (start & 4095) ||
	    len > PVPROF_USER_HALF_END - start)
		return;
	if (path[0] == '/')
		fi = file_info(maj, min, ino, e->pid, start, start + len, path);
	else if (is_vdso(path))
		fi = elf_vdso_info(len);
	else
		fi = NULL;
	/* A [vdso] that is not the agent's own has nothing to go with it. */
	if (path[0] != '/' && !fi)
		return;
	if (path_len > PVPROF_SB_NAME_MAX) {
		tail = path + path_len - PVPROF_SB_NAME_MAX;
		path_len = PVPROF_SB_NAME_MAX;
	}
	m = msg_new(PVPROF_SB_MMAP, sizeof(*mm) + path_len);
	if (!m)
		return;
	mm = (struct pvprof_sb_mmap *)m->data;
	mm->hdr.time_ns = time;
	mm->pid = e->pid;
	mm->exec_gen = e->exec_gen;
	mm->start = start;
	mm->len = len;
	mm->pgoff = pgoff;
	mm->vaddr = fi ? elf_vaddr_of(fi, pgoff) : pgoff;
	if (fi)
		mm->build_id = fi->build_id;
	mm->path_len = path_len;
	memcpy(mm + 1, tail, path_len);	/* the path follows the struct */
	send_enqueue(m, false);
	if (fi && fi->build_id.size)
		elf_want_symbols(&fi->build_id, path, e->pid, start, start + len);
}

/* ---- snapshots from /proc -------------------------------------------------- */

static void read_comm(uint32_t pid, char *comm)
{
	char path[64];
	ssize_t n;
	int fd;

	memset(comm, 0, PVPROF_SB_COMM_SIZE);
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, PVPROF_SB_COMM_SIZE);
	close(fd);
	while (n > 0 && (comm[n - 1] == '\n' || !comm[n - 1]))
		comm[--n] = '\0';
}

static void publish_maps(const struct pent *e)
{
	char path[64], line[4352], perms[8], file[4097];
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", e->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4096[^\n]", &start, &end,
			   perms, &pgoff, &maj, &min, &ino, file) < 7)
			continue;
		/* File-backed executable mappings and the vDSO. */
		if (perms[2] != 'x' || (file[0] != '/' && !is_vdso(file)))
			continue;
		send_mmap(e, start, end - start, pgoff, maj, min, ino, file, now_ns());
	}
	fclose(f);
}

static void publish_process(uint32_t pid)
{
	struct pent *e;
	uint32_t gen = 0;

	if (exec_gen_of(pid, &gen))
		return;		/* gone */
	e = pent_get(pid, true);
	if (!e)
		return;
	e->exec_gen = gen;
	e->known_ns = now_ns();
	read_comm(pid, e->comm);
	send_process(e, 0, e->known_ns);
	publish_maps(e);
}

static void publish_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (!d) {
		log_err("cannot read /proc: %m");
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		publish_process(pid);
		n++;
	}
	closedir(d);
	log_info("published %zu processes", n);
}

/**
 * procs_publish_all() - publish the whole state: kernel, modules, symbols,
 * every process with its mappings, and the ELF symbols they need
 */
void procs_publish_all(void)
{
	send_flush();
	elf_new_publication();
	/* Processes first: they change, the kernel's tables do not. */
	publish_processes();
	kernel_publish();
}

/* ---- perf sideband records ------------------------------------------------- */

struct id_trailer {
	uint32_t pid;
	uint32_t tid;
	uint64_t time;
};

static void on_fork(const uint8_t *r, uint64_t time)
{
	uint32_t pid, ppid, tid;
	struct pent *parent, *e;

	memcpy(&pid, r + 8, 4);
	memcpy(&ppid, r + 12, 4);
	memcpy(&tid, r + 16, 4);
	if (pid != tid || pid == ppid)
		return;		/* a thread */
	parent = pent_get(ppid, false);
	if (!parent) {
		publish_process(pid);
		return;
	}
	e = pent_get(pid, true);
	if (!e)
		return;
	e->exec_gen = parent->exec_gen;
	e->known_ns = time;
	memcpy(e->comm, parent->comm, sizeof(e->comm));
	send_process(e, ppid, time);
}

static void on_comm(const uint8_t *r, uint32_t len, uint16_t misc, uint64_t time)
{
	uint32_t pid, tid, gen = 0;
	struct pent *e;
	size_t n;

	memcpy(&pid, r + 8, 4);
	memcpy(&tid, r + 12, 4);
	if (pid != tid)
		return;		/* a thread's name */
	e = pent_get(pid, false);
	if (misc & PERF_RECORD_MISC_COMM_EXEC) {
		if (e && time > e->known_ns) {
			e->exec_gen++;
			e->known_ns = time;
		} else if (!e) {
			if (exec_gen_of(pid, &gen))
				return;
			e = pent_get(pid, true);
			if (!e)
				return;
			e->exec_gen = gen;
			e->known_ns = now_ns();
		}
	} else if (!e) {
		return;		/* a rename of a process we will snapshot */
	}
	memset(e->comm, 0, sizeof(e->comm));
	n = len - 16 - sizeof(struct id_trailer);
	if (n > sizeof(e->comm))
		n = sizeof(e->comm);
	memcpy(e->comm, r + 16, n);
	/* perf pads with NULs; bytes after the first NUL must be zero. */
	n = strnlen(e->comm, sizeof(e->comm));
	memset(e->comm + n, 0, sizeof(e->comm) - n);
	send_process(e, 0, time);
}

static void on_mmap2(const uint8_t *r, uint32_t len, uint64_t time)
{
	uint32_t pid, maj, min, prot;
	uint64_t addr, mlen, pgoff, ino;
	char path[4097];
	struct pent *e;
	size_t n;
	uint32_t gen = 0;

	memcpy(&pid, r + 8, 4);
	memcpy(&addr, r + 16, 8);
	memcpy(&mlen, r + 24, 8);
	memcpy(&pgoff, r + 32, 8);
	memcpy(&maj, r + 40, 4);
	memcpy(&min, r + 44, 4);
	memcpy(&ino, r + 48, 8);
	memcpy(&prot, r + 64, 4);
	if (!(prot & PROT_EXEC) || !pid || pid == (uint32_t)-1)
		return;
	n = len - 72 - sizeof(struct id_trailer);
	if (n > sizeof(path) - 1)
		n = sizeof(path) - 1;
	memcpy(path, r + 72, n);
	path[n] = '\0';
	if (path[0] != '/' && !is_vdso(path))
		return;
	e = pent_get(pid, false);
	if (!e) {
		if (exec_gen_of(pid, &gen))
			return;
		e = pent_get(pid, true);
		if (!e)
			return;
		e->exec_gen = gen;
		e->known_ns = now_ns();
		read_comm(pid, e->comm);
		send_process(e, 0, time);
	}
	send_mmap(e, addr, mlen, pgoff, maj, min, ino, path, time);
}

static void on_exit_rec(const uint8_t *r, uint64_t time)
{
	struct pvprof_sb_exit *x;
	uint32_t pid, tid;
	struct pent *e;
	struct sb_msg *m;

	memcpy(&pid, r + 8, 4);
	memcpy(&tid, r + 16, 4);
	e = pent_get(pid, false);
	if (pid != tid || !e)
		return;
	m = msg_new(PVPROF_SB_EXIT, sizeof(*x));
	if (m) {
		x = (struct pvprof_sb_exit *)m->data;
		x->hdr.time_ns = time;
		x->pid = pid;
		x->exec_gen = e->exec_gen;
		send_enqueue(m, false);
	}
	pent_remove(pid);
}

static void handle(const uint8_t *r, uint32_t len, uint64_t time)
{
	struct perf_event_header h;
	uint64_t lost;

	memcpy(&h, r, sizeof(h));
	switch (h.type) {
	case PERF_RECORD_FORK:
		if (len >= 32 + sizeof(struct id_trailer))
			on_fork(r, time);
		break;
	case PERF_RECORD_COMM:
		if (len > 16 + sizeof(struct id_trailer))
			on_comm(r, len, h.misc, time);
		break;
	case PERF_RECORD_MMAP2:
		if (len > 72 + sizeof(struct id_trailer))
			on_mmap2(r, len, time);
		break;
	case PERF_RECORD_EXIT:
		if (len >= 32 + sizeof(struct id_trailer))
			on_exit_rec(r, time);
		break;
	case PERF_RECORD_LOST:
		if (len >= 24) {
			memcpy(&lost, r + 16, 8);
			lost_events += lost;
			want_rescan = true;
		}
		break;
	}
}

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* Copy the records of one ring into the batch and release its space. */
static void read_ring(struct ring *rg)
{
	uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = rg->meta->data_tail;

	while (tail < head && nr_batch < BATCH_MAX) {
		struct perf_event_header h;
		uint64_t off = tail % rg->size, first;
		uint8_t *rec;

		first = rg->size - off < sizeof(h) ? rg->size - off : sizeof(h);
		memcpy(&h, rg->data + off, first);
		memcpy((uint8_t *)&h + first, rg->data, sizeof(h) - first);
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		rec = malloc(h.size);
		if (!rec)
			break;
		first = rg->size - off < h.size ? rg->size - off : h.size;
		memcpy(rec, rg->data + off, first);
		memcpy(rec + first, rg->data, h.size - first);
		batch[nr_batch].rec = rec;
		batch[nr_batch].len = h.size;
		batch[nr_batch].time = 0;
		if (h.size >= sizeof(h) + sizeof(struct id_trailer))
			memcpy(&batch[nr_batch].time, rec + h.size - 8, 8);
		nr_batch++;
		tail += h.size;
	}
	__atomic_store_n(&rg->meta->data_tail, tail, __ATOMIC_RELEASE);
}

/**
 * procs_drain_perf() - handle every record the rings hold, in time order
 */
void procs_drain_perf(void)
{
	size_t i;
	int r;

	nr_batch = 0;
	for (r = 0; r < nr_rings; r++)
		read_ring(&rings[r]);
	qsort(batch, nr_batch, sizeof(*batch), event_cmp);
	for (i = 0; i < nr_batch; i++) {
		handle(batch[i].rec, batch[i].len, batch[i].time);
		free(batch[i].rec);
	}
	if (want_rescan) {
		want_rescan = false;
		log_warn("perf lost sideband records (%llu so far): rescanning processes",
			 (unsigned long long)lost_events);
		publish_processes();
	}
}

/**
 * procs_open_perf() - one dummy event and ring per online CPU
 *
 * Return: 0 or a negative errno.
 */
int procs_open_perf(void)
{
	long page = sysconf(_SC_PAGESIZE);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct perf_event_attr attr;
	int cpu;

	batch = calloc(BATCH_MAX, sizeof(*batch));
	if (!batch)
		return -ENOMEM;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.task = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = RING_PAGES * page / 4;
	for (cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		struct ring *rg = &rings[nr_rings];
		void *base;
		int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* an offline CPU */
			log_err("perf_event_open on CPU %d: %m", cpu);
			return -errno;
		}
		base = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, 0);
		if (base == MAP_FAILED) {
			log_err("mmap of the perf ring of CPU %d: %m", cpu);
			close(fd);
			return -errno;
		}
		rg->fd = fd;
		rg->meta = base;
		rg->data = (uint8_t *)base + page;
		rg->size = RING_PAGES * page;
		nr_rings++;
	}
	return nr_rings ? 0 : -ENODEV;
}

int procs_perf_fds(int *fds, int max)
{
	int i;

	for (i = 0; i < nr_rings && i < max; i++)
		fds[i] = rings[i].fd;
	return i;
}

void procs_close_perf(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;
	int r;

	for (r = 0; r < nr_rings; r++) {
		munmap(rings[r].meta, (RING_PAGES + 1) * page);
		close(rings[r].fd);
	}
	nr_rings = 0;
	free(batch);
	batch = NULL;
	for (i = 0; i < PROC_BUCKETS; i++)
		while (procs[i])
			pent_remove(procs[i]->pid);
	while (files) {
		struct fcache *c = files;

		files = c->next;
		free(c);
	}
	nr_files = 0;
}
