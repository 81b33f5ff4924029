// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof record: read a VM's pvprof stream into a recording
 * (doc/pvprof-data.5) for a given time or until interrupted.
 *
 * When the VM is not being sampled, record enables sampling for the
 * duration and disables it again on every way out (end of the duration,
 * SIGINT/SIGTERM/SIGHUP, any error).  After the end it disables first, then
 * drains the stream until it stays empty, so callchains answering the last
 * samples are kept.  Every byte read is written, and the file is synced
 * before the summary is printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "abi/pvprof_ctl.h"
#include "main.h"
#include "record_summary.h"
#include "recording.h"
#include "vm.h"

#define RECORD_DEFAULT_OUTPUT	"pvprof.data"
#define RECORD_MAX_SECONDS	(7ULL * 24 * 3600)
#define RECORD_BUF_SIZE		(64U * 1024)
/* After sampling stops: the stream counts as drained once quiet this long. */
#define DRAIN_QUIET_MS		300
#define DRAIN_MAX_MS		3000
#define STATUS_ATTEMPTS		4

_Static_assert(RECORD_BUF_SIZE >= PVPROF_STREAM_MAX_ENTRY,
	       "a read buffer holds the largest stream entry");

static volatile sig_atomic_t stop_signal;

struct record_args {
	const char *output;
	const char *vm;
	uint64_t seconds;
	bool freq_given;
	uint64_t freq;
	bool event_given;
	uint32_t event;
	bool call_graph_given;
	uint32_t ustack_size;
};

enum {
	OPT_CALL_GRAPH = 256,
};

struct recorder {
	struct record_args args;
	struct vm_session vm;
	struct recording_writer w;
	int stream_fd;
	int vmm_pidfd;		/* -1 when the VMM cannot be watched */
	bool vmm_exited;
	bool enabled_by_us;
	bool progress;
	uint8_t *buf;
	struct record_summary summary;
	uint64_t start_ns;
};

static int record_help(void)
{
	printf("Usage: %1$s " USAGE_RECORD "\n"
	       "       %1$s record help\n"
	       HELP_SPEC_VM
	       HELP_SPEC_EVENT
	       "\n"
	       "Read the VM's pvprof stream into a recording for SECONDS, or until\n"
	       "interrupted (Ctrl-C) or the VM goes away (its VMM exits). When the VM is\n"
	       "not being sampled, record enables sampling for the duration and disables\n"
	       "it again however it ends; a VM sampled already keeps its configuration\n"
	       "and stays enabled.\n"
	       "\n"
	       "  -d SECONDS  how long to record, 1..%2$llu (default: until interrupted)\n"
	       "  -o FILE     the recording (default %3$s), created mode 0600\n"
	       "  -F HZ       samples per second per vCPU when record enables sampling,\n"
	       "              1..%4$d (default %5$d)\n"
	       "  -e EVENT    what drives sampling when record enables it (default\n"
	       "              cpu-clock)\n"
	       "  --call-graph fp|dwarf[,SIZE]\n"
	       "              when record enables sampling: fp, user stacks by frame\n"
	       "              pointers (default); dwarf, each sample also carries the user\n"
	       "              registers and SIZE bytes of user stack (default %6$d, a\n"
	       "              multiple of 8 up to %7$u), which report unwinds with the\n"
	       "              guest agent's unwind tables\n"
	       "  -j, --json  the summary, and errors, as JSON on stdout\n"
	       "\n"
	       "At the end a summary goes to stderr: \"recorded N records, N losses,\n"
	       "N sideband bytes to FILE\", its records being callchains. With -j\n"
	       "it is one JSON object on stdout instead: output, stopped, duration_ns,\n"
	       "stream_bytes, stream_entries, callchains, lost, losses (by reason) and\n"
	       "sideband (messages, bytes). A progress line goes to stderr while it is a\n"
	       "terminal. Read the file with '%1$s report' or '%1$s script'.\n",
	       bin_name, RECORD_MAX_SECONDS, RECORD_DEFAULT_OUTPUT,
	       PVPROF_MAX_FREQ, PVPROF_DEFAULT_FREQ, PVPROF_USTACK_DEFAULT,
	       PVPROF_USTACK_MAX);
	return EXIT_OK;
}

