// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report and script: which samples and frames they show.
 *
 * Both commands take the same filters (--vcpu, --pid, --comm, --time,
 * --kernel, --user) and apply them here, so that a sample script prints
 * is a sample report counts.
 *
 * A sample's time is its callchain entry's host_time_ns: host
 * CLOCK_MONOTONIC when the host queued the entry to the stream, at the
 * VM entry after the guest's NMI handler posted it (the stream does not
 * carry the host time of the sample itself, and the callchain's own time_ns
 * is the guest's clock).  --time counts it from the recording's start,
 * the HOST section's start_monotonic_ns, the same clock.  perf's --time
 * takes perf's absolute timestamps instead; its percentages are of the
 * span from the first to the last sample, here of the recording's length.
 *
 * A callchain entry may stand for more than one sample (stream version 2,
 * spec pvprof-own-nmi-samples): report_sample_parts() splits it into its
 * parts, the samples shown with the callchain's stack and those that hit
 * pvprof's own NMI path, shown with REPORT_OWN_NMI_FRAME above it, so that
 * report and script count and show them alike.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main.h"
#include "report_select.h"
#include "report_unwind.h"

#define NSEC_PER_SEC		UINT64_C(1000000000)
/* Percentages are kept in millionths of a percent: 100% is 10^8. */
#define PCT_UNIT		1000000U
#define PCT_WHOLE		(100U * PCT_UNIT)
/* Longer is a typing error, and keeps START * 10^9 far from overflowing. */
#define TIME_MAX_SECONDS	(1000ULL * 1000 * 1000)

/*
 * A decimal number with at most @max_frac digits after the point, scaled
 * by 10^@max_frac, from *@s up to the first byte that is no part of it.
 */
static int parse_decimal(const char **s, unsigned int max_frac, uint64_t max_int,
			 uint64_t *out)
{
	const char *p = *s;
	uint64_t whole = 0, frac = 0;
	unsigned int digits = 0, nr_frac = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > max_int)
			return -1;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nr_frac++) {
			if (nr_frac == max_frac)
				return -1;
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
	}
	if (!digits && !nr_frac)
		return -1;
	for (; nr_frac < max_frac; nr_frac++)
		frac *= 10;
	for (nr_frac = 0; nr_frac < max_frac; nr_frac++)
		whole *= 10;
	*out = whole + frac;
	*s = p;
	return 0;
}

/* "S[.fffffffff]" seconds as ns; the whole of [s, end). */
static int parse_seconds(const char *s, const char *end, uint64_t *ns)
{
	if (parse_decimal(&s, 9, TIME_MAX_SECONDS, ns))
		return -1;
	return s == end ? 0 : -1;
}

/* "P%" with at most 6 decimals, in millionths of a percent; up to @end. */
static int parse_pct(const char *s, const char *end, uint32_t *out)
{
	uint64_t v;

	if (parse_decimal(&s, 6, 100, &v) || s + 1 != end || *s != '%' || v > PCT_WHOLE)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* One of perf's percentage forms: "A%-B%", or "P%/N", the Nth slice of P%. */
static int parse_pct_range(const char *s, const char *end, struct report_time_range *r)
{
	const char *dash = memchr(s, '-', (size_t)(end - s));
	const char *slash = memchr(s, '/', (size_t)(end - s));
	uint32_t size;
	uint64_t n = 0;
	const char *p;

	r->percent = true;
	if (dash && !slash)
		return parse_pct(s, dash, &r->pct_start) || parse_pct(dash + 1, end, &r->pct_end) ||
		       r->pct_start >= r->pct_end ? -1 : 0;
	if (!slash || dash || parse_pct(s, slash, &size) || !size || slash + 1 == end)
		return -1;
	for (p = slash + 1; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > PCT_WHOLE)
			return -1;
	}
	if (!n || n * size > PCT_WHOLE)
		return -1;
	r->pct_start = (uint32_t)((n - 1) * size);
	r->pct_end = (uint32_t)(n * size);
	return 0;
}

/* perf's "START,END" in seconds, either side empty; here from the start. */
static int parse_sec_range(const char *s, const char *end, struct report_time_range *r)
{
	const char *comma = memchr(s, ',', (size_t)(end - s));

	if (!comma)
		return -1;
	r->start = 0;
	r->end = UINT64_MAX;
	if (comma > s && parse_seconds(s, comma, &r->start))
		return -1;
	if (comma + 1 < end && parse_seconds(comma + 1, end, &r->end))
		return -1;
	return r->start <= r->end ? 0 : -1;
}

