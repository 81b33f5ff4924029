// SPDX-License-Identifier: GPL-2.0
/*
 * pvprofd, the pvprof guest agent: publishes what the host needs to name the
 * guest's addresses (kernel and module symbols, processes, mappings,
 * build-ids and ELF symbols) through the guest driver's /dev/pvprof.
 *
 * The collector loop here waits on the perf rings and on /dev/pvprof, whose
 * generation tells it that sampling switched on: sideband sent while
 * sampling was off was discarded by the host, so it publishes everything
 * again then.  See pvprofd.8.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "pvprofd.h"

#define TICK_MS			100
#define AGENT_REPORT_NS		(5ULL * 1000 * 1000 * 1000)
#define SECOND_NS		(1000ULL * 1000 * 1000)
#define DRAIN_AT_EXIT_NS	(3ULL * 1000 * 1000 * 1000)

struct pvprofd_opts opts = {
	.device = "/dev/pvprof",
	.rate = PVPROFD_DEFAULT_RATE,
};

static volatile sig_atomic_t stop;
static uint32_t republished;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pvprofd [OPTIONS]\n"
		"Publish this guest's symbols, processes and mappings to the pvprof host\n"
		"through the guest driver's sideband device.\n\n"
		"  -d, --device PATH   sideband device (default /dev/pvprof)\n"
		"  -r, --rate BYTES    bytes per second to send at most (default %u,\n"
		"                      at most the host's %u)\n"
		"  -s, --syslog        log to syslog instead of stderr\n"
		"  -v, --verbose       log debug messages too\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 after SIGTERM/SIGINT, 1 on a runtime error, 2 on bad usage.\n",
		PVPROFD_DEFAULT_RATE, PVPROF_SIDEBAND_DEFAULT_RATE);
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "rate", required_argument, NULL, 'r' },
		{ "syslog", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "d:r:svh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opts.device = optarg;
			break;
		case 'r':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v < PVPROF_SIDEBAND_MAX_SIZE ||
			    v > PVPROF_SIDEBAND_DEFAULT_RATE) {
				fprintf(stderr, "pvprofd: --rate expects %u..%u bytes/s, got '%s'\n",
					PVPROF_SIDEBAND_MAX_SIZE, PVPROF_SIDEBAND_DEFAULT_RATE,
					optarg);
				return 2;
			}
			opts.rate = v;
			break;
		case 's':
			opts.use_syslog = true;
			break;
		case 'v':
			opts.verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "pvprofd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return 0;
}

static void send_agent_stats(void)
{
	struct pvprof_sb_agent *a;
	struct send_stats st;
	struct sb_msg *m;

	send_get_stats(&st);
	m = msg_new(PVPROF_SB_AGENT, sizeof(*a));
	if (!m)
		return;
	a = (struct pvprof_sb_agent *)m->data;
	a->pid = getpid();
	a->republish = republished;
	a->sent_messages = st.sent_messages;
	a->sent_bytes = st.sent_bytes;
	a->lost_messages = st.lost_messages;
	a->lost_bytes = st.lost_bytes;
	send_enqueue(m, false);
}

/* Resident set in bytes, from /proc/self/statm. */
static uint64_t rss_bytes(void)
{
	unsigned long size, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static bool read_state(int dev, struct pvprof_dev_state *st)
{
	ssize_t n = read(dev, st, sizeof(*st));

	if (n != (ssize_t)sizeof(*st)) {
		log_err("read %s: %s", opts.device, n < 0 ? strerror(errno) : "short read");
		return false;
	}
	return true;
}

static int run(int dev)
{
	struct pollfd pfd[65];
	int fds[64];
	struct pvprof_dev_state st;
	uint64_t last_report = 0, last_second = 0, now;
	struct send_stats ss, last_ss = { 0 };
	uint64_t generation;
	bool active, busy = false;
	int nfds, i;

	if (!read_state(dev, &st))
		return 1;
	active = st.state & PVPROF_STATE_ACTIVE;
	generation = st.generation;
	send_set_active(active);
	if (active) {
		log_info("sampling is on (generation %llu, event %u, period %llu): publishing",
			 (unsigned long long)st.generation, st.event,
			 (unsigned long long)st.period);
		republished++;
		procs_publish_all();
	} else {
		log_info("sampling is off: waiting for it to start");
	}
	/* Rings beyond the first 64 are drained on every tick all the same. */
	pfd[0] = (struct pollfd){ .fd = dev, .events = POLLIN };
	nfds = 1 + procs_perf_fds(fds, 64);
	for (i = 1; i < nfds; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i - 1], .events = POLLIN };
	while (!stop) {
		if (poll(pfd, nfds, TICK_MS) < 0 && errno != EINTR) {
			log_err("poll: %m");
			return 1;
		}
		procs_drain_perf();
		now = now_ns();
		if (!(pfd[0].revents & POLLIN) && now - last_second < SECOND_NS)
			continue;
		last_second = now;
		if (!read_state(dev, &st))
			return 1;
		if (st.generation != generation && (st.state & PVPROF_STATE_ACTIVE)) {
			log_info("sampling is on (generation %llu, event %u, period %llu): publishing",
				 (unsigned long long)st.generation, st.event,
				 (unsigned long long)st.period);
			generation = st.generation;
			active = true;
			send_set_active(true);
			republished++;
			procs_publish_all();
			last_report = 0;
		} else if (active && !(st.state & PVPROF_STATE_ACTIVE)) {
			log_info("sampling switched off");
			active = false;
			send_set_active(false);
		}
		send_get_stats(&ss);
		if (ss.queued_bytes || elf_busy()) {
			busy = true;
		} else if (busy) {
			busy = false;
			log_info("sideband queue drained: %llu messages (%llu bytes) sent so far",
				 (unsigned long long)ss.sent_messages,
				 (unsigned long long)ss.sent_bytes);
		}
		if (active && now - last_report >= AGENT_REPORT_NS &&
		    memcmp(&ss, &last_ss, sizeof(ss))) {
			send_agent_stats();
			last_report = now;
			last_ss = ss;
		}
		if (rss_bytes() > PVPROFD_RSS_LIMIT) {
			log_warn("resident set %llu KiB above %u KiB: dropping queued messages",
				 (unsigned long long)(rss_bytes() >> 10), PVPROFD_RSS_LIMIT >> 10);
			send_flush();
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct send_stats ss;
	uint64_t deadline;
	int dev, ret;

	ret = parse_args(argc, argv);
	if (ret)
		return ret;
	log_init(opts.use_syslog);
	dev = open(opts.device, O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		log_err("cannot open %s: %m (is pvprof_guest loaded, and does the host offer sideband?)",
			opts.device);
		return 1;
	}
	procs_set_dev(dev);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = procs_open_perf();
	if (ret) {
		log_err("cannot follow processes with perf: %s", strerror(-ret));
		goto out_dev;
	}
	ret = elf_start();
	if (ret) {
		log_err("cannot start the ELF reader: %s", strerror(-ret));
		goto out_perf;
	}
	ret = send_start(dev);
	if (ret) {
		log_err("cannot start the sender: %s", strerror(-ret));
		goto out_elf;
	}
	log_info("started: %s, at most %u bytes/s", opts.device, opts.rate);
	kernel_prepare();
	ret = run(dev);

	/* The counters so far, so that the recording ends with the totals. */
	send_agent_stats();
	deadline = now_ns() + DRAIN_AT_EXIT_NS;
	do {
		usleep(50 * 1000);
		send_get_stats(&ss);
	} while (ss.queued_bytes && now_ns() < deadline);
	log_info("sent %llu messages (%llu bytes), lost %llu (%llu bytes), rate-limited %llu times, perf lost %llu records",
		 (unsigned long long)ss.sent_messages, (unsigned long long)ss.sent_bytes,
		 (unsigned long long)ss.lost_messages, (unsigned long long)ss.lost_bytes,
		 (unsigned long long)ss.ratelimited, (unsigned long long)procs_lost_events());
	send_stop();
	kernel_forget();
out_elf:
	elf_stop();
out_perf:
	procs_close_perf();
out_dev:
	close(dev);
	return ret ? 1 : 0;
}
