// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report and script: the warnings for filters that left no
 * sample.
 *
 * A report of nothing looks like a profile of an idle guest.  When the
 * filters let no callchain through, a second walk over the recording
 * (only then) finds which filter matched nothing on its own, and what the
 * recording has instead: its vCPUs, its busiest pids and commands, the
 * span of its samples' times.  When each matches something, it is their
 * combination, or --kernel/--user.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "main.h"
#include "profile.h"
#include "report_escape.h"
#include "report_filter.h"
#include "report_resolve.h"
#include "report_select.h"

/* Entries listed per filter; the rest are counted. */
#define WARN_LIST_MAX		8

/* Samples per vCPU, pid or command name, in an open-addressing table. */
struct tally_entry {
	uint64_t key;		/* vCPU or pid */
	char *name;		/* command name, NULL for numeric keys */
	uint64_t count;
};

struct tally {
	struct tally_entry *v;
	size_t size, used;	/* size: a power of two, or 0 */
};

static uint64_t tally_hash(uint64_t key, const char *name)
{
	uint64_t h = hash_bytes(name, name ? strlen(name) : 0, HASH_INIT ^ key);

	return h * 0x9e3779b97f4a7c15ULL;
}

static struct tally_entry *tally_slot(struct tally_entry *v, size_t size, uint64_t key,
				      const char *name)
{
	size_t i = (size_t)(tally_hash(key, name) >> 20) & (size - 1);

	while (v[i].count && (v[i].key != key ||
			      (name && strcmp(v[i].name, name))))
		i = (i + 1) & (size - 1);
	return &v[i];
}

/* Adds @n samples to @key (@name for command names); -1 out of memory. */
static int tally_add(struct tally *t, uint64_t key, const char *name, uint64_t n)
{
	struct tally_entry *e;

	if ((t->used + 1) * 2 > t->size) {
		size_t size = t->size ? t->size * 2 : 64, i;
		struct tally_entry *v = calloc(size, sizeof(*v));

		if (!v)
			return -1;
		for (i = 0; i < t->size; i++)
			if (t->v[i].count)
				*tally_slot(v, size, t->v[i].key, t->v[i].name) = t->v[i];
		free(t->v);
		t->v = v;
		t->size = size;
	}
	e = tally_slot(t->v, t->size, key, name);
	if (!e->count) {
		if (name && !(e->name = strdup(name)))
			return -1;
		e->key = key;
		t->used++;
	}
	e->count += n;
	return 0;
}

static void tally_free(struct tally *t)
{
	size_t i;

	for (i = 0; i < t->size; i++)
		free(t->v[i].name);
	free(t->v);
}

