// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report --pprof: the profile as pprof's profile.proto, gzipped,
 * for go tool pprof, Parca and Pyroscope (doc/kvm-pvprof-report.8).
 *
 * The samples are the ones report counts: profile_build_sink() hands each
 * one here during its single walk of the recording, with its frames
 * already symbolized.  Identical samples (same frames, vCPU, pid, tid and
 * command) are merged.  A function is one of report's function table, so
 * that every view of the recording names frames alike: a frame the guest
 * agent's tables do not name is a function called the way report calls
 * it ("DSO+0xOFFSET", "0xADDRESS").  Every mapping is therefore marked as
 * symbolized: pprof must not name guest addresses with a host file that
 * happens to have the same path.  The samples taken inside pvprof's own NMI
 * path have the function [pvprof overhead] (REPORT_OWN_NMI_FRAME) as their
 * leaf: a location at address 0 without a mapping, since it is no guest
 * address, above the locations of the stack that NMI interrupted.  A
 * sample's count is the samples it stands for (profile_sample.weight).
 *
 * Every string that came from the guest goes through esc_text(), like
 * report's text: profile.proto's strings must be UTF-8 and guest strings
 * may be any bytes.
 *
 * The file is created before the walk (a bad path fails before any work)
 * and removed again unless it was written whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "hash.h"
#include "main.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "report_escape.h"
#include "report_header.h"
#include "report_pprof.h"
#include "report_resolve.h"
#include "report_select.h"

/* Open addressing; a slot holds an entry's index + 1 and its hash. */
struct pp_slot {
	uint64_t hash;
	uint32_t entry;
};

struct pp_index {
	struct pp_slot *slots;
	uint32_t size;		/* a power of two, 0 before the first entry */
};

/* Keys compared and hashed as bytes: no padding in them. */
struct pp_mapping {
	uint64_t start, limit, pgoff;
	int64_t filename, build_id;	/* string table indices */
};

struct pp_location {
	uint64_t address;
	uint32_t mapping;	/* id, 0 for none */
	uint32_t func;		/* profile.funcs index */
};

/* Label values of a sample; together with its locations, its identity. */
struct pp_labels {
	int64_t comm;		/* string table index */
	uint32_t vcpu, pid, tid;
	uint32_t zero;		/* fills what would be padding */
};

_Static_assert(sizeof(struct pp_mapping) == 40 && sizeof(struct pp_location) == 16 &&
	       sizeof(struct pp_labels) == 24, "pprof keys without padding");

struct pp_sample {
	uint64_t first_loc;	/* into loc_ids */
	uint32_t nr_locs;
	struct pp_labels labels;
	uint64_t count;
};

struct report_pprof {
	char *path;
	int fd;			/* -1 once closed */
	bool regular;		/* a regular file: removed unless written */
	bool written;		/* the file is whole: keep it */
	struct profile_sink sink;

	char **strings;		/* the string table, [0] = "" */
	uint32_t nr_strings, cap_strings;
	struct pp_index string_index;

	struct pp_mapping *mappings;
	uint32_t nr_mappings, cap_mappings;
	struct pp_index mapping_index;

	struct pp_location *locations;
	uint32_t nr_locations, cap_locations;
	struct pp_index location_index;

	uint64_t *loc_ids;	/* each sample's location ids, leaf first */
	uint64_t nr_loc_ids, cap_loc_ids;

	struct pp_sample *samples;
	uint32_t nr_samples, cap_samples;
	struct pp_index sample_index;
};

/* Room for one more entry with the index at most half full: short probes. */
static int index_reserve(struct pp_index *ix, uint32_t entries)
{
	uint32_t size, i;
	struct pp_slot *slots;

	if ((uint64_t)(entries + 1) * 2 <= ix->size)
		return 0;
	size = ix->size ? ix->size * 2 : 1024;
	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; i < ix->size; i++) {
		uint64_t h = ix->slots[i].hash;

		if (!ix->slots[i].entry)
			continue;
		while (slots[h & (size - 1)].entry)
			h++;
		slots[h & (size - 1)] = ix->slots[i];
	}
	free(ix->slots);
	ix->slots = slots;
	ix->size = size;
	return 0;
}

/*
 * The slot whose entry @same() accepts, else the empty slot where an entry
 * with @hash goes.  The index must have room (index_reserve()).
 */
