// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report's top table: --sort and --percent-limit, as perf
 * report has them.
 *
 * Every key is one entry of sort_keys[].  Grouping keys (comm, pid, tid,
 * vcpu, dso, sym) say what a row is: the samples that share their values.
 * Count keys (self, total; perf's overhead and overhead_children) order
 * the rows.  A row's self is the samples whose innermost frame has its
 * values, its total the samples with a frame that has them (once per
 * sample); for a row of per-sample keys only, both are its samples.
 * Rows are compared key by key in the order given; as perf puts its
 * overhead first, self comes first when no count is given, and the other
 * count follows the last one given.  No grouping key means sym, the table
 * report has always printed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "json.h"
#include "main.h"
#include "profile.h"
#include "report_escape.h"
#include "report_sort.h"

/* Column padding stops here: one long name does not push every row. */
#define COLUMN_WIDTH_MAX	40

/**
 * struct row_key - the values a row groups samples by
 * @comm: command name, interned by the profile
 * @dso: a frame's DSO, interned, NULL when unknown
 * @pid: guest pid
 * @tid: guest tid
 * @vcpu: vCPU
 * @func: a frame's function, an index into profile.funcs plus 1
 *
 * The values of keys not in the table are 0, so that they do not split rows.
 */
struct row_key {
	const char *comm;
	const char *dso;
	uint32_t pid, tid, vcpu;
	uint32_t func;
};

/* Hashed by word (hash_words()), compared whole: no padding in it. */
_Static_assert(sizeof(struct row_key) == 2 * sizeof(const char *) + 4 * sizeof(uint32_t) &&
	       sizeof(struct row_key) % 8 == 0, "struct row_key has no padding");

struct row {
	struct row_key k;
	uint64_t self, total;
	uint64_t last_sample;	/* the last sample counted in @total */
};

struct report_table {
	struct report_sort_spec spec;
	uint32_t keys;			/* (1 << REPORT_KEY_*) of the columns */
	struct row *rows;
	uint32_t nr_rows, cap_rows;
	uint32_t *index;		/* hash of the key -> rows + 1 */
	uint32_t index_size;		/* a power of two */
	uint64_t samples;		/* parts seen, the current one's number */
	struct profile_sink sink;
	const struct profile_sink *next;
};

/* What a row shows of one key, unescaped; a number into @buf. */
typedef const char *(*key_text_fn)(const struct row *r, const struct profile *p,
				   char *buf, size_t size);
typedef int (*key_cmp_fn)(const struct row *a, const struct row *b,
			  const struct profile *p);

/**
 * struct sort_key - one key of --sort
 * @name: as given
 * @alias: perf's name for it, or NULL
 * @title: its column heading
 * @noun: what its rows are, for the table's title
 * @per_frame: its value is a frame's (dso, sym), else the sample's
 * @numeric: its column is aligned right
 * @text: its column
 * @cmp: its order
 */
struct sort_key {
	const char *name, *alias;
	const char *title, *noun;
	bool per_frame, numeric;
	key_text_fn text;
	key_cmp_fn cmp;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a == b ? 0 : a < b ? 1 : -1;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_self(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_u64_desc(a->self, b->self);
}

static int cmp_total(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_u64_desc(a->total, b->total);
}

static int cmp_comm(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_str(a->k.comm, b->k.comm);
}

static int cmp_pid(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_u32(a->k.pid, b->k.pid);
}

static int cmp_tid(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_u32(a->k.tid, b->k.tid);
}

static int cmp_vcpu(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_u32(a->k.vcpu, b->k.vcpu);
}

static int cmp_dso(const struct row *a, const struct row *b, const struct profile *p)
{
	(void)p;
	return cmp_str(a->k.dso, b->k.dso);
}

/* By name, then kernel before user, then DSO: as report always did. */
static int cmp_sym(const struct row *a, const struct row *b, const struct profile *p)
{
	const struct profile_func *x = &p->funcs[a->k.func - 1];
	const struct profile_func *y = &p->funcs[b->k.func - 1];
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return cmp_str(x->dso, y->dso);
}

static const char *text_comm(const struct row *r, const struct profile *p, char *buf,
			     size_t size)
{
	(void)p;
	(void)buf;
	(void)size;
	return r->k.comm;
}

static const char *text_u32(uint32_t v, char *buf, size_t size)
{
	snprintf(buf, size, "%u", v);
	return buf;
}

static const char *text_pid(const struct row *r, const struct profile *p, char *buf,
			    size_t size)
{
	(void)p;
	return text_u32(r->k.pid, buf, size);
}

static const char *text_tid(const struct row *r, const struct profile *p, char *buf,
			    size_t size)
{
	(void)p;
	return text_u32(r->k.tid, buf, size);
}

static const char *text_vcpu(const struct row *r, const struct profile *p, char *buf,
			     size_t size)
{
	(void)p;
	return text_u32(r->k.vcpu, buf, size);
}

static const char *text_dso(const struct row *r, const struct profile *p, char *buf,
			    size_t size)
{
	(void)p;
	(void)buf;
	(void)size;
	return r->k.dso ? r->k.dso : "[unknown]";
}

/* The function alone; write_row() adds its mode, and its DSO when needed. */
static const char *text_sym(const struct row *r, const struct profile *p, char *buf,
			    size_t size)
{
	(void)buf;
	(void)size;
	return p->funcs[r->k.func - 1].name;
}

static const struct sort_key sort_keys[REPORT_KEY_NR] = {
	[REPORT_KEY_SELF] = { "self", "overhead", NULL, NULL, false, false, NULL, cmp_self },
	[REPORT_KEY_TOTAL] = { "total", "overhead_children", NULL, NULL, false, false, NULL,
			       cmp_total },
	[REPORT_KEY_COMM] = { "comm", NULL, "Command", "commands", false, false, text_comm,
			      cmp_comm },
	[REPORT_KEY_PID] = { "pid", NULL, "Pid", "processes", false, true, text_pid, cmp_pid },
	[REPORT_KEY_TID] = { "tid", NULL, "Tid", "threads", false, true, text_tid, cmp_tid },
	[REPORT_KEY_VCPU] = { "vcpu", "cpu", "vCPU", "vCPUs", false, true, text_vcpu,
			      cmp_vcpu },
	[REPORT_KEY_DSO] = { "dso", NULL, "DSO", "DSOs", true, false, text_dso, cmp_dso },
	[REPORT_KEY_SYM] = { "sym", "symbol", "Function", "functions", true, false, text_sym,
			     cmp_sym },
};

static bool is_count(enum report_sort_key k)
{
	return k == REPORT_KEY_SELF || k == REPORT_KEY_TOTAL;
}

static int key_lookup(const char *name, size_t len)
{
	int i;

	for (i = 0; i < REPORT_KEY_NR; i++) {
		const struct sort_key *k = &sort_keys[i];

		if ((strlen(k->name) == len && !strncmp(k->name, name, len)) ||
		    (k->alias && strlen(k->alias) == len && !strncmp(k->alias, name, len)))
			return i;
	}
	return -1;
}

/**
 * report_sort_parse() - the argument of --sort
 * @arg: keys separated by commas: self, total, comm, pid, tid, vcpu, dso,
 *	sym, or perf's names overhead, overhead_children, cpu, symbol
 * @s: filled
 *
 * Return: EXIT_OK, or EXIT_USAGE after naming the key that is wrong.
 */
int report_sort_parse(const char *arg, struct report_sort_spec *s)
{
	enum report_sort_key given[REPORT_KEY_NR];
	uint32_t nr_given = 0, seen = 0, nr_counts = 0, last_count = 0, i;
	const char *p = arg;

	memset(s, 0, sizeof(*s));
	s->arg = arg;
	for (;;) {
		size_t len = strcspn(p, ",");
		int k = key_lookup(p, len);

		if (!len)
			return usage_err("--sort: an empty key in '%s'", arg);
		if (k < 0)
			return usage_err("--sort: unknown key '%.*s' (keys: self, total, comm, pid, "
					 "tid, vcpu, dso, sym)", (int)len, p);
		if (seen & (1U << k))
			return usage_err("--sort: '%s' given twice in '%s'", sort_keys[k].name, arg);
		seen |= 1U << k;
		given[nr_given++] = (enum report_sort_key)k;
		if (!p[len])
			break;
		p += len + 1;
	}
	/* Self first when no count is given; the missing count after the last one. */
	if (!(seen & (1U << REPORT_KEY_SELF | 1U << REPORT_KEY_TOTAL)))
		s->chain[s->nr_chain++] = REPORT_KEY_SELF;
	for (i = 0; i < nr_given; i++)
		s->chain[s->nr_chain++] = given[i];
	for (i = 0; i < s->nr_chain; i++) {
		if (!is_count(s->chain[i]))
			continue;
		if (!nr_counts++)
			s->primary = s->chain[i];
		last_count = i;
	}
	if (nr_counts == 1) {
		memmove(&s->chain[last_count + 2], &s->chain[last_count + 1],
			(s->nr_chain - last_count - 1) * sizeof(s->chain[0]));
		s->chain[last_count + 1] = s->primary == REPORT_KEY_SELF ? REPORT_KEY_TOTAL :
									     REPORT_KEY_SELF;
		s->nr_chain++;
	}
	for (i = 0; i < nr_given; i++)
		if (!is_count(given[i]))
			s->columns[s->nr_columns++] = given[i];
	if (!s->nr_columns) {
		s->columns[s->nr_columns++] = REPORT_KEY_SYM;
		s->chain[s->nr_chain++] = REPORT_KEY_SYM;
	}
	return EXIT_OK;
}

/**
 * report_percent_parse() - a percentage option's argument
 * @what: the option, for the message
 * @arg: a decimal number from 0 to 100, with or without '%'
 * @out: the value
 *
 * Return: EXIT_OK, or EXIT_USAGE after saying what was expected.
 */
int report_percent_parse(const char *what, const char *arg, double *out)
{
	size_t digits = strspn(arg, "0123456789."), len = strlen(arg);
	char *end;
	double v;

	/* strtod() alone would take "nan", "inf", "1e2" and hex. */
	if (!digits || (digits != len && !(digits + 1 == len && arg[digits] == '%')))
		goto bad;
	v = strtod(arg, &end);
	if (end != arg + digits || v < 0.0 || v > 100.0)
		goto bad;
	*out = v;
	return EXIT_OK;
bad:
	return usage_err("%s: expected a percentage from 0 to 100, got: '%s'", what, arg);
}

/**
 * report_table_new() - an empty table for report_table_sink() to fill
 * @s: its keys
 *
 * Return: the table, NULL out of memory (printed).
 */
struct report_table *report_table_new(const struct report_sort_spec *s)
{
	struct report_table *t = calloc(1, sizeof(*t));
	uint32_t i;

	if (!t) {
		p_err("out of memory for the top table");
		return NULL;
	}
	t->spec = *s;
	for (i = 0; i < s->nr_columns; i++)
		t->keys |= 1U << s->columns[i];
	return t;
}

static int index_grow(struct report_table *t)
{
	uint32_t size = t->index_size ? t->index_size * 2 : 1024, i;
	uint32_t *index = calloc(size, sizeof(*index));

	if (!index)
		return -1;
	for (i = 0; i < t->nr_rows; i++) {
		uint64_t h = hash_words(&t->rows[i].k, sizeof(t->rows[i].k));

		while (index[h & (size - 1)])
			h++;
		index[h & (size - 1)] = i + 1;
	}
	free(t->index);
	t->index = index;
	t->index_size = size;
	return 0;
}

/* The row of @k, added when missing; NULL out of memory. */
static struct row *row_get(struct report_table *t, const struct row_key *k)
{
	struct row *r;
	uint64_t h;

	if ((t->nr_rows + 1) * 2 > t->index_size && index_grow(t))
		return NULL;
	for (h = hash_words(k, sizeof(*k));; h++) {
		uint32_t slot = t->index[h & (t->index_size - 1)];

		if (!slot)
			break;
		if (!memcmp(&t->rows[slot - 1].k, k, sizeof(*k)))
			return &t->rows[slot - 1];
	}
	if (t->nr_rows == t->cap_rows) {
		uint32_t cap = t->cap_rows ? t->cap_rows * 2 : 256;

		r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		t->rows = r;
		t->cap_rows = cap;
	}
	r = &t->rows[t->nr_rows++];
	memset(r, 0, sizeof(*r));
	r->k = *k;
	t->index[h & (t->index_size - 1)] = t->nr_rows;
	return r;
}

static bool has_key(const struct report_table *t, enum report_sort_key k)
{
	return t->keys & (1U << k);
}

static int table_sample(void *ctx, const struct profile *p, const struct profile_sample *s)
{
	struct report_table *t = ctx;
	const struct pvprof_callchain *chain = &s->v->u.callchain.chain;
	bool per_frame = has_key(t, REPORT_KEY_DSO) || has_key(t, REPORT_KEY_SYM);
	struct row_key k;
	struct row *r;
	uint32_t i;

	t->samples++;
	memset(&k, 0, sizeof(k));
	if (has_key(t, REPORT_KEY_COMM))
		k.comm = s->comm;
	if (has_key(t, REPORT_KEY_PID))
		k.pid = chain->pid;
	if (has_key(t, REPORT_KEY_TID))
		k.tid = chain->tid;
	if (has_key(t, REPORT_KEY_VCPU))
		k.vcpu = s->v->hdr.vcpu_id;
	if (!per_frame) {
		r = row_get(t, &k);
		if (!r)
			return -1;
		r->self += s->weight;
		r->total += s->weight;
	}
	/* Innermost first: frame 0 is the one the sample counts as self. */
	for (i = 0; per_frame && i < s->nr; i++) {
		if (has_key(t, REPORT_KEY_SYM))
			k.func = s->frames[i].func + 1;
		if (has_key(t, REPORT_KEY_DSO))
			k.dso = p->funcs[s->frames[i].func].dso;
		r = row_get(t, &k);
		if (!r)
			return -1;
		if (r->last_sample != t->samples) {
			r->last_sample = t->samples;
			r->total += s->weight;
		}
		if (!i)
			r->self += s->weight;
	}
	return t->next ? t->next->sample(t->next->ctx, p, s) : 0;
}

/**
 * report_table_sink() - the sink that fills a table while the profile is built
 * @t: the table
 * @next: a sink to hand each sample on to (the pprof writer), or NULL
 *
 * Return: the sink, valid as long as @t.
 */
const struct profile_sink *report_table_sink(struct report_table *t,
					     const struct profile_sink *next)
{
	t->sink.sample = table_sample;
	t->sink.ctx = t;
	t->next = next;
	return &t->sink;
}

struct row_order {
	const struct report_table *t;
	const struct profile *p;
};

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct row_order *o = arg;
	const struct row *x = &o->t->rows[*(const uint32_t *)a];
	const struct row *y = &o->t->rows[*(const uint32_t *)b];
	uint32_t i;

	for (i = 0; i < o->t->spec.nr_chain; i++) {
		int r = sort_keys[o->t->spec.chain[i]].cmp(x, y, o->p);

		if (r)
			return r;
	}
	return 0;
}

/* A row's cell for one column, escaped into @out (REPORT_ESC_SIZE + more). */
static const char *cell(const struct report_table *t, const struct profile *p,
			const struct row *r, enum report_sort_key k, char *out, size_t size)
{
	char num[16], esc[REPORT_ESC_SIZE], esc_dso[REPORT_ESC_SIZE];
	const char *text = sort_keys[k].text(r, p, num, sizeof(num));
	const struct profile_func *fn;
	int len;

	if (k != REPORT_KEY_SYM) {
		snprintf(out, size, "%s", esc_text(text, esc));
		return out;
	}
	/* A function is its name, mode and DSO: the DSO shows unless a column. */
	fn = &p->funcs[r->k.func - 1];
	len = snprintf(out, size, "%-6s  %s", fn->kind == PROFILE_KIND_KERNEL ? "kernel" : "user",
		       esc_text(text, esc));
	if (fn->dso && !has_key(t, REPORT_KEY_DSO) && len > 0 && (size_t)len < size)
		snprintf(out + len, size - (size_t)len, "  (%s)", esc_text(fn->dso, esc_dso));
	return out;
}

static const char *column_title(const struct report_table *t, enum report_sort_key k)
{
	if (k != REPORT_KEY_SYM)
		return sort_keys[k].title;
	return has_key(t, REPORT_KEY_DSO) ? "Mode    Function" : "Mode    Function  (DSO)";
}

/* "functions", or "rows of comm,dso" for several columns. */
static void rows_noun(const struct report_table *t, char *buf, size_t size)
{
	size_t len;
	uint32_t i;

	if (t->spec.nr_columns == 1) {
		snprintf(buf, size, "%s", sort_keys[t->spec.columns[0]].noun);
		return;
	}
	len = (size_t)snprintf(buf, size, "rows of ");
	for (i = 0; i < t->spec.nr_columns && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "",
					sort_keys[t->spec.columns[i]].name);
}

static void write_cells(FILE *f, const struct report_table *t, const char *const *cells,
			const size_t *width)
{
	uint32_t i;

	for (i = 0; i < t->spec.nr_columns; i++) {
		bool last = i + 1 == t->spec.nr_columns;
		int pad = (int)(width[i] > strlen(cells[i]) ? width[i] - strlen(cells[i]) : 0);

		if (sort_keys[t->spec.columns[i]].numeric)
			fprintf(f, "  %*s%s", pad, "", cells[i]);
		else
			fprintf(f, "  %s%*s", cells[i], last ? 0 : pad, "");
	}
	fputc('\n', f);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/**
 * struct table_view - the rows a table shows
 * @show: their indices into the table's rows, in order
 * @shown: how many
 * @below: rows left out for --percent-limit
 * @more: rows left out for --limit
 * @nr: rows there are
 */
struct table_view {
	uint32_t *show;
	uint64_t shown, below, more, nr;
};

/* Sorts the rows and picks those shown; -1 out of memory (printed). */
static int table_view(const struct report_table *t, const struct profile *p,
		      uint64_t limit, double percent_limit, struct table_view *v)
{
	uint64_t samples = p->stats.samples;
	uint32_t *order, i;

	memset(v, 0, sizeof(*v));
	v->nr = t->nr_rows;
	order = malloc((t->nr_rows + 1) * sizeof(*order));
	v->show = malloc((t->nr_rows + 1) * sizeof(*v->show));
	if (!order || !v->show) {
		free(order);
		free(v->show);
		p_err("out of memory sorting %u rows", t->nr_rows);
		return -1;
	}
	for (i = 0; i < t->nr_rows; i++)
		order[i] = i;
	qsort_r(order, t->nr_rows, sizeof(*order), row_cmp,
		&(struct row_order){ .t = t, .p = p });
	for (i = 0; i < t->nr_rows; i++) {
		const struct row *r = &t->rows[order[i]];
		uint64_t count = t->spec.primary == REPORT_KEY_SELF ? r->self : r->total;

		if ((double)count * 100.0 < percent_limit * (double)samples)
			v->below++;
		else if (limit && v->shown == limit)
			v->more++;
		else
			v->show[v->shown++] = order[i];
	}
	free(order);
	return 0;
}

/**
 * report_write_table() - the top table
 * @f: output
 * @t: filled by its sink while @p was built
 * @p: the profile
 * @limit: rows at most, 0 for all
 * @percent_limit: rows whose first count in the order is below this share
 *	of the samples shown are left out (and counted); 0 for none
 *
 * Return: 0, or -1 on an output error or out of memory.
 */
int report_write_table(FILE *f, const struct report_table *t, const struct profile *p,
		       uint64_t limit, double percent_limit)
{
	/* The longest cell: a mode, a function and its DSO, escaped. */
	enum { CELL_SIZE = 2 * REPORT_ESC_SIZE + 16 };
	const struct report_sort_spec *s = &t->spec;
	const char *titles[REPORT_KEY_NR], *cells[REPORT_KEY_NR];
	char (*buf)[CELL_SIZE] = malloc(REPORT_KEY_NR * sizeof(*buf));
	size_t width[REPORT_KEY_NR];
	struct table_view v;
	char noun[64];
	uint32_t i, c;

	if (!buf || table_view(t, p, limit, percent_limit, &v)) {
		if (!buf)
			p_err("out of memory writing the top table");
		free(buf);
		return -1;
	}
	/* Columns as wide as their widest cell shown, up to a point. */
	for (c = 0; c < s->nr_columns; c++) {
		titles[c] = column_title(t, s->columns[c]);
		width[c] = strlen(titles[c]);
	}
	for (i = 0; i < v.shown; i++) {
		for (c = 0; c < s->nr_columns; c++) {
			size_t len = strlen(cell(t, p, &t->rows[v.show[i]], s->columns[c], buf[c],
						 CELL_SIZE));

			if (len > width[c])
				width[c] = len < COLUMN_WIDTH_MAX ? len : COLUMN_WIDTH_MAX;
		}
	}

	rows_noun(t, noun, sizeof(noun));
	fprintf(f, "#\n# top %s by ", noun);
	for (c = 0; c < s->nr_chain && s->chain[c] != s->primary; c++)
		fprintf(f, "%s, then ", sort_keys[s->chain[c]].name);
	fprintf(f, "%s samples%s\n#\n", sort_keys[s->primary].name,
		v.shown == v.nr ? " (all)" : "");
	fprintf(f, "#   Self%%   Total%%      Self     Total");
	write_cells(f, t, titles, width);
	for (i = 0; i < v.shown; i++) {
		const struct row *r = &t->rows[v.show[i]];

		fprintf(f, "%8.2f%% %7.2f%% %9" PRIu64 " %9" PRIu64,
			share(r->self, p->stats.samples), share(r->total, p->stats.samples),
			r->self, r->total);
		for (c = 0; c < s->nr_columns; c++)
			cells[c] = cell(t, p, r, s->columns[c], buf[c], CELL_SIZE);
		write_cells(f, t, cells, width);
	}
	if (v.more)
		fprintf(f, "# ... %" PRIu64 " more %s (--limit 0 shows all)\n", v.more,
			s->nr_columns == 1 ? noun : "rows");
	if (v.below)
		fprintf(f, "# %" PRIu64 " %s below %g%% of the samples shown not shown"
			" (--percent-limit)\n", v.below, s->nr_columns == 1 ? noun : "rows",
			percent_limit);
	free(v.show);
	free(buf);
	return ferror(f) ? -1 : 0;
}

/* One row's members: its keys' values, then its counts. */
static void json_row(struct json_writer *w, const struct report_table *t,
		     const struct profile *p, const struct row *r)
{
	const struct report_sort_spec *s = &t->spec;
	const struct profile_func *fn;
	uint32_t c;

	json_begin_object(w);
	for (c = 0; c < s->nr_columns; c++) {
		switch (s->columns[c]) {
		case REPORT_KEY_COMM:
			json_member_string(w, "comm", r->k.comm);
			break;
		case REPORT_KEY_PID:
			json_member_uint(w, "pid", r->k.pid);
			break;
		case REPORT_KEY_TID:
			json_member_uint(w, "tid", r->k.tid);
			break;
		case REPORT_KEY_VCPU:
			json_member_uint(w, "vcpu", r->k.vcpu);
			break;
		case REPORT_KEY_DSO:
			json_member_string(w, "dso", r->k.dso);
			break;
		case REPORT_KEY_SYM:
			fn = &p->funcs[r->k.func - 1];
			json_member_string(w, "name", fn->name);
			json_member_string(w, "mode",
					   fn->kind == PROFILE_KIND_KERNEL ? "kernel" : "user");
			if (!has_key(t, REPORT_KEY_DSO))
				json_member_string(w, "dso", fn->dso);
			break;
		default:
			break;
		}
	}
	json_member_uint(w, "self", r->self);
	json_member_uint(w, "total", r->total);
	json_name(w, "self_percent");
	json_fixed2(w, share(r->self, p->stats.samples));
	json_name(w, "total_percent");
	json_fixed2(w, share(r->total, p->stats.samples));
	json_end_object(w);
}

/**
 * report_table_json() - the top table as members of a JSON object
 * @w: the writer, inside an object
 * @t: filled by its sink while @p was built
 * @p: the profile
 * @limit: as for report_write_table()
 * @percent_limit: the same
 *
 * "functions" holds the rows the text shows, each with a member per key
 * (sym is name, mode and dso) and the counts: with the default --sort, the
 * functions.
 * Return: 0, or -1 out of memory (printed).
 */
int report_table_json(struct json_writer *w, const struct report_table *t,
		      const struct profile *p, uint64_t limit, double percent_limit)
{
	struct table_view v;
	uint64_t i;

	if (table_view(t, p, limit, percent_limit, &v))
		return -1;
	json_member_string(w, "sort", t->spec.arg);
	json_member_uint(w, "limit", limit);
	json_name(w, "percent_limit");
	json_fixed2(w, percent_limit);
	json_member_uint(w, "nr_functions", v.nr);
	json_member_uint(w, "below_percent_limit", v.below);
	json_name(w, "functions");
	json_begin_array(w);
	for (i = 0; i < v.shown; i++)
		json_row(w, t, p, &t->rows[v.show[i]]);
	json_end_array(w);
	free(v.show);
	return 0;
}

void report_table_free(struct report_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->index);
	free(t);
}
