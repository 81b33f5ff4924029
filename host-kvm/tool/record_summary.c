// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof record's summary (doc/kvm-pvprof-record.8, OUTPUT).  record
 * counts each read of the stream here and writes the summary once the file
 * is closed; the tests run the same two functions on a recording's stream
 * sections, which are those reads.
 */
#include <inttypes.h>
#include <stdio.h>

#include "core/host.h"
#include "json.h"
#include "record_summary.h"
#include "recording.h"

/**
 * record_summary_count() - count the entries of one read of the stream
 * @s: the counts so far
 * @buf: what the read returned: whole stream entries
 * @len: its bytes
 *
 * The bytes come from the kernel, but are decoded with the same checks as
 * a file's, the reads as pieces of one stream: counting stops at the first
 * record of a read that does not decode.  @s->stream_bytes is the caller's:
 * every byte read is written, decoded or not.
 */
void record_summary_count(struct record_summary *s, const uint8_t *buf, size_t len)
{
	struct pvprof_st_view v;

	pvprof_st_iter_feed(&s->stream, buf, len);
	while (pvprof_st_iter_next(&s->stream, &v) == PVPROF_ST_OK) {
		s->stream_entries++;
		if (v.hdr.type == PVPROF_ST_CALLCHAIN) {
			s->callchains++;
		} else if (v.hdr.type == PVPROF_ST_LOSS) {
			s->lost += v.u.loss.count;
			if (v.u.loss.reason < PVPROF_LOSS_NR)
				s->losses[v.u.loss.reason] += v.u.loss.count;
		} else if (v.hdr.type == PVPROF_ST_SIDEBAND) {
			s->sideband++;
			s->sideband_bytes += v.sb_len;
		}
	}
}

static int write_json(FILE *f, const struct record_summary *s)
{
	struct json_writer w;
	int i;

	json_init(&w, f);
	json_begin_object(&w);
	json_member_string(&w, "output", s->output);
	json_member_string(&w, "stopped", recording_stop_name(s->stop_reason));
	json_member_uint(&w, "duration_ns", s->duration_ns);
	json_member_uint(&w, "stream_bytes", s->stream_bytes);
	json_member_uint(&w, "stream_records", s->stream_entries);
	json_member_uint(&w, "callchains", s->callchains);
	json_member_uint(&w, "lost", s->lost);
	json_name(&w, "losses");
	json_begin_object(&w);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		json_member_uint(&w, pvprof_loss_name(i), s->losses[i]);
	json_end_object(&w);
	json_name(&w, "sideband");
	json_begin_object(&w);
	json_member_uint(&w, "messages", s->sideband);
	json_member_uint(&w, "bytes", s->sideband_bytes);
	json_end_object(&w);
	json_end_object(&w);
	return json_end_document(&w);
}

/**
 * record_summary_write() - the summary, as text or as JSON
 * @f: output: record writes text to stderr, JSON (-j) to stdout
 * @s: the counts
 * @json: one JSON object (doc/kvm-pvprof-record.8 lists its members)
 *	instead of the line
 *
 * The line's "records" are callchains: scripts parse the line, so it keeps
 * the word it has always had (as -j keeps stream_records).
 * Return: 0, or -1 when the output could not be written.
 */
int record_summary_write(FILE *f, const struct record_summary *s, bool json)
{
	if (json)
		return write_json(f, s);
	fprintf(f, "recorded %" PRIu64 " records, %" PRIu64 " losses, %" PRIu64
		" sideband bytes to %s\n", s->callchains, s->lost, s->sideband_bytes,
		s->output);
	return fflush(f) || ferror(f) ? -1 : 0;
}