static struct pp_slot *index_find(struct pp_index *ix, uint64_t hash,
				  bool (*same)(const struct report_pprof *pp, uint32_t entry,
					       const void *key),
				  const struct report_pprof *pp, const void *key)
{
	uint64_t h;

	for (h = hash;; h++) {
		struct pp_slot *slot = &ix->slots[h & (ix->size - 1)];

		if (!slot->entry)
			return slot;
		if (slot->hash == hash && same(pp, slot->entry - 1, key))
			return slot;
	}
}

/* Makes room for one more element in a growing array. */
static int grow(void **array, uint32_t nr, uint32_t *cap, size_t elem)
{
	uint32_t want = *cap ? *cap * 2 : 256;
	void *p;

	if (nr < *cap)
		return 0;
	if (want <= *cap)
		return -1;
	p = realloc(*array, (size_t)want * elem);
	if (!p)
		return -1;
	*array = p;
	*cap = want;
	return 0;
}

static bool same_string(const struct report_pprof *pp, uint32_t entry, const void *key)
{
	return !strcmp(pp->strings[entry], key);
}

/* The string table index of @s, added when new; -1 when out of memory. */
static int64_t string_id(struct report_pprof *pp, const char *s)
{
	uint64_t hash = hash_bytes(s, strlen(s), HASH_INIT);
	struct pp_slot *slot;
	char *copy;

	if (index_reserve(&pp->string_index, pp->nr_strings))
		return -1;
	slot = index_find(&pp->string_index, hash, same_string, pp, s);
	if (slot->entry)
		return slot->entry - 1;
	if (grow((void **)&pp->strings, pp->nr_strings, &pp->cap_strings,
		 sizeof(*pp->strings)))
		return -1;
	copy = strdup(s);
	if (!copy)
		return -1;
	pp->strings[pp->nr_strings++] = copy;
	*slot = (struct pp_slot){ .hash = hash, .entry = pp->nr_strings };
	return pp->nr_strings - 1;
}

/* A guest string, escaped as report's text escapes it. */
static int64_t guest_string_id(struct report_pprof *pp, const char *s)
{
	char esc[REPORT_ESC_SIZE];

	return string_id(pp, esc_text(s, esc));
}

static bool same_mapping(const struct report_pprof *pp, uint32_t entry, const void *key)
{
	return !memcmp(&pp->mappings[entry], key, sizeof(struct pp_mapping));
}

/* The mapping id of a frame's image, 0 for none; -1 when out of memory. */
static int64_t mapping_id(struct report_pprof *pp, const struct profile *p,
			  const struct profile_frame *fr)
{
	static const char hex[] = "0123456789abcdef";
	const char *dso = p->funcs[fr->func].dso;
	char build_id[2 * REPORT_BUILD_ID_MAX + 1];
	struct pp_mapping m;
	struct pp_slot *slot;
	uint32_t i;
	uint64_t hash;

	if (!dso || fr->image_end <= fr->image_start)
		return 0;
	for (i = 0; i < fr->build_id_size; i++) {
		build_id[2 * i] = hex[fr->build_id[i] >> 4];
		build_id[2 * i + 1] = hex[fr->build_id[i] & 15];
	}
	build_id[2 * i] = '\0';
	m = (struct pp_mapping){
		.start = fr->image_start,
		.limit = fr->image_end,
		.pgoff = fr->image_pgoff,
		.filename = guest_string_id(pp, dso),
		.build_id = string_id(pp, build_id),
	};
	if (m.filename < 0 || m.build_id < 0 ||
	    index_reserve(&pp->mapping_index, pp->nr_mappings))
		return -1;
	hash = hash_bytes(&m, sizeof(m), HASH_INIT);
	slot = index_find(&pp->mapping_index, hash, same_mapping, pp, &m);
	if (slot->entry)
		return slot->entry;
	if (grow((void **)&pp->mappings, pp->nr_mappings, &pp->cap_mappings,
		 sizeof(*pp->mappings)))
		return -1;
	pp->mappings[pp->nr_mappings++] = m;
	*slot = (struct pp_slot){ .hash = hash, .entry = pp->nr_mappings };
	return pp->nr_mappings;
}

static bool same_location(const struct report_pprof *pp, uint32_t entry, const void *key)
{
	return !memcmp(&pp->locations[entry], key, sizeof(struct pp_location));
}

