// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd: the running kernel and its modules.
 *
 * Identity from uname and /sys/kernel/notes, the KASLR text base and the
 * text symbols from /proc/kallsyms (root sees real addresses), modules from
 * /proc/modules and /sys/module/<name>/notes.  Symbols are sent sorted by
 * address in front-coded chunks (core/sideband.c's encoder).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "pvprofd.h"

#define NOTE_GNU_BUILD_ID	3

struct ksym {
	uint64_t addr;
	char *name;
	int module;		/* index into mods, -1 for the kernel image */
};

struct kmod {
	char name[PVPROF_SB_MODULE_NAME_SIZE + 1];
	uint64_t base;
	uint64_t size;
};

/*
 * Reading /proc/kallsyms is slow (seconds in a small guest, half a minute
 * under nested emulation), and its content changes only when modules
 * come and go: the messages are built once and kept (about 0.95 MB for the
 * Debian kernel), and built again when /proc/modules changes.
 */
static struct {
	struct sb_msg **msgs;
	size_t nr;
	size_t cap;
	uint64_t modules_hash;
	bool valid;
} cache;

static void cache_add(struct sb_msg *m)
{
	if (cache.nr == cache.cap) {
		size_t cap = cache.cap ? 2 * cache.cap : 256;
		struct sb_msg **v = realloc(cache.msgs, cap * sizeof(*v));

		if (!v) {
			free(m);
			return;
		}
		cache.msgs = v;
		cache.cap = cap;
	}
	cache.msgs[cache.nr++] = m;
}

static void cache_clear(void)
{
	while (cache.nr)
		free(cache.msgs[--cache.nr]);
	cache.valid = false;
}

/*
 * FNV-1a of /proc/modules' names, sizes and addresses: a load or unload
 * changes it, a reference count does not.
 */
static uint64_t modules_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char line[512], name[128], addr[32];
	unsigned long long size;
	FILE *f = fopen("/proc/modules", "re");
	const char *p;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %llu %*s %*s %*s %31s", name, &size, addr) != 3)
			continue;
		for (p = name; *p; p++)
			h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
		for (p = addr; *p; p++)
			h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
		h = (h ^ size) * 0x100000001b3ULL;
	}
	fclose(f);
	return h;
}

/* Find the GNU build-id in a file of ELF notes (4-byte aligned). */
static void read_build_id(const char *path, struct pvprof_sb_build_id *id)
{
	uint8_t buf[4096];
	size_t off = 0;
	ssize_t n;
	int fd;

	memset(id, 0, sizeof(*id));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3U);
		if (namesz > 4096 || descsz > 4096 || desc_off + descsz > (size_t)n)
			return;
		if (type == NOTE_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(buf + name_off, "GNU", 4) && descsz &&
		    descsz <= PVPROF_SB_BUILD_ID_MAX) {
			id->size = descsz;
			memcpy(id->bytes, buf + desc_off, descsz);
			return;
		}
		off = desc_off + ((descsz + 3) & ~3U);
	}
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int read_modules(struct kmod **mods, size_t *nr)
{
	char line[512], name[128];
	unsigned long long size, base;
	size_t cap = 0;
	FILE *f = fopen("/proc/modules", "re");

	*mods = NULL;
	*nr = 0;
	if (!f)
		return 0;	/* a kernel without modules */
	while (fgets(line, sizeof(line), f)) {
		struct kmod *v;

		if (sscanf(line, "%127s %llu %*s %*s %*s %llx", name, &size, &base) != 3 ||
		    !base || strlen(name) > PVPROF_SB_MODULE_NAME_SIZE)
			continue;
		if (*nr == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(*mods, cap * sizeof(*v));
			if (!v) {
				fclose(f);
				return -ENOMEM;
			}
			*mods = v;
		}
		v = &(*mods)[(*nr)++];
		memset(v, 0, sizeof(*v));
		strcpy(v->name, name);
		v->base = base;
		v->size = size;
	}
	fclose(f);
	return 0;
}

static int module_index(const struct kmod *mods, size_t nr, const char *name)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(mods[i].name, name))
			return (int)i;
	return -2;
}

