// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof recordings: writing them section by section, and reading them
 * back with every size, offset and field checked before use.  A recording
 * may come from anywhere; its stream entries are the guest's words relayed
 * by the host, so the reader gives each problem a clear message naming the
 * file offset, and never reads outside the bytes it was given.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "main.h"
#include "recording.h"

#define ALIGN8(x)	(((x) + 7) & ~(uint64_t)7)

static const uint8_t zero_pad[8];

static int write_all(struct recording_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			p_err("write %s at offset %" PRIu64 ": %s", w->path,
			      w->offset, strerror(errno));
			return -1;
		}
		if (n == 0) {
			p_err("write %s at offset %" PRIu64 ": short write (0 of %zu bytes)",
			      w->path, w->offset, len);
			return -1;
		}
		p += n;
		len -= (size_t)n;
		w->offset += (uint64_t)n;
	}
	return 0;
}

/**
 * recording_writer_open() - create a recording and write its header
 * @w: the writer
 * @path: file name; an existing file is replaced
 *
 * The file is created with mode 0600: it holds what the guest ran.
 * Return: 0, or -1 after printing the error.
 */
int recording_writer_open(struct recording_writer *w, const char *path)
{
	struct pvprof_data_header h = { 0 };

	memset(w, 0, sizeof(*w));
	w->path = path;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		p_err("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	memcpy(h.magic, PVPROF_DATA_MAGIC, sizeof(h.magic));
	h.version = PVPROF_DATA_VERSION;
	h.header_size = sizeof(h);
	if (write_all(w, &h, sizeof(h))) {
		recording_writer_abort(w);
		return -1;
	}
	return 0;
}

/**
 * recording_write_section() - append one section
 * @w: the writer
 * @type: PVPROF_DATA_SEC_*
 * @payload: its bytes
 * @size: their number, at most PVPROF_DATA_MAX_SECTION
 *
 * Return: 0, or -1 after printing the error.
 */
int recording_write_section(struct recording_writer *w, uint32_t type,
			    const void *payload, uint64_t size)
{
	struct pvprof_data_section s = { .type = type, .size = size };

	if (size > PVPROF_DATA_MAX_SECTION) {
		p_err("write %s: a section of %" PRIu64 " bytes is above the format's limit",
		      w->path, size);
		return -1;
	}
	if (write_all(w, &s, sizeof(s)) || write_all(w, payload, size) ||
	    write_all(w, zero_pad, ALIGN8(size) - size))
		return -1;
	return 0;
}

/**
 * recording_write_status() - append a STATUS section
 * @w: the writer
 * @when: PVPROF_DATA_STATUS_START or _END
 * @ctl: PVPROF_CTL_STATUS's answer
 * @vcpus: its vCPU entries
 * @nr: their number
 *
 * Return: 0, or -1 after printing the error.
 */
int recording_write_status(struct recording_writer *w, uint32_t when,
			   const struct pvprof_ctl_status *ctl,
			   const struct pvprof_vcpu_status *vcpus, uint32_t nr)
{
	struct pvprof_data_status hdr = { .when = when, .nr_vcpus = nr };
	uint64_t size = sizeof(hdr) + (uint64_t)nr * sizeof(*vcpus);
	struct pvprof_data_section s = { .type = PVPROF_DATA_SEC_STATUS, .size = size };

	if (nr > PVPROF_DATA_MAX_VCPUS) {
		p_err("write %s: %u vCPUs is above the format's limit of %u",
		      w->path, nr, PVPROF_DATA_MAX_VCPUS);
		return -1;
	}
	hdr.ctl = *ctl;
	hdr.ctl.vcpus = 0;
	if (write_all(w, &s, sizeof(s)) || write_all(w, &hdr, sizeof(hdr)) ||
	    write_all(w, vcpus, (size_t)nr * sizeof(*vcpus)) ||
	    write_all(w, zero_pad, ALIGN8(size) - size))
		return -1;
	return 0;
}

/**
 * recording_write_stream() - append what one read(2) of the stream returned
 * @w: the writer
 * @buf: the bytes
 * @len: their number
 *
 * Return: 0, or -1 after printing the error.
 */
int recording_write_stream(struct recording_writer *w, const void *buf, size_t len)
{
	if (recording_write_section(w, PVPROF_DATA_SEC_STREAM, buf, len))
		return -1;
	w->stream_bytes += len;
	w->stream_reads++;
	return 0;
}

/**
 * recording_writer_finish() - write the END section, sync and close
 * @w: the writer
 * @stop_reason: PVPROF_DATA_STOP_*
 * @end_monotonic_ns: CLOCK_MONOTONIC at the end
 *
 * Return: 0 when every byte reached the disk, or -1 after printing the error
 * (the file is closed either way).
 */
int recording_writer_finish(struct recording_writer *w, uint32_t stop_reason,
			    uint64_t end_monotonic_ns)
{
	struct pvprof_data_end e = {
		.end_monotonic_ns = end_monotonic_ns,
		.stream_bytes = w->stream_bytes,
		.stream_reads = w->stream_reads,
		.stop_reason = stop_reason,
	};
	int ret = 0;

	if (recording_write_section(w, PVPROF_DATA_SEC_END, &e, sizeof(e)))
		ret = -1;
	if (!ret && fsync(w->fd)) {
		p_err("fsync %s: %s", w->path, strerror(errno));
		ret = -1;
	}
	if (close(w->fd) && !ret) {
		p_err("close %s: %s", w->path, strerror(errno));
		ret = -1;
	}
	w->fd = -1;
	return ret;
}

/**
 * recording_writer_abort() - close a recording without its END section
 * @w: the writer
 *
 * What was written stays: a reader sees a recording that was not closed
 * cleanly.
 */
void recording_writer_abort(struct recording_writer *w)
{
	if (w->fd >= 0) {
		fsync(w->fd);
		close(w->fd);
	}
	w->fd = -1;
}

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

/*
 * Every reading of a recording is one walk over it with the same checks:
 * the checking walk of recording_load() and recording_parse(), and each
 * later recording_for_each().  There is no second parser for damaged
 * files, and a later walk does not trust what the first one saw, since a
 * file can change in between.  A file is read through a window that holds
 * a few sections, so memory does not grow with the file; a recording in
 * memory (the tests, the fuzzer) is read in place.
 */

/* The largest section with its header and padding fits with room to spare,
 * so that one read(2) serves many ordinary sections. */
#define READ_WINDOW	(4U << 20)
_Static_assert(READ_WINDOW >= 2 * (PVPROF_DATA_MAX_SECTION +
				   sizeof(struct pvprof_data_section) + 8),
	       "a section fits the read window");

struct walk {
	const struct recording *src;	/* where the bytes come from */
	struct recording *r;		/* what the walk finds */
	recording_entry_fn fn;
	void *ctx;
	int fn_ret;
	struct pvprof_st_iter stream;	/* the STREAM sections' entries */
	uint8_t *win;			/* the window, for a file */
	uint64_t win_off;
	size_t win_len;
	char *err;
	size_t err_size;
};

static int walk_err(struct walk *wk, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int walk_err(struct walk *wk, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(wk->err, wk->err_size, "offset %" PRIu64 " (0x%" PRIx64 "): %s",
		 off, off, msg);
	return -1;
}

/*
 * Bytes [off, off + len) of the recording, len at most READ_WINDOW / 2 and
 * off + len within its size; valid until the next call.  NULL after a read
 * error (the file shrank or could not be read).
 */
static const uint8_t *walk_bytes(struct walk *wk, uint64_t off, size_t len)
{
	const uint64_t win_end = wk->win_off + wk->win_len;
	size_t keep = 0, want;

	if (wk->src->data)
		return wk->src->data + off;
	if (off >= wk->win_off && off + len <= win_end)
		return wk->win + (off - wk->win_off);
	if (off >= wk->win_off && off < win_end) {
		keep = (size_t)(win_end - off);
		memmove(wk->win, wk->win + (off - wk->win_off), keep);
	}
	wk->win_off = off;
	wk->win_len = keep;
	want = wk->src->len - off < READ_WINDOW ? (size_t)(wk->src->len - off) : READ_WINDOW;
	while (wk->win_len < want) {
		ssize_t n = pread(wk->src->fd, wk->win + wk->win_len, want - wk->win_len,
				  (off_t)(off + wk->win_len));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			walk_err(wk, off + wk->win_len, "cannot read: %s",
				 n ? strerror(errno) : "the file shrank while it was read");
			return NULL;
		}
		wk->win_len += (size_t)n;
	}
	return wk->win;
}

static const char *section_name(uint32_t type)
{
	switch (type) {
	case PVPROF_DATA_SEC_HOST:	return "HOST";
	case PVPROF_DATA_SEC_VM:	return "VM";
	case PVPROF_DATA_SEC_STATUS:	return "STATUS";
	case PVPROF_DATA_SEC_STREAM:	return "STREAM";
	case PVPROF_DATA_SEC_END:	return "END";
	default:			return "unknown";
	}
}

static void note_cut(struct walk *wk, uint64_t section, const struct pvprof_data_section *s,
		     uint64_t kept, uint32_t entries_lost)
{
	wk->r->cut = (struct recording_cut){
		.cut = true,
		.in_header = !s,
		.at = wk->src->len,
		.section = section,
		.type = s ? s->type : 0,
		.size = s ? s->size : 0,
		.kept = kept,
		.entries_lost = entries_lost,
	};
}

/*
 * The entries of a STREAM section's payload @p, of which @avail bytes of
 * @size are in the file: an entry cut by the end of the file ends the
 * reading there, one cut by the end of its section is an error.  The
 * sections are pieces of one stream, walked by one iterator.
 */
static int walk_stream(struct walk *wk, uint64_t section,
		       const struct pvprof_data_section *s, const uint8_t *p, uint64_t avail)
{
	const uint64_t off = section + sizeof(*s), size = s->size;
	struct pvprof_st_iter *it = &wk->stream;
	uint64_t pos;

	pvprof_st_iter_feed(it, p, avail);
	for (;;) {
		struct pvprof_st_view v;
		enum pvprof_st_status st;

		pos = it->pos;
		st = pvprof_st_iter_next(it, &v);
		if (st == PVPROF_ST_END)
			break;
		if (st == PVPROF_ST_TRUNCATED && avail < size)
			break;
		if (st == PVPROF_ST_TRUNCATED)
			return walk_err(wk, off + pos,
					"stream entry cut by the end of its section (%" PRIu64 " bytes left)",
					size - pos);
		if (st == PVPROF_ST_NO_HELLO)
			return walk_err(wk, off + pos,
					"the stream does not start with HELLO (type %u)",
					v.hdr.type);
		if (st != PVPROF_ST_OK)
			return walk_err(wk, off + pos, "malformed stream entry (type %u, size %u): %s",
					v.hdr.type, v.hdr.size, pvprof_st_status_name(st));
		if (v.hdr.type == PVPROF_ST_HELLO && it->entries > 1)
			return walk_err(wk, off + pos, "a second stream HELLO entry");
		wk->r->stream_entries++;
		wk->r->stream_bytes += v.hdr.size;
		if (wk->fn) {
			wk->fn_ret = wk->fn(wk->ctx, &v, off + pos);
			if (wk->fn_ret)
				return -1;
		}
	}
	wk->r->stream_sections++;
	if (avail < size)
		note_cut(wk, section, s, off + pos, 1);
	return 0;
}

static int walk_status(struct walk *wk, uint64_t off, const uint8_t *p, uint64_t size)
{
	struct recording *r = wk->r;
	struct pvprof_data_status hdr;
	struct recording_status *st;
	size_t vcpus_size;

	if (size < sizeof(hdr))
		return walk_err(wk, off, "STATUS section of %" PRIu64 " bytes, expected at least %zu",
				size, sizeof(hdr));
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.when != PVPROF_DATA_STATUS_START && hdr.when != PVPROF_DATA_STATUS_END)
		return walk_err(wk, off, "STATUS section for unknown moment %u", hdr.when);
	if (hdr.nr_vcpus > PVPROF_DATA_MAX_VCPUS)
		return walk_err(wk, off, "STATUS section with %u vCPUs (at most %u)",
				hdr.nr_vcpus, PVPROF_DATA_MAX_VCPUS);
	vcpus_size = (size_t)hdr.nr_vcpus * sizeof(struct pvprof_vcpu_status);
	if (size != sizeof(hdr) + vcpus_size)
		return walk_err(wk, off, "STATUS section of %" PRIu64 " bytes does not hold %u vCPUs",
				size, hdr.nr_vcpus);
	st = hdr.when == PVPROF_DATA_STATUS_START ? &r->start : &r->end_status;
	if (st->present)
		return walk_err(wk, off, "a second %s STATUS section",
				hdr.when == PVPROF_DATA_STATUS_START ? "start" : "end");
	/* The window moves on: the entries are copied (600 KiB at most). */
	st->vcpus = malloc(vcpus_size ? vcpus_size : 1);
	if (!st->vcpus)
		return walk_err(wk, off, "out of memory for a STATUS section");
	memcpy(st->vcpus, p + sizeof(hdr), vcpus_size);
	st->present = true;
	st->hdr = hdr;
	return 0;
}