/* The location id of a frame, from 1; 0 when out of memory. */
static uint64_t location_id(struct report_pprof *pp, const struct profile *p,
			    const struct profile_frame *fr)
{
	int64_t mapping = mapping_id(pp, p, fr);
	struct pp_location loc;
	struct pp_slot *slot;
	uint64_t hash;

	if (mapping < 0 || index_reserve(&pp->location_index, pp->nr_locations))
		return 0;
	loc = (struct pp_location){
		.address = fr->addr,
		.mapping = (uint32_t)mapping,
		.func = fr->func,
	};
	hash = hash_bytes(&loc, sizeof(loc), HASH_INIT);
	slot = index_find(&pp->location_index, hash, same_location, pp, &loc);
	if (slot->entry)
		return slot->entry;
	if (grow((void **)&pp->locations, pp->nr_locations, &pp->cap_locations,
		 sizeof(*pp->locations)))
		return 0;
	pp->locations[pp->nr_locations++] = loc;
	*slot = (struct pp_slot){ .hash = hash, .entry = pp->nr_locations };
	return pp->nr_locations;
}

/* A candidate sample: its locations at the end of loc_ids, not yet kept. */
struct sample_key {
	uint64_t first_loc;
	uint32_t nr_locs;
	const struct pp_labels *labels;
};

static bool same_sample(const struct report_pprof *pp, uint32_t entry, const void *key)
{
	const struct pp_sample *s = &pp->samples[entry];
	const struct sample_key *k = key;

	return s->nr_locs == k->nr_locs &&
	       !memcmp(&s->labels, k->labels, sizeof(*k->labels)) &&
	       !memcmp(&pp->loc_ids[s->first_loc], &pp->loc_ids[k->first_loc],
		       k->nr_locs * sizeof(*pp->loc_ids));
}

static int pprof_sample(void *ctx, const struct profile *p, const struct profile_sample *s)
{
	struct report_pprof *pp = ctx;
	const struct pvprof_callchain *chain = &s->v->u.callchain.chain;
	struct pp_labels labels;
	struct sample_key key;
	struct pp_slot *slot;
	uint64_t hash;
	uint32_t i;

	if (pp->nr_loc_ids + s->nr > pp->cap_loc_ids) {
		/* Doubling is enough: a sample has at most PROFILE_MAX_FRAMES frames. */
		uint64_t cap = pp->cap_loc_ids ? pp->cap_loc_ids * 2 : 4096;
		uint64_t *ids = realloc(pp->loc_ids, cap * sizeof(*ids));

		if (!ids)
			return -1;
		pp->loc_ids = ids;
		pp->cap_loc_ids = cap;
	}
	for (i = 0; i < s->nr; i++) {
		uint64_t id = location_id(pp, p, &s->frames[i]);

		if (!id)
			return -1;
		pp->loc_ids[pp->nr_loc_ids + i] = id;
	}
	labels = (struct pp_labels){
		.comm = guest_string_id(pp, s->comm),
		.vcpu = s->v->hdr.vcpu_id,
		.pid = chain->pid,
		.tid = chain->tid,
	};
	if (labels.comm < 0 || index_reserve(&pp->sample_index, pp->nr_samples))
		return -1;
	key = (struct sample_key){ .first_loc = pp->nr_loc_ids, .nr_locs = s->nr,
				   .labels = &labels };
	hash = hash_bytes(&labels, sizeof(labels), HASH_INIT);
	hash = hash_bytes(&pp->loc_ids[pp->nr_loc_ids], s->nr * sizeof(*pp->loc_ids), hash);
	slot = index_find(&pp->sample_index, hash, same_sample, pp, &key);
	if (slot->entry) {
		pp->samples[slot->entry - 1].count += s->weight;
		return 0;
	}
	if (grow((void **)&pp->samples, pp->nr_samples, &pp->cap_samples,
		 sizeof(*pp->samples)))
		return -1;
	pp->samples[pp->nr_samples++] = (struct pp_sample){
		.first_loc = pp->nr_loc_ids, .nr_locs = s->nr, .labels = labels,
		.count = s->weight };
	pp->nr_loc_ids += s->nr;
	*slot = (struct pp_slot){ .hash = hash, .entry = pp->nr_samples };
	return 0;
}

/**
 * report_pprof_create() - create the pprof file, before the profile is built
 * @path: its name
 * @input: the recording's name: it is not overwritten
 *
 * Return: the writer state, or NULL after printing why.
 */
struct report_pprof *report_pprof_create(const char *path, const char *input)
{
	char esc[REPORT_ESC_SIZE], esc_in[REPORT_ESC_SIZE];
	struct stat in_st, out_st;
	struct report_pprof *pp;

