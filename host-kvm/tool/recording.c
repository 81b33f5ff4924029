// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof recordings: writing them section by section, and reading them
 * back with every size, offset and field checked before use.  A recording
 * may come from anywhere; its stream records are the guest's words relayed
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

struct parse_state {
	struct recording *r;
	char *err;
	size_t err_size;
	bool seen_hello;
};

static int parse_err(struct parse_state *ps, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int parse_err(struct parse_state *ps, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->err_size, "offset %" PRIu64 " (0x%" PRIx64 "): %s",
		 off, off, msg);
	return -1;
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

static int parse_stream(struct parse_state *ps, uint64_t off, uint64_t size)
{
	const uint8_t *p = ps->r->data + off;
	uint64_t pos = 0;

	while (pos < size) {
		struct pvprof_st_view v;
		enum pvprof_st_status st;

		st = pvprof_st_decode(p + pos, size - pos, &v);
		if (st == PVPROF_ST_TRUNCATED)
			return parse_err(ps, off + pos,
					 "stream record cut by the end of its section (%" PRIu64 " bytes left)",
					 size - pos);
		if (st != PVPROF_ST_OK)
			return parse_err(ps, off + pos, "malformed stream record (type %u, size %u): %s",
					 v.hdr.type, v.hdr.size, pvprof_st_status_name(st));
		if (v.hdr.type == PVPROF_ST_HELLO && ps->seen_hello)
			return parse_err(ps, off + pos, "a second stream HELLO record");
		if (v.hdr.type != PVPROF_ST_HELLO && !ps->seen_hello)
			return parse_err(ps, off + pos,
					 "the stream does not start with HELLO (type %u)",
					 v.hdr.type);
		ps->seen_hello = true;
		ps->r->stream_records++;
		pos += v.hdr.size;
	}
	return 0;
}

static int parse_status(struct parse_state *ps, uint64_t off, uint64_t size)
{
	struct recording *r = ps->r;
	struct pvprof_data_status hdr;
	struct recording_status *st;

	if (size < sizeof(hdr))
		return parse_err(ps, off, "STATUS section of %" PRIu64 " bytes, expected at least %zu",
				 size, sizeof(hdr));
	memcpy(&hdr, r->data + off, sizeof(hdr));
	if (hdr.when != PVPROF_DATA_STATUS_START && hdr.when != PVPROF_DATA_STATUS_END)
		return parse_err(ps, off, "STATUS section for unknown moment %u", hdr.when);
	if (hdr.nr_vcpus > PVPROF_DATA_MAX_VCPUS)
		return parse_err(ps, off, "STATUS section with %u vCPUs (at most %u)",
				 hdr.nr_vcpus, PVPROF_DATA_MAX_VCPUS);
	if (size != sizeof(hdr) + (uint64_t)hdr.nr_vcpus * sizeof(struct pvprof_vcpu_status))
		return parse_err(ps, off, "STATUS section of %" PRIu64 " bytes does not hold %u vCPUs",
				 size, hdr.nr_vcpus);
	st = hdr.when == PVPROF_DATA_STATUS_START ? &r->start : &r->end_status;
	if (st->present)
		return parse_err(ps, off, "a second %s STATUS section",
				 hdr.when == PVPROF_DATA_STATUS_START ? "start" : "end");
	st->present = true;
	st->hdr = hdr;
	st->vcpus = r->data + off + sizeof(hdr);
	return 0;
}

static int parse_end(struct parse_state *ps, uint64_t off, uint64_t size,
		     uint64_t next)
{
	struct recording *r = ps->r;

	if (size != sizeof(r->end))
		return parse_err(ps, off, "END section of %" PRIu64 " bytes, expected %zu",
				 size, sizeof(r->end));
	memcpy(&r->end, r->data + off, sizeof(r->end));
	if (r->end.stop_reason < 1 || r->end.stop_reason > PVPROF_DATA_STOP_MAX ||
	    r->end.reserved0)
		return parse_err(ps, off, "END section with unknown stop reason %u",
				 r->end.stop_reason);
	if (r->end.stream_bytes != r->stream_bytes ||
	    r->end.stream_reads != r->stream_sections)
		return parse_err(ps, off,
				 "END section counts %" PRIu64 " stream bytes in %" PRIu64
				 " sections, the file has %" PRIu64 " in %" PRIu64,
				 r->end.stream_bytes, r->end.stream_reads,
				 r->stream_bytes, r->stream_sections);
	if (next != r->len)
		return parse_err(ps, next, "%zu bytes after the END section",
				 (size_t)(r->len - next));
	r->has_end = true;
	return 0;
}

static int parse_section(struct parse_state *ps, const struct pvprof_data_section *s,
			 uint64_t off, uint64_t next)
{
	struct recording *r = ps->r;

	switch (s->type) {
	case PVPROF_DATA_SEC_HOST:
		if (r->has_host || s->size != sizeof(r->host))
			return parse_err(ps, off, "%s HOST section of %" PRIu64 " bytes (expected one of %zu)",
					 r->has_host ? "a second" : "a", s->size, sizeof(r->host));
		memcpy(&r->host, r->data + off, sizeof(r->host));
		r->has_host = true;
		return 0;
	case PVPROF_DATA_SEC_VM:
		if (r->has_vm || s->size != sizeof(r->vm))
			return parse_err(ps, off, "%s VM section of %" PRIu64 " bytes (expected one of %zu)",
					 r->has_vm ? "a second" : "a", s->size, sizeof(r->vm));
		memcpy(&r->vm, r->data + off, sizeof(r->vm));
		if (r->vm.flags & ~PVPROF_DATA_VM_F_ALL)
			return parse_err(ps, off, "VM section with unknown flags 0x%x", r->vm.flags);
		r->has_vm = true;
		return 0;
	case PVPROF_DATA_SEC_STATUS:
		return parse_status(ps, off, s->size);
	case PVPROF_DATA_SEC_STREAM:
		if (!r->has_host || !r->has_vm)
			return parse_err(ps, off, "stream data before the HOST and VM sections");
		r->stream_bytes += s->size;
		r->stream_sections++;
		return parse_stream(ps, off, s->size);
	case PVPROF_DATA_SEC_END:
		return parse_end(ps, off, s->size, next);
	default:
		/* A newer writer's section: framing checked, skipped. */
		return 0;
	}
}

/**
 * recording_parse() - check a recording held in memory
 * @r: filled with what the file says; r->data points at @data
 * @data: the file's bytes
 * @len: their number
 * @err: the first problem, with its file offset, on failure
 * @err_size: size of @err
 *
 * Every section and every stream record is checked here, so that
 * recording_for_each() on a parsed recording meets no surprise.  A missing
 * END section is not an error (the recorder was killed): has_end says so.
 * Return: 0, or -1 with @err set.
 */
int recording_parse(struct recording *r, const void *data, size_t len,
		    char *err, size_t err_size)
{
	struct parse_state ps = { .r = r, .err = err, .err_size = err_size };
	struct pvprof_data_header h;
	uint64_t off;

	memset(r, 0, sizeof(*r));
	r->data = data;
	r->len = len;
	if (len < sizeof(h))
		return parse_err(&ps, 0, "%zu bytes: too short for a pvprof recording header",
				 len);
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, PVPROF_DATA_MAGIC, sizeof(h.magic)))
		return parse_err(&ps, 0, "not a pvprof recording (bad magic)");
	if (h.version != PVPROF_DATA_VERSION)
		return parse_err(&ps, 8, "recording format version %u, this reader knows %u",
				 h.version, PVPROF_DATA_VERSION);
	if (h.header_size != sizeof(h) || h.flags)
		return parse_err(&ps, 12, "header size %u or flags 0x%" PRIx64 " not of version %u",
				 h.header_size, h.flags, PVPROF_DATA_VERSION);
	for (off = sizeof(h); off < len;) {
		struct pvprof_data_section s;
		uint64_t body, next;

		if (r->has_end)
			return parse_err(&ps, off, "data after the END section");
		if (len - off < sizeof(s))
			return parse_err(&ps, off, "truncated section header (%" PRIu64 " bytes left)",
					 (uint64_t)(len - off));
		memcpy(&s, r->data + off, sizeof(s));
		body = off + sizeof(s);
		if (s.flags)
			return parse_err(&ps, off, "%s section with flags 0x%x",
					 section_name(s.type), s.flags);
		if (s.size > PVPROF_DATA_MAX_SECTION)
			return parse_err(&ps, off, "%s section of %" PRIu64 " bytes (at most %u)",
					 section_name(s.type), s.size, PVPROF_DATA_MAX_SECTION);
		next = body + ALIGN8(s.size);
		if (next > len)
			return parse_err(&ps, off, "%s section of %" PRIu64
					 " bytes cut by the end of the file (%" PRIu64 " bytes left)",
					 section_name(s.type), s.size, (uint64_t)(len - body));
		if (memcmp(r->data + body + s.size, zero_pad, next - body - s.size))
			return parse_err(&ps, body + s.size, "nonzero padding after a %s section",
					 section_name(s.type));
		if (parse_section(&ps, &s, body, next))
			return -1;
		off = next;
	}
	if (!r->has_host || !r->has_vm)
		return parse_err(&ps, len, "the recording has no %s section",
				 r->has_host ? "VM" : "HOST");
	if (!ps.seen_hello)
		return parse_err(&ps, len, "the recording holds no stream (no HELLO record)");
	return 0;
}