static int record_parse(int argc, char **argv, struct record_args *a, bool *helped)
{
	static const struct option opts[] = {
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char optstring[] = ":d:o:F:e:jh";
	int opt, ret;

	*helped = false;
	a->output = RECORD_DEFAULT_OUTPUT;
	scan_json_option(argc, argv, optstring, opts);
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		ret = EXIT_OK;
		switch (opt) {
		case 'd':
			ret = parse_u64("-d", optarg, 1, RECORD_MAX_SECONDS, &a->seconds);
			break;
		case 'o':
			if (!*optarg)
				return usage_err("record: -o needs a file name");
			a->output = optarg;
			break;
		case 'F':
			ret = parse_u64("-F", optarg, 1, PVPROF_MAX_FREQ, &a->freq);
			a->freq_given = true;
			break;
		case 'e':
			ret = event_parse(optarg, &a->event);
			a->event_given = true;
			break;
		case OPT_CALL_GRAPH:
			ret = parse_call_graph(optarg, &a->ustack_size);
			a->call_graph_given = true;
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			*helped = true;
			return record_help();
		default:
			return option_err(opt, argv);
		}
		if (ret)
			return ret;
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		*helped = true;
		return record_help();
	}
	ret = expect_operands(argc, argv, 1, "VM");
	if (ret)
		return ret;
	a->vm = argv[optind];
	return EXIT_OK;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/*
 * No SA_RESTART: a signal ends the poll() or read() it interrupts.  A
 * closed stderr pipe or the file size limit must not kill record with
 * sampling left on: write() then fails with EPIPE or EFBIG, which is
 * reported, and sampling is restored.
 */
static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGXFSZ, &ign, NULL);
}

/* PVPROF_CTL_STATUS with every vCPU entry; *vcpus is the caller's to free. */
static int fetch_status(struct vm_session *s, struct pvprof_ctl_status *ctl,
			struct pvprof_vcpu_status **vcpus, uint32_t *nr)
{
	uint32_t want = 0;
	int attempt;

	*vcpus = NULL;
	for (attempt = 0; attempt < STATUS_ATTEMPTS; attempt++) {
		free(*vcpus);
		*vcpus = want ? calloc(want, sizeof(**vcpus)) : NULL;
		if (want && !*vcpus) {
			p_err("out of memory for %u vCPUs", want);
			return EXIT_FAILED;
		}
		memset(ctl, 0, sizeof(*ctl));
		ctl->vm_fd = s->vm_fd;
		ctl->nr_vcpus = want;
		ctl->vcpus = (uintptr_t)*vcpus;
		if (ioctl(s->kvm_fd, PVPROF_CTL_STATUS, ctl))
			return vm_session__ioctl_err(s, "status", errno);
		if (ctl->nr_vcpus <= want) {
			*nr = ctl->nr_vcpus;
			return EXIT_OK;
		}
		want = ctl->nr_vcpus;
	}
	p_err("status VM %s: the number of vCPUs kept changing", s->label);
	return EXIT_FAILED;
}

static int write_status(struct recorder *rc, uint32_t when,
			struct pvprof_ctl_status *ctl)
{
	struct pvprof_vcpu_status *vcpus;
	uint32_t nr = 0;
	int ret;

	ret = fetch_status(&rc->vm, ctl, &vcpus, &nr);
	if (!ret && recording_write_status(&rc->w, when, ctl, vcpus, nr))
		ret = EXIT_FAILED;
	free(vcpus);
	return ret;
}

/* Into a zeroed NUL-padded field, cut to leave its last byte NUL. */
static void copy_str(char *dst, size_t size, const char *src)
{
	memcpy(dst, src, strnlen(src, size - 1));
}