/**
 * report_time_parse() - the argument of --time
 * @arg: perf's forms: "START,END" in seconds from the recording's start
 *	(either side may be empty; several ranges separated by spaces), or
 *	percentages of the recording's length, "A%-B%" or "P%/N" (the Nth
 *	slice of P%), several separated by commas
 * @t: filled; report_time_resolve() finishes it once the recording is open
 *
 * Return: EXIT_OK, or EXIT_USAGE after saying what is wrong.
 */
int report_time_parse(const char *arg, struct report_time *t)
{
	bool percent = strchr(arg, '%') != NULL;
	char sep = percent ? ',' : ' ';
	const char *s = arg;

	memset(t, 0, sizeof(*t));
	t->spec = arg;
	for (;;) {
		const char *end = strchr(s, sep);
		struct report_time_range *r = &t->range[t->nr];

		if (!end)
			end = s + strlen(s);
		if (end > s) {
			if (t->nr == REPORT_TIME_MAX_RANGES)
				return usage_err("--time: more than %d ranges in '%s'",
						 REPORT_TIME_MAX_RANGES, arg);
			if (percent ? parse_pct_range(s, end, r) : parse_sec_range(s, end, r))
				return usage_err("--time: expected START,END in seconds from the "
						 "recording's start (either may be empty; START "
						 "not after END), or percentages A%%-B%% (A below B) "
						 "or P%%/N, got: '%.*s'", (int)(end - s), s);
			t->nr++;
		}
		if (!*end)
			break;
		s = end + 1;
	}
	if (!t->nr)
		return usage_err("--time: expected START,END or percentages, got: '%s'", arg);
	return EXIT_OK;
}

struct last_time {
	uint64_t ns;
};

static int note_last_time(void *ctx, const struct pvprof_st_view *v, uint64_t off)
{
	struct last_time *lt = ctx;

	(void)off;
	if (v->hdr.host_time_ns > lt->ns)
		lt->ns = v->hdr.host_time_ns;
	return 0;
}

/* x * pct / 100%, rounded to the nearest ns as perf rounds, without overflow. */
static uint64_t pct_of(uint64_t x, uint32_t pct)
{
	return x / PCT_WHOLE * pct + (x % PCT_WHOLE * pct + PCT_WHOLE / 2) / PCT_WHOLE;
}

/**
 * report_time_resolve() - the ranges of --time for one recording
 * @t: parsed by report_time_parse()
 * @r: the recording
 *
 * Percentages are of the recording's length: from its start to its END
 * section, or to its last stream entry when it has none (a cut recording, read
 * once more for that).  As perf does, a percentage range includes its
 * start and excludes its end, but for one that ends at 100%.
 * Return: EXIT_OK, EXIT_USAGE when the recording has no start time (no
 * HOST section), or EXIT_FAILED after a read error (printed).
 */
int report_time_resolve(struct report_time *t, const struct recording *r)
{
	uint64_t length = 0;
	bool need_length = false;
	uint32_t i;

	if (!r->has_host)
		return usage_err("--time: the recording has no HOST section, so no start "
				 "time to count from");
	t->origin_ns = r->host.start_monotonic_ns;
	for (i = 0; i < t->nr; i++)
		need_length |= t->range[i].percent;
	if (!need_length)
		return EXIT_OK;
	if (r->has_end) {
		length = report_time_relative(t->origin_ns, r->end.end_monotonic_ns);
	} else {
		struct last_time lt = { 0 };

		if (recording_for_each(r, note_last_time, &lt))
			return EXIT_FAILED;
		length = report_time_relative(t->origin_ns, lt.ns);
	}
	for (i = 0; i < t->nr; i++) {
		struct report_time_range *rg = &t->range[i];

		if (!rg->percent)
			continue;
		rg->start = pct_of(length, rg->pct_start);
		rg->end = pct_of(length, rg->pct_end);
		if (rg->end > rg->start && rg->pct_end != PCT_WHOLE)
			rg->end--;
	}
	return EXIT_OK;
}

/**
 * report_time_describe() - the windows of --time, for the header
 * @t: resolved by report_time_resolve()
 * @buf: receives "S-E s" for each window, S and E in seconds from the
 *	recording's start ("S s on" for an open end), comma-separated
 * @size: its size
 */
void report_time_describe(const struct report_time *t, char *buf, size_t size)
{
	size_t len = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < t->nr && len < size; i++) {
		const struct report_time_range *r = &t->range[i];

		len += (size_t)snprintf(buf + len, size - len, "%s%" PRIu64 ".%09" PRIu64,
					i ? ", " : "", r->start / NSEC_PER_SEC,
					r->start % NSEC_PER_SEC);
		if (len >= size)
			break;
		if (r->end == UINT64_MAX)
			len += (size_t)snprintf(buf + len, size - len, " s on");
		else
			len += (size_t)snprintf(buf + len, size - len, "-%" PRIu64 ".%09" PRIu64 " s",
						r->end / NSEC_PER_SEC, r->end % NSEC_PER_SEC);
	}
}

