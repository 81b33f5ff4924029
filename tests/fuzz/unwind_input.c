// SPDX-License-Identifier: GPL-2.0
/*
 * The fixed table sets and the input layout of fuzz_unwind (see
 * unwind_input.h).
 */
#include <fcntl.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest-agent/pvprofd.h"
#include "unwind_input.h"

const char *const ui_set_names[UI_NR_SETS] = {
	[UI_SET_STATIC]	= "unwind-fixture-static",
	[UI_SET_DYN]	= "unwind-fixture-dyn",
	[UI_SET_DEBUG]	= "unwind-fixture-debug",
	[UI_SET_LIBC]	= "libc.so.6",
	[UI_SET_LDSO]	= "ld-linux-x86-64.so.2",
	[UI_SET_SELF]	= "self",
};

uint64_t ui_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

uint32_t ui_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

uint16_t ui_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

void ui_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

void ui_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

void ui_put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int ui_set_of_path(const struct ui_sets *s, const char *path)
{
	int i;

	for (i = 0; i < UI_NR_SETS; i++)
		if (s->path[i][0] && !strcmp(base_name(s->path[i]), base_name(path)))
			return i;
	return -1;
}

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ui_sets *s = arg;
	const char *base = base_name(info->dlpi_name);

	(void)size;
	if (!strcmp(base, ui_set_names[UI_SET_LIBC]))
		snprintf(s->path[UI_SET_LIBC], sizeof(s->path[0]), "%s", info->dlpi_name);
	else if (!strcmp(base, ui_set_names[UI_SET_LDSO]))
		snprintf(s->path[UI_SET_LDSO], sizeof(s->path[0]), "%s", info->dlpi_name);
	return 0;
}

static void store_part(void *ctx, const void *msg, size_t len)
{
	struct ui_sets *s = ctx;

	/* Every part of a file read once brings new bytes. */
	if (pvprof_unwind_tables_add(s->store, msg, len) != 0) {
		fprintf(stderr, "unwind_input: the store refused a part of the agent's\n");
		abort();
	}
}

/* The agent's view of the file: its sections as parts, into the store. */
static bool load_set(struct ui_sets *s, int i)
{
	struct pvprof_sb_build_id id = { .size = 4, .bytes = { 'f', 'u', 'z', (uint8_t)i } };
	struct unwind_tables tables;
	Elf *elf;
	int fd = open(s->path[i], O_RDONLY);

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		unwind_messages(elf, &id, store_part, s);
	elf_end(elf);
	close(fd);
	/* Taken out of the store as kvm-pvprof report takes them. */
	if (!pvprof_unwind_tables_get(s->store, id.bytes, id.size, &s->t[i], &tables))
		return false;
	s->t[i] = tables;
	return true;
}

int ui_sets_load(struct ui_sets *s, const char *fixture_dir)
{
	ssize_t n;
	int i, loaded = 0;

	memset(s, 0, sizeof(*s));
	elf_version(EV_CURRENT);
	s->store = pvprof_unwind_tables_new(0);
	if (!s->store)
		return 0;
	for (i = UI_SET_STATIC; i <= UI_SET_DEBUG; i++)
		snprintf(s->path[i], sizeof(s->path[i]), "%s/%s", fixture_dir, ui_set_names[i]);
	dl_iterate_phdr(find_lib, s);
	n = readlink("/proc/self/exe", s->path[UI_SET_SELF], sizeof(s->path[0]) - 1);
	s->path[UI_SET_SELF][n > 0 ? n : 0] = '\0';
	for (i = 0; i < UI_NR_SETS; i++) {
		s->have[i] = s->path[i][0] && load_set(s, i);
		loaded += s->have[i];
	}
	return loaded;
}

void ui_sets_free(struct ui_sets *s)
{
	pvprof_unwind_tables_free(s->store);
	memset(s, 0, sizeof(*s));
}

bool ui_parse(const uint8_t *data, size_t size, struct ui_input *in)
{
	size_t off, want, i;

	memset(in, 0, sizeof(*in));
	if (size < UI_HDR_SIZE)
		return false;
	in->flags = data[0];
	in->max = data[1];
	in->nr_maps = data[2] < UI_MAPS_MAX ? data[2] : UI_MAPS_MAX;
	for (i = 0; i < UNWIND_NR_REGS; i++)
		in->regs[i] = ui_get64(data + 8 + 8 * i);
	off = UI_HDR_SIZE;
	if ((size - off) / UI_MAP_SIZE < (size_t)in->nr_maps)
		in->nr_maps = (int)((size - off) / UI_MAP_SIZE);
	for (i = 0; i < (size_t)in->nr_maps; i++, off += UI_MAP_SIZE) {
		in->maps[i].set = data[off];
		in->maps[i].start = ui_get64(data + off + 8);
		in->maps[i].end = ui_get64(data + off + 16);
		in->maps[i].vaddr = ui_get64(data + off + 24);
	}
	want = ui_get16(data + 4);
	if (want > PVPROF_USTACK_MAX)
		want = PVPROF_USTACK_MAX;
	if (want > size - off)
		want = size - off;
	in->stack = data + off;
	in->stack_len = want;
	off += want;
	if (in->flags & UI_F_MUTATE) {
		in->ops = data + off;
		in->nr_ops = (size - off) / UI_OP_SIZE;
		if (in->nr_ops > UI_OPS_MAX)
			in->nr_ops = UI_OPS_MAX;
	}
	return true;
}

size_t ui_encode(const struct ui_input *in, uint8_t *buf, size_t cap)
{
	size_t len = UI_HDR_SIZE + (size_t)in->nr_maps * UI_MAP_SIZE + in->stack_len +
		     in->nr_ops * UI_OP_SIZE, off, i;

	if (len > cap || in->stack_len > PVPROF_USTACK_MAX || in->nr_maps > UI_MAPS_MAX ||
	    in->max < 0 || in->max > 255)
		return 0;
	memset(buf, 0, len);
	buf[0] = in->flags;
	buf[1] = (uint8_t)in->max;
	buf[2] = (uint8_t)in->nr_maps;
	ui_put16(buf + 4, (uint16_t)in->stack_len);
	for (i = 0; i < UNWIND_NR_REGS; i++)
		ui_put64(buf + 8 + 8 * i, in->regs[i]);
	off = UI_HDR_SIZE;
	for (i = 0; i < (size_t)in->nr_maps; i++, off += UI_MAP_SIZE) {
		buf[off] = in->maps[i].set;
		ui_put64(buf + off + 8, in->maps[i].start);
		ui_put64(buf + off + 16, in->maps[i].end);
		ui_put64(buf + off + 24, in->maps[i].vaddr);
	}
	if (in->stack_len)
		memcpy(buf + off, in->stack, in->stack_len);
	off += in->stack_len;
	if (in->nr_ops)
		memcpy(buf + off, in->ops, in->nr_ops * UI_OP_SIZE);
	return len;
}

void ui_put_op(uint8_t *op, uint8_t kind, uint8_t set, uint8_t section, uint8_t arg,
	       uint32_t a, uint32_t b)
{
	op[0] = kind;
	op[1] = set;
	op[2] = section;
	op[3] = arg;
	ui_put32(op + 4, a);
	ui_put32(op + 8, b);
}
