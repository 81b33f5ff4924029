/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof recordings (pvprof.data): the file format, a writer that
 * appends sections, and a reader that trusts nothing in the file.
 *
 * The format is documented in doc/pvprof-data.5.  A file is a header then
 * a sequence of sections, each a struct pvprof_data_section followed by
 * its payload and zero padding to 8 bytes.  Stream sections hold the bytes
 * of one read(2) of the VM's stream fd, verbatim (whole stream entries).
 * Every number is little-endian, like the stream.
 */
#ifndef KVM_PVPROF_RECORDING_H
#define KVM_PVPROF_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/pvprof_ctl.h"
#include "core/stream.h"

#define PVPROF_DATA_MAGIC	"PVPFDATA"
#define PVPROF_DATA_VERSION	1

/* Sections. */
#define PVPROF_DATA_SEC_HOST	1	/* struct pvprof_data_host */
#define PVPROF_DATA_SEC_VM	2	/* struct pvprof_data_vm */
#define PVPROF_DATA_SEC_STATUS	3	/* struct pvprof_data_status + vCPU entries */
#define PVPROF_DATA_SEC_STREAM	4	/* stream bytes of one read(2) */
#define PVPROF_DATA_SEC_END	5	/* struct pvprof_data_end, last section */

/* Largest section the reader accepts (a status of 4096 vCPUs fits). */
#define PVPROF_DATA_MAX_SECTION	(1U << 20)
#define PVPROF_DATA_MAX_VCPUS	4096U

struct pvprof_data_header {
	char magic[8];			/* PVPROF_DATA_MAGIC, not terminated */
	uint32_t version;		/* PVPROF_DATA_VERSION */
	uint32_t header_size;		/* sizeof(struct pvprof_data_header) */
	uint64_t flags;			/* 0 */
};

struct pvprof_data_section {
	uint32_t type;			/* PVPROF_DATA_SEC_* */
	uint32_t flags;			/* 0 */
	uint64_t size;			/* payload bytes, padding excluded */
};

/* Strings are NUL-padded; a reader never assumes the NUL is there. */
struct pvprof_data_host {
	uint64_t start_realtime_ns;	/* CLOCK_REALTIME when recording began */
	uint64_t start_monotonic_ns;	/* CLOCK_MONOTONIC then (stream clock) */
	char hostname[64];
	char release[64];		/* uname -r */
	char machine[16];		/* uname -m */
	char tool_version[16];
};

#define PVPROF_DATA_VM_F_WAS_ENABLED	(1U << 0)	/* sampling was on before */
#define PVPROF_DATA_VM_F_ENABLED_BY_US	(1U << 1)	/* record enabled it */
#define PVPROF_DATA_VM_F_ALL		((1U << 2) - 1)

struct pvprof_data_vm {
	uint32_t vmm_pid;
	int32_t vmm_fd;			/* the VM fd's number in the VMM */
	uint32_t flags;			/* PVPROF_DATA_VM_F_* */
	uint32_t event;			/* PVPROF_EVENT_* while recording */
	uint64_t sample_freq;		/* Hz, 0 when period-based */
	uint64_t sample_period;		/* ns or events */
	uint64_t duration_ns;		/* requested (-d), 0 = until stopped */
	char comm[32];			/* the VMM's command name */
	char domain[256];		/* libvirt domain, or empty */
};

#define PVPROF_DATA_STATUS_START	1
#define PVPROF_DATA_STATUS_END		2

/* PVPROF_CTL_STATUS as returned, ctl.vcpus zeroed; nr_vcpus entries follow. */
struct pvprof_data_status {
	uint32_t when;			/* PVPROF_DATA_STATUS_* */
	uint32_t nr_vcpus;		/* struct pvprof_vcpu_status entries */
	struct pvprof_ctl_status ctl;
};

#define PVPROF_DATA_STOP_DURATION	1	/* -d elapsed */
#define PVPROF_DATA_STOP_SIGNAL		2	/* SIGINT or SIGTERM */
#define PVPROF_DATA_STOP_EOF		3	/* the VM went away */
#define PVPROF_DATA_STOP_ERROR		4	/* a read failed */
#define PVPROF_DATA_STOP_MAX		PVPROF_DATA_STOP_ERROR

struct pvprof_data_end {
	uint64_t end_monotonic_ns;
	uint64_t stream_bytes;		/* sum of the stream sections */
	uint64_t stream_reads;		/* number of stream sections */
	uint32_t stop_reason;		/* PVPROF_DATA_STOP_* */
	uint32_t reserved0;
};

_Static_assert(sizeof(struct pvprof_data_header) == 24, "data header size");
_Static_assert(sizeof(struct pvprof_data_section) == 16, "section header size");
_Static_assert(sizeof(struct pvprof_data_host) == 176, "host section size");
_Static_assert(sizeof(struct pvprof_data_vm) == 328, "vm section size");
_Static_assert(sizeof(struct pvprof_data_status) ==
	       8 + sizeof(struct pvprof_ctl_status), "status section size");