static int walk_end(struct walk *wk, uint64_t off, const uint8_t *p, uint64_t next)
{
	struct recording *r = wk->r;

	memcpy(&r->end, p, sizeof(r->end));
	if (r->end.stop_reason < 1 || r->end.stop_reason > PVPROF_DATA_STOP_MAX ||
	    r->end.reserved0)
		return walk_err(wk, off, "END section with unknown stop reason %u",
				r->end.stop_reason);
	if (r->end.stream_bytes != r->stream_bytes ||
	    r->end.stream_reads != r->stream_sections)
		return walk_err(wk, off,
				"END section counts %" PRIu64 " stream bytes in %" PRIu64
				" sections, the file has %" PRIu64 " in %" PRIu64,
				r->end.stream_bytes, r->end.stream_reads,
				r->stream_bytes, r->stream_sections);
	if (next != wk->src->len)
		return walk_err(wk, next, "%" PRIu64 " bytes after the END section",
				wk->src->len - next);
	r->has_end = true;
	return 0;
}

/* The sizes a section's header may give, checked before its payload. */
static int check_section_size(struct walk *wk, const struct pvprof_data_section *s,
			      uint64_t off)
{
	const struct recording *r = wk->r;

	switch (s->type) {
	case PVPROF_DATA_SEC_HOST:
		if (r->has_host || s->size != sizeof(r->host))
			return walk_err(wk, off, "%s HOST section of %" PRIu64 " bytes (expected one of %zu)",
					r->has_host ? "a second" : "a", s->size, sizeof(r->host));
		return 0;
	case PVPROF_DATA_SEC_VM:
		if (r->has_vm || s->size != sizeof(r->vm))
			return walk_err(wk, off, "%s VM section of %" PRIu64 " bytes (expected one of %zu)",
					r->has_vm ? "a second" : "a", s->size, sizeof(r->vm));
		return 0;
	case PVPROF_DATA_SEC_STREAM:
		if (!r->has_host || !r->has_vm)
			return walk_err(wk, off, "stream data before the HOST and VM sections");
		return 0;
	case PVPROF_DATA_SEC_END:
		if (s->size != sizeof(r->end))
			return walk_err(wk, off, "END section of %" PRIu64 " bytes, expected %zu",
					s->size, sizeof(r->end));
		return 0;
	default:
		return 0;
	}
}

