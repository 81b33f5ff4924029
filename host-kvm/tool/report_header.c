// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report: the totals every report starts with, and the host's
 * counters of a recording's STATUS sections (kvm-pvprof-report(8), HEADER).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/host.h"
#include "main.h"
#include "profile.h"
#include "recording.h"
#include "report_escape.h"
#include "report_hdr.h"
#include "report_header.h"
#include "report_resolve.h"
#include "report_select.h"
#include "report_unwind.h"

/* A NUL-padded string field of the file, which may lack its NUL. */
static const char *field_str(const char *field, size_t size, char *buf)
{
	memcpy(buf, field, size);
	buf[size] = '\0';
	return buf;
}

/* "cpu-clock at 1000 Hz", "cycles every 100000 events". */
static void write_config(char *buf, size_t size, const struct pvprof_data_vm *vm)
{
	const char *ev = event_name(vm->event);
	int n;

	if (ev)
		n = snprintf(buf, size, "%s", ev);
	else
		n = snprintf(buf, size, "event %u", vm->event);
	if (n < 0 || (size_t)n >= size)
		return;
	if (vm->sample_freq)
		snprintf(buf + n, size - n, " at %" PRIu64 " Hz", vm->sample_freq);
	else
		snprintf(buf + n, size - n, " every %" PRIu64 " %s", vm->sample_period,
			 vm->event == PVPROF_EVENT_CPU_CLOCK ? "ns" : "events");
}

/**
 * report_host_counters() - the VM's counters in a STATUS section, summed
 * @st: the section
 * @c: filled: the vCPUs' counters added up, the VM's losses and sideband
 */
void report_host_counters(const struct recording_status *st,
			  struct report_host_counters *c)
{
	struct pvprof_vcpu_status v;
	uint32_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < st->hdr.nr_vcpus; i++) {
		recording_vcpu(st, i, &v);
		c->samples += v.samples;
		c->notices += v.notices;
		c->callchains += v.callchains;
		c->nmis += v.nmis;
	}
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		c->lost += st->hdr.ctl.losses[i];
	c->sideband_bytes = st->hdr.ctl.sideband_bytes;
	c->sideband_refused = st->hdr.ctl.sideband_refused;
}

static void write_host_counters(FILE *f, const char *when, const struct recording_status *st)
{
	struct report_host_counters c;
	struct report_hdr h;

	report_host_counters(st, &c);
	report_hdr_begin(&h, f, "host counters at %s:", when);
	report_hdr_item(&h, "samples %" PRIu64, c.samples);
	report_hdr_item(&h, "notices %" PRIu64, c.notices);
	report_hdr_item(&h, "callchains %" PRIu64, c.callchains);
	report_hdr_item(&h, "NMIs %" PRIu64, c.nmis);
	report_hdr_item(&h, "losses %" PRIu64, c.lost);
	report_hdr_item(&h, "sideband bytes %" PRIu64, c.sideband_bytes);
	report_hdr_item(&h, "refused %" PRIu64, c.sideband_refused);
	report_hdr_end(&h);
}

/**
 * report_write_header() - the totals every report starts with
 * @f: output
 * @path: the recording's name
 * @r: the recording
 * @p: its profile
 * @flt: the filters in force
 * @res: the resolver used, or NULL
 *
 * Return: 0, or -1 on an output error.
 */
