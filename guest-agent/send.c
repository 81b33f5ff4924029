// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd sender: two queues (live events first, then symbol chunks) drained
 * into /dev/pvprof by one thread, paced by a token bucket below the host's
 * budget.  The host refuses what exceeds its own bucket with EAGAIN: the
 * sender backs off and retries, and gives a message up (counted lost) only
 * after about ten seconds of refusals.  While sampling is off the host
 * would discard everything, so queued messages are dropped uncounted: the
 * whole state is published again when sampling switches on.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pvprofd.h"

/* Bucket depth: an eighth of a second at the configured rate, at least a message. */
#define BURST_DIV		8
#define BACKOFF_MIN_NS		(50ULL * 1000 * 1000)
#define BACKOFF_MAX_NS		(1600ULL * 1000 * 1000)
#define GIVE_UP_NS		(10ULL * 1000 * 1000 * 1000)

struct queue {
	struct sb_msg *head;
	struct sb_msg *tail;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;	/* a message, or stop */
static pthread_cond_t room = PTHREAD_COND_INITIALIZER;	/* bulk below the mark */
static struct queue urgent, bulk;
static uint64_t bulk_bytes;
static struct send_stats stats;
static bool active;
static bool stopping;
static pthread_t thread;
static int dev;

/**
 * msg_new() - a zeroed message with its framing header filled in
 * @type: PVPROF_SB_*
 * @len: the whole message, header included, <= PVPROF_SIDEBAND_MAX_SIZE
 *
 * Return: the message, or NULL when out of memory.
 */
struct sb_msg *msg_new(uint16_t type, uint32_t len)
{
	struct sb_msg *m = calloc(1, sizeof(*m) + len);
	struct pvprof_sideband_hdr *h;

	if (!m)
		return NULL;
	m->len = len;
	h = (struct pvprof_sideband_hdr *)m->data;
	h->type = type;
	h->version = PVPROF_SIDEBAND_VERSION;
	h->size = len;
	h->time_ns = now_ns();
	return m;
}

static void push(struct queue *q, struct sb_msg *m)
{
	m->next = NULL;
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
}

static struct sb_msg *pop(struct queue *q)
{
	struct sb_msg *m = q->head;