	/* Created before the walk, it would truncate the recording it reads. */
	if (!stat(path, &out_st) && !stat(input, &in_st) &&
	    out_st.st_dev == in_st.st_dev && out_st.st_ino == in_st.st_ino) {
		p_err("--pprof %s: that is the recording %s", esc_text(path, esc),
		      esc_text(input, esc_in));
		return NULL;
	}
	pp = calloc(1, sizeof(*pp));
	if (!pp || !(pp->path = strdup(path))) {
		p_err("out of memory for the pprof writer");
		free(pp);
		return NULL;
	}
	pp->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (pp->fd < 0) {
		p_err("cannot create %s: %s", esc_text(path, esc), strerror(errno));
		free(pp->path);
		free(pp);
		return NULL;
	}
	pp->regular = !fstat(pp->fd, &out_st) && S_ISREG(out_st.st_mode);
	pp->sink = (struct profile_sink){ .sample = pprof_sample, .ctx = pp };
	pp->cap_loc_ids = 4096;
	pp->loc_ids = malloc(pp->cap_loc_ids * sizeof(*pp->loc_ids));
	/* profile.proto: string_table[0] must be "". */
	if (!pp->loc_ids || string_id(pp, "") != 0) {
		p_err("out of memory for the pprof writer");
		report_pprof_free(pp);
		return NULL;
	}
	return pp;
}

/**
 * report_pprof_sink() - what profile_build_sink() hands the samples to
 * @pp: the writer
 *
 * Return: the sink.
 */
const struct profile_sink *report_pprof_sink(struct report_pprof *pp)
{
	return &pp->sink;
}

/**
 * report_pprof_free() - close the file, and remove it unless it was written
 * @pp: the writer, or NULL
 *
 * Only a regular file is removed: --pprof /dev/stdout stays a device.
 */
void report_pprof_free(struct report_pprof *pp)
{
	uint32_t i;

	if (!pp)
		return;
	if (pp->fd >= 0)
		close(pp->fd);
	if (!pp->written && pp->regular)
		unlink(pp->path);
	for (i = 0; i < pp->nr_strings; i++)
		free(pp->strings[i]);
	free(pp->strings);
	free(pp->string_index.slots);
	free(pp->mappings);
	free(pp->mapping_index.slots);
	free(pp->locations);
	free(pp->location_index.slots);
	free(pp->loc_ids);
	free(pp->samples);
	free(pp->sample_index.slots);
	free(pp->path);
	free(pp);
}

/* ------------------------------------------------------------------ */
/* The message, gzipped on its way to the file                         */
/* ------------------------------------------------------------------ */

/* protobuf-c packs into this: each piece goes through deflate to the file. */
struct gz_sink {
	ProtobufCBuffer base;
	z_stream z;
	int fd;
	int error;		/* the first errno, 0 while all is well */
	unsigned char out[64 * 1024];
};

static void gz_flush_out(struct gz_sink *g)
{
	size_t len = sizeof(g->out) - g->z.avail_out, done = 0;

	while (!g->error && done < len) {
		ssize_t n = write(g->fd, g->out + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			g->error = n ? errno : EIO;
		else
			done += (size_t)n;
	}
	g->z.next_out = g->out;
	g->z.avail_out = sizeof(g->out);
}

static void gz_deflate(struct gz_sink *g, const uint8_t *data, size_t len, int flush)
{
	int ret;

	g->z.next_in = (Bytef *)data;
	g->z.avail_in = (uInt)len;
	do {
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR) {
			g->error = EINVAL;
			return;
		}
		if (!g->z.avail_out || ret == Z_STREAM_END)
			gz_flush_out(g);
	} while (!g->error && (g->z.avail_in || (flush == Z_FINISH && ret != Z_STREAM_END)));
}

static void gz_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gz_sink *g = (struct gz_sink *)buffer;

	/* deflate takes at most UINT_MAX bytes at a time. */
	while (!g->error && len) {
		size_t part = len > (1U << 30) ? (1U << 30) : len;

		gz_deflate(g, data, part, Z_NO_FLUSH);
		data += part;
		len -= part;
	}
}