int report_write_header(FILE *f, const char *path, const struct recording *r,
			const struct profile *p, const struct report_filter *flt,
			const struct report_resolver *res)
{
	const struct report_stats *s = &p->stats;
	char buf[320], esc[REPORT_ESC_SIZE];
	struct report_hdr h;
	uint64_t lost = 0;
	time_t t;
	struct tm tm;
	int i;

	fprintf(f, "# pvprof report of %s\n", esc_text(path, esc));
	fprintf(f, "# host: %s", esc_text(field_str(r->host.hostname,
						   sizeof(r->host.hostname), buf), esc));
	fprintf(f, " (Linux %s", esc_text(field_str(r->host.release,
						    sizeof(r->host.release), buf), esc));
	fprintf(f, " %s)", esc_text(field_str(r->host.machine,
					      sizeof(r->host.machine), buf), esc));
	fprintf(f, ", kvm-pvprof %s\n", esc_text(field_str(r->host.tool_version,
						     sizeof(r->host.tool_version), buf), esc));
	report_hdr_begin(&h, f, "VM: pid %u fd %d (%s)", r->vm.vmm_pid, r->vm.vmm_fd,
			 esc_text(field_str(r->vm.comm, sizeof(r->vm.comm), buf), esc));
	if (r->vm.domain[0])
		report_hdr_item(&h, "domain %s", esc_text(field_str(r->vm.domain,
							sizeof(r->vm.domain), buf), esc));
	else
		report_hdr_sep(&h, ", ");
	report_hdr_item(&h, "%u vCPU%s", s->nr_vcpus, s->nr_vcpus == 1 ? "" : "s");
	write_config(buf, sizeof(buf), &r->vm);
	report_hdr_item(&h, "%s", buf);
	report_hdr_item(&h, "%s", r->vm.flags & PVPROF_DATA_VM_F_ENABLED_BY_US ?
			"enabled by record" : "enabled before record");
	report_hdr_end(&h);
	t = (time_t)(r->host.start_realtime_ns / 1000000000ULL);
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, "# recorded: %s", buf);
	if (r->has_end)
		fprintf(f, ", %.2f s, stopped: %s\n",
			(double)(r->end.end_monotonic_ns - r->host.start_monotonic_ns) / 1e9,
			recording_stop_name(r->end.stop_reason));
	else
		fprintf(f, "; WARNING: the recording was not closed cleanly (no END section)\n");
	report_hdr_begin(&h, f, "stream entries: %" PRIu64 " (%" PRIu64 " bytes),",
			 s->entries, r->stream_bytes);
	report_hdr_item(&h, "callchains: %" PRIu64 " (%" PRIu64 " in user mode, %" PRIu64
			" without frames)", s->callchains, s->user_mode, s->empty);
	report_hdr_end(&h);
	/* A bare "truncated: N" read as an error: each flag says what it means. */
	fprintf(f, "# stale: %" PRIu64 " (samples the guest answered without a stack)\n",
		s->stale);
	report_hdr_begin(&h, f, "skewed: %" PRIu64 " (stacks taken after the sampled instruction"
			 " had moved on;", s->skewed);
	report_hdr_item(&h, "%" PRIu64 " within the same function)", s->skewed_same_function);
	report_hdr_end(&h);
	report_hdr_begin(&h, f, "truncated: %" PRIu64 " (stacks that end before their"
			 " outermost caller):", s->truncated);
	report_hdr_item(&h, "at the depth limit %" PRIu64, s->trunc_depth);
	report_hdr_item(&h, "where the frame-pointer walk ended %" PRIu64,
			s->truncated - s->trunc_depth);
	report_hdr_end(&h);
	if (s->trunc_snapshot)
		fprintf(f, "#   of them with a user stack snapshot, unwound below: %" PRIu64 "\n",
			s->trunc_snapshot);
	if (res && res->user_code) {
		report_hdr_begin(&h, f, "frame-pointer chains cut at a return address outside"
				 " the image's code:");
		report_hdr_item(&h, "%" PRIu64 " (%" PRIu64 " frames)", s->cut_samples,
				s->cut_frames);
		report_hdr_end(&h);
	}
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		lost += s->losses[i];
	report_hdr_begin(&h, f, "losses: %" PRIu64 " (samples that left no callchain),"
			 " by reason:", lost);
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		report_hdr_item(&h, "%s %" PRIu64, pvprof_loss_name(i), s->losses[i]);
	report_hdr_end(&h);
	report_hdr_begin(&h, f, "vCPU events:");
	report_hdr_item(&h, "registered %" PRIu64, s->vcpu_events[PVPROF_VCPU_REGISTERED]);
	report_hdr_item(&h, "unregistered %" PRIu64, s->vcpu_events[PVPROF_VCPU_UNREGISTERED]);
	report_hdr_item(&h, "dropped %" PRIu64, s->vcpu_events[PVPROF_VCPU_DROPPED]);
	report_hdr_sep(&h, "; ");
	report_hdr_item(&h, "unknown entries skipped: %" PRIu64, s->unknown);
	report_hdr_end(&h);
	fprintf(f, "# sideband: %" PRIu64 " messages (%" PRIu64 " bytes), %" PRIu64
		" rejected as malformed\n", s->sideband, s->sideband_bytes,
		s->sideband_rejected);
	if (res && res->describe)
		res->describe(res->ctx, f);
	if (res && res->unwind)
		report_unwind_describe(res->unwind, f);
	fprintf(f, "# samples shown: %" PRIu64 ", frames: %" PRIu64
		", unsymbolized frames: %" PRIu64 "\n", s->samples, s->frames,
		s->unsymbolized);
	/* Only for a recording with such samples: others are shown as before. */
	if (s->own_nmi_recorded) {
		report_hdr_begin(&h, f, "pvprof overhead: %" PRIu64 " samples (%.2f%% of the samples"
				 " shown)", s->own_nmi,
				 s->samples ? 100.0 * (double)s->own_nmi / (double)s->samples : 0.0);
		report_hdr_sep(&h, " ");
		report_hdr_item(&h, "taken inside pvprof's own NMI path:");
		report_hdr_sep(&h, " ");
		report_hdr_item(&h, "shown as " REPORT_OWN_NMI_FRAME);
		report_hdr_sep(&h, " ");
		report_hdr_item(&h, "above the stack it interrupted,");
		report_hdr_sep(&h, " ");
		report_hdr_item(&h, "never counted as skewed");
		report_hdr_end(&h);
	}
	if (flt->vcpu >= 0 || flt->pid >= 0 || flt->comm || flt->flags || flt->time) {
		report_hdr_begin(&h, f, "filters:");
		if (flt->vcpu >= 0)
			report_hdr_item(&h, "vcpu %" PRId64, flt->vcpu);
		report_hdr_sep(&h, " ");
		if (flt->pid >= 0)
			report_hdr_item(&h, "pid %" PRId64, flt->pid);
		report_hdr_sep(&h, " ");
		if (flt->comm)
			report_hdr_item(&h, "comm %s", esc_text(flt->comm, esc));
		report_hdr_sep(&h, " ");
		if (flt->flags & REPORT_F_KERNEL_ONLY)
			report_hdr_item(&h, "kernel frames only");
		report_hdr_sep(&h, " ");
		if (flt->flags & REPORT_F_USER_ONLY)
			report_hdr_item(&h, "user frames only");
		report_hdr_sep(&h, " ");
		if (flt->time) {
			char when[REPORT_TIME_MAX_RANGES * 48];

			report_time_describe(flt->time, when, sizeof(when));
			report_hdr_item(&h, "time %s", when);
		}
		report_hdr_end(&h);
	}
	if (r->start.present)
		write_host_counters(f, "start", &r->start);
	if (r->end_status.present)
		write_host_counters(f, "end", &r->end_status);
	if (r->start.present && r->end_status.present) {
		struct report_host_counters start, end;

		report_host_counters(&r->start, &start);
		report_host_counters(&r->end_status, &end);
		report_hdr_begin(&h, f, "while recording, the host accepted %" PRIu64
				 " callchains and counted %" PRIu64 " losses;",
				 end.callchains - start.callchains, end.lost - start.lost);
		report_hdr_item(&h, "the stream carried %" PRIu64 " callchains and %" PRIu64
				" losses", s->callchains, lost);
		report_hdr_item(&h, "%" PRIu64 " of them stream overflows",
				s->losses[PVPROF_LOSS_STREAM_OVERFLOW]);
		report_hdr_end(&h);
	}
	return ferror(f) ? -1 : 0;
}