/* Text symbols of the kernel image in [stext, etext) and of known modules. */
static int read_kallsyms(const struct kmod *mods, size_t nr_mods, struct ksym **syms,
			 size_t *nr, uint64_t *stext, uint64_t *etext)
{
	char line[1024], type, name[600], module[128];
	unsigned long long addr;
	size_t cap = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	int fields;

	*syms = NULL;
	*nr = 0;
	*stext = *etext = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct ksym *v;
		int mod = -1;

		module[0] = '\0';
		fields = sscanf(line, "%llx %c %599s [%127[^]]]", &addr, &type, name, module);
		if (fields < 3)
			continue;
		if (fields == 3 && !strcmp(name, "_stext"))
			*stext = addr;
		if (fields == 3 && !strcmp(name, "_etext"))
			*etext = addr;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (module[0]) {
			mod = module_index(mods, nr_mods, module);
			if (mod < 0)
				continue;
		}
		if (*nr == cap) {
			cap = cap ? 2 * cap : 65536;
			v = realloc(*syms, cap * sizeof(*v));
			if (!v)
				goto nomem;
			*syms = v;
		}
		v = &(*syms)[*nr];
		v->addr = addr;
		v->module = mod;
		v->name = strndup(name, PVPROF_SB_NAME_MAX);
		if (!v->name)
			goto nomem;
		(*nr)++;
	}
	fclose(f);
	return 0;
nomem:
	fclose(f);
	return -ENOMEM;
}

static struct sb_msg *ksyms_chunk(const char *module, uint64_t first,
				  struct pvprof_sb_sym_writer *w)
{
	struct sb_msg *m = msg_new(PVPROF_SB_KSYMS, PVPROF_SIDEBAND_MAX_SIZE);
	struct pvprof_sb_ksyms *k;

	if (!m)
		return NULL;
	k = (struct pvprof_sb_ksyms *)m->data;
	set_padded(k->module, sizeof(k->module), module);
	k->first = first;
	pvprof_sb_sym_writer_init(w, m->data, sizeof(*k), PVPROF_SIDEBAND_MAX_SIZE, false, first);
	return m;
}

static void ksyms_finish(struct sb_msg *m, struct pvprof_sb_sym_writer *w)
{
	struct pvprof_sb_ksyms *k = (struct pvprof_sb_ksyms *)m->data;

	k->nr = w->nr;
	k->hdr.size = w->len;
	m->len = w->len;
	cache_add(m);
}

/* Sends the chunks of one image; returns the entries sent. */
static size_t send_image_syms(const char *module, const struct ksym *v, size_t n)
{
	struct pvprof_sb_sym_writer w;
	struct sb_msg *m = NULL;
	size_t i, sent = 0;

	for (i = 0; i < n; i++) {
		int r;

		if (!m && !(m = ksyms_chunk(module, v[i].addr, &w)))
			return sent;
		r = pvprof_sb_sym_put(&w, v[i].addr, 0, v[i].name, strlen(v[i].name));
		if (r == -1) {
			ksyms_finish(m, &w);
			m = NULL;
			i--;
			continue;
		}
		if (r == 0)
			sent++;
	}
	if (m && w.nr)
		ksyms_finish(m, &w);
	else
		free(m);
	return sent;
}

