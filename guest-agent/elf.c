// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd: ELF files, read with libelf.
 *
 * The collector asks for a file's build-id and PT_LOAD layout when it sees
 * a mapping (elf_file_info()), and for its symbols once per build-id and
 * publication (elf_want_symbols()), and after them its unwind tables
 * (unwind.c).  Both are read by a thread of their own, so that a large
 * library never stalls the collector while perf's rings fill.  The
 * build-id table is shared by both threads: a liburcu lock-free hash
 * table: the collector inserts entries and marks the publication that
 * wants their symbols; the reader, under the RCU read lock, skips a job a
 * newer publication has superseded and notes how many symbols it sent.
 *
 * The vDSO is no file: the agent copies the image the kernel mapped into
 * its own address space at start (the same for every 64-bit process of the
 * running kernel) and reads it from memory under its build-id.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <urcu.h>
#include <urcu/rculfhash.h>

#include "pvprofd.h"

/* One build-id: published in which publication, and where to find it. */
struct bid_entry {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	struct pvprof_sb_build_id id;
	unsigned long published;	/* publication that asked for its symbols */
	unsigned long nr_syms;		/* symbols the reader sent last time */
};

struct job {
	struct job *next;
	unsigned long publication;
	struct pvprof_sb_build_id id;
	uint32_t pid;
	uint64_t start;
	uint64_t end;
	char path[];
};

static struct cds_lfht *table;
static unsigned long publication = 1;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cond = PTHREAD_COND_INITIALIZER;
static struct job *jobs, *jobs_tail;
static unsigned int jobs_pending;	/* queued or being read */
static bool stopping;
static pthread_t thread;

/* The running kernel's vDSO, as this process has it mapped. */
static struct {
	char *image;
	size_t size;			/* of the [vdso] mapping */
	struct file_info fi;
} vdso;

static unsigned long bid_hash(const struct pvprof_sb_build_id *id)
{
	unsigned long h = 0xcbf29ce484222325UL;
	unsigned int i;

	for (i = 0; i < id->size; i++)
		h = (h ^ id->bytes[i]) * 0x100000001b3UL;
	return h;
}

static int bid_match(struct cds_lfht_node *node, const void *key)
{
	const struct bid_entry *e = caa_container_of(node, struct bid_entry, node);
	const struct pvprof_sb_build_id *id = key;

	return e->id.size == id->size && !memcmp(e->id.bytes, id->bytes, id->size);
}

/* The build-id and PT_LOAD segments of an ELF image libelf has open. */
static int elf_layout(Elf *elf, struct file_info *fi)
{
	size_t i, nr_phdr;

	memset(fi, 0, sizeof(*fi));
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nr_phdr))
		return -EINVAL;
	for (i = 0; i < nr_phdr; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getphdr(elf, i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && fi->nr_loads < 8) {
			fi->loads[fi->nr_loads].offset = ph.p_offset;
			fi->loads[fi->nr_loads].vaddr = ph.p_vaddr;
			fi->loads[fi->nr_loads].filesz = ph.p_filesz;
			fi->nr_loads++;
		}
		if (ph.p_type != PT_NOTE || fi->build_id.size)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz && nh.n_descsz <= PVPROF_SB_BUILD_ID_MAX) {
				fi->build_id.size = nh.n_descsz;
				memcpy(fi->build_id.bytes, (char *)d->d_buf + desc_off,
				       nh.n_descsz);
				break;
			}
		}
	}
	return 0;
}

/**
 * elf_file_info() - a file's build-id and PT_LOAD segments
 * @path: for messages
 * @fd: the file, open for reading
 * @fi: filled in; build_id.size stays 0 when the file has none
 *
 * Return: 0, or -EINVAL when the file is not an ELF file libelf can read.
 */
int elf_file_info(const char *path, int fd, struct file_info *fi)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int ret = elf_layout(elf, fi);

	if (ret)
		log_debug("%s: not an ELF file libelf reads", path);
	elf_end(elf);
	return ret;
}

/**
 * elf_vaddr_of() - the ELF address that a file offset is mapped at
 * @fi: the file's layout
 * @pgoff: a mapping's file offset
 *
 * Return: the address in the PT_LOAD segment holding @pgoff, or @pgoff
 * itself when no segment holds it.
 */
uint64_t elf_vaddr_of(const struct file_info *fi, uint64_t pgoff)
{
	uint32_t i;

	for (i = 0; i < fi->nr_loads; i++) {
		/* Segments start on page boundaries in the mapping. */
		uint64_t off = fi->loads[i].offset & ~4095ULL;
		uint64_t va = fi->loads[i].vaddr & ~4095ULL;

		if (pgoff >= off && pgoff < fi->loads[i].offset + fi->loads[i].filesz)
			return pgoff - off + va;
	}
	return pgoff;
}