static int write_identity(struct recorder *rc, const struct pvprof_ctl_status *ctl,
			  bool was_enabled)
{
	struct pvprof_data_host host = { 0 };
	struct pvprof_data_vm vm = { 0 };
	struct utsname u;

	host.start_realtime_ns = clock_ns(CLOCK_REALTIME);
	host.start_monotonic_ns = rc->start_ns;
	if (!uname(&u)) {
		copy_str(host.hostname, sizeof(host.hostname), u.nodename);
		copy_str(host.release, sizeof(host.release), u.release);
		copy_str(host.machine, sizeof(host.machine), u.machine);
	}
	copy_str(host.tool_version, sizeof(host.tool_version), KVM_PVPROF_VERSION);

	vm.vmm_pid = (uint32_t)rc->vm.pid;
	vm.vmm_fd = rc->vm.vmm_fd;
	vm.flags = (was_enabled ? PVPROF_DATA_VM_F_WAS_ENABLED : 0) |
		   (rc->enabled_by_us ? PVPROF_DATA_VM_F_ENABLED_BY_US : 0);
	vm.event = ctl->event;
	vm.sample_freq = ctl->sample_freq;
	vm.sample_period = ctl->sample_period;
	vm.duration_ns = rc->args.seconds * 1000000000ULL;
	copy_str(vm.comm, sizeof(vm.comm), rc->vm.comm);
	copy_str(vm.domain, sizeof(vm.domain), rc->vm.domain);

	if (recording_write_section(&rc->w, PVPROF_DATA_SEC_HOST, &host, sizeof(host)) ||
	    recording_write_section(&rc->w, PVPROF_DATA_SEC_VM, &vm, sizeof(vm)))
		return EXIT_FAILED;
	return EXIT_OK;
}

static int enable_sampling(struct recorder *rc)
{
	struct pvprof_ctl_enable en = {
		.vm_fd = rc->vm.vm_fd,
		.flags = PVPROF_ENABLE_F_FREQ,
		.event = rc->args.event,
		.sample_freq = rc->args.freq,
		.ustack_size = rc->args.ustack_size,
	};
	int err;

	if (!ioctl(rc->vm.kvm_fd, PVPROF_CTL_ENABLE, &en)) {
		rc->enabled_by_us = true;
		return EXIT_OK;
	}
	err = errno;
	if (err == EOPNOTSUPP)
		p_err_hint("sample on cpu-clock (-e cpu-clock), which needs no PMU",
			   "record VM %s: the host cannot count %s (no PMU)",
			   rc->vm.label, event_name(rc->args.event));
	else
		vm_session__ioctl_err(&rc->vm, "enable", err);
	return EXIT_FAILED;
}

/* Undo enable_sampling(); reports a failure but never gives up earlier. */
static int restore_sampling(struct recorder *rc)
{
	struct pvprof_ctl_vm ctl = { .vm_fd = rc->vm.vm_fd };

	if (!rc->enabled_by_us)
		return EXIT_OK;
	rc->enabled_by_us = false;
	if (!ioctl(rc->vm.kvm_fd, PVPROF_CTL_DISABLE, &ctl))
		return EXIT_OK;
	/* The VM is gone: nothing is left sampling it. */
	if (errno == ENOENT || errno == EBADF)
		return EXIT_OK;
	vm_session__ioctl_err(&rc->vm, "disable (restoring the VM's state)", errno);
	return EXIT_FAILED;
}

/* Return: EXIT_OK, -ENOENT (no stream yet: never enabled), or EXIT_FAILED. */
static int open_stream(struct recorder *rc)
{
	struct pvprof_ctl_vm ctl = { .vm_fd = rc->vm.vm_fd };
	int fd = ioctl(rc->vm.kvm_fd, PVPROF_CTL_STREAM, &ctl);

	if (fd >= 0) {
		rc->stream_fd = fd;
		return EXIT_OK;
	}
	if (errno == ENOENT && !rc->enabled_by_us)
		return -ENOENT;
	if (errno == EBUSY)
		p_err_hint("stop another reader (a 'record' still running?)",
			   "record VM %s: the host allows no more readers of its stream",
			   rc->vm.label);
	else
		vm_session__ioctl_err(&rc->vm, "open the stream of", errno);
	return EXIT_FAILED;
}

/*
 * The reader exists before sampling starts whenever the VM has a stream
 * already, so that it gets every stream entry of the recording, the guest
 * agent's sideband sent when sampling starts included.  A VM never enabled
 * has no stream: enabling creates it, and the reader follows at once.
 */
static int start(struct recorder *rc, bool was_enabled)
{
	int ret = open_stream(rc);

	if (ret == -ENOENT) {
		ret = enable_sampling(rc);
		return ret ? ret : open_stream(rc);
	}
	if (ret || was_enabled)
		return ret;
	ret = enable_sampling(rc);
	if (ret) {
		close(rc->stream_fd);
		rc->stream_fd = -1;
	}
	return ret;
}

