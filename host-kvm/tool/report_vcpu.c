// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report --per-vcpu: samples and losses per vCPU.
 *
 * A vCPU that loses samples (its ring full, throttled, NMIs coalesced)
 * is under-represented in the profile without a word; the header only
 * sums the losses.  This table puts each vCPU's samples shown next to the
 * callchain and LOSS entries the recording holds for it.  The samples go
 * through every filter; the recording's columns through --vcpu and --time
 * only, since losses have no process or frames.  Losses the host did not
 * count against one vCPU (vcpu_id ~0) get a row of their own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "main.h"
#include "profile.h"
#include "report_select.h"
#include "report_vcpu.h"

#define VCPU_NONE	UINT32_MAX

struct vcpu_counts {
	uint32_t id;
	bool used;
	uint64_t shown, callchains, lost;
	uint64_t losses[PVPROF_LOSS_NR];
};

struct report_vcpus {
	struct vcpu_counts *v;
	uint32_t size, used;		/* size: a power of two, or 0 */
	struct profile_sink sink;
	const struct profile_sink *next;
	const struct report_filter *flt;	/* for the recording walk */
	int error;
};

struct report_vcpus *report_vcpus_new(void)
{
	struct report_vcpus *vc = calloc(1, sizeof(*vc));

	if (!vc)
		p_err("out of memory for the per-vCPU table");
	return vc;
}

void report_vcpus_free(struct report_vcpus *vc)
{
	if (!vc)
		return;
	free(vc->v);
	free(vc);
}

static struct vcpu_counts *slot_of(struct vcpu_counts *v, uint32_t size, uint32_t id)
{
	uint32_t i = (uint32_t)((id * 0x9e3779b97f4a7c15ULL) >> 32) & (size - 1);

	while (v[i].used && v[i].id != id)
		i = (i + 1) & (size - 1);
	return &v[i];
}

/* The counts of vCPU @id, added when missing; NULL out of memory. */
static struct vcpu_counts *vcpu_get(struct report_vcpus *vc, uint32_t id)
{
	struct vcpu_counts *e;

	if ((vc->used + 1) * 2 > vc->size) {
		uint32_t size = vc->size ? vc->size * 2 : 64, i;
		struct vcpu_counts *v = calloc(size, sizeof(*v));

		if (!v)
			return NULL;
		for (i = 0; i < vc->size; i++)
			if (vc->v[i].used)
				*slot_of(v, size, vc->v[i].id) = vc->v[i];
		free(vc->v);
		vc->v = v;
		vc->size = size;
	}
	e = slot_of(vc->v, vc->size, id);
	if (!e->used) {
		e->used = true;
		e->id = id;
		vc->used++;
	}
	return e;
}

static int vcpus_sample(void *ctx, const struct profile *p, const struct profile_sample *s)
{
	struct report_vcpus *vc = ctx;
	struct vcpu_counts *e = vcpu_get(vc, s->v->hdr.vcpu_id);

	if (!e)
		return -1;
	e->shown += s->weight;
	return vc->next ? vc->next->sample(vc->next->ctx, p, s) : 0;
}

/**
 * report_vcpus_sink() - the sink that counts the samples shown per vCPU
 * @vc: the counts
 * @next: a sink to hand each sample on to, or NULL
 *
 * Return: the sink, valid as long as @vc.
 */
const struct profile_sink *report_vcpus_sink(struct report_vcpus *vc,
					     const struct profile_sink *next)
{
	vc->sink.sample = vcpus_sample;
	vc->sink.ctx = vc;
	vc->next = next;
	return &vc->sink;
}

static int count_entry(void *ctx, const struct pvprof_st_view *v, uint64_t off)
{
	struct report_vcpus *vc = ctx;
	const struct report_filter *flt = vc->flt;
	struct vcpu_counts *e;

	(void)off;
	/* Every vCPU the stream began with has a row, one without samples too. */
	if (v->hdr.type == PVPROF_ST_HELLO) {
		uint32_t i, nr = v->u.hello.nr_vcpus;

		for (i = 0; i < nr && i < PVPROF_DATA_MAX_VCPUS; i++) {
			if (flt->vcpu >= 0 && i != (uint64_t)flt->vcpu)
				continue;
			if (!vcpu_get(vc, i)) {
				vc->error = 1;
				return 1;
			}
		}
		return 0;
	}
	if (v->hdr.type != PVPROF_ST_CALLCHAIN && v->hdr.type != PVPROF_ST_LOSS)
		return 0;
	if ((flt->vcpu >= 0 && v->hdr.vcpu_id != (uint64_t)flt->vcpu &&
	     v->hdr.vcpu_id != VCPU_NONE) ||
	    (flt->time && !report_time_selected(flt->time, v->hdr.host_time_ns)))
		return 0;
	e = vcpu_get(vc, v->hdr.vcpu_id);
	if (!e) {
		vc->error = 1;
		return 1;
	}
	if (v->hdr.type == PVPROF_ST_CALLCHAIN) {
		e->callchains++;
		return 0;
	}
	e->losses[v->u.loss.reason] += v->u.loss.count;
	e->lost += v->u.loss.count;
	return 0;
}

static int vcpu_cmp(const void *a, const void *b)
{
	const struct vcpu_counts *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static void write_vcpu(FILE *f, const struct vcpu_counts *e, uint64_t samples)
{
	const char *sep = "  ";
	uint32_t i;

	if (e->id == VCPU_NONE)
		fprintf(f, "%7s %9s %8s", "none", "-", "-");
	else
		fprintf(f, "%7u %9" PRIu64 " %7.2f%%", e->id, e->shown,
			samples ? 100.0 * (double)e->shown / (double)samples : 0.0);
	fprintf(f, " %11" PRIu64 " %9" PRIu64, e->callchains, e->lost);
	for (i = 0; i < PVPROF_LOSS_NR; i++) {
		if (!e->losses[i])
			continue;
		fprintf(f, "%s%s %" PRIu64, sep, pvprof_loss_name(i), e->losses[i]);
		sep = ", ";
	}
	fputc('\n', f);
}

/**
 * report_write_per_vcpu() - the per-vCPU table
 * @f: output
 * @vc: filled by its sink while @p was built
 * @r: the recording, read once more for its callchains and losses
 * @p: the profile
 * @flt: the filters in force
 *
 * Return: 0, -1 on an output error or out of memory, -2 after a read
 * error of the recording (printed).
 */
int report_write_per_vcpu(FILE *f, struct report_vcpus *vc, const struct recording *r,
			  const struct profile *p, const struct report_filter *flt)
{
	struct vcpu_counts *sorted;
	uint32_t i, n = 0;

	vc->flt = flt;
	if (recording_for_each(r, count_entry, vc) < 0 && !vc->error)
		return -2;
	if (vc->error) {
		p_err("out of memory for the per-vCPU table");
		return -1;
	}
	sorted = malloc((vc->used + 1) * sizeof(*sorted));
	if (!sorted) {
		p_err("out of memory for the per-vCPU table");
		return -1;
	}
	for (i = 0; i < vc->size; i++)
		if (vc->v[i].used)
			sorted[n++] = vc->v[i];
	qsort(sorted, n, sizeof(*sorted), vcpu_cmp);
	fprintf(f, "#\n# per vCPU: the samples shown, and the recording's callchains and losses\n"
		"#\n");
	fprintf(f, "#  vCPU   Samples   Share%%  Callchains    Losses  Losses by reason\n");
	for (i = 0; i < n; i++)
		write_vcpu(f, &sorted[i], p->stats.samples);
	free(sorted);
	return ferror(f) ? -1 : 0;
}