/**
 * recording_load() - read a whole recording file and check it
 * @r: the recording
 * @path: file name
 * @err: the problem on failure (the caller names the file)
 * @err_size: size of @err
 *
 * Return: 0, or -1 with @err set; free with recording_free() after 0.
 */
int recording_load(struct recording *r, const char *path, char *err, size_t err_size)
{
	struct stat sb;
	uint8_t *buf;
	size_t got = 0;
	int fd;

	memset(r, 0, sizeof(*r));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb)) {
		snprintf(err, err_size, "cannot stat: %s", strerror(errno));
		goto close_fd;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, err_size, "not a regular file");
		goto close_fd;
	}
	buf = malloc(sb.st_size ? (size_t)sb.st_size : 1);
	if (!buf) {
		snprintf(err, err_size, "out of memory for %lld bytes", (long long)sb.st_size);
		goto close_fd;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, err_size, "read at offset %zu: %s", got,
				 n ? strerror(errno) : "the file shrank");
			goto free_buf;
		}
		got += (size_t)n;
	}
	close(fd);
	if (recording_parse(r, buf, got, err, err_size)) {
		free(buf);
		memset(r, 0, sizeof(*r));
		return -1;
	}
	r->owned = true;
	return 0;

free_buf:
	free(buf);
close_fd:
	close(fd);
	return -1;
}

