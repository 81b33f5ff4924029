// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof's perf overflow handler from real NMI context (issue #4).
 *
 * Hardware PMU events call pvprof_overflow() (host-kvm/pvprof/sample.c)
 * from the PMI, an NMI; the nested test host has no PMU, so cpu-clock
 * calls it from its hrtimer in hardirq only.  Here the test module
 * pvprof_nmi_test.ko (tests/host/nmi-module) makes NMIs do it: while the
 * guest below spins and answers its notices, run-configs.sh's qmp-nmis.sh
 * injects NMIs into L1 through QMP on this program's request, and for each
 * one that arrives while the vCPU runs guest code the module calls the
 * vCPU's pvprof perf event's overflow handler in the NMI.  Sampling is
 * enabled at the lowest rate (one cpu-clock sample per 10 s of vCPU time),
 * so nearly every sample comes from an NMI.
 *
 * Checks: the NMIs reached the module, many arrived in guest mode and were
 * forwarded, each forwarded NMI is a pvprof sample (samples grew by the
 * forwarded count, give or take the rare cpu-clock sample), the books
 * balance with callchains for them, the stream's callchains pass the
 * callchain rules and carry the guest IPs the host sampled, and L1's kernel log got
 * no warning, lockdep or KASAN report and no line about an unclaimed NMI
 * (on the microvm L1 an NMI without owner reads as a "PCI system error").
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kvm_util.h"
#include "pvprof_guest.h"
#include "pvprof_host_util.h"
#include "core/guest.h"

enum { STAGE_REGISTERED = 1, STAGE_TICK, STAGE_QUIESCED };

#define BUF_GPA		0x300000ULL
#define BUF_SIZE	(4 * PVPROF_PAGE_SIZE)
/* Ticks long enough that most of the time is spent in guest mode. */
#define TICK_CYCLES	(60ULL * 1000 * 1000)
/* The lowest cpu-clock rate: a sample per 10 s of the vCPU thread's time. */
#define SLOW_PERIOD_NS	(10ULL * 1000 * 1000 * 1000)
/* What qmp-nmis.sh injects: NMIs, and milliseconds between two. */
#define NMI_COUNT	200
#define NMI_INTERVAL_MS	15
/* Bounds of the waits on the injector and on the guest's answers. */
#define INJECT_SECONDS	180
#define SETTLE_SECONDS	30

#define MODULE_NAME	"pvprof_nmi_test"
#define MODULE_DEBUGFS	"/sys/kernel/debug/" MODULE_NAME "/"

static struct pvprof_guest_buf gbuf;
static volatile uint32_t g_stop;
static volatile uint64_t g_claimed, g_unclaimed;

/* The program image: where every guest IP must be. */
extern char __executable_start[], etext[];

static void guest_nmi(struct ex_regs *regs)
{
	struct pvprof_nmi_result res;

	if (pvprof_guest_nmi(&gbuf, pvprof_guest_capture_rip, regs, &res))
		g_claimed++;
	else
		g_unclaimed++;
}

/* Register, spin in ticks until told to stop, unregister. */
static void guest_code(void)
{
	memset((void *)BUF_GPA, 0, BUF_SIZE);
	GUEST_ASSERT(!pvprof_guest_buf_init(&gbuf, (void *)BUF_GPA, BUF_SIZE));
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_REGISTER, BUF_GPA, BUF_SIZE, 0), 0);
	GUEST_SYNC(STAGE_REGISTERED);
	while (!g_stop) {
		uint64_t start = guest_rdtsc();

		while (guest_rdtsc() - start < TICK_CYCLES)
			__asm__ volatile("pause");
		GUEST_SYNC(STAGE_TICK);
	}
	GUEST_ASSERT_EQ(pvprof_hypercall(PVPROF_OP_UNREGISTER, 0, 0, 0), 0);
	GUEST_SYNC_ARGS(STAGE_QUIESCED, g_claimed, g_unclaimed, 0);
	GUEST_DONE();
}

/* --- the test module --- */

static void module_unload(void)
{
	syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK);
}

