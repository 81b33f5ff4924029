// SPDX-License-Identifier: GPL-2.0
/*
 * Native test of pvprofd's unwind-table encoder (unwind.c), which the VM
 * tests cannot reach in isolation: every message it produces must pass the
 * payload rules the guest driver applies, and the parts must reassemble to
 * the bytes objcopy extracts from the same file (an oracle that shares no
 * code with libelf).
 *
 *   unwind-encode-test WORKDIR FILE=SECTIONS...
 *
 * SECTIONS lists the sections FILE must yield, h (.eh_frame_hdr),
 * e (.eh_frame), d (.debug_frame); the others must be absent.  WORKDIR
 * holds the objcopy outputs and the synthetic files of the size tests.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest-agent/pvprofd.h"

#define PART_MAX	(PVPROF_SIDEBAND_MAX_SIZE - sizeof(struct pvprof_sb_unwind))
#define NSEC		(PVPROF_SB_UNWIND_SECTION_MAX + 1)

static const char * const names[NSEC] = {
	NULL, ".eh_frame_hdr", ".eh_frame", ".debug_frame",
};
static const char letters[NSEC] = { 0, 'h', 'e', 'd' };

static const char *workdir;
static unsigned int passed, failed;

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (ok)
		passed++;
	else
		failed++;
}

/* What the encoder emitted for one file, reassembled as the host would. */
struct collected {
	struct pvprof_sb_build_id id;
	size_t msgs;
	size_t bad_check;	/* messages the payload check refused */
	size_t bad_id;		/* messages with another build-id */
	size_t bad_order;	/* parts not following the previous one */
	size_t short_part;	/* a part below the maximum that is not the last */
	size_t max_len;
	int last_section;	/* sections must not interleave */
	struct {
		uint8_t *buf;
		uint32_t size;
		uint32_t next;	/* offset the next part must have */
		uint64_t vaddr;
		size_t parts;
		int conflict;	/* section_size or vaddr changed */
	} sec[NSEC];
};

static void collect(void *ctx, const void *msg, size_t len)
{
	struct collected *c = ctx;
	struct pvprof_sb_unwind u;
	uint32_t n;

	c->msgs++;
	if (len > c->max_len)
		c->max_len = len;
	if (pvprof_sideband_payload_check(msg, len) != PVPROF_SB_OK) {
		c->bad_check++;
		return;
	}
	memcpy(&u, msg, sizeof(u));
	n = len - sizeof(u);
	if (u.hdr.type != PVPROF_SB_UNWIND) {
		c->bad_check++;
		return;
	}
	if (memcmp(&u.build_id, &c->id, sizeof(c->id)))
		c->bad_id++;
	if (u.section < c->last_section)
		c->bad_order++;
	c->last_section = u.section;
	if (!c->sec[u.section].buf) {
		c->sec[u.section].buf = calloc(1, u.section_size);
		c->sec[u.section].size = u.section_size;
		c->sec[u.section].vaddr = u.vaddr;
	}
	if (c->sec[u.section].size != u.section_size || c->sec[u.section].vaddr != u.vaddr) {
		c->sec[u.section].conflict = 1;
		return;
	}
	if (u.offset != c->sec[u.section].next)
		c->bad_order++;
	if (u.offset + n < u.section_size && n != PART_MAX)
		c->short_part++;
	memcpy(c->sec[u.section].buf + u.offset, (const uint8_t *)msg + sizeof(u), n);
	c->sec[u.section].next = u.offset + n;
	c->sec[u.section].parts++;
}

static void collected_free(struct collected *c)
{
	int s;

	for (s = 0; s < NSEC; s++)
		free(c->sec[s].buf);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(b = malloc(st.st_size ? st.st_size : 1))) {
		close(fd);
		return NULL;
	}
	*len = st.st_size;
	if (read(fd, b, *len) != (ssize_t)*len) {
		free(b);
		b = NULL;
	}
	close(fd);
	return b;
}

/* The section's plain bytes according to objcopy, NULL when it has none. */
static uint8_t *objcopy_section(const char *file, const char *name, size_t *len)
{
	char cmd[8192], out[4096];
	uint8_t *b;

	snprintf(out, sizeof(out), "%s/objcopy%s", workdir, name);
	unlink(out);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --decompress-debug-sections --dump-section '%s=%s' '%s' "
		 "'%s/objcopy.out' 2>/dev/null",
		 name, out, file, workdir);
	if (system(cmd))
		return NULL;
	b = slurp(out, len);
	if (b && !*len) {
		free(b);
		return NULL;
	}
	return b;
}

/* sh_addr of a section, read independently of the encoder's handle. */
static uint64_t section_addr(const char *file, const char *name)
{
	int fd = open(file, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t addr = ~0ULL;
	size_t shstrndx;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;

			if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    !strcmp(n, name)) {
				addr = sh.sh_addr;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return addr;
}

static int encode(const char *file, struct collected *c)
{
	int fd = open(file, O_RDONLY);
	Elf *elf;

	memset(c, 0, sizeof(*c));
	c->id.size = 20;
	memset(c->id.bytes, 0x5a, 20);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -1;
	}
	/* The agent's way: one handle, one pass. */
	if (unwind_messages(elf, &c->id, collect, c) != c->msgs)
		c->bad_check++;
	elf_end(elf);
	close(fd);
	return 0;
}