/**
 * report_time_relative() - a host time counted from the recording's start
 * @origin_ns: the recording's start
 * @host_time_ns: host CLOCK_MONOTONIC
 *
 * An entry queued in the moment between record opening the stream and
 * noting the start counts as at the start: "from 0" means from the
 * beginning.
 * Return: nanoseconds.
 */
uint64_t report_time_relative(uint64_t origin_ns, uint64_t host_time_ns)
{
	return host_time_ns > origin_ns ? host_time_ns - origin_ns : 0;
}

/**
 * report_time_selected() - whether a time lies in a window of --time
 * @t: resolved by report_time_resolve()
 * @host_time_ns: a stream entry's host time
 *
 * Return: true when it does.
 */
bool report_time_selected(const struct report_time *t, uint64_t host_time_ns)
{
	uint64_t ns = report_time_relative(t->origin_ns, host_time_ns);
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (ns >= t->range[i].start && ns <= t->range[i].end)
			return true;
	return false;
}

/**
 * report_sample_selected() - whether a callchain passes the sample filters
 * @f: the filters
 * @v: the callchain entry
 * @comm: its command name as shown (sample_comm())
 *
 * --kernel and --user select frames, and leave out the samples without
 * any: report_part_shown() applies them.
 * Return: true when it passes.
 */
bool report_sample_selected(const struct report_filter *f,
			    const struct pvprof_st_view *v, const char *comm)
{
	const struct pvprof_callchain *chain = &v->u.callchain.chain;

	if (f->vcpu >= 0 && v->hdr.vcpu_id != (uint64_t)f->vcpu)
		return false;
	if (f->pid >= 0 && chain->pid != (uint64_t)f->pid)
		return false;
	if (f->comm && strcmp(comm, f->comm))
		return false;
	return !f->time || report_time_selected(f->time, v->hdr.host_time_ns);
}

/**
 * report_sample_weight() - the samples a callchain entry stands for
 * @v: the callchain entry
 *
 * Return: 1 + own_nmi_samples (1 for a stream version 1 entry).
 */
uint64_t report_sample_weight(const struct pvprof_st_view *v)
{
	return 1 + (uint64_t)v->u.callchain.own_nmi_samples;
}

/**
 * report_sample_parts() - a callchain entry's samples, by the stack shown
 * @v: the callchain entry
 * @parts: receives the parts, the entry's own sample's first
 *
 * With PVPROF_ST_SAMPLE_F_OWN_NMI every sample of the entry hit pvprof's
 * own NMI path: one part.  Without, its own sample is an ordinary one, and
 * the samples folded into it (own_nmi_samples) are a second part.
 * Return: the number of parts, 1 or 2; their weights add up to
 * report_sample_weight().
 */
uint32_t report_sample_parts(const struct pvprof_st_view *v,
			     struct report_part parts[REPORT_MAX_PARTS])
{
	uint32_t folded = v->u.callchain.own_nmi_samples;

	if (v->u.callchain.sample_flags & PVPROF_ST_SAMPLE_F_OWN_NMI) {
		parts[0] = (struct report_part){ .weight = report_sample_weight(v), .own_nmi = true };
		return 1;
	}
	parts[0] = (struct report_part){ .weight = 1, .own_nmi = false };
	if (!folded)
		return 1;
	parts[1] = (struct report_part){ .weight = folded, .own_nmi = true };
	return 2;
}

/**
 * report_part_shown() - which frames of a part count, and whether it is shown
 * @part: a part of report_sample_parts()
 * @fr: the entry's frames (report_sample_frames())
 * @flags: REPORT_F_*
 * @first: receives the first frame of @fr that counts
 * @end: receives the index after the last
 * @leaf: receives whether REPORT_OWN_NMI_FRAME goes above them, as the
 *	innermost frame
 *
 * --kernel and --user select frames, and leave out the samples without any;
 * REPORT_OWN_NMI_FRAME is a kernel frame (pvprof's NMI path is the guest
 * kernel's), so --user leaves it out and --kernel keeps it.
 * Return: true when the part's samples are shown.
 */
bool report_part_shown(const struct report_part *part, const struct report_frames *fr,
		       uint32_t flags, uint32_t *first, uint32_t *end, bool *leaf)
{
	*first = 0;
	*end = fr->nr;
	if (flags & REPORT_F_KERNEL_ONLY)
		*end = fr->nr_kernel;
	if (flags & REPORT_F_USER_ONLY)
		*first = fr->nr_kernel;
	*leaf = part->own_nmi && !(flags & REPORT_F_USER_ONLY);
	return !(flags & (REPORT_F_KERNEL_ONLY | REPORT_F_USER_ONLY)) || *first < *end || *leaf;
}