_Static_assert(sizeof(struct pvprof_data_end) == 32, "end section size");

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */

/**
 * struct recording_writer - a recording being written
 * @fd: the file
 * @path: its name, for messages
 * @offset: bytes written so far
 * @stream_bytes: stream bytes written
 * @stream_reads: stream sections written
 */
struct recording_writer {
	int fd;
	const char *path;
	uint64_t offset;
	uint64_t stream_bytes;
	uint64_t stream_reads;
};

int recording_writer_open(struct recording_writer *w, const char *path);
int recording_write_section(struct recording_writer *w, uint32_t type,
			    const void *payload, uint64_t size);
int recording_write_status(struct recording_writer *w, uint32_t when,
			   const struct pvprof_ctl_status *ctl,
			   const struct pvprof_vcpu_status *vcpus, uint32_t nr);
int recording_write_stream(struct recording_writer *w, const void *buf,
			   size_t len);
int recording_writer_finish(struct recording_writer *w, uint32_t stop_reason,
			    uint64_t end_monotonic_ns);
void recording_writer_abort(struct recording_writer *w);

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

/**
 * struct recording_status - a STATUS section, copied out of the file
 * @present: the section was there
 * @hdr: its fixed part
 * @vcpus: its entries (hdr.nr_vcpus of them), the reader's own copy
 */
struct recording_status {
	bool present;
	struct pvprof_data_status hdr;
	uint8_t *vcpus;
};

/**
 * struct recording_cut - where a recording that stops inside a section ends
 * @cut: the file ends inside a section (its header, payload or padding)
 * @in_header: inside the section's header: @type and @size are unknown
 * @at: the file's size, where the cut is
 * @section: file offset of the section the cut is in
 * @type: its type
 * @size: its payload size as its header says
 * @kept: the file was read up to here: the end of the last whole stream
 *	entry of a cut STREAM section, else the start of the cut section
 *	(its end when only padding is missing)
 * @entries_lost: stream entries known to be lost: 1 for a cut STREAM
 *	section (the one the cut is in, or one in the bytes that are
 *	missing), 0 when none or none known
 *
 * A recorder that is killed or fails mid-write, a full disk or a copy cut
 * short leave such a file; it is read up to @kept.
 */
struct recording_cut {
	bool cut, in_header;
	uint64_t at, section, size, kept;
	uint32_t type;
	uint32_t entries_lost;
};

/**
 * struct recording - a recording checked by recording_parse() or
 *	recording_load()
 * @fd: the file, read section by section by every walk; -1 in memory
 * @data: the recording's bytes when it is in memory (recording_parse())
 * @len: its size
 * @path: its name for messages, NULL in memory
 * @host: the HOST section (zeroes when missing)
 * @vm: the VM section (zeroes when missing)
 * @has_host: HOST section present
 * @has_vm: VM section present
 * @start: the first STATUS section
 * @end_status: the STATUS section written at the end
 * @end: the END section
 * @has_end: END present: the recording was closed cleanly
 * @cut: where the file ends when it ends inside a section
 * @stream_bytes: stream bytes read (of whole entries, for a cut section)
 * @stream_entries: stream entries in the file
 * @stream_sections: STREAM sections
 *
 * Without END the recording was not closed cleanly, and its HOST, VM and
 * stream may be missing: it is read as far as it goes.
 */
struct recording {
	int fd;
	const uint8_t *data;
	uint64_t len;
	const char *path;
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	bool has_host, has_vm;
	struct recording_status start, end_status;
	struct pvprof_data_end end;
	bool has_end;
	struct recording_cut cut;
	uint64_t stream_bytes;
	uint64_t stream_entries;
	uint64_t stream_sections;
};

/*
 * Called for every stream entry in order; file_offset is the entry's.
 * The view points into the reader's window, valid until @fn returns:
 * whatever outlives the call is copied.
 */
typedef int (*recording_entry_fn)(void *ctx, const struct pvprof_st_view *v,
				   uint64_t file_offset);

int recording_parse(struct recording *r, const void *data, size_t len,
		    char *err, size_t err_size);
int recording_load(struct recording *r, const char *path, char *err,
		   size_t err_size);
int recording_for_each(const struct recording *r, recording_entry_fn fn,
		       void *ctx);
void recording_free(struct recording *r);
void recording_describe_end(const struct recording *r, char *buf, size_t size);
void recording_vcpu(const struct recording_status *st, uint32_t i,
		    struct pvprof_vcpu_status *out);
const char *recording_stop_name(uint32_t reason);

#endif /* KVM_PVPROF_RECORDING_H */
