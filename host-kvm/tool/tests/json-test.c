// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON side of kvm-pvprof's tests, driven by json-test.sh, where
 * Python's json module is the judge:
 *
 *   json-test strings    for each line of hex on stdin, the bytes it
 *                        spells written as one JSON string (json.c)
 *   json-test gen FILE   write the hostile recording to FILE, and on stdout
 *                        its manifest: what it was built with, guest
 *                        strings in hex (see gen_manifest())
 *   json-test header FILE
 *                        report's header of FILE with every count of the
 *                        profile made 12 digits long and every filter set,
 *                        for the test that lines fit 100 columns
 *   json-test summary FILE text|json
 *                        the summary record would have printed when it
 *                        wrote FILE: each STREAM section is one read of
 *                        the stream, counted by record's own function
 *                        (record_summary.c), then written by it
 *
 * The hostile recording: nine processes whose command names hold ';',
 * "->", quotes, backslashes, spaces, parentheses, control bytes, C1
 * controls, U+2028, valid and ill-formed UTF-8; user and kernel symbols and
 * a mapping path with the same, a 255-byte name of two-byte characters; a
 * module; samples on two vCPUs in kernel and user mode; losses of three
 * reasons.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sideband.h"
#include "core/stream.h"
#include "host-kvm/tool/json.h"
#include "host-kvm/tool/profile.h"
#include "host-kvm/tool/record_summary.h"
#include "host-kvm/tool/recording.h"
#include "host-kvm/tool/report_header.h"
#include "host-kvm/tool/report_resolve.h"
#include "host-kvm/tool/report_select.h"
#include "host-kvm/tool/report_symbolizer.h"
#include "host-kvm/tool/report_unwind.h"
#include "host-kvm/tool/symbolize.h"
#include "recgen.h"

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Each stdin line is hex ("" for the empty string); no NUL in it. */
static int strings(void)
{
	char line[8192], bytes[4097];
	size_t n, i;

	while (fgets(line, sizeof(line), stdin)) {
		n = strcspn(line, "\n");
		if (n % 2 || n / 2 >= sizeof(bytes)) {
			fprintf(stderr, "json-test: bad hex line of %zu characters\n", n);
			return 2;
		}
		for (i = 0; i < n / 2; i++) {
			int hi = hex_digit(line[2 * i]), lo = hex_digit(line[2 * i + 1]);

			if (hi < 0 || lo < 0 || (!hi && !lo)) {
				fprintf(stderr, "json-test: bad hex or NUL at %zu\n", 2 * i);
				return 2;
			}
			bytes[i] = (char)(hi << 4 | lo);
		}
		bytes[n / 2] = '\0';
		json_write_string(stdout, bytes);
		putchar('\n');
	}
	return fflush(stdout) ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* The hostile recording                                               */
/* ------------------------------------------------------------------ */

#define NR_VCPUS	2
#define K(n)		((uint64_t)0xffffffff81000000ULL + (n) * 0x100)
#define MOD_BASE	((uint64_t)0xffffffffc0000000ULL)
#define U_BASE		0x0000555555554000ULL
#define U(n)		(U_BASE + (n) * 0x40)

static const char *const comms[] = {	/* pids 101.. */
	"semi;colon",
	"arrow->x;y",
	"quo\"te\\back",
	"ctl\x01\x1b[\x7f",
	"bad\xff\xfeutf8",
	"caf\xc3\xa9 \xe2\x80\xa8",
	"sp ace(1)",
	"\xc2\x85nel\xc2\x9b",
	"cut\xe2\x82x",
};
#define NR_PROCS	(sizeof(comms) / sizeof(comms[0]))

/* Kernel symbols at K(1).., then a boundary symbol past the last one. */
static const char *const ksyms[] = {
	"k;semi", "k\"quote\\", "k->arrow", "do_syscall_64", "k\x01\x7f\xc2\x80",
	"k_boundary",
};
#define NR_KSYMS	(sizeof(ksyms) / sizeof(ksyms[0]))
static const char module_name[] = "hostile_mod";
static const char module_sym[] = "mod;fn->x \"(m)\"";

/* ELF symbols at U(1).., each 0x40 bytes; [0] is every sample's outermost. */
static char long_utf8[256];
static const char *usyms[] = {
	"main",
	"fn;semi",
	"operator->",
	"std::vector<int>::operator->() const",
	"fn\"quote\\back",
	"fn\x01\x1f\x7f\xc2\x9b" "ctl",
	"fn\xff\xc0\x80" "bad",
	"caf\xc3\xa9_\xe2\x80\xa9",
	"a->b->c",
	long_utf8,
};
#define NR_USYMS	(sizeof(usyms) / sizeof(usyms[0]))
static const char dso_path[] = "/opt/h;ost\"ile dir/lib->(x).so";
/* The libvirt domain: from the host, not the guest, but any byte but NUL. */
#define VM_DOMAIN	"dom\"ain\\with;odd\x01" "bytes\xff"

static const struct {
	uint32_t reason;
	uint64_t count;
} losses[] = {
	{ PVPROF_LOSS_THROTTLED, 4 },
	{ PVPROF_LOSS_STREAM_OVERFLOW, 2 },
	{ PVPROF_LOSS_SLOT_BUSY, 1 },
};

/*
 * Process i (pid 101 + i) has i + 1 samples on vCPU i % 2: user mode for
 * odd i (the user frames only), kernel mode for even i (two kernel frames,
 * the module's for i == 4, above the user ones).  The user frames are
 * usyms[1 + i % (NR_USYMS - 1)] innermost, then main.
 */
struct sample {
	uint32_t vcpu, pid, count, flags;
	uint16_t nr_kernel, nr_user;
	uint64_t frames[4];
};

static void sample_of(uint32_t i, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->vcpu = i % NR_VCPUS;
	s->pid = 101 + i;
	s->count = i + 1;
	if (i % 2) {
		s->flags = PVPROF_CHAIN_F_USER;
	} else {
		s->nr_kernel = 2;
		s->frames[0] = i == 4 ? MOD_BASE + 0x100 : K(1 + (i / 2) % (NR_KSYMS - 1));
		s->frames[1] = K(4);		/* do_syscall_64 */
	}
	s->nr_user = 2;
	s->frames[s->nr_kernel] = U(2 + i % (NR_USYMS - 1));
	s->frames[s->nr_kernel + 1] = U(1);	/* main */
}

static void gen_sample(struct gen *g, const struct sample *s)
{
	gen_chain(g, s->pid, s->pid, s->flags, s->nr_kernel, s->nr_user, s->frames);
	gen_callchain(g, s->vcpu, s->frames[0], 0);
}

static void gen_symbols(struct gen *g)
{
	uint8_t msg[PVPROF_SIDEBAND_MAX_SIZE];
	struct pvprof_sb_module *mod = (void *)msg;
	uint32_t i;

	gen_kernel(g, K(0), K(0) + 0x100000, NR_KSYMS, "6.1.0-json-test");
	for (i = 0; i < NR_KSYMS; i++)
		gen_ksym(g, NULL, K(1 + i), ksyms[i]);
	gen_syms_end(g);

	memset(msg, 0, sizeof(msg));
	mod->base = MOD_BASE;
	mod->size = 0x10000;
	strcpy(mod->name, module_name);
	gen_message(g, mod, PVPROF_SB_MODULE, sizeof(*mod));
	gen_ksym(g, module_name, MOD_BASE + 0x100, module_sym);
	gen_syms_end(g);

	for (i = 0; i < NR_PROCS; i++)
		gen_mmap(g, 101 + i, U_BASE, 0x10000, 0xcd, dso_path);
	for (i = 0; i < NR_USYMS; i++)
		gen_elfsym(g, 0xcd, 0x40 * (i + 1), 0x40, usyms[i]);
	gen_syms_end(g);
}

static void status_of(struct pvprof_ctl_status *ctl, struct pvprof_vcpu_status *v,
		      uint64_t samples)
{
	uint32_t i;

	gen_status_of(ctl, v, NR_VCPUS, 0);
	ctl->losses[PVPROF_LOSS_THROTTLED] = samples ? 4 : 0;
	for (i = 0; i < NR_VCPUS; i++) {
		v[i].samples = v[i].notices = v[i].callchains = samples * (i + 1);
		v[i].nmis = samples;
	}
}

static void print_hex(const char *s)
{
	for (; *s; s++)
		printf("%02x", (unsigned char)*s);
}

/*
 * The manifest, one fact a line:
 *   vcpus N
 *   ubase ADDR              where the mapping starts (ELF vaddr 0)
 *   comm PID HEX            the process's command name
 *   ksym ADDR HEX | msym ADDR HEX | usym ADDR HEX   symbols (user: ELF vaddr)
 *   module HEX | dso HEX    the module's name, the mapping's path
 *   domain HEX              the VM's libvirt domain
 *   sample VCPU PID COUNT FLAGS NR_KERNEL NR_USER ADDR...
 *   loss REASON_NAME COUNT
 *   sideband N              messages
 *   entries N               stream entries
 */
static void gen_manifest(void)
{
	struct sample s;
	uint32_t i, j;

	printf("vcpus %d\nubase %#" PRIx64 "\n", NR_VCPUS, (uint64_t)U_BASE);
	for (i = 0; i < NR_PROCS; i++) {
		printf("comm %u ", 101 + i);
		print_hex(comms[i]);
		putchar('\n');
	}
	for (i = 0; i < NR_KSYMS; i++) {
		printf("ksym %#" PRIx64 " ", K(1 + i));
		print_hex(ksyms[i]);
		putchar('\n');
	}
	printf("msym %#" PRIx64 " ", MOD_BASE + 0x100);
	print_hex(module_sym);
	printf("\nmodule ");
	print_hex(module_name);
	for (i = 0; i < NR_USYMS; i++) {
		printf("\nusym %#x ", 0x40 * (i + 1));
		print_hex(usyms[i]);
	}
	printf("\ndso ");
	print_hex(dso_path);
	printf("\ndomain ");
	print_hex(VM_DOMAIN);
	putchar('\n');
	for (i = 0; i < NR_PROCS; i++) {
		sample_of(i, &s);
		printf("sample %u %u %u %u %u %u", s.vcpu, s.pid, s.count, s.flags,
		       s.nr_kernel, s.nr_user);
		for (j = 0; j < (uint32_t)s.nr_kernel + s.nr_user; j++)
			printf(" %#" PRIx64, s.frames[j]);
		putchar('\n');
	}
	for (i = 0; i < sizeof(losses) / sizeof(losses[0]); i++)
		printf("loss %s %" PRIu64 "\n", pvprof_loss_name(losses[i].reason),
		       losses[i].count);
	/* KERNEL, KSYMS, MODULE, KSYMS, a PROCESS and an MMAP each, ELF_SYMS. */
	printf("sideband %zu\n", 5 + 2 * NR_PROCS);
	/* And HELLO, a VCPU each, the samples, the LOSS entries. */
	printf("entries %zu\n", 1 + NR_VCPUS + 5 + 2 * NR_PROCS +
	       NR_PROCS * (NR_PROCS + 1) / 2 + sizeof(losses) / sizeof(losses[0]));
}

static int gen_recording(const char *path)
{
	static struct gen g;
	struct pvprof_vcpu_status vcpus[NR_VCPUS];
	struct pvprof_ctl_status ctl;
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	struct sample s;
	uint32_t i, j;

	gen_host_vm(&host, &vm, "json-host", 2000ULL * 1000000000ULL);
	vm.vmm_pid = 4343;
	vm.vmm_fd = 12;
	strcpy(vm.domain, VM_DOMAIN);
	status_of(&ctl, vcpus, 0);
	g.time_ns = host.start_monotonic_ns;
	if (gen_open(&g, path) || gen_start(&g, &host, &vm, &ctl, vcpus, NR_VCPUS))
		return -1;
	gen_hello(&g, NR_VCPUS, 16384);
	for (i = 0; i < NR_PROCS; i++)
		gen_process(&g, 101 + i, comms[i], true);
	gen_symbols(&g);
	/* Two stream sections, as two reads of the stream would give. */
	if (gen_flush(&g))
		return -1;
	for (i = 0; i < NR_PROCS; i++) {
		sample_of(i, &s);
		for (j = 0; j < s.count; j++)
			gen_sample(&g, &s);
	}
	for (i = 0; i < sizeof(losses) / sizeof(losses[0]); i++)
		gen_loss(&g, i % NR_VCPUS, losses[i].reason, losses[i].count);
	status_of(&ctl, vcpus, 30);
	return gen_end(&g, &ctl, vcpus, NR_VCPUS, PVPROF_DATA_STOP_DURATION, g.time_ns);
}

/* ------------------------------------------------------------------ */
/* record's summary of a recording                                     */
/* ------------------------------------------------------------------ */

/*
 * Walks FILE's sections as pvprof-data(5) lays them out, independently of
 * the tool's reader: each STREAM payload goes to record_summary_count() as
 * the read it was; the END section gives the stop reason and, with HOST's
 * start, the duration.
 */
static int summary(const char *path, bool json)
{
	struct record_summary s = { .output = path };
	struct pvprof_data_host host = { 0 };
	struct pvprof_data_section sec;
	struct pvprof_data_header hdr;
	struct pvprof_data_end end;
	bool has_end = false;
	uint8_t *payload;
	FILE *f = fopen(path, "rb");

	if (!f || fread(&hdr, sizeof(hdr), 1, f) != 1 ||
	    memcmp(hdr.magic, PVPROF_DATA_MAGIC, 8)) {
		fprintf(stderr, "json-test: %s: not a recording\n", path);
		return 1;
	}
	while (fread(&sec, sizeof(sec), 1, f) == 1) {
		uint64_t padded = (sec.size + 7) & ~7ULL;

		if (sec.size > PVPROF_DATA_MAX_SECTION || !(payload = malloc(padded + 1)) ||
		    fread(payload, 1, padded, f) != padded) {
			fprintf(stderr, "json-test: %s: a bad section\n", path);
			return 1;
		}
		if (sec.type == PVPROF_DATA_SEC_STREAM) {
			record_summary_count(&s, payload, sec.size);
			s.stream_bytes += sec.size;
		} else if (sec.type == PVPROF_DATA_SEC_HOST && sec.size == sizeof(host)) {
			memcpy(&host, payload, sizeof(host));
		} else if (sec.type == PVPROF_DATA_SEC_END && sec.size == sizeof(end)) {
			memcpy(&end, payload, sizeof(end));
			has_end = true;
		}
		free(payload);
	}
	fclose(f);
	if (!has_end) {
		fprintf(stderr, "json-test: %s: no END section\n", path);
		return 1;
	}
	s.stop_reason = end.stop_reason;
	s.duration_ns = end.end_monotonic_ns - host.start_monotonic_ns;
	return record_summary_write(stdout, &s, json) ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* The header with long numbers                                        */
/* ------------------------------------------------------------------ */

static int header(const char *path)
{
	const uint64_t big = 999999999999ULL;	/* 12 digits: years of samples */
	struct report_filter flt = {
		.vcpu = 4095, .pid = 4194304, .comm = "a-15-byte-comm.",
		.flags = REPORT_F_USER_ONLY,
	};
	struct report_filter none = { .vcpu = -1, .pid = -1 };
	struct pvprof_symbolizer *sym;
	struct report_resolver res;
	struct recording r;
	struct profile p;
	char err[512];
	int i, ret;

	if (recording_load(&r, path, err, sizeof(err))) {
		fprintf(stderr, "json-test: %s: %s\n", path, err);
		return 1;
	}
	sym = recording_symbolizer(&r);
	if (!sym)
		return 1;
	symbolizer_resolver(sym, &res);
	res.unwind = report_unwind_new(&r, sym);
	if (!res.unwind || profile_build(&p, &r, &none, &res))
		return 1;
	p.stats.entries = p.stats.callchains = p.stats.samples = p.stats.user_mode = big;
	/* The pvprof overhead line too: it is printed for these. */
	p.stats.own_nmi = p.stats.own_nmi_recorded = big;
	p.stats.stale = p.stats.skewed = p.stats.truncated = p.stats.empty = big;
	p.stats.skewed_same_function = big;
	p.stats.trunc_depth = p.stats.trunc_snapshot = big / 2;
	p.stats.cut_samples = p.stats.cut_frames = big;
	p.stats.frames = p.stats.unsymbolized = big;
	for (i = 0; i < PVPROF_LOSS_NR; i++)
		p.stats.losses[i] = big;
	p.stats.sideband = p.stats.sideband_bytes = p.stats.sideband_rejected = big;
	for (i = 0; i < 4; i++)
		p.stats.vcpu_events[i] = big;
	p.stats.unknown = big;
	p.stats.nr_vcpus = 4096;
	ret = report_write_header(stdout, path, &r, &p, &flt, &res) || fflush(stdout);
	profile_free(&p);
	report_unwind_free(res.unwind);
	pvprof_symbolizer_free(sym);
	recording_free(&r);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	size_t i;

	gen_prog = "json-test";
	/* 127 two-byte characters and one byte: 255 bytes, the longest name. */
	for (i = 0; i < 127; i++)
		memcpy(long_utf8 + 2 * i, "\xc3\xa9", 2);
	long_utf8[254] = 'x';
	if (argc == 2 && !strcmp(argv[1], "strings"))
		return strings();
	if (argc == 3 && !strcmp(argv[1], "gen")) {
		if (gen_recording(argv[2]))
			return 1;
		gen_manifest();
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "header"))
		return header(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "summary") &&
	    (!strcmp(argv[3], "text") || !strcmp(argv[3], "json")))
		return summary(argv[2], !strcmp(argv[3], "json"));
	fprintf(stderr, "usage: json-test strings | gen FILE | header FILE |"
		" summary FILE text|json\n");
	return 2;
}