/* Build the KERNEL, MODULE and KSYMS messages into the cache. */
static int kernel_build(void)
{
	struct kmod *mods = NULL;
	struct ksym *syms = NULL;
	size_t nr_mods = 0, nr = 0, i, j, nr_kernel = 0, sent = 0;
	uint64_t stext, etext;
	struct pvprof_sb_kernel *k;
	struct utsname uts = { 0 };
	struct sb_msg *m;
	char path[128];
	int ret;

	ret = read_modules(&mods, &nr_mods);
	if (!ret)
		ret = read_kallsyms(mods, nr_mods, &syms, &nr, &stext, &etext);
	if (ret) {
		log_err("cannot read the kernel's symbols: %s", strerror(-ret));
		goto out;
	}
	if (!stext || etext <= stext) {
		log_err("/proc/kallsyms shows no _stext/_etext addresses (kptr_restrict?): kernel frames stay unsymbolized");
		ret = -EPERM;
		goto out;
	}
	qsort(syms, nr, sizeof(*syms), ksym_cmp);
	for (i = 0; i < nr && syms[i].module < 0; i++)
		if (syms[i].addr >= stext && syms[i].addr < etext)
			nr_kernel++;

	m = msg_new(PVPROF_SB_KERNEL, sizeof(*k));
	if (!m) {
		ret = -ENOMEM;
		goto out;
	}
	k = (struct pvprof_sb_kernel *)m->data;
	k->stext = stext;
	k->etext = etext;
	k->nr_syms = nr_kernel;
	read_build_id("/sys/kernel/notes", &k->build_id);
	if (!uname(&uts))
		set_padded(k->release, sizeof(k->release), uts.release);
	cache_add(m);

	for (i = 0; i < nr_mods; i++) {
		struct pvprof_sb_module *pm;

		m = msg_new(PVPROF_SB_MODULE, sizeof(*pm));
		if (!m)
			continue;
		pm = (struct pvprof_sb_module *)m->data;
		pm->base = mods[i].base;
		pm->size = mods[i].size;
		set_padded(pm->name, sizeof(pm->name), mods[i].name);
		snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id",
			 mods[i].name);
		read_build_id(path, &pm->build_id);
		if (pm->base + pm->size < pm->base) {
			free(m);
			continue;
		}
		cache_add(m);
	}

	/* The kernel image's text, then each module's. */
	for (i = 0; i < nr && syms[i].module < 0; i++)
		if (syms[i].addr >= stext)
			break;
	for (j = i; j < nr && syms[j].module < 0 && syms[j].addr < etext; j++)
		;
	sent += send_image_syms("", syms + i, j - i);
	for (i = j; i < nr && syms[i].module < 0; i++)
		;
	while (i < nr) {
		int mod = syms[i].module;

		for (j = i; j < nr && syms[j].module == mod; j++)
			;
		sent += send_image_syms(mods[mod].name, syms + i, j - i);
		i = j;
	}
	log_info("kernel %s: _stext %#llx, %zu text symbols (%zu in the image), %zu modules, %zu messages",
		 uts.release, (unsigned long long)stext, sent, nr_kernel, nr_mods, cache.nr);
	cache.valid = true;
	ret = 0;
out:
	for (i = 0; i < nr; i++)
		free(syms[i].name);
	free(syms);
	free(mods);
	return ret;
}

/**
 * kernel_publish() - queue the KERNEL, MODULE and KSYMS messages
 *
 * Built again first when the modules changed since they were built.
 *
 * Return: 0, or a negative errno when /proc/kallsyms cannot be used (the
 * kernel is then not published; user space still is).
 */
int kernel_publish(void)
{
	uint64_t h = modules_hash(), t0;
	size_t i;
	int ret;

	if (!cache.valid || h != cache.modules_hash) {
		cache_clear();
		t0 = now_ns();
		ret = kernel_build();
		if (ret)
			return ret;
		cache.modules_hash = h;
		log_info("read the kernel's symbols in %.1f s",
			 (double)(now_ns() - t0) / 1e9);
	}
	for (i = 0; i < cache.nr; i++) {
		struct sb_msg *m = msg_new(0, cache.msgs[i]->len);
		struct pvprof_sideband_hdr *hdr;

		if (!m)
			return -ENOMEM;
		memcpy(m->data, cache.msgs[i]->data, m->len);
		hdr = (struct pvprof_sideband_hdr *)m->data;
		hdr->time_ns = now_ns();
		send_enqueue(m, hdr->type == PVPROF_SB_KSYMS);
	}
	return 0;
}

/**
 * kernel_prepare() - read the kernel's symbols ahead of the first publication
 */
void kernel_prepare(void)
{
	uint64_t t0 = now_ns();

	cache.modules_hash = modules_hash();
	if (!kernel_build())
		log_info("read the kernel's symbols in %.1f s", (double)(now_ns() - t0) / 1e9);
}

/**
 * kernel_forget() - free the prepared messages
 */
void kernel_forget(void)
{
	cache_clear();
	free(cache.msgs);
	cache.msgs = NULL;
	cache.cap = 0;
}