/* The entries in use, packed and sorted by @cmp; NULL out of memory. */
static struct tally_entry *tally_sorted(const struct tally *t,
					int (*cmp)(const void *, const void *))
{
	struct tally_entry *v = malloc((t->used + 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i < t->size; i++)
		if (t->v[i].count)
			v[n++] = t->v[i];
	qsort(v, n, sizeof(*v), cmp);
	return v;
}

static int by_key(const void *a, const void *b)
{
	const struct tally_entry *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/* Most samples first; ties by key, then by name, for a stable message. */
static int by_count(const void *a, const void *b)
{
	const struct tally_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->name && y->name ? strcmp(x->name, y->name) : 0;
}

struct filter_walk {
	const struct report_filter *flt;
	const struct report_resolver *res;
	struct tally vcpus, pids, comms;
	uint64_t vcpu_hits, pid_hits, comm_hits, time_hits, all_hits;
	uint64_t seen, first_ns, last_ns;	/* samples, their times from the start */
	int error;
};

static int walk_entry(void *opaque, const struct pvprof_st_view *v, uint64_t off)
{
	struct filter_walk *w = opaque;
	const struct pvprof_callchain *chain = &v->u.callchain.chain;
	const struct report_filter *f = w->flt;
	char comm_buf[16];
	const char *comm;
	bool vcpu_ok, pid_ok, comm_ok, time_ok;
	uint64_t ns, n;

	(void)off;
	if (v->hdr.type != PVPROF_ST_CALLCHAIN)
		return 0;
	/* The names the resolver ends with: after a whole walk of the sideband. */
	comm = sample_comm(w->res, chain->pid, chain->exec_gen, comm_buf, sizeof(comm_buf));
	vcpu_ok = f->vcpu < 0 || v->hdr.vcpu_id == (uint64_t)f->vcpu;
	pid_ok = f->pid < 0 || chain->pid == (uint64_t)f->pid;
	comm_ok = !f->comm || !strcmp(comm, f->comm);
	time_ok = !f->time || report_time_selected(f->time, v->hdr.host_time_ns);
	/* An entry stands for 1 + own_nmi_samples samples. */
	n = report_sample_weight(v);
	w->vcpu_hits += vcpu_ok ? n : 0;
	w->pid_hits += pid_ok ? n : 0;
	w->comm_hits += comm_ok ? n : 0;
	w->time_hits += time_ok ? n : 0;
	w->all_hits += vcpu_ok && pid_ok && comm_ok && time_ok ? n : 0;
	if (f->time) {
		ns = report_time_relative(f->time->origin_ns, v->hdr.host_time_ns);
		if (!w->seen++ || ns < w->first_ns)
			w->first_ns = ns;
		if (ns > w->last_ns)
			w->last_ns = ns;
	}
	if (tally_add(&w->vcpus, v->hdr.vcpu_id, NULL, n) ||
	    tally_add(&w->pids, chain->pid, NULL, n) ||
	    tally_add(&w->comms, 0, comm, n)) {
		w->error = 1;
		return -1;
	}
	return 0;
}

/* "0-3, 5": the vCPUs with samples, as ranges. */
static int list_vcpus(FILE *m, const struct tally *t)
{
	struct tally_entry *v = tally_sorted(t, by_key);
	size_t i, j;

	if (!v)
		return -1;
	for (i = 0; i < t->used; i = j + 1) {
		for (j = i; j + 1 < t->used && v[j + 1].key == v[j].key + 1; j++)
			;
		fprintf(m, "%s%" PRIu64, i ? ", " : "", v[i].key);
		if (j > i)
			fprintf(m, "-%" PRIu64, v[j].key);
	}
	free(v);
	return 0;
}

/* "100 (8), 0 (1), ... and N more": the busiest pids or commands. */
static int list_busiest(FILE *m, const struct tally *t)
{
	struct tally_entry *v = tally_sorted(t, by_count);
	char esc[REPORT_ESC_SIZE];
	size_t i;

	if (!v)
		return -1;
	for (i = 0; i < t->used && i < WARN_LIST_MAX; i++) {
		fprintf(m, "%s", i ? ", " : "");
		if (v[i].name)
			fprintf(m, "%s", esc_text(v[i].name, esc));
		else
			fprintf(m, "%" PRIu64, v[i].key);
		fprintf(m, " (%" PRIu64 ")", v[i].count);
	}
	if (t->used > WARN_LIST_MAX)
		fprintf(m, " and %zu more", t->used - WARN_LIST_MAX);
	free(v);
	return 0;
}

/* The sample filters given, as on the command line: "--vcpu 1 --pid 100". */
static void describe_filters(FILE *m, const struct report_filter *f)
{
	char esc[REPORT_ESC_SIZE];
	const char *sep = "";

	if (f->vcpu >= 0) {
		fprintf(m, "--vcpu %" PRId64, f->vcpu);
		sep = " ";
	}
	if (f->pid >= 0) {
		fprintf(m, "%s--pid %" PRId64, sep, f->pid);
		sep = " ";
	}
	if (f->comm) {
		fprintf(m, "%s--comm %s", sep, esc_text(f->comm, esc));
		sep = " ";
	}
	if (f->time)
		fprintf(m, "%s--time %s", sep, esc_text(f->time->spec, esc));
}

struct warnings {
	char **v;
	int nr;
	FILE *m;	/* the message being written, NULL between messages */
	char *buf;
	size_t len;
};

static int warning_begin(struct warnings *w)
{
	w->m = open_memstream(&w->buf, &w->len);
	return w->m ? 0 : -1;
}

static int warning_end(struct warnings *w)
{
	char **v;
	int ret = fclose(w->m);

	w->m = NULL;
	v = ret ? NULL : realloc(w->v, (w->nr + 1) * sizeof(*v));
	if (!v) {
		free(w->buf);
		return -1;
	}
	w->v = v;
	w->v[w->nr++] = w->buf;
	return 0;
}

/* After a failure: the message being written, and all the others. */
static void warnings_drop(struct warnings *w)
{
	if (w->m) {
		fclose(w->m);
		free(w->buf);
	}
	report_filter_warnings_free(w->v, w->nr);
}

static int compose(struct warnings *out, const struct filter_walk *w,
		   const struct report_filter *f, const struct report_stats *st)
{
	char esc[REPORT_ESC_SIZE];
	bool alone = false;

	if (f->vcpu >= 0 && !w->vcpu_hits) {
		if (warning_begin(out))
			return -1;
		fprintf(out->m, "--vcpu %" PRId64 " matches no sample; the recording has"
			" samples of vCPU%s ", f->vcpu, w->vcpus.used > 1 ? "s" : "");
		if (list_vcpus(out->m, &w->vcpus))
			return -1;
		fprintf(out->m, " (the VM has %u)", st->nr_vcpus);
		if (warning_end(out))
			return -1;
		alone = true;
	}
	if (f->pid >= 0 && !w->pid_hits) {
		if (warning_begin(out))
			return -1;
		fprintf(out->m, "--pid %" PRId64 " matches no sample; the pids with the most"
			" samples: ", f->pid);
		if (list_busiest(out->m, &w->pids) || warning_end(out))
			return -1;
		alone = true;
	}
	if (f->comm && !w->comm_hits) {
		if (warning_begin(out))
			return -1;
		fprintf(out->m, "--comm %s matches no sample; the commands with the most"
			" samples: ", esc_text(f->comm, esc));
		if (list_busiest(out->m, &w->comms) || warning_end(out))
			return -1;
		alone = true;
	}
	if (f->time && !w->time_hits) {
		char when[REPORT_TIME_MAX_RANGES * 48];

		if (warning_begin(out))
			return -1;
		report_time_describe(f->time, when, sizeof(when));
		fprintf(out->m, "--time %s (%s from the recording's start) matches no sample;"
			" its samples are from %" PRIu64 ".%09" PRIu64 " to %" PRIu64 ".%09"
			PRIu64 " s", esc_text(f->time->spec, esc), when,
			w->first_ns / UINT64_C(1000000000), w->first_ns % UINT64_C(1000000000),
			w->last_ns / UINT64_C(1000000000), w->last_ns % UINT64_C(1000000000));
		if (warning_end(out))
			return -1;
		alone = true;
	}
	/*
	 * This walk names processes by the resolver's final state, the build
	 * by its state at each sample: should they differ, nothing is sure.
	 */
	if (alone || (w->all_hits && !(f->flags & (REPORT_F_KERNEL_ONLY | REPORT_F_USER_ONLY))))
		return 0;
	if (warning_begin(out))
		return -1;
	if (!w->all_hits) {
		const char *sep = "";

		fprintf(out->m, "no sample matches ");
		describe_filters(out->m, f);
		fprintf(out->m, " together; alone,");
		if (f->vcpu >= 0) {
			fprintf(out->m, " --vcpu %" PRId64 " matches %" PRIu64, f->vcpu,
				w->vcpu_hits);
			sep = ",";
		}
		if (f->pid >= 0) {
			fprintf(out->m, "%s --pid %" PRId64 " matches %" PRIu64, sep, f->pid,
				w->pid_hits);
			sep = ",";
		}
		if (f->comm) {
			fprintf(out->m, "%s --comm %s matches %" PRIu64, sep,
				esc_text(f->comm, esc), w->comm_hits);
			sep = ",";
		}
		if (f->time)
			fprintf(out->m, "%s --time %s matches %" PRIu64, sep,
				esc_text(f->time->spec, esc), w->time_hits);
	} else {
		fprintf(out->m, "%s leaves no sample: none of the %" PRIu64 " sample%s",
			f->flags & REPORT_F_KERNEL_ONLY ? "--kernel" : "--user", w->all_hits,
			w->all_hits > 1 ? "s" : "");
		if (f->vcpu >= 0 || f->pid >= 0 || f->comm || f->time) {
			fprintf(out->m, " of ");
			describe_filters(out->m, f);
		}
		fprintf(out->m, " has %s frames",
			f->flags & REPORT_F_KERNEL_ONLY ? "kernel" : "user");
	}
	return warning_end(out);
}

/**
 * report_filter_warnings() - say which filter left the report empty
 * @r: the recording
 * @st: the totals of its profile (or of script's walk), built with @f and @res
 * @f: the filters
 * @res: the resolver, or NULL
 * @out: set to the messages (free with report_filter_warnings_free()),
 *	NULL when there are none
 *
 * Nothing is said when a sample passed, no filter was given, or the
 * recording has no callchain at all (the header says so).  Messages are
 * ASCII: guest strings in them are escaped as in the text report.
 * Return: the number of messages, or -1 out of memory (printed).
 */
int report_filter_warnings(const struct recording *r, const struct report_stats *st,
			   const struct report_filter *f,
			   const struct report_resolver *res, char ***out)
{
	struct filter_walk w = { .flt = f, .res = res };
	struct warnings msgs = { 0 };
	int ret = 0;

	*out = NULL;
	if (st->samples || !st->callchains ||
	    (f->vcpu < 0 && f->pid < 0 && !f->comm && !f->flags && !f->time))
		return 0;
	if (recording_for_each(r, walk_entry, &w) || w.error ||
	    compose(&msgs, &w, f, st)) {
		p_err("out of memory describing the filters");
		warnings_drop(&msgs);
		ret = -1;
	} else {
		*out = msgs.v;
		ret = msgs.nr;
	}
	tally_free(&w.vcpus);
	tally_free(&w.pids);
	tally_free(&w.comms);
	return ret;
}

void report_filter_warnings_free(char **v, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		free(v[i]);
	free(v);
}