/* Check one file against the oracle; @want lists the sections it must yield. */
static void check_file(const char *file, const char *want)
{
	struct collected c;
	int s;

	if (encode(file, &c)) {
		result(0, "%s: open as ELF", file);
		return;
	}
	result(c.msgs > 0, "%s: %zu messages produced", file, c.msgs);
	result(!c.bad_check, "%s: every message passes pvprof_sideband_payload_check (%zu refused)",
	       file, c.bad_check);
	result(c.max_len <= PVPROF_SIDEBAND_MAX_SIZE, "%s: largest message %zu <= %u bytes",
	       file, c.max_len, PVPROF_SIDEBAND_MAX_SIZE);
	result(!c.bad_id, "%s: every message carries the build-id", file);
	result(!c.bad_order && !c.short_part,
	       "%s: parts in offset order, full but the last (%zu out of order, %zu short)",
	       file, c.bad_order, c.short_part);
	for (s = 1; s < NSEC; s++) {
		int wanted = strchr(want, letters[s]) != NULL;
		size_t len = 0;
		uint8_t *ref = objcopy_section(file, names[s], &len);

		if (!wanted) {
			result(!c.sec[s].parts && !ref, "%s: %s not sent, as objcopy finds none",
			       file, names[s]);
			free(ref);
			continue;
		}
		if (!ref || !c.sec[s].parts) {
			result(0, "%s: %s sent (%zu parts) and found by objcopy (%s)", file,
			       names[s], c.sec[s].parts, ref ? "yes" : "no");
			free(ref);
			continue;
		}
		result(!c.sec[s].conflict && c.sec[s].size == len && c.sec[s].next == len &&
		       !memcmp(c.sec[s].buf, ref, len),
		       "%s: %s reassembled from %zu parts equals objcopy's %zu bytes",
		       file, names[s], c.sec[s].parts, len);
		result(c.sec[s].vaddr == (s == PVPROF_SB_UNWIND_DEBUG_FRAME ? 0 :
					  section_addr(file, names[s])),
		       "%s: %s vaddr 0x%llx is its sh_addr", file, names[s],
		       (unsigned long long)c.sec[s].vaddr);
		free(ref);
	}
	collected_free(&c);
}

/*
 * A copy of @base whose .debug_frame is @size bytes of a pattern: the
 * boundaries of the split, and the sizes that must be skipped.
 */
static void check_size(const char *base, size_t size, size_t want_parts)
{
	char blob[4096], file[4096], cmd[12288];
	struct collected c;
	uint8_t *b = malloc(size ? size : 1);
	size_t i;
	FILE *f;
	int ok;

	snprintf(blob, sizeof(blob), "%s/blob", workdir);
	snprintf(file, sizeof(file), "%s/debug_frame_%zu", workdir, size);
	for (i = 0; i < size; i++)
		b[i] = (uint8_t)(i * 7 + i / 251);
	f = fopen(blob, "wb");
	if (!f || fwrite(b, 1, size, f) != size || fclose(f)) {
		result(0, ".debug_frame of %zu bytes: write %s", size, blob);
		free(b);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "objcopy --remove-section .debug_frame --add-section '.debug_frame=%s' '%s' '%s'",
		 blob, base, file);
	if (system(cmd) || encode(file, &c)) {
		result(0, ".debug_frame of %zu bytes: build %s", size, file);
		free(b);
		return;
	}
	ok = !c.bad_check && !c.bad_order && !c.short_part &&
	     c.sec[PVPROF_SB_UNWIND_DEBUG_FRAME].parts == want_parts;
	if (want_parts)
		ok = ok && c.sec[PVPROF_SB_UNWIND_DEBUG_FRAME].next == size &&
		     !memcmp(c.sec[PVPROF_SB_UNWIND_DEBUG_FRAME].buf, b, size);
	result(ok, ".debug_frame of %zu bytes: %zu parts (want %zu), valid, byte-identical",
	       size, c.sec[PVPROF_SB_UNWIND_DEBUG_FRAME].parts, want_parts);
	collected_free(&c);
	free(b);
	unlink(file);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s WORKDIR FILE=SECTIONS...\n", argv[0]);
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 2;
	workdir = argv[1];
	for (i = 2; i < argc; i++) {
		char *eq = strrchr(argv[i], '=');

		if (!eq) {
			fprintf(stderr, "%s: FILE=SECTIONS expected\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		check_file(argv[i], eq + 1);
	}
	/* The split and the skips, on a copy of the first file. */
	check_size(argv[2], 1, 1);
	check_size(argv[2], PART_MAX, 1);
	check_size(argv[2], PART_MAX + 1, 2);
	check_size(argv[2], 3 * PART_MAX, 3);
	check_size(argv[2], 0, 0);
	check_size(argv[2], PVPROF_SB_UNWIND_MAX_SIZE, PVPROF_SB_UNWIND_MAX_SIZE / PART_MAX + 1);
	check_size(argv[2], PVPROF_SB_UNWIND_MAX_SIZE + 1, 0);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
