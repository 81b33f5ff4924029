// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report -j: the header's totals and the top table as one
 * JSON object (doc/kvm-pvprof-report.8, JSON OUTPUT lists the members).
 *
 * Every count of the text header is here, under a name, with the same
 * value; the top table is the one the text prints: its rows (--sort), in
 * its order, with its --limit and --percent-limit.  Guest strings are written whole, by json.c's rules
 * (valid UTF-8 kept, other bytes replaced), not cut or \xHH-escaped as
 * in the text.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/host.h"
#include "json.h"
#include "main.h"
#include "profile.h"
#include "report_header.h"
#include "report_json.h"
#include "report_select.h"
#include "report_sort.h"
#include "report_unwind.h"
#include "symbolize.h"

_Static_assert(sizeof(((struct pvprof_data_vm *)0)->domain) < 320 &&
	       sizeof(((struct pvprof_data_host *)0)->hostname) < 320,
	       "member_field()'s buffer holds every string field");

/* A NUL-padded string field of the file, which may lack its NUL. */
static void member_field(struct json_writer *w, const char *name, const char *field,
			 size_t size, bool empty_is_null)
{
	char buf[320];

	memcpy(buf, field, size);
	buf[size] = '\0';
	json_member_string(w, name, empty_is_null && !buf[0] ? NULL : buf);
}

static void member_int_or_null(struct json_writer *w, const char *name, int64_t v)
{
	json_name(w, name);
	if (v < 0)
		json_null(w);
	else
		json_uint(w, (uint64_t)v);
}

static void write_vm(struct json_writer *w, const struct recording *r,
		     const struct report_stats *s)
{
	const char *event = event_name(r->vm.event);

	json_name(w, "host");
	json_begin_object(w);
	member_field(w, "hostname", r->host.hostname, sizeof(r->host.hostname), false);
	member_field(w, "release", r->host.release, sizeof(r->host.release), false);
	member_field(w, "machine", r->host.machine, sizeof(r->host.machine), false);
	member_field(w, "tool_version", r->host.tool_version,
		     sizeof(r->host.tool_version), false);
	json_end_object(w);

	json_name(w, "vm");
	json_begin_object(w);
	json_member_uint(w, "vmm_pid", r->vm.vmm_pid);
	json_name(w, "vmm_fd");
	json_int(w, r->vm.vmm_fd);
	member_field(w, "comm", r->vm.comm, sizeof(r->vm.comm), false);
	member_field(w, "domain", r->vm.domain, sizeof(r->vm.domain), true);
	json_member_uint(w, "nr_vcpus", s->nr_vcpus);
	json_member_string(w, "event", event);
	json_member_uint(w, "event_id", r->vm.event);
	json_member_uint(w, "sample_freq", r->vm.sample_freq);
	json_member_uint(w, "sample_period", r->vm.sample_period);
	json_member_bool(w, "enabled_by_record",
			 r->vm.flags & PVPROF_DATA_VM_F_ENABLED_BY_US);
	json_end_object(w);
}