static void show_progress(struct recorder *rc, uint64_t now, uint64_t *last_ns,
			  uint64_t *last_callchains)
{
	double dt = (double)(now - *last_ns) / 1e9;

	if (!rc->progress || dt < 1.0)
		return;
	fprintf(stderr, "\r%.0f s: %.0f samples/s, %" PRIu64 " entries, %" PRIu64
		" losses   ", (double)(now - rc->start_ns) / 1e9,
		(double)(rc->summary.callchains - *last_callchains) / dt,
		rc->summary.stream_entries, rc->summary.lost);
	*last_ns = now;
	*last_callchains = rc->summary.callchains;
}

/*
 * One read.  Return: 1 data was written, 0 nothing to read now, -1 an error
 * (printed), -2 end of file.
 */
static int read_once(struct recorder *rc)
{
	ssize_t n = read(rc->stream_fd, rc->buf, RECORD_BUF_SIZE);

	if (n > 0) {
		if (recording_write_stream(&rc->w, rc->buf, (size_t)n))
			return -1;
		record_summary_count(&rc->summary, rc->buf, (size_t)n);
		return 1;
	}
	if (n == 0)
		return -2;
	if (errno == EINTR || errno == EAGAIN)
		return 0;
	p_err("read the stream of VM %s: %s", rc->vm.label, strerror(errno));
	return -1;
}

/*
 * Records until the duration ends, a signal comes or the VM goes away: its
 * stream ends, or its VMM exits (the VM fd record holds keeps the VM, and
 * so its stream, alive until record closes it).
 */
static uint32_t record_loop(struct recorder *rc)
{
	uint64_t deadline = rc->args.seconds ?
			    rc->start_ns + rc->args.seconds * 1000000000ULL : 0;
	uint64_t last_ns = rc->start_ns, last_callchains = 0;
	struct pollfd pfd[2] = {
		{ .fd = rc->stream_fd, .events = POLLIN },
		{ .fd = rc->vmm_pidfd, .events = POLLIN },
	};

	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int timeout = 1000, ret;

		if (stop_signal)
			return PVPROF_DATA_STOP_SIGNAL;
		if (deadline && now >= deadline)
			return PVPROF_DATA_STOP_DURATION;
		if (deadline && (deadline - now) / 1000000 < 1000)
			timeout = (int)((deadline - now + 999999) / 1000000);
		show_progress(rc, now, &last_ns, &last_callchains);
		ret = poll(pfd, rc->vmm_pidfd >= 0 ? 2 : 1, timeout);
		if (ret < 0 && errno != EINTR) {
			p_err("poll the stream of VM %s: %s", rc->vm.label, strerror(errno));
			return PVPROF_DATA_STOP_ERROR;
		}
		if (ret <= 0)
			continue;
		if (rc->vmm_pidfd >= 0 && pfd[1].revents) {
			rc->vmm_exited = true;
			return PVPROF_DATA_STOP_EOF;
		}
		ret = read_once(rc);
		if (ret == -1)
			return PVPROF_DATA_STOP_ERROR;
		if (ret == -2)
			return PVPROF_DATA_STOP_EOF;
	}
}

/*
 * After sampling stopped: read until the stream stays empty for
 * DRAIN_QUIET_MS (callchains answering the last notices arrive at the vCPUs'
 * next entries), at most DRAIN_MAX_MS.  A VM that someone else keeps
 * sampling never goes quiet: then only what is queued now is read.
 */
static int drain(struct recorder *rc, bool sampling_stopped)
{
	struct pollfd pfd = { .fd = rc->stream_fd, .events = POLLIN };
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + DRAIN_MAX_MS * 1000000ULL;
	int flags = fcntl(rc->stream_fd, F_GETFL);

	if (flags < 0 || fcntl(rc->stream_fd, F_SETFL, flags | O_NONBLOCK)) {
		p_err("stream of VM %s: cannot make it non-blocking: %s",
		      rc->vm.label, strerror(errno));
		return -1;
	}
	for (;;) {
		int ret;

		do {
			ret = read_once(rc);
		} while (ret == 1 && clock_ns(CLOCK_MONOTONIC) < end);
		if (ret == -1)
			return -1;
		if (ret == -2 || !sampling_stopped || clock_ns(CLOCK_MONOTONIC) >= end)
			return 0;
		/* A second signal ends the drain at once. */
		if (stop_signal)
			return 0;
		ret = poll(&pfd, 1, DRAIN_QUIET_MS);
		if (ret == 0)
			return 0;
		if (ret < 0 && errno != EINTR) {
			p_err("poll the stream of VM %s: %s", rc->vm.label, strerror(errno));
			return -1;
		}
	}
}