/* Queue one encoded message as a bulk message, stamped now. */
static void bulk_emit(void *ctx, const void *msg, size_t len)
{
	const size_t hdr = sizeof(struct pvprof_sideband_hdr);
	const struct pvprof_sideband_hdr *h = msg;
	struct sb_msg *m = msg_new(h->type, len);
	size_t *queued = ctx;

	if (!m)
		return;
	memcpy(m->data + hdr, (const uint8_t *)msg + hdr, len - hdr);
	send_wait_bulk_room();
	send_enqueue(m, true);
	(*queued)++;
}

/* Is this the vDSO's job: no file, the image copied at start. */
static bool job_is_vdso(const struct job *j)
{
	return vdso.image && !strcmp(j->path, "[vdso]") &&
	       vdso.fi.build_id.size == j->id.size &&
	       !memcmp(vdso.fi.build_id.bytes, j->id.bytes, j->id.size);
}

/* Open the file with this build-id: by path, else through the mapping. */
static int open_job(const struct job *j)
{
	char alt[96];
	struct file_info fi;
	int fd = open(j->path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && !elf_file_info(j->path, fd, &fi) &&
	    fi.build_id.size == j->id.size &&
	    !memcmp(fi.build_id.bytes, j->id.bytes, j->id.size))
		return fd;
	if (fd >= 0)
		close(fd);
	/* Replaced or not reachable by path (another mount namespace). */
	snprintf(alt, sizeof(alt), "/proc/%u/map_files/%llx-%llx", j->pid,
		 (unsigned long long)j->start, (unsigned long long)j->end);
	return open(alt, O_RDONLY | O_CLOEXEC);
}

/*
 * Still wanted: the collector has not started another publication since
 * (which would ask again); set @nr on the entry when @note.
 */
static bool job_current(const struct job *j, bool note, size_t nr)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct bid_entry *e;
	bool current = false;

	rcu_read_lock();
	cds_lfht_lookup(table, bid_hash(&j->id), bid_match, &j->id, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node) {
		e = caa_container_of(node, struct bid_entry, node);
		current = uatomic_read(&e->published) == j->publication;
		if (note)
			uatomic_set(&e->nr_syms, nr);
	}
	rcu_read_unlock();
	return current;
}

static void *elf_thread(void *unused)
{
	size_t n, messages;
	struct job *j;
	Elf *elf;
	int fd;

	(void)unused;
	rcu_register_thread();
	for (;;) {
		pthread_mutex_lock(&job_lock);
		while (!stopping && !jobs)
			pthread_cond_wait(&job_cond, &job_lock);
		if (stopping) {
			pthread_mutex_unlock(&job_lock);
			break;
		}
		j = jobs;
		jobs = j->next;
		if (!jobs)
			jobs_tail = NULL;
		pthread_mutex_unlock(&job_lock);

		if (!job_current(j, false, 0)) {
			free(j);
			uatomic_dec(&jobs_pending);
			continue;
		}
		fd = -1;
		if (job_is_vdso(j)) {
			elf = elf_memory(vdso.image, vdso.size);
		} else {
			fd = open_job(j);
			elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
		}
		if (!elf) {
			log_debug("%s: cannot open for its symbols: %m", j->path);
		} else {
			messages = 0;
			n = symbol_messages(elf, &j->id, bulk_emit, &messages);
			job_current(j, true, n);
			log_debug("%s: %zu function symbols", j->path, n);
			/* After the symbols: a frame needs its name more than its CFI. */
			n = 0;
			unwind_messages(elf, &j->id, bulk_emit, &n);
			log_debug("%s: %zu unwind table parts", j->path, n);
			elf_end(elf);
		}
		if (fd >= 0)
			close(fd);
		free(j);
		uatomic_dec(&jobs_pending);
	}
	rcu_unregister_thread();
	return NULL;
}

/**
 * elf_want_symbols() - make sure a build-id's symbols go out once
 * @id: the build-id (size > 0)
 * @path: where the collector saw the file mapped
 * @pid: a process that maps it
 * @start: the mapping's start
 * @end: its end
 *
 * Queues a job for the reader unless this publication already has one.
 * Called from the collector thread only.
 */
