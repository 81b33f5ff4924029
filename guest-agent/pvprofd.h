/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprofd, the pvprof guest agent: what its files share.
 *
 * Three threads: the collector (main.c, procs.c, kernel.c) watches the
 * guest through perf sideband records and /proc and turns what it sees
 * into sideband messages; the ELF reader (elf.c) turns mapped files into
 * symbol chunks; the sender (send.c) paces the messages into /dev/pvprof
 * below the host's budget.  The table of build-ids is shared between the
 * collector and the ELF reader through liburcu's lock-free hash table.
 */
#ifndef _PVPROFD_H
#define _PVPROFD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/sideband.h"

/* The agent stays below the host's budget (PVPROF_SIDEBAND_DEFAULT_RATE). */
#define PVPROFD_DEFAULT_RATE	(PVPROF_SIDEBAND_DEFAULT_RATE / 10 * 9)
/* Queued bulk messages (symbol chunks) the ELF reader waits on. */
#define PVPROFD_BULK_HIGH	(4U << 20)
/* Queued bytes above which messages are dropped (and counted lost). */
#define PVPROFD_QUEUE_MAX	(16U << 20)
/* The resident set the agent keeps below (documented, checked each second). */
#define PVPROFD_RSS_LIMIT	(32U << 20)

struct pvprofd_opts {
	const char *device;
	uint32_t rate;
	bool use_syslog;
	int verbose;
};

extern struct pvprofd_opts opts;

/* Fill a zeroed NUL-padded field; a string as long as the field has no NUL. */
static inline void set_padded(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size);

	memcpy(dst, src, n);
}

/* log.c */
void log_init(bool use_syslog);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_err(...)	log_msg(3, __VA_ARGS__)
#define log_warn(...)	log_msg(4, __VA_ARGS__)
#define log_info(...)	log_msg(6, __VA_ARGS__)
#define log_debug(...)	log_msg(7, __VA_ARGS__)
uint64_t now_ns(void);

/* send.c: the queue and the paced sender */
struct sb_msg {
	struct sb_msg *next;
	uint32_t len;
	uint8_t data[];
};

struct send_stats {
	uint64_t sent_messages;
	uint64_t sent_bytes;
	uint64_t lost_messages;
	uint64_t lost_bytes;
	uint64_t ratelimited;
	uint64_t queued_bytes;
};

struct sb_msg *msg_new(uint16_t type, uint32_t len);
void send_enqueue(struct sb_msg *m, bool bulk);
void send_wait_bulk_room(void);
void send_set_active(bool active);
void send_flush(void);
int send_start(int dev_fd);
void send_stop(void);
void send_get_stats(struct send_stats *st);

/* kernel.c */
void kernel_prepare(void);
int kernel_publish(void);
void kernel_forget(void);

/* elf.c */
struct file_info {
	struct pvprof_sb_build_id build_id;
	/* PT_LOAD segments: file offset to ELF address. */
	uint32_t nr_loads;
	struct {
		uint64_t offset;
		uint64_t vaddr;
		uint64_t filesz;
	} loads[8];
};

int elf_start(void);
void elf_stop(void);
int elf_file_info(const char *path, int fd, struct file_info *fi);
uint64_t elf_vaddr_of(const struct file_info *fi, uint64_t pgoff);
const struct file_info *elf_vdso_info(uint64_t len);
void elf_want_symbols(const struct pvprof_sb_build_id *id, const char *path,
		      uint32_t pid, uint64_t start, uint64_t end);
void elf_new_publication(void);
bool elf_busy(void);

/* elfsyms.c and unwind.c, the encoders (libelf's Elf) */
struct Elf;
size_t symbol_messages(struct Elf *elf, const struct pvprof_sb_build_id *id,
		       void (*emit)(void *ctx, const void *msg, size_t len),
		       void *ctx);
size_t unwind_messages(struct Elf *elf, const struct pvprof_sb_build_id *id,
		       void (*emit)(void *ctx, const void *msg, size_t len),
		       void *ctx);

/* procs.c */
int procs_open_perf(void);
void procs_close_perf(void);
int procs_perf_fds(int *fds, int max);
void procs_drain_perf(void);
void procs_publish_all(void);
void procs_set_dev(int dev_fd);
uint64_t procs_lost_events(void);

#endif /* _PVPROFD_H */