static void write_recorded(struct json_writer *w, const struct recording *r)
{
	time_t t = (time_t)(r->host.start_realtime_ns / 1000000000ULL);
	char start[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_name(w, "recorded");
	json_begin_object(w);
	json_member_string(w, "start", start);
	json_member_uint(w, "start_realtime_ns", r->host.start_realtime_ns);
	json_member_bool(w, "closed", r->has_end);
	json_name(w, "duration_ns");
	if (r->has_end)
		json_uint(w, r->end.end_monotonic_ns - r->host.start_monotonic_ns);
	else
		json_null(w);
	json_member_string(w, "stopped",
			   r->has_end ? recording_stop_name(r->end.stop_reason) : NULL);
	json_end_object(w);
}

static void write_losses(struct json_writer *w, const uint64_t *losses)
{
	uint64_t lost = 0;
	int i;

	for (i = 0; i < PVPROF_LOSS_NR; i++)
		lost += losses[i];
	json_member_uint(w, "lost", lost);
	json_name(w, "losses");
	json_begin_object(w);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		json_member_uint(w, pvprof_loss_name(i), losses[i]);
	json_end_object(w);
}

static void write_agent(struct json_writer *w, const struct pvprof_symbolizer *sym)
{
	struct pvprof_symbolizer_stats st;

	json_name(w, "agent");
	if (!sym) {
		json_null(w);
		return;
	}
	pvprof_symbolizer_stats(sym, &st);
	json_begin_object(w);
	json_member_uint(w, "kernel_syms", st.kernel_syms - st.module_syms);
	json_member_uint(w, "kernel_syms_announced", st.kernel_syms_expected);
	json_member_uint(w, "module_syms", st.module_syms);
	json_member_uint(w, "elf_syms", st.elf_syms);
	json_member_uint(w, "processes", st.processes);
	json_member_uint(w, "mappings", st.mappings);
	json_member_uint(w, "lost_messages", st.agent_lost_messages);
	json_member_uint(w, "lost_bytes", st.agent_lost_bytes);
	json_end_object(w);
}

static void write_user_stacks(struct json_writer *w, const struct report_unwind *ru)
{
	struct report_unwind_stats st;
	uint64_t fp = 0;
	int i;

	json_name(w, "user_stacks");
	if (!ru) {
		json_null(w);
		return;
	}
	report_unwind_stats(ru, &st);
	for (i = 0; i < REPORT_UW_NR; i++)
		fp += st.fallback[i];
	json_begin_object(w);
	json_member_uint(w, "snapshots", st.snapshots);
	json_member_uint(w, "unwound", st.unwound);
	json_member_uint(w, "outermost", st.outermost);
	json_member_uint(w, "frame_pointers", fp);
	json_name(w, "frame_pointers_by_reason");
	json_begin_object(w);
	for (i = 0; i < REPORT_UW_NR; i++) {
		char key[32];
		size_t k;

		/* "no tables" -> "no_tables": keys without spaces. */
		snprintf(key, sizeof(key), "%s", report_uw_fallback_name(i));
		for (k = 0; key[k]; k++)
			if (key[k] == ' ')
				key[k] = '_';
		json_member_uint(w, key, st.fallback[i]);
	}
	json_end_object(w);
	json_end_object(w);
}

static void write_counters(struct json_writer *w, const char *name,
			   const struct recording_status *st)
{
	struct report_host_counters c;

	json_name(w, name);
	if (!st->present) {
		json_null(w);
		return;
	}
	report_host_counters(st, &c);
	json_begin_object(w);
	json_member_uint(w, "samples", c.samples);
	json_member_uint(w, "notices", c.notices);
	/* status -j's key for the callchains the host accepted. */
	json_member_uint(w, "records", c.callchains);
	json_member_uint(w, "nmis", c.nmis);
	json_member_uint(w, "lost", c.lost);
	json_member_uint(w, "sideband_bytes", c.sideband_bytes);
	json_member_uint(w, "sideband_refused", c.sideband_refused);
	json_end_object(w);
}

static void write_filters(struct json_writer *w, const struct report_filter *flt)
{
	json_name(w, "filters");
	json_begin_object(w);
	member_int_or_null(w, "vcpu", flt->vcpu);
	member_int_or_null(w, "pid", flt->pid);
	json_member_string(w, "comm", flt->comm);
	json_member_string(w, "frames", flt->flags & REPORT_F_KERNEL_ONLY ? "kernel" :
			   flt->flags & REPORT_F_USER_ONLY ? "user" : "all");
	json_member_string(w, "time", flt->time ? flt->time->spec : NULL);
	json_end_object(w);
}

/**
 * report_write_json() - the report as one JSON object
 * @f: output
 * @a: what to write
 *
 * Return: 0, or -1 on an output error or out of memory (printed).
 */
int report_write_json(FILE *f, const struct report_json *a)
{
	const struct report_stats *s = &a->p->stats;
	const struct recording *r = a->r;
	struct json_writer w;
	size_t i;

	json_init(&w, f);
	json_begin_object(&w);
	json_member_string(&w, "recording", a->path);
	write_vm(&w, r, s);
	write_recorded(&w, r);
	/* The keys stream_records and unknown_records count stream entries. */
	json_member_uint(&w, "stream_records", s->entries);
	json_member_uint(&w, "stream_bytes", r->stream_bytes);
	json_member_uint(&w, "callchains", s->callchains);
	json_member_uint(&w, "user_mode", s->user_mode);
	json_member_uint(&w, "without_frames", s->empty);
	json_member_uint(&w, "stale", s->stale);
	json_member_uint(&w, "skewed", s->skewed);
	json_member_uint(&w, "skewed_same_function", s->skewed_same_function);
	json_member_uint(&w, "truncated", s->truncated);
	json_member_uint(&w, "truncated_depth_limit", s->trunc_depth);
	json_member_uint(&w, "truncated_walk_ended", s->truncated - s->trunc_depth);
	json_member_uint(&w, "truncated_with_snapshot", s->trunc_snapshot);
	/* Chains are judged only with a resolver that knows the mappings. */
	json_name(&w, "cut_chains");
	if (a->res && a->res->user_code) {
		json_begin_object(&w);
		json_member_uint(&w, "samples", s->cut_samples);
		json_member_uint(&w, "frames", s->cut_frames);
		json_end_object(&w);
	} else {
		json_null(&w);
	}
	write_losses(&w, s->losses);
	json_name(&w, "vcpu_events");
	json_begin_object(&w);
	json_member_uint(&w, "registered", s->vcpu_events[PVPROF_VCPU_REGISTERED]);
	json_member_uint(&w, "unregistered", s->vcpu_events[PVPROF_VCPU_UNREGISTERED]);
	json_member_uint(&w, "dropped", s->vcpu_events[PVPROF_VCPU_DROPPED]);
	json_end_object(&w);
	json_member_uint(&w, "unknown_records", s->unknown);
	json_name(&w, "sideband");
	json_begin_object(&w);
	json_member_uint(&w, "messages", s->sideband);
	json_member_uint(&w, "bytes", s->sideband_bytes);
	json_member_uint(&w, "rejected", s->sideband_rejected);
	json_end_object(&w);
	write_agent(&w, a->sym);
	write_user_stacks(&w, a->res ? a->res->unwind : NULL);
	json_member_uint(&w, "samples", s->samples);
	json_member_uint(&w, "own_nmi_samples", s->own_nmi);
	json_member_uint(&w, "frames", s->frames);
	json_member_uint(&w, "unsymbolized_frames", s->unsymbolized);
	write_filters(&w, a->flt);
	json_name(&w, "host_counters");
	json_begin_object(&w);
	write_counters(&w, "start", &r->start);
	write_counters(&w, "end", &r->end_status);
	json_end_object(&w);
	if (report_table_json(&w, a->table, a->p, a->limit, a->percent_limit))
		return -1;
	json_name(&w, "warnings");
	json_begin_array(&w);
	for (i = 0; i < a->nr_warnings; i++)
		json_string(&w, a->warnings[i]);
	json_end_array(&w);
	json_end_object(&w);
	return json_end_document(&w);
}