/* The sampling period in nanoseconds for cpu-clock, 0 when unknown. */
static uint64_t period_ns(const struct pvprof_data_vm *vm)
{
	if (vm->event != PVPROF_EVENT_CPU_CLOCK)
		return 0;
	if (vm->sample_freq)
		return (1000000000ULL + vm->sample_freq / 2) / vm->sample_freq;
	return vm->sample_period;
}

/* All the protobuf-c messages of the profile, in arrays freed at once. */
struct pp_message {
	Perftools__Profiles__Profile profile;
	Perftools__Profiles__ValueType types[2], period_type;
	Perftools__Profiles__ValueType *type_ptrs[2];
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
	int64_t *values;
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
	int64_t *comments;
};

#define LABELS_PER_SAMPLE	5

static void message_free(struct pp_message *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->labels);
	free(m->label_ptrs);
	free(m->values);
	free(m->mappings);
	free(m->mapping_ptrs);
	free(m->locations);
	free(m->location_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->functions);
	free(m->function_ptrs);
	free(m->comments);
}

/* Report's header lines, without their "# ", as the profile's comments. */
static int add_comments(struct report_pprof *pp, struct pp_message *m, const char *input,
			const struct recording *r, const struct profile *p,
			const struct report_filter *flt, const struct report_resolver *res)
{
	char *text = NULL, *line, *next;
	size_t size = 0, nr = 0, cap = 0;
	FILE *f = open_memstream(&text, &size);
	int ret = -1, header;

	if (!f)
		return -1;
	header = report_write_header(f, input, r, p, flt, res);
	if (fclose(f) || header)
		goto out;
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (!strncmp(line, "# ", 2))
			line += 2;
		if (nr == cap) {
			size_t want = cap ? 2 * cap : 32;
			int64_t *c = realloc(m->comments, want * sizeof(*c));

			if (!c)
				goto out;
			m->comments = c;
			cap = want;
		}
		/* Already escaped by the header writer. */
		m->comments[nr] = string_id(pp, line);
		if (m->comments[nr++] < 0)
			goto out;
	}
	m->profile.n_comment = nr;
	m->profile.comment = m->comments;
	ret = 0;
out:
	free(text);
	return ret;
}

/*
 * The profile-wide fields: types, period, time; the VM label's value, and
 * what one sample weighs in the second sample type (0: there is none).
 */
static int add_header(struct report_pprof *pp, struct pp_message *m,
		      const struct recording *r, int64_t *vm_label, uint64_t *weight)
{
	const char *ev = event_name(r->vm.event);
	uint64_t period = period_ns(&r->vm);
	Perftools__Profiles__Profile *prof = &m->profile;
	char buf[REPORT_ESC_SIZE];
	size_t nr_types = 1;

	perftools__profiles__value_type__init(&m->types[0]);
	m->types[0].type = string_id(pp, "samples");
	m->types[0].unit = string_id(pp, "count");
	perftools__profiles__value_type__init(&m->period_type);
	*weight = 0;
	if (period) {
		m->period_type.type = string_id(pp, "cpu");
		m->period_type.unit = string_id(pp, "nanoseconds");
		m->types[nr_types++] = m->period_type;
		prof->period = (int64_t)period;
		*weight = period;
	} else if (ev) {
		/* Hardware events: the period is only known when it was fixed. */
		m->period_type.type = string_id(pp, ev);
		m->period_type.unit = string_id(pp, "count");
		if (!r->vm.sample_freq && r->vm.sample_period) {
			m->types[nr_types++] = m->period_type;
			prof->period = (int64_t)r->vm.sample_period;
			*weight = r->vm.sample_period;
		}
	}
	m->type_ptrs[0] = &m->types[0];
	m->type_ptrs[1] = &m->types[1];
	prof->sample_type = m->type_ptrs;
	prof->n_sample_type = nr_types;
	if (period || ev)
		prof->period_type = &m->period_type;
	prof->time_nanos = (int64_t)r->host.start_realtime_ns;
	if (r->has_end && r->end.end_monotonic_ns > r->host.start_monotonic_ns)
		prof->duration_nanos = (int64_t)(r->end.end_monotonic_ns -
						 r->host.start_monotonic_ns);
	/* The VM as 'kvm-pvprof record' names it: libvirt domain, else QEMU pid. */
	if (r->vm.domain[0]) {
		memcpy(buf, r->vm.domain, sizeof(r->vm.domain));
		buf[sizeof(r->vm.domain)] = '\0';
		*vm_label = guest_string_id(pp, buf);
	} else if (r->vm.vmm_pid) {
		snprintf(buf, sizeof(buf), "%u", r->vm.vmm_pid);
		*vm_label = string_id(pp, buf);
	} else {
		*vm_label = 0;
	}
	if (m->types[0].type < 0 || m->types[0].unit < 0 || m->period_type.type < 0 ||
	    m->period_type.unit < 0 || *vm_label < 0)
		return -1;
	return 0;
}