/* A whole section's payload @p, at file offset @off. */
static int walk_section(struct walk *wk, const struct pvprof_data_section *s,
			uint64_t off, const uint8_t *p, uint64_t next)
{
	struct recording *r = wk->r;

	switch (s->type) {
	case PVPROF_DATA_SEC_HOST:
		memcpy(&r->host, p, sizeof(r->host));
		r->has_host = true;
		return 0;
	case PVPROF_DATA_SEC_VM:
		memcpy(&r->vm, p, sizeof(r->vm));
		if (r->vm.flags & ~PVPROF_DATA_VM_F_ALL)
			return walk_err(wk, off, "VM section with unknown flags 0x%x", r->vm.flags);
		r->has_vm = true;
		return 0;
	case PVPROF_DATA_SEC_STATUS:
		return walk_status(wk, off, p, s->size);
	case PVPROF_DATA_SEC_END:
		return walk_end(wk, off, p, next);
	default:
		/* A newer writer's section: framing checked, skipped. */
		return 0;
	}
}

/*
 * The walk: the file header, then each section.  A file that ends inside a
 * section is read up to there (note_cut()); every other problem ends the
 * walk with an error.
 */
static int walk(struct walk *wk)
{
	struct recording *r = wk->r;
	const uint64_t len = wk->src->len;
	struct pvprof_data_header h;
	const uint8_t *p;
	uint64_t off;

	if (len < sizeof(h))
		return walk_err(wk, 0, "%" PRIu64 " bytes: too short for a pvprof recording header",
				len);
	p = walk_bytes(wk, 0, sizeof(h));
	if (!p)
		return -1;
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, PVPROF_DATA_MAGIC, sizeof(h.magic)))
		return walk_err(wk, 0, "not a pvprof recording (bad magic)");
	if (h.version != PVPROF_DATA_VERSION)
		return walk_err(wk, 8, "recording format version %u, this reader knows %u",
				h.version, PVPROF_DATA_VERSION);
	if (h.header_size != sizeof(h) || h.flags)
		return walk_err(wk, 12, "header size %u or flags 0x%" PRIx64 " not of version %u",
				h.header_size, h.flags, PVPROF_DATA_VERSION);
	for (off = sizeof(h); off < len;) {
		struct pvprof_data_section s;
		uint64_t body, next, avail, present;

		if (r->has_end)
			return walk_err(wk, off, "data after the END section");
		if (len - off < sizeof(s)) {
			note_cut(wk, off, NULL, off, 0);
			break;
		}
		p = walk_bytes(wk, off, sizeof(s));
		if (!p)
			return -1;
		memcpy(&s, p, sizeof(s));
		body = off + sizeof(s);
		if (s.flags)
			return walk_err(wk, off, "%s section with flags 0x%x",
					section_name(s.type), s.flags);
		if (s.size > PVPROF_DATA_MAX_SECTION)
			return walk_err(wk, off, "%s section of %" PRIu64 " bytes (at most %u)",
					section_name(s.type), s.size, PVPROF_DATA_MAX_SECTION);
		if (check_section_size(wk, &s, off))
			return -1;
		next = body + ALIGN8(s.size);
		present = next <= len ? next - body : len - body;
		avail = present < s.size ? present : s.size;
		p = walk_bytes(wk, body, (size_t)present);
		if (!p)
			return -1;
		if (memcmp(p + avail, zero_pad, present - avail))
			return walk_err(wk, body + s.size, "nonzero padding after a %s section",
					section_name(s.type));
		if (s.type == PVPROF_DATA_SEC_STREAM) {
			if (walk_stream(wk, off, &s, p, avail))
				return -1;
			if (avail < s.size)
				break;
		} else if (avail < s.size) {
			note_cut(wk, off, &s, off, 0);
			break;
		} else if (walk_section(wk, &s, body, p, next)) {
			return -1;
		}
		if (next > len) {
			/* Only padding is missing: nothing is lost. */
			note_cut(wk, off, &s, body + s.size, 0);
			break;
		}
		off = next;
	}
	/* A recording closed cleanly holds all of these; a cut one may not. */
	if (!r->has_end)
		return 0;
	if (!r->has_host || !r->has_vm)
		return walk_err(wk, len, "the recording has no %s section",
				r->has_host ? "VM" : "HOST");
	if (!wk->stream.entries)
		return walk_err(wk, len, "the recording holds no stream (no HELLO entry)");
	return 0;
}

