// SPDX-License-Identifier: GPL-2.0
/*
 * A recording written from a plain-text description, for the tests of
 * report's and script's perf options (perfopts-test.sh): the test script
 * writes the description, so it knows every sample's process, vCPU, time
 * and frames, and every name the guest agent publishes, before kvm-pvprof
 * reads a byte; what it expects comes from its own description.
 *
 * usage: perfopts-gen OUT < DESCRIPTION
 *
 * One directive per line, fields separated by blanks, numbers in decimal
 * or 0x hex, names without blanks:
 *
 *   host START_NS            HOST section: the recording's start (monotonic)
 *   end END_NS               an END section at END_NS (without it, none)
 *   version V                the stream version HELLO gives (default the
 *                            encoder's, PVPROF_STREAM_VERSION); before vcpus
 *   vcpus N                  HELLO, and N vCPUs registered
 *   kernel STEXT ETEXT NR    KERNEL message: text range, NR symbols announced
 *   ksym ADDR NAME           kernel symbols, ascending, sent as KSYMS chunks
 *   process PID COMM         PROCESS message (exec generation 1)
 *   mmap PID START LEN BID PATH   MMAP: build-id 20 bytes of BID, offset 0
 *   elfsym BID ADDR SIZE NAME     ELF symbols of build-id BID, ascending
 *   sample TIME VCPU PID TID FLAGS NK NU FRAME...
 *                            a callchain at host time TIME: NK kernel frames
 *                            then NU user frames, innermost first; FLAGS its
 *                            PVPROF_CHAIN_F_* but USTACK (1, F_USER, for a
 *                            sample taken in user mode; 4, F_SKEWED)
 *   nmi OWN FOLDED           the host's marks of the next sample (stream
 *                            version 2): PVPROF_ST_SAMPLE_F_OWN_NMI when OWN
 *                            is 1, FOLDED its own_nmi_samples
 *   notice IP CPL            what the host read at the next sample's notice:
 *                            the guest's IP and CPL (without it, the
 *                            sample's first frame, or 0 without frames, and
 *                            3 for F_USER, else 0)
 *   loss TIME VCPU REASON COUNT   a LOSS entry (VCPU 4294967295: none)
 *
 * Consecutive ksym and elfsym lines of one build-id are packed into as few
 * messages as fit.  Stream sections are cut at most every 56 KiB, as record
 * writes them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recgen.h"

#define MAX_FIELDS	(8 + PVPROF_MAX_DEPTH)

static struct gen g;
static unsigned int line_no;
/* The next sample's notice IP, from a notice line. */
static bool notice_ip_set;
static uint64_t notice_ip;

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "perfopts-gen: line %u: ", line_no);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s)
		die("not a number: '%s'", s);
	return v;
}

static void gen_sample(char **f, int nf)
{
	uint64_t frames[PVPROF_MAX_DEPTH];
	uint64_t nk = num(f[6]), nu = num(f[7]), flags = num(f[5]);
	uint32_t i;

	if (nk + nu > PVPROF_MAX_DEPTH || (uint64_t)nf != 8 + nk + nu)
		die("a sample needs NK + NU frames, at most 120: '%s'", f[0]);
	if (flags & ~(uint64_t)(PVPROF_CHAIN_F_ALL & ~PVPROF_CHAIN_F_USTACK))
		die("FLAGS are PVPROF_CHAIN_F_* but USTACK: '%s'", f[5]);
	g.time_ns = num(f[1]);
	for (i = 0; i < nk + nu; i++)
		frames[i] = num(f[8 + i]);
	gen_chain(&g, (uint32_t)num(f[3]), (uint32_t)num(f[4]), (uint32_t)flags,
		  (uint32_t)nk, (uint32_t)nu, frames);
	gen_callchain(&g, (uint32_t)num(f[2]), notice_ip_set ? notice_ip : nk + nu ? frames[0] : 0,
		      PVPROF_EVENT_CPU_CLOCK);
	notice_ip_set = false;
}