static void set_label(Perftools__Profiles__Label *l, int64_t key, int64_t str,
		      int64_t num, int64_t unit)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	l->num = num;
	/* With a unit, pprof keeps a label whose value is 0 (pid 0, vCPU 0). */
	l->num_unit = unit;
}

static int add_samples(struct report_pprof *pp, struct pp_message *m, int64_t vm_label,
		       uint64_t weight)
{
	size_t nr_values = m->profile.n_sample_type, i;
	size_t nr_labels = (size_t)pp->nr_samples * LABELS_PER_SAMPLE;
	int64_t k_vm = string_id(pp, "vm"), k_vcpu = string_id(pp, "vcpu");
	int64_t k_pid = string_id(pp, "pid"), k_tid = string_id(pp, "tid");
	int64_t k_comm = string_id(pp, "comm");

	if (k_vm < 0 || k_vcpu < 0 || k_pid < 0 || k_tid < 0 || k_comm < 0)
		return -1;
	m->samples = calloc(pp->nr_samples + 1, sizeof(*m->samples));
	m->sample_ptrs = calloc(pp->nr_samples + 1, sizeof(*m->sample_ptrs));
	m->labels = calloc(nr_labels + 1, sizeof(*m->labels));
	m->label_ptrs = calloc(nr_labels + 1, sizeof(*m->label_ptrs));
	m->values = calloc((size_t)pp->nr_samples * nr_values + 1, sizeof(*m->values));
	if (!m->samples || !m->sample_ptrs || !m->labels || !m->label_ptrs || !m->values)
		return -1;
	for (i = 0; i < pp->nr_samples; i++) {
		const struct pp_sample *s = &pp->samples[i];
		Perftools__Profiles__Sample *out = &m->samples[i];
		Perftools__Profiles__Label *l = &m->labels[i * LABELS_PER_SAMPLE];
		Perftools__Profiles__Label **lp = &m->label_ptrs[i * LABELS_PER_SAMPLE];
		size_t n = 0, k;

		perftools__profiles__sample__init(out);
		out->n_location_id = s->nr_locs;
		out->location_id = &pp->loc_ids[s->first_loc];
		out->n_value = nr_values;
		out->value = &m->values[i * nr_values];
		out->value[0] = (int64_t)s->count;
		if (nr_values > 1)
			out->value[1] = (int64_t)(s->count * weight);
		if (vm_label)
			set_label(&l[n++], k_vm, vm_label, 0, 0);
		set_label(&l[n++], k_vcpu, 0, s->labels.vcpu, k_vcpu);
		set_label(&l[n++], k_pid, 0, s->labels.pid, k_pid);
		set_label(&l[n++], k_tid, 0, s->labels.tid, k_tid);
		set_label(&l[n++], k_comm, s->labels.comm, 0, 0);
		for (k = 0; k < n; k++)
			lp[k] = &l[k];
		out->n_label = n;
		out->label = lp;
		m->sample_ptrs[i] = out;
	}
	m->profile.n_sample = pp->nr_samples;
	m->profile.sample = m->sample_ptrs;
	return 0;
}

