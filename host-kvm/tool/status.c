// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof status: a VM's pvprof state, per-vCPU registrations and
 * counters, and losses by reason (spec pvprof-losses and
 * spec pvprof-ctl-status).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "abi/pvprof_ctl.h"
#include "core/host.h"
#include "main.h"
#include "vm.h"

/* vCPUs may be added between two STATUS calls; give up after a few. */
#define STATUS_ATTEMPTS	4


struct status {
	struct pvprof_ctl_status ctl;
	struct pvprof_vcpu_status *vcpus;
	uint32_t nr;			/* entries filled in vcpus */
};

struct totals {
	uint64_t samples, notices, callchains, nmis, lost;
	uint32_t registered;
};

static int status_help(void)
{
	printf("Usage: %1$s " USAGE_STATUS "\n"
	       "       %1$s status help\n"
	       HELP_SPEC_VM
	       "\n"
	       "Show whether sampling is enabled and the guest sees pvprof, the\n"
	       "sampling configuration, each vCPU's registration and counters, and\n"
	       "losses by reason. Works on any VM, enabled or not.\n"
	       "\n"
	       "  -j, --json     print the status as JSON\n",
	       bin_name);
	return EXIT_OK;
}

static uint64_t loss_sum(const __u64 *losses)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < PVPROF_LOSS_NR; i++)
		sum += losses[i];
	return sum;
}

static void sum_vcpus(const struct status *st, struct totals *t)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < st->nr; i++) {
		const struct pvprof_vcpu_status *v = &st->vcpus[i];

		t->registered += !!v->registered;
		t->samples += v->samples;
		t->notices += v->notices;
		t->callchains += v->callchains;
		t->nmis += v->nmis;
	}
	t->lost = loss_sum(st->ctl.losses);
}

/* Two calls at least: one for the number of vCPUs, one for their entries. */
static int fetch_status(struct vm_session *s, struct status *st)
{
	uint32_t want = 0;
	int attempt;

	for (attempt = 0; attempt < STATUS_ATTEMPTS; attempt++) {
		struct pvprof_vcpu_status *vcpus = NULL;

		if (want) {
			vcpus = calloc(want, sizeof(*vcpus));
			if (!vcpus) {
				p_err("out of memory for %u vCPUs", want);
				return EXIT_FAILED;
			}
		}
		free(st->vcpus);
		st->vcpus = vcpus;
		memset(&st->ctl, 0, sizeof(st->ctl));
		st->ctl.vm_fd = s->vm_fd;
		st->ctl.nr_vcpus = want;
		st->ctl.vcpus = (uintptr_t)vcpus;
		if (ioctl(s->kvm_fd, PVPROF_CTL_STATUS, &st->ctl))
			return vm_session__ioctl_err(s, "status", errno);
		if (st->ctl.nr_vcpus <= want) {
			st->nr = st->ctl.nr_vcpus;
			return EXIT_OK;
		}
		want = st->ctl.nr_vcpus;
	}
	p_err("status VM %s: the number of vCPUs kept changing", s->label);
	return EXIT_FAILED;
}

static void event_text(uint32_t event, char *buf, size_t size)
{
	const char *name = event_name(event);

	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "unknown(%u)", event);
}

static void print_losses_json(const __u64 *losses)
{
	int i;

	jw_begin_object();
	for (i = 0; i < PVPROF_LOSS_NR; i++) {
		jw_name(pvprof_loss_name(i));
		jw_uint(losses[i]);
	}
	jw_end_object();
}

static void print_json(const struct vm_session *s, const struct status *st)
{
	const struct pvprof_ctl_status *c = &st->ctl;
	struct totals t;
	char event[32];
	uint32_t i;

	sum_vcpus(st, &t);
	event_text(c->event, event, sizeof(event));
	jw_begin_object();
	jw_name("vm");
	jw_begin_object();
	jw_name("pid");
	jw_int(s->pid);
	jw_name("fd");
	jw_int(s->vmm_fd);
	jw_name("comm");
	jw_string(s->comm);
	jw_name("domain");
	if (s->domain[0])
		jw_string(s->domain);
	else
		jw_null();
	jw_end_object();
	jw_name("enabled");
	jw_bool(c->flags & PVPROF_STATUS_F_ENABLED);
	jw_name("hidden");
	jw_bool(c->flags & PVPROF_STATUS_F_HIDDEN);
	jw_name("event");
	jw_string(event);
	jw_name("sample_freq");
	jw_uint(c->sample_freq);
	jw_name("sample_period");
	jw_uint(c->sample_period);
	jw_name("nr_vcpus");
	jw_uint(c->nr_vcpus);
	jw_name("registered_vcpus");
	jw_uint(t.registered);
	jw_name("sideband_bytes");
	jw_uint(c->sideband_bytes);
	jw_name("sideband_refused");
	jw_uint(c->sideband_refused);
	jw_name("losses");
	print_losses_json(c->losses);
	jw_name("totals");
	jw_begin_object();
	jw_name("samples");
	jw_uint(t.samples);
	jw_name("notices");
	jw_uint(t.notices);
	/* The JSON keys keep the word scripts read: records are callchains. */
	jw_name("records");
	jw_uint(t.callchains);
	jw_name("nmis");
	jw_uint(t.nmis);
	jw_name("lost");
	jw_uint(t.lost);
	jw_end_object();
	jw_name("vcpus");
	jw_begin_array();
	for (i = 0; i < st->nr; i++) {
		const struct pvprof_vcpu_status *v = &st->vcpus[i];

		jw_begin_object();
		jw_name("vcpu_id");
		jw_uint(v->vcpu_id);
		jw_name("registered");
		jw_bool(v->registered);
		jw_name("gpa");
		jw_uint(v->gpa);
		jw_name("size");
		jw_uint(v->size);
		jw_name("samples");
		jw_uint(v->samples);
		jw_name("notices");
		jw_uint(v->notices);
		jw_name("records");
		jw_uint(v->callchains);
		jw_name("nmis");
		jw_uint(v->nmis);
		jw_name("nmis_withheld");
		jw_uint(v->nmis_withheld);
		jw_name("losses");
		print_losses_json(v->losses);
		jw_end_object();
	}
	jw_end_array();
	jw_end_object();
	jw_end_document();
}