static void module_unload_on_alarm(int sig)
{
	module_unload();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* pvprof_overflow's address in kvm.ko, from /proc/kallsyms. */
static unsigned long pvprof_overflow_address(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long addr = 0;
	char line[512];

	TEST_ASSERT(f, "cannot open /proc/kallsyms");
	while (fgets(line, sizeof(line), f)) {
		char type, name[128], mod[64];
		unsigned long a;

		if (sscanf(line, "%lx %c %127s [%63[^]]]", &a, &type, name, mod) == 4 &&
		    !strcmp(name, "pvprof_overflow") && !strcmp(mod, "kvm")) {
			addr = a;
			break;
		}
	}
	fclose(f);
	TEST_ASSERT(addr, "no pvprof_overflow [kvm] with an address in /proc/kallsyms");
	return addr;
}

/* Load pvprof_nmi_test.ko; it is unloaded again on every exit path. */
static void module_load(void)
{
	struct sigaction sa = { .sa_handler = module_unload_on_alarm };
	const char *o = getenv("O");
	char path[512], params[64];
	int fd;

	if (getenv("PVPROF_NMI_TEST_MODULE"))
		snprintf(path, sizeof(path), "%s", getenv("PVPROF_NMI_TEST_MODULE"));
	else
		snprintf(path, sizeof(path), "%s/tests/host/nmi-module/" MODULE_NAME ".ko",
			 o ? o : "out");
	snprintf(params, sizeof(params), "handler=%#lx", pvprof_overflow_address());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	TEST_ASSERT(fd >= 0, "%s: %s (make -C tests/host build, after make modules, builds it)",
		    path, strerror(errno));
	/* A copy an interrupted run left behind. */
	module_unload();
	TEST_ASSERT(!atexit(module_unload), "atexit");
	TEST_ASSERT(!sigaction(SIGALRM, &sa, NULL), "sigaction");
	TEST_ASSERT(!syscall(SYS_finit_module, fd, params, 0), "finit_module %s %s: %s",
		    path, params, strerror(errno));
	close(fd);
}

struct module_counts {
	uint64_t nmis, forwarded, not_in_guest, no_event;
};

static uint64_t module_counter(const char *name)
{
	char path[128];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), MODULE_DEBUGFS "%s", name);
	f = fopen(path, "r");
	TEST_ASSERT(f, "cannot open %s", path);
	TEST_ASSERT(fscanf(f, "%llu", &v) == 1, "cannot parse %s", path);
	fclose(f);
	return v;
}

static void module_counts(struct module_counts *m)
{
	m->nmis = module_counter("nmis");
	m->forwarded = module_counter("forwarded");
	m->not_in_guest = module_counter("not_in_guest");
	m->no_event = module_counter("no_event");
}

/* --- the injector outside L1 (run-configs.sh's qmp-nmis.sh) --- */

static void nmi_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void request_nmis(const char *dir, unsigned int count, unsigned int interval_ms)
{
	char tmp[512], req[512], done[512];
	FILE *f;

	nmi_path(tmp, sizeof(tmp), dir, "request.tmp");
	nmi_path(req, sizeof(req), dir, "request");
	nmi_path(done, sizeof(done), dir, "done");
	TEST_ASSERT(!unlink(done) || errno == ENOENT, "unlink %s", done);
	f = fopen(tmp, "w");
	TEST_ASSERT(f, "cannot create %s", tmp);
	fprintf(f, "%u %u\n", count, interval_ms);
	TEST_ASSERT(!fclose(f), "write %s", tmp);
	TEST_ASSERT(!rename(tmp, req), "rename to %s", req);
}

/* The injector's answer once it has one: true with *sent, else false. */
static bool nmis_done(const char *dir, unsigned int *sent)
{
	char path[512], line[256] = "";
	FILE *f;

	nmi_path(path, sizeof(path), dir, "done");
	f = fopen(path, "r");
	if (!f)
		return false;
	TEST_ASSERT(fgets(line, sizeof(line), f), "empty %s", path);
	fclose(f);
	TEST_ASSERT(sscanf(line, "sent %u", sent) == 1, "the NMI injector says: %s", line);
	return true;
}

/* --- L1's kernel log and NMI count --- */

/* /dev/kmsg positioned after every record already logged. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	TEST_ASSERT(fd >= 0, "open /dev/kmsg");
	TEST_ASSERT(lseek(fd, 0, SEEK_END) >= 0, "lseek /dev/kmsg");
	return fd;
}

/*
 * Records logged since kmsg_open(): the number of kernel reports (and the
 * first in @first), and of the module's NMI handler having "taken too
 * long" (TCG may deschedule L1 in the middle of any handler: reported, not
 * failed).
 */
static unsigned int kmsg_reports(int fd, char *first, size_t len, unsigned int *slow_nmis)
{
	static const char *const bad[] = {
		"Uhhuh", "unknown reason", "Dazed and confused", "PCI system error",
		"IOCK error", "WARNING:", "BUG:",
		"Oops", "general protection", "lockdep", "KASAN", "UBSAN",
	};
	unsigned int reports = 0, i;
	char rec[2048];

	*slow_nmis = 0;
	first[0] = '\0';
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *msg;

		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten: go on with the next */
		if (n < 0 && errno == EAGAIN)
			break;
		TEST_ASSERT(n > 0, "read /dev/kmsg: %s", strerror(errno));
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = '\0';
		if (strstr(msg, "took too long to run") && strstr(msg, MODULE_NAME))
			(*slow_nmis)++;
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			if (!strstr(msg, bad[i]))
				continue;
			if (!reports++)
				snprintf(first, len, "%.200s", msg);
			break;
		}
	}
	return reports;
}