/**
 * recording_for_each() - call @fn for every stream record, in file order
 * @r: a recording recording_parse() accepted
 * @fn: the callback; a nonzero return stops the walk
 * @ctx: passed to @fn
 *
 * Return: 0, or what @fn returned to stop.
 */
int recording_for_each(const struct recording *r, recording_record_fn fn, void *ctx)
{
	uint64_t off = sizeof(struct pvprof_data_header);

	while (off + sizeof(struct pvprof_data_section) <= r->len) {
		struct pvprof_data_section s;
		uint64_t body, pos;

		memcpy(&s, r->data + off, sizeof(s));
		body = off + sizeof(s);
		off = body + ALIGN8(s.size);
		if (s.type != PVPROF_DATA_SEC_STREAM)
			continue;
		for (pos = 0; pos < s.size;) {
			struct pvprof_st_view v;
			int ret;

			/* Checked by recording_parse(); stop rather than trust. */
			if (pvprof_st_decode(r->data + body + pos, s.size - pos, &v) !=
			    PVPROF_ST_OK)
				return -1;
			ret = fn(ctx, &v, body + pos);
			if (ret)
				return ret;
			pos += v.hdr.size;
		}
	}
	return 0;
}

/**
 * recording_free() - release a loaded recording
 * @r: the recording
 */
void recording_free(struct recording *r)
{
	if (r->owned)
		free((void *)r->data);
	memset(r, 0, sizeof(*r));
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