void elf_want_symbols(const struct pvprof_sb_build_id *id, const char *path,
		      uint32_t pid, uint64_t start, uint64_t end)
{
	unsigned long h = bid_hash(id);
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct bid_entry *e;
	struct job *j;

	rcu_read_lock();
	cds_lfht_lookup(table, h, bid_match, id, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node) {
		e = caa_container_of(node, struct bid_entry, node);
		if (uatomic_read(&e->published) == uatomic_read(&publication)) {
			rcu_read_unlock();
			return;
		}
		uatomic_set(&e->published, uatomic_read(&publication));
	} else {
		e = calloc(1, sizeof(*e));
		if (!e) {
			rcu_read_unlock();
			return;
		}
		e->id = *id;
		e->published = uatomic_read(&publication);
		cds_lfht_node_init(&e->node);
		node = cds_lfht_add_unique(table, h, bid_match, id, &e->node);
		if (node != &e->node)
			free(e);
	}
	rcu_read_unlock();

	j = calloc(1, sizeof(*j) + strlen(path) + 1);
	if (!j)
		return;
	j->id = *id;
	j->publication = uatomic_read(&publication);
	j->pid = pid;
	j->start = start;
	j->end = end;
	strcpy(j->path, path);
	pthread_mutex_lock(&job_lock);
	if (jobs_tail)
		jobs_tail->next = j;
	else
		jobs = j;
	jobs_tail = j;
	uatomic_inc(&jobs_pending);
	pthread_cond_signal(&job_cond);
	pthread_mutex_unlock(&job_lock);
}

/**
 * elf_new_publication() - every build-id's symbols are due again
 *
 * Pending jobs of the old publication are dropped: the new one asks again.
 */
void elf_new_publication(void)
{
	struct job *j;

	pthread_mutex_lock(&job_lock);
	while ((j = jobs)) {
		jobs = j->next;
		free(j);
		uatomic_dec(&jobs_pending);
	}
	jobs_tail = NULL;
	pthread_mutex_unlock(&job_lock);
	uatomic_inc(&publication);
}

/**
 * elf_busy() - files are waiting to be read, or being read
 *
 * Return: true while the reader has work.
 */
bool elf_busy(void)
{
	return uatomic_read(&jobs_pending) != 0;
}

/*
 * Copy this process's vDSO: the kernel maps the whole image (section
 * headers included) at AT_SYSINFO_EHDR; /proc/self/maps gives its size.
 * Without one (vdso=0) the agent sends no [vdso] mapping, as before.
 */
static void vdso_load(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	unsigned long long start, end;
	char line[256], name[32];
	FILE *maps;
	Elf *elf;

	if (!base)
		return;
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		name[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %31s", &start, &end, name) == 3 &&
		    !strcmp(name, "[vdso]") && start == base && end > start) {
			vdso.size = end - start;
			break;
		}
	}
	fclose(maps);
	if (!vdso.size)
		return;
	vdso.image = malloc(vdso.size);
	if (!vdso.image)
		goto fail;
	memcpy(vdso.image, (const void *)base, vdso.size);
	elf = elf_memory(vdso.image, vdso.size);
	if (elf_layout(elf, &vdso.fi) || !vdso.fi.build_id.size) {
		elf_end(elf);
		log_info("the vDSO has no build-id: its frames get no symbols or unwind tables");
		goto fail;
	}
	elf_end(elf);
	return;
fail:
	free(vdso.image);
	vdso.image = NULL;
	vdso.size = 0;
}

/**
 * elf_vdso_info() - the layout of the vDSO a process maps
 * @len: the length of the process's [vdso] mapping
 *
 * Return: the vDSO's build-id and segments when the process has the same
 * vDSO as the agent (a 64-bit process: a compat process's vDSO differs in
 * size), else NULL.
 */
const struct file_info *elf_vdso_info(uint64_t len)
{
	return vdso.image && len == vdso.size ? &vdso.fi : NULL;
}

/**
 * elf_start() - set up libelf, the build-id table and the reader thread
 *
 * Return: 0 or a negative errno.
 */
int elf_start(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	vdso_load();
	rcu_register_thread();
	table = cds_lfht_new(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE, NULL);
	if (!table)
		return -ENOMEM;
	return -pthread_create(&thread, NULL, elf_thread, NULL);
}

static void free_entry(struct rcu_head *head)
{
	free(caa_container_of(head, struct bid_entry, rcu));
}

/**
 * elf_stop() - stop the reader and free the table
 */
void elf_stop(void)
{
	struct cds_lfht_iter iter;
	struct bid_entry *e;

	pthread_mutex_lock(&job_lock);
	stopping = true;
	pthread_cond_broadcast(&job_cond);
	pthread_mutex_unlock(&job_lock);
	pthread_join(thread, NULL);
	elf_new_publication();
	rcu_read_lock();
	cds_lfht_for_each_entry(table, &iter, e, node) {
		if (!cds_lfht_del(table, &e->node))
			call_rcu(&e->rcu, free_entry);
	}
	rcu_read_unlock();
	rcu_barrier();
	cds_lfht_destroy(table, NULL);
	rcu_unregister_thread();
	free(vdso.image);
	vdso.image = NULL;
	vdso.size = 0;
}