/* NMIs L1 took so far, all CPUs (/proc/interrupts). */
static uint64_t l1_nmis(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	uint64_t total = 0;
	char line[4096];

	TEST_ASSERT(f, "cannot open /proc/interrupts");
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "NMI:", 4))
			continue;
		for (p += 4;; p = end) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			total += v;
		}
	}
	fclose(f);
	return total;
}

/* --- the case --- */

struct chain_check {
	uint64_t ip_matches, in_image;
};

static void on_callchain(void *arg, const struct pvprof_st_view *v)
{
	struct chain_check *cc = arg;
	uint64_t ip = v->u.callchain.notice_ip;

	if (pvprof_st_frame(v, 0) - PVPROF_KERNEL_HALF_START == ip)
		cc->ip_matches++;
	if (ip >= (uint64_t)__executable_start && ip < (uint64_t)etext)
		cc->in_image++;
}

static void tick(struct kvm_vcpu *vcpu)
{
	vcpu_run_expect_sync(vcpu, STAGE_TICK, NULL);
}

static void test_overflow_handler_in_nmi(void)
{
	struct pvprof_ctl_enable en = {
		.event = PVPROF_EVENT_CPU_CLOCK,
		.sample_period = SLOW_PERIOD_NS,
	};
	const char *dir = getenv("PVPROF_QMP_NMI_DIR");
	struct pvprof_stream_counts sc = { 0 };
	struct pvprof_vcpu_status vs0, vs;
	struct chain_check cc = { 0 };
	struct module_counts m;
	uint64_t samples, callchains, sample_losses, notice_losses, irq_nmis, t0, elapsed;
	uint64_t deadline, next_poll, cpu_clock_bound;
	unsigned int sent = 0, reports, slow_nmis;
	char first_report[256];
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	struct ucall uc;
	int stream_fd, kmsg;

	if (!dir || !*dir)
		test_skip("PVPROF_QMP_NMI_DIR is not set: run through tests/host/run-configs.sh, whose qmp-nmis.sh injects the NMIs");
	kmsg = kmsg_open();
	module_load();
	module_counts(&m);
	TEST_ASSERT(!m.nmis, "%llu NMIs before any was asked for", (unsigned long long)m.nmis);

	vm = vm_create_with_one_vcpu(&vcpu, guest_code);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi);
	pvprof_enable(vm, &en);
	stream_fd = pvprof_stream_open(vm);
	vcpu_run_expect_sync(vcpu, STAGE_REGISTERED, NULL);
	/* The entry after ENABLE made the perf event on this thread. */
	tick(vcpu);
	pvprof_vcpu_status(vm, 1, 0, &vs0);
	TEST_ASSERT_EQ(vs0.registered, 1);
	irq_nmis = l1_nmis();

	t0 = test_now_ns();
	request_nmis(dir, NMI_COUNT, NMI_INTERVAL_MS);
	deadline = t0 + INJECT_SECONDS * 1000000000ULL;
	for (next_poll = 0;; tick(vcpu)) {
		uint64_t now = test_now_ns();

		/* Looking into the share costs L1 time: at most every 50 ms. */
		if (now < next_poll)
			continue;
		if (nmis_done(dir, &sent))
			break;
		TEST_ASSERT(now < deadline, "the injector did not answer in %d s",
			    INJECT_SECONDS);
		next_poll = now + 50 * 1000000ULL;
	}
	TEST_ASSERT_EQ(sent, NMI_COUNT);
	/*
	 * The last NMI may still be on its way; then the notices of the last
	 * samples are answered.
	 */
	deadline = test_now_ns() + SETTLE_SECONDS * 1000000000ULL;
	for (;;) {
		tick(vcpu);
		module_counts(&m);
		pvprof_vcpu_status(vm, 1, 0, &vs);
		if (m.nmis >= sent && vs.notices == vs.callchains + pvprof_notice_losses(&vs))
			break;
		if (test_now_ns() > deadline)
			break;
	}
	irq_nmis = l1_nmis() - irq_nmis;
	elapsed = test_now_ns() - t0;

	guest_var(vm, g_stop) = 1;
	pvprof_disable(vm);
	vcpu_run_expect_sync(vcpu, STAGE_QUIESCED, &uc);
	vcpu_run_expect_done(vcpu);
	pvprof_vcpu_status(vm, 1, 0, &vs);
	module_counts(&m);
	module_unload();
	pvprof_assert_books(&vs, "after the NMIs");
	sc.on_callchain = on_callchain;
	sc.arg = &cc;
	pvprof_stream_read(stream_fd, &sc, false);
	reports = kmsg_reports(kmsg, first_report, sizeof(first_report), &slow_nmis);

	samples = vs.samples - vs0.samples;
	callchains = vs.callchains - vs0.callchains;
	sample_losses = pvprof_sample_losses(&vs) - pvprof_sample_losses(&vs0);
	notice_losses = pvprof_notice_losses(&vs) - pvprof_notice_losses(&vs0);
	cpu_clock_bound = elapsed / SLOW_PERIOD_NS + 1;
	fprintf(stderr, "# measured: nmi_context: %u NMIs injected in %llu ms, L1 took %llu NMIs; module: %llu NMIs claimed, %llu forwarded, %llu not in guest mode, %llu without event; samples +%llu (sample losses +%llu: throttled +%llu, slot busy +%llu), callchains +%llu, notice losses +%llu, pvprof NMIs +%llu; guest claimed %llu, left %llu; stream callchains %llu (notice IP = interrupted IP in %llu, in the image %llu); slow NMI handler notes %u\n",
		sent, (unsigned long long)(elapsed / 1000000), (unsigned long long)irq_nmis,
		(unsigned long long)m.nmis, (unsigned long long)m.forwarded,
		(unsigned long long)m.not_in_guest, (unsigned long long)m.no_event,
		(unsigned long long)samples, (unsigned long long)sample_losses,
		(unsigned long long)(vs.losses[PVPROF_LOSS_THROTTLED] -
				     vs0.losses[PVPROF_LOSS_THROTTLED]),
		(unsigned long long)(vs.losses[PVPROF_LOSS_SLOT_BUSY] -
				     vs0.losses[PVPROF_LOSS_SLOT_BUSY]),
		(unsigned long long)callchains, (unsigned long long)notice_losses,
		(unsigned long long)(vs.nmis - vs0.nmis),
		(unsigned long long)uc.args[1], (unsigned long long)uc.args[2],
		(unsigned long long)sc.callchains, (unsigned long long)cc.ip_matches,
		(unsigned long long)cc.in_image, slow_nmis);

	TEST_ASSERT(!reports, "%u kernel report(s) in L1's log, the first: %s", reports,
		    first_report);
	/* Every NMI reached the module, less any two QEMU merged into one. */
	TEST_ASSERT(m.nmis <= sent && m.nmis >= sent * 9 / 10,
		    "the module saw %llu of the %u NMIs injected",
		    (unsigned long long)m.nmis, sent);
	TEST_ASSERT_EQ(m.nmis, m.forwarded + m.not_in_guest + m.no_event);
	TEST_ASSERT(m.no_event == 0, "%llu NMIs in guest mode found no pvprof event",
		    (unsigned long long)m.no_event);
	/*
	 * The guest spins, but every sample, tick and L1 timer interrupt costs
	 * exits: measured, 63-86% of the NMIs find it in guest mode on the
	 * distro kernel, 33-57% on make check-debug's.
	 */
	TEST_ASSERT(m.forwarded >= m.nmis / 5, "only %llu of %llu NMIs forwarded",
		    (unsigned long long)m.forwarded, (unsigned long long)m.nmis);
	/* Each forwarded NMI is one sample; cpu-clock adds one per 10 s at most. */
	TEST_ASSERT(samples >= m.forwarded && samples <= m.forwarded + cpu_clock_bound,
		    "samples +%llu for %llu forwarded NMIs (cpu-clock adds at most %llu)",
		    (unsigned long long)samples, (unsigned long long)m.forwarded,
		    (unsigned long long)cpu_clock_bound);
	TEST_ASSERT(callchains + sample_losses + notice_losses >= m.forwarded,
		    "callchains +%llu, losses +%llu, for %llu forwarded NMIs",
		    (unsigned long long)callchains,
		    (unsigned long long)(sample_losses + notice_losses),
		    (unsigned long long)m.forwarded);
	TEST_ASSERT(callchains >= m.forwarded / 2, "callchains +%llu for %llu forwarded NMIs",
		    (unsigned long long)callchains, (unsigned long long)m.forwarded);
	TEST_ASSERT_EQ(sc.callchains + vs.losses[PVPROF_LOSS_STREAM_OVERFLOW], vs.callchains);
	TEST_ASSERT_EQ(cc.in_image, sc.callchains);
	TEST_ASSERT(cc.ip_matches >= sc.callchains * 9 / 10,
		    "the guest's interrupted IP is the sampled IP in %llu of %llu callchains",
		    (unsigned long long)cc.ip_matches, (unsigned long long)sc.callchains);

	kvm_vm_free(vm);
	close(stream_fd);
	close(kmsg);
}

static const struct test_case cases[] = {
	{ "overflow_handler_in_nmi", test_overflow_handler_in_nmi },
};

int main(int argc, char **argv)
{
	return test_run_cases("nmi_context", cases, ARRAY_SIZE(cases), argc, argv);
}