	if (m) {
		q->head = m->next;
		if (!q->head)
			q->tail = NULL;
	}
	return m;
}

static void drop_all_locked(struct queue *q)
{
	struct sb_msg *m;

	while ((m = pop(q))) {
		stats.queued_bytes -= m->len;
		if (q == &bulk)
			bulk_bytes -= m->len;
		free(m);
	}
}

/**
 * send_enqueue() - queue one message for the host
 * @m: the message, owned by the queue from now on
 * @bulk_msg: a symbol chunk (sent after every live event)
 *
 * While sampling is off the message is dropped (nobody reads it); when
 * the queues already hold PVPROFD_QUEUE_MAX bytes it is dropped and counted
 * lost.
 */
void send_enqueue(struct sb_msg *m, bool bulk_msg)
{
	pthread_mutex_lock(&lock);
	if (!active) {
		free(m);
	} else if (stats.queued_bytes + m->len > PVPROFD_QUEUE_MAX) {
		stats.lost_messages++;
		stats.lost_bytes += m->len;
		free(m);
	} else {
		stats.queued_bytes += m->len;
		if (bulk_msg)
			bulk_bytes += m->len;
		push(bulk_msg ? &bulk : &urgent, m);
		pthread_cond_signal(&more);
	}
	pthread_mutex_unlock(&lock);
}

/**
 * send_wait_bulk_room() - wait while the bulk queue is above its high mark
 *
 * The ELF reader calls this before producing more chunks, so that a big
 * library cannot grow the queue (and the agent's memory) without bound.
 */
void send_wait_bulk_room(void)
{
	pthread_mutex_lock(&lock);
	while (!stopping && active && bulk_bytes > PVPROFD_BULK_HIGH)
		pthread_cond_wait(&room, &lock);
	pthread_mutex_unlock(&lock);
}

/**
 * send_set_active() - sampling switched on or off
 * @on: the host's state as /dev/pvprof reports it
 */
void send_set_active(bool on)
{
	pthread_mutex_lock(&lock);
	active = on;
	if (!on) {
		drop_all_locked(&urgent);
		drop_all_locked(&bulk);
		pthread_cond_broadcast(&room);
	}
	pthread_mutex_unlock(&lock);
}

/**
 * send_flush() - drop what is queued: a new publication supersedes it
 */
void send_flush(void)
{
	pthread_mutex_lock(&lock);
	drop_all_locked(&urgent);
	drop_all_locked(&bulk);
	pthread_cond_broadcast(&room);
	pthread_mutex_unlock(&lock);
}

void send_get_stats(struct send_stats *st)
{
	pthread_mutex_lock(&lock);
	*st = stats;
	pthread_mutex_unlock(&lock);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Token bucket: wait until @len bytes of budget are there, then take them. */
static void pace(uint32_t len)
{
	static uint64_t tokens, last;
	uint64_t burst = opts.rate / BURST_DIV, now;

	if (burst < PVPROF_SIDEBAND_MAX_SIZE)
		burst = PVPROF_SIDEBAND_MAX_SIZE;
	for (;;) {
		now = now_ns();
		if (!last)
			tokens = burst;
		else
			tokens += (now - last) * opts.rate / 1000000000ULL;
		if (tokens > burst)
			tokens = burst;
		last = now;
		if (tokens >= len)
			break;
		sleep_ns((len - tokens) * 1000000000ULL / opts.rate + 1000);
	}
	tokens -= len;
}

/* Returns false when the device refuses sideband for good. */
static bool deliver(struct sb_msg *m)
{
	uint64_t backoff = BACKOFF_MIN_NS, refused_since = 0;
	ssize_t n;

	for (;;) {
		pace(m->len);
		n = write(dev, m->data, m->len);
		if (n == (ssize_t)m->len) {
			pthread_mutex_lock(&lock);
			stats.sent_messages++;
			stats.sent_bytes += m->len;
			pthread_mutex_unlock(&lock);
			return true;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			uint64_t now = now_ns();

			pthread_mutex_lock(&lock);
			stats.ratelimited++;
			pthread_mutex_unlock(&lock);
			if (!refused_since)
				refused_since = now;
			if (now - refused_since < GIVE_UP_NS && !stopping) {
				sleep_ns(backoff);
				if (backoff < BACKOFF_MAX_NS)
					backoff *= 2;
				continue;
			}
		}
		pthread_mutex_lock(&lock);
		stats.lost_messages++;
		stats.lost_bytes += m->len;
		pthread_mutex_unlock(&lock);
		if (n < 0 && errno == ENODEV) {
			log_err("the host refuses sideband (ENODEV): pvprof is not available to this VM");
			return false;
		}
		if (n < 0 && errno != EAGAIN)
			log_warn("a type %u message of %u bytes was refused: %m",
				 ((struct pvprof_sideband_hdr *)m->data)->type, m->len);
		return true;
	}
}

static void *send_thread(void *unused)
{
	struct sb_msg *m;
	bool ok = true;

	(void)unused;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		m = pop(&urgent);
		if (!m) {
			m = pop(&bulk);
			if (m) {
				bulk_bytes -= m->len;
				if (bulk_bytes <= PVPROFD_BULK_HIGH / 2)
					pthread_cond_broadcast(&room);
			}
		}
		if (!m) {
			pthread_cond_wait(&more, &lock);
			continue;
		}
		stats.queued_bytes -= m->len;
		pthread_mutex_unlock(&lock);
		if (ok)
			ok = deliver(m);
		free(m);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/**
 * send_start() - start the sender thread
 * @dev_fd: /dev/pvprof, open for writing
 *
 * Return: 0 or a negative errno.
 */
int send_start(int dev_fd)
{
	dev = dev_fd;
	return -pthread_create(&thread, NULL, send_thread, NULL);
}

/**
 * send_stop() - stop the sender; what is still queued is dropped
 */
void send_stop(void)
{
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_broadcast(&more);
	pthread_cond_broadcast(&room);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	send_flush();
}