int main(int argc, char **argv)
{
	struct pvprof_data_host host;
	struct pvprof_data_vm vm;
	static char line[65536];
	uint64_t end_ns = 0;
	bool has_end = false, started = false;

	gen_prog = "perfopts-gen";
	if (argc != 2) {
		fprintf(stderr, "usage: perfopts-gen OUT < DESCRIPTION\n");
		return 2;
	}
	/* Stream sections are cut at most every 56 KiB. */
	g.room = 8192;
	if (gen_open(&g, argv[1]))
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		char *f[MAX_FIELDS], *save = NULL, *tok;
		int nf = 0;

		line_no++;
		for (tok = strtok_r(line, " \t\n", &save); tok && nf < MAX_FIELDS;
		     tok = strtok_r(NULL, " \t\n", &save))
			f[nf++] = tok;
		if (!nf || f[0][0] == '#')
			continue;
		if (strcmp(f[0], "ksym") && strcmp(f[0], "elfsym"))
			gen_syms_end(&g);
		if (!strcmp(f[0], "host") && nf == 2) {
			gen_host_vm(&host, &vm, "perfopts-host", num(f[1]));
			if (gen_start(&g, &host, &vm, NULL, NULL, 0))
				die("cannot write %s", "HOST and VM");
			started = true;
		} else if (!started) {
			die("the first directive is 'host', not '%s'", f[0]);
		} else if (!strcmp(f[0], "end") && nf == 2) {
			end_ns = num(f[1]);
			has_end = true;
		} else if (!strcmp(f[0], "version") && nf == 2) {
			g.stream_version = (uint16_t)num(f[1]);
		} else if (!strcmp(f[0], "nmi") && nf == 3) {
			g.sample_flags = num(f[1]) ? PVPROF_ST_SAMPLE_F_OWN_NMI : 0;
			g.own_nmi_samples = (uint32_t)num(f[2]);
		} else if (!strcmp(f[0], "notice") && nf == 3) {
			notice_ip = num(f[1]);
			notice_ip_set = true;
			g.notice_cpl = (uint8_t)num(f[2]);
			g.notice_cpl_set = true;
		} else if (!strcmp(f[0], "vcpus") && nf == 2) {
			g.time_ns = host.start_monotonic_ns;
			gen_hello(&g, (uint32_t)num(f[1]), 16384);
		} else if (!strcmp(f[0], "kernel") && nf == 4) {
			gen_kernel(&g, num(f[1]), num(f[2]), (uint32_t)num(f[3]), "6.1.0-perfopts");
		} else if (!strcmp(f[0], "ksym") && nf == 3) {
			gen_ksym(&g, NULL, num(f[1]), f[2]);
		} else if (!strcmp(f[0], "process") && nf == 3) {
			gen_process(&g, (uint32_t)num(f[1]), f[2], true);
		} else if (!strcmp(f[0], "mmap") && nf == 6) {
			gen_mmap(&g, (uint32_t)num(f[1]), num(f[2]), num(f[3]), (uint8_t)num(f[4]),
				 f[5]);
		} else if (!strcmp(f[0], "elfsym") && nf == 5) {
			gen_elfsym(&g, (uint8_t)num(f[1]), num(f[2]), num(f[3]), f[4]);
		} else if (!strcmp(f[0], "sample") && nf >= 8) {
			gen_sample(f, nf);
		} else if (!strcmp(f[0], "loss") && nf == 5) {
			g.time_ns = num(f[1]);
			gen_loss(&g, (uint32_t)num(f[2]), (uint32_t)num(f[3]), num(f[4]));
		} else {
			die("unknown directive or wrong field count: '%s'", f[0]);
		}
	}
	gen_syms_end(&g);
	if (has_end ? gen_end(&g, NULL, NULL, 0, PVPROF_DATA_STOP_DURATION, end_ns) :
		      gen_flush(&g))
		die("cannot finish %s", "the recording");
	return 0;
}