static int record_run(struct recorder *rc)
{
	struct pvprof_ctl_status ctl;
	struct pvprof_vcpu_status *vcpus;
	uint64_t end_ns;
	uint32_t nr, stop;
	bool was_enabled;
	int ret, ret2;

	ret = fetch_status(&rc->vm, &ctl, &vcpus, &nr);
	free(vcpus);
	if (ret)
		return ret;
	was_enabled = ctl.flags & PVPROF_STATUS_F_ENABLED;
	if (was_enabled && (rc->args.freq_given || rc->args.event_given ||
			    rc->args.call_graph_given)) {
		p_err_hint("record as it is sampled, or 'disable' it first",
			   "record VM %s: it is sampled already (%s); -F, -e and --call-graph apply only when record enables sampling",
			   rc->vm.label, event_name(ctl.event) ? event_name(ctl.event) : "unknown event");
		return EXIT_USAGE;
	}
	if (recording_writer_open(&rc->w, rc->args.output))
		return EXIT_FAILED;
	catch_stop_signals();
	ret = start(rc, was_enabled);
	if (ret)
		goto restore;
	rc->start_ns = clock_ns(CLOCK_MONOTONIC);
	/* The configuration in force, with the defaults the host resolved. */
	ret = fetch_status(&rc->vm, &ctl, &vcpus, &nr);
	if (!ret)
		ret = write_identity(rc, &ctl, was_enabled);
	if (!ret && recording_write_status(&rc->w, PVPROF_DATA_STATUS_START, &ctl,
					   vcpus, nr))
		ret = EXIT_FAILED;
	free(vcpus);
	if (ret)
		goto close_stream;

	rc->vmm_pidfd = sys_pidfd_open(rc->vm.pid);
	stop = record_loop(rc);
	if (rc->vmm_pidfd >= 0)
		close(rc->vmm_pidfd);
	if (rc->progress)
		fputc('\n', stderr);
	/* From here on, a signal only cuts the drain short. */
	stop_signal = 0;
	ret = restore_sampling(rc);
	/* Without its VMM the VM runs no more: only what is queued is left. */
	if (stop != PVPROF_DATA_STOP_ERROR &&
	    (stop != PVPROF_DATA_STOP_EOF || rc->vmm_exited) &&
	    drain(rc, !was_enabled && !rc->vmm_exited))
		stop = PVPROF_DATA_STOP_ERROR;
	/* Our VM fd keeps the VM's pvprof state: its final counters. */
	if (write_status(rc, PVPROF_DATA_STATUS_END, &ctl))
		ret = EXIT_FAILED;
	end_ns = clock_ns(CLOCK_MONOTONIC);
	ret2 = recording_writer_finish(&rc->w, stop, end_ns);
	close(rc->stream_fd);
	if (ret2)
		return EXIT_FAILED;
	rc->summary.output = rc->args.output;
	rc->summary.stop_reason = stop;
	rc->summary.duration_ns = end_ns - rc->start_ns;
	rc->summary.stream_bytes = rc->w.stream_bytes;
	/*
	 * With -j the summary is the document on stdout, where errors go too,
	 * and not getting it out is a failure; the text line is a diagnostic.
	 */
	if (record_summary_write(json_output ? stdout : stderr, &rc->summary, json_output) &&
	    json_output)
		ret = EXIT_FAILED;
	if (stop == PVPROF_DATA_STOP_ERROR)
		return EXIT_FAILED;
	return ret;

close_stream:
	close(rc->stream_fd);
restore:
	restore_sampling(rc);
	recording_writer_abort(&rc->w);
	return ret ? ret : EXIT_FAILED;
}

int do_record(int argc, char **argv)
{
	struct recorder rc = { .stream_fd = -1 };
	bool helped;
	int ret;

	ret = record_parse(argc, argv, &rc.args, &helped);
	if (ret || helped)
		return ret;
	rc.buf = malloc(RECORD_BUF_SIZE);
	if (!rc.buf) {
		p_err("out of memory for the read buffer");
		return EXIT_FAILED;
	}
	rc.progress = isatty(STDERR_FILENO);
	ret = vm_session__open(&rc.vm, rc.args.vm);
	if (!ret) {
		ret = record_run(&rc);
		vm_session__close(&rc.vm);
	}
	free(rc.buf);
	return ret;
}