static void free_found(struct recording *r)
{
	free(r->start.vcpus);
	free(r->end_status.vcpus);
	r->start.vcpus = r->end_status.vcpus = NULL;
}

/* A file's window: no larger than the file, so small ones cost little. */
static uint8_t *window_alloc(const struct recording *r)
{
	return malloc(r->len < READ_WINDOW ? (size_t)r->len + 1 : READ_WINDOW);
}

/* The checking walk of a recording whose source fields are set. */
static int check_recording(struct recording *r, char *err, size_t err_size)
{
	struct walk wk = { .src = r, .r = r, .err = err, .err_size = err_size };
	int ret;

	if (r->fd >= 0) {
		wk.win = window_alloc(r);
		if (!wk.win) {
			snprintf(err, err_size, "out of memory for the read window");
			return -1;
		}
	}
	ret = walk(&wk);
	free(wk.win);
	return ret;
}

/**
 * recording_parse() - check a recording held in memory
 * @r: filled with what the file says; r->data points at @data
 * @data: the file's bytes, which must outlive @r
 * @len: their number
 * @err: the first problem, with its file offset, on failure
 * @err_size: size of @err
 *
 * Every section and every stream entry is checked here.  A recording
 * without END is not an error (the recorder was killed); has_end says so,
 * and a file that ends inside a section is read up to there (r->cut).
 * Return: 0, or -1 with @err set; free with recording_free() after 0.
 */