static int add_tables(struct report_pprof *pp, struct pp_message *m, const struct profile *p)
{
	uint32_t i;

	m->mappings = calloc(pp->nr_mappings + 1, sizeof(*m->mappings));
	m->mapping_ptrs = calloc(pp->nr_mappings + 1, sizeof(*m->mapping_ptrs));
	m->locations = calloc(pp->nr_locations + 1, sizeof(*m->locations));
	m->location_ptrs = calloc(pp->nr_locations + 1, sizeof(*m->location_ptrs));
	m->lines = calloc(pp->nr_locations + 1, sizeof(*m->lines));
	m->line_ptrs = calloc(pp->nr_locations + 1, sizeof(*m->line_ptrs));
	m->functions = calloc(p->nr_funcs + 1, sizeof(*m->functions));
	m->function_ptrs = calloc(p->nr_funcs + 1, sizeof(*m->function_ptrs));
	if (!m->mappings || !m->mapping_ptrs || !m->locations || !m->location_ptrs ||
	    !m->lines || !m->line_ptrs || !m->functions || !m->function_ptrs)
		return -1;
	for (i = 0; i < pp->nr_mappings; i++) {
		Perftools__Profiles__Mapping *out = &m->mappings[i];

		perftools__profiles__mapping__init(out);
		out->id = i + 1;
		out->memory_start = pp->mappings[i].start;
		out->memory_limit = pp->mappings[i].limit;
		out->file_offset = pp->mappings[i].pgoff;
		out->filename = pp->mappings[i].filename;
		out->build_id = pp->mappings[i].build_id;
		out->has_functions = true;
		m->mapping_ptrs[i] = out;
	}
	for (i = 0; i < pp->nr_locations; i++) {
		Perftools__Profiles__Location *out = &m->locations[i];

		perftools__profiles__line__init(&m->lines[i]);
		m->lines[i].function_id = pp->locations[i].func + 1;
		m->line_ptrs[i] = &m->lines[i];
		perftools__profiles__location__init(out);
		out->id = i + 1;
		out->mapping_id = pp->locations[i].mapping;
		out->address = pp->locations[i].address;
		out->n_line = 1;
		out->line = &m->line_ptrs[i];
		m->location_ptrs[i] = out;
	}
	/* Report's function table as it is: its index + 1 is the id. */
	for (i = 0; i < p->nr_funcs; i++) {
		Perftools__Profiles__Function *out = &m->functions[i];

		perftools__profiles__function__init(out);
		out->id = i + 1;
		out->name = guest_string_id(pp, p->funcs[i].name);
		out->system_name = out->name;
		if (out->name < 0)
			return -1;
		m->function_ptrs[i] = out;
	}
	m->profile.n_mapping = pp->nr_mappings;
	m->profile.mapping = m->mapping_ptrs;
	m->profile.n_location = pp->nr_locations;
	m->profile.location = m->location_ptrs;
	m->profile.n_function = p->nr_funcs;
	m->profile.function = m->function_ptrs;
	return 0;
}

static int pack_gzipped(struct report_pprof *pp, const Perftools__Profiles__Profile *prof)
{
	struct gz_sink *g = calloc(1, sizeof(*g));
	int error;

	if (!g)
		return ENOMEM;
	g->base.append = gz_append;
	g->fd = pp->fd;
	/* windowBits 15 + 16: a gzip stream, as profile.proto files are. */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return ENOMEM;
	}
	g->z.next_out = g->out;
	g->z.avail_out = sizeof(g->out);
	perftools__profiles__profile__pack_to_buffer(prof, &g->base);
	if (!g->error)
		gz_deflate(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->z);
	error = g->error;
	free(g);
	return error;
}

/**
 * report_pprof_write() - write the profile and close the file
 * @pp: the writer, fed by profile_build_sink()
 * @input: the recording's name (for the comments)
 * @r: the recording
 * @p: its profile
 * @flt: the filters in force
 * @res: the resolver used
 *
 * The profile's comments are report's header lines.
 * Return: 0, or -1 after printing why; report_pprof_free() then removes
 * the file.
 */
int report_pprof_write(struct report_pprof *pp, const char *input,
		       const struct recording *r, const struct profile *p,
		       const struct report_filter *flt,
		       const struct report_resolver *res)
{
	char esc[REPORT_ESC_SIZE];
	struct pp_message m;
	uint64_t weight;
	int64_t vm_label;
	int error;

	memset(&m, 0, sizeof(m));
	perftools__profiles__profile__init(&m.profile);
	if (add_header(pp, &m, r, &vm_label, &weight) ||
	    add_comments(pp, &m, input, r, p, flt, res) ||
	    add_samples(pp, &m, vm_label, weight) ||
	    add_tables(pp, &m, p)) {
		message_free(&m);
		p_err("out of memory writing %s", esc_text(pp->path, esc));
		return -1;
	}
	/* Last: every string is in the table by now. */
	m.profile.n_string_table = pp->nr_strings;
	m.profile.string_table = pp->strings;
	error = pack_gzipped(pp, &m.profile);
	message_free(&m);
	/* Linux closes the fd even when close() fails: it is gone either way. */
	if (close(pp->fd) && !error)
		error = errno;
	pp->fd = -1;
	if (error) {
		p_err("write %s: %s", esc_text(pp->path, esc), strerror(error));
		return -1;
	}
	pp->written = true;
	return 0;
}