static void print_sampling(const struct pvprof_ctl_status *c)
{
	char event[32];

	event_text(c->event, event, sizeof(event));
	printf("  sampling:  ");
	if (!c->sample_freq && !c->sample_period)
		printf("not configured (never enabled)\n");
	else if (c->sample_freq)
		printf("%s at %" PRIu64 " Hz per vCPU\n", event,
		       (uint64_t)c->sample_freq);
	else if (c->event == PVPROF_EVENT_CPU_CLOCK)
		printf("%s every %" PRIu64 " ns\n", event,
		       (uint64_t)c->sample_period);
	else
		printf("%s every %" PRIu64 " events\n", event,
		       (uint64_t)c->sample_period);
}

/* "stale 2, unanswered 1" for the non-zero reasons, or "none". */
static void print_nonzero_losses(const __u64 *losses)
{
	const char *sep = "";
	int i;

	for (i = 0; i < PVPROF_LOSS_NR; i++) {
		if (!losses[i])
			continue;
		printf("%s%s %" PRIu64, sep, pvprof_loss_name(i), (uint64_t)losses[i]);
		sep = ", ";
	}
	printf("%s\n", *sep ? "" : "none");
}

static void print_text(const struct vm_session *s, const struct status *st)
{
	const struct pvprof_ctl_status *c = &st->ctl;
	struct totals t;
	uint32_t i;
	int r;

	sum_vcpus(st, &t);
	printf("VM %s\n", s->label);
	printf("  pvprof:    %s, %s the guest\n",
	       c->flags & PVPROF_STATUS_F_ENABLED ? "enabled" : "disabled",
	       c->flags & PVPROF_STATUS_F_HIDDEN ? "hidden from" : "visible to");
	print_sampling(c);
	printf("  vCPUs:     %u, %u registered\n", c->nr_vcpus, t.registered);
	printf("  sideband:  %" PRIu64 " bytes accepted, %" PRIu64 " calls refused\n",
	       (uint64_t)c->sideband_bytes, (uint64_t)c->sideband_refused);
	if (st->nr) {
		printf("\n  %5s  %-26s %12s %12s %12s %12s %12s\n", "vcpu",
		       "buffer (gpa/size)", "samples", "notices", "callchains",
		       "nmis", "lost");
		for (i = 0; i < st->nr; i++) {
			const struct pvprof_vcpu_status *v = &st->vcpus[i];
			char buf[40];

			if (v->registered)
				snprintf(buf, sizeof(buf), "0x%" PRIx64 "/%u",
					 (uint64_t)v->gpa, v->size);
			else
				snprintf(buf, sizeof(buf), "unregistered");
			printf("  %5u  %-26s %12" PRIu64 " %12" PRIu64 " %12" PRIu64
			       " %12" PRIu64 " %12" PRIu64 "\n",
			       v->vcpu_id, buf, (uint64_t)v->samples,
			       (uint64_t)v->notices, (uint64_t)v->callchains,
			       (uint64_t)v->nmis, loss_sum(v->losses));
		}
		for (i = 0; i < st->nr; i++) {
			if (!loss_sum(st->vcpus[i].losses))
				continue;
			printf("  vcpu %u lost: ", st->vcpus[i].vcpu_id);
			print_nonzero_losses(st->vcpus[i].losses);
		}
		for (i = 0; i < st->nr; i++)
			if (st->vcpus[i].nmis_withheld)
				printf("  vcpu %u: %u NMIs withheld: the guest stopped reading notices\n",
				       st->vcpus[i].vcpu_id, st->vcpus[i].nmis_withheld);
	}
	printf("\n  losses by reason (VM totals):\n");
	for (r = 0; r < PVPROF_LOSS_NR; r++)
		printf("    %-18s %12" PRIu64 "\n", pvprof_loss_name(r),
		       (uint64_t)c->losses[r]);
	printf("\n  totals: samples %" PRIu64 ", notices %" PRIu64
	       ", callchains %" PRIu64 ", nmis %" PRIu64 ", lost %" PRIu64 "\n",
	       t.samples, t.notices, t.callchains, t.nmis, t.lost);
}

int do_status(int argc, char **argv)
{
	struct status st = { 0 };
	struct vm_session s;
	bool helped;
	int ret;

	ret = parse_vm_options(argc, argv, status_help, &helped);
	if (ret || helped)
		return ret;
	ret = expect_operands(argc, argv, 1, "VM");
	if (ret)
		return ret;
	ret = vm_session__open(&s, argv[optind]);
	if (ret)
		return ret;
	ret = fetch_status(&s, &st);
	vm_session__close(&s);
	if (!ret) {
		if (json_output)
			print_json(&s, &st);
		else
			print_text(&s, &st);
	}
	free(st.vcpus);
	return ret;
}