int recording_parse(struct recording *r, const void *data, size_t len,
		    char *err, size_t err_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->data = data;
	r->len = len;
	if (check_recording(r, err, err_size)) {
		recording_free(r);
		return -1;
	}
	return 0;
}

/**
 * recording_load() - open a recording (a file) and check it
 * @r: the recording
 * @path: file name, which must outlive @r
 * @err: the problem on failure (the caller names the file)
 * @err_size: size of @err
 *
 * The file stays open: each recording_for_each() reads it again, through
 * a window of a few MiB, so memory does not follow the file's size.
 * Return: 0, or -1 with @err set; free with recording_free() after 0.
 */
int recording_load(struct recording *r, const char *path, char *err, size_t err_size)
{
	struct stat sb;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		snprintf(err, err_size, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (fstat(r->fd, &sb)) {
		snprintf(err, err_size, "cannot stat: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, err_size, "not a regular file");
		goto fail;
	}
	/* A file still being written is read as far as it was at this moment. */
	r->len = (uint64_t)sb.st_size;
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (check_recording(r, err, err_size))
		goto fail;
	return 0;

fail:
	recording_free(r);
	return -1;
}

/**
 * recording_for_each() - call @fn for every stream entry, in file order
 * @r: a recording recording_parse() or recording_load() accepted
 * @fn: the callback; a nonzero return stops the walk
 * @ctx: passed to @fn
 *
 * The recording is read and checked again: a file that no longer reads as
 * it did is an error, printed here.
 * Return: 0, what @fn returned to stop, or -1 after printing a read error.
 */
int recording_for_each(const struct recording *r, recording_entry_fn fn, void *ctx)
{
	struct recording found = { .fd = -1 };
	struct walk wk = { .src = r, .r = &found, .fn = fn, .ctx = ctx };
	char err[320];
	int ret;

	wk.err = err;
	wk.err_size = sizeof(err);
	if (r->fd >= 0) {
		wk.win = window_alloc(r);
		if (!wk.win) {
			snprintf(err, sizeof(err), "out of memory for the read window");
			goto print_err;
		}
	}
	ret = walk(&wk);
	if (!ret && (found.stream_entries != r->stream_entries ||
		     found.stream_bytes != r->stream_bytes)) {
		snprintf(err, sizeof(err), "the file changed while it was read");
		ret = -1;
	}
	free_found(&found);
	free(wk.win);
	if (!ret || wk.fn_ret)
		return wk.fn_ret;
print_err:
	p_err("%s: %s", r->path ? r->path : "the recording", err);
	return -1;
}

/**
 * recording_free() - release a recording and close its file
 * @r: the recording
 */
void recording_free(struct recording *r)
{
	if (r->fd >= 0 && r->path)
		close(r->fd);
	free_found(r);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/**
 * recording_describe_end() - how a recording that was not closed ends
 * @r: a recording without END (has_end false)
 * @buf: one sentence, without a final period: where the file ends and
 *	what was lost there
 * @size: size of @buf
 */
void recording_describe_end(const struct recording *r, char *buf, size_t size)
{
	const struct recording_cut *c = &r->cut;
	const uint64_t body = c->section + sizeof(struct pvprof_data_section);
	const uint64_t in_file = c->at - c->kept;

	if (!c->cut) {
		snprintf(buf, size, "no END section: the recording was not closed cleanly;"
			 " it ends after a whole section, at offset %" PRIu64
			 ", and whatever was to follow is lost", r->len);
	} else if (c->in_header) {
		snprintf(buf, size, "cut at offset %" PRIu64 " in a section header at offset %"
			 PRIu64 ": read up to offset %" PRIu64 "; lost the %" PRIu64
			 " bytes of that header and whatever followed it", c->at, c->section,
			 c->kept, in_file);
	} else if (c->kept >= body + c->size) {
		snprintf(buf, size, "cut at offset %" PRIu64 " in the padding after a %s section"
			 " at offset %" PRIu64 ": read it whole; lost whatever followed it",
			 c->at, section_name(c->type), c->section);
	} else if (c->type == PVPROF_DATA_SEC_STREAM) {
		snprintf(buf, size, "cut at offset %" PRIu64 " in a STREAM section at offset %"
			 PRIu64 " (%" PRIu64 " bytes): read up to its last whole entry, at"
			 " offset %" PRIu64 "; lost %" PRIu64 " bytes (%" PRIu64 " in the file, %"
			 PRIu64 " missing) with at least %u entry, and whatever followed",
			 c->at, c->section, c->size, c->kept, body + c->size - c->kept,
			 in_file, body + c->size - c->at, c->entries_lost);
	} else if (c->type == PVPROF_DATA_SEC_END) {
		snprintf(buf, size, "cut at offset %" PRIu64 " in the END section at offset %"
			 PRIu64 ": read up to offset %" PRIu64 "; lost only that section (%"
			 PRIu64 " of its %" PRIu64 " bytes in the file), no stream entry",
			 c->at, c->section, c->kept, in_file,
			 (uint64_t)sizeof(struct pvprof_data_section) + c->size);
	} else {
		snprintf(buf, size, "cut at offset %" PRIu64 " in a %s section at offset %"
			 PRIu64 " (%" PRIu64 " bytes): read up to offset %" PRIu64 "; lost that"
			 " section (%" PRIu64 " of its bytes in the file, %" PRIu64 " missing)"
			 " and whatever followed it", c->at, section_name(c->type), c->section,
			 c->size, c->kept, in_file, body + c->size - c->at);
	}
}

/**
 * recording_vcpu() - copy out one vCPU entry of a STATUS section
 * @st: the section
 * @i: the entry, below st->hdr.nr_vcpus
 * @out: the copy
 */
void recording_vcpu(const struct recording_status *st, uint32_t i,
		    struct pvprof_vcpu_status *out)
{
	memcpy(out, st->vcpus + (size_t)i * sizeof(*out), sizeof(*out));
}

/**
 * recording_stop_name() - why a recording stopped, in words
 * @reason: PVPROF_DATA_STOP_*
 *
 * Return: a static string.
 */
const char *recording_stop_name(uint32_t reason)
{
	switch (reason) {
	case PVPROF_DATA_STOP_DURATION:	return "duration elapsed";
	case PVPROF_DATA_STOP_SIGNAL:	return "interrupted";
	case PVPROF_DATA_STOP_EOF:	return "the VM went away";
	case PVPROF_DATA_STOP_ERROR:	return "read error";
	default:			return "unknown";
	}
}
