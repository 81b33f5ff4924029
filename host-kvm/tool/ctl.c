// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof enable, disable, expose: the control ioctls that change a VM's
 * pvprof state (spec pvprof-ctl-enable, spec pvprof-ctl-disable,
 * spec pvprof-ctl-expose).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "abi/pvprof_ctl.h"
#include "main.h"
#include "vm.h"

/* cpu-clock periods are in ns; the shortest one matches the highest rate. */
#define CPU_CLOCK_MIN_PERIOD_NS	(1000000000ULL / PVPROF_MAX_FREQ)

enum {
	OPT_MAX_DEPTH = 256,
	OPT_VM_RATE,
	OPT_CALL_GRAPH,
};

static int enable_help(void)
{
	printf("Usage: %1$s " USAGE_ENABLE "\n"
	       "       %1$s enable help\n"
	       HELP_SPEC_VM
	       HELP_SPEC_EVENT
	       "\n"
	       "Start sampling the VM's vCPUs while they run guest code, or reconfigure\n"
	       "a VM that is enabled already (options not given take their defaults).\n"
	       "\n"
	       "  -F HZ          samples per second per vCPU, 1..%2$d (default %3$d)\n"
	       "  -c PERIOD      sample every PERIOD ns of cpu-clock (at least %4$llu),\n"
	       "                 or every PERIOD cycles or instructions (at least 1)\n"
	       "  -e EVENT       what drives sampling (default cpu-clock); cycles and\n"
	       "                 instructions need a host PMU\n"
	       "  --max-depth N  frames per callchain, 1..%5$d (default %5$d)\n"
	       "  --vm-rate N    samples per second for the whole VM (default %6$d)\n"
	       "  --call-graph fp|dwarf[,SIZE]\n"
	       "                 how user stacks are walked: fp, the guest follows frame\n"
	       "                 pointers (default); dwarf, each sample also carries the\n"
	       "                 user registers and SIZE bytes of user stack (default\n"
	       "                 %7$d, a multiple of 8 up to %8$u), unwound by report\n"
	       "                 with the unwind tables the guest agent sends\n"
	       "  -j, --json     print errors as JSON\n",
	       bin_name, PVPROF_MAX_FREQ, PVPROF_DEFAULT_FREQ,
	       CPU_CLOCK_MIN_PERIOD_NS, PVPROF_MAX_DEPTH,
	       PVPROF_DEFAULT_VM_RATE, PVPROF_USTACK_DEFAULT, PVPROF_USTACK_MAX);
	return EXIT_OK;
}

static int disable_help(void)
{
	printf("Usage: %1$s " USAGE_DISABLE "\n"
	       "       %1$s disable help\n"
	       HELP_SPEC_VM
	       "\n"
	       "Stop sampling the VM. Registrations, counters and queued stream entries\n"
	       "stay; samples taken before are still accounted.\n"
	       "\n"
	       "  -j, --json     print errors as JSON\n",
	       bin_name);
	return EXIT_OK;
}

static int expose_help(void)
{
	printf("Usage: %1$s " USAGE_EXPOSE "\n"
	       "       %1$s expose help\n"
	       HELP_SPEC_VM
	       HELP_SPEC_MODE
	       "\n"
	       "Decide whether the guest sees pvprof at all. A hidden VM sees a host\n"
	       "without pvprof and loses its registrations; default follows the kvm\n"
	       "module parameter pvprof_expose.\n"
	       "\n"
	       "  -j, --json     print errors as JSON\n",
	       bin_name);
	return EXIT_OK;
}

/* A command that succeeded without data prints JSON null under -j. */
static int done(void)
{
	if (json_output) {
		jw_null();
		jw_end_document();
	}
	return EXIT_OK;
}

struct enable_args {
	struct pvprof_ctl_enable ctl;
	const char *freq_arg;
	const char *period_arg;
};

static int enable_check(struct enable_args *a)
{
	struct pvprof_ctl_enable *ctl = &a->ctl;
	uint64_t min_period, v;
	int ret = EXIT_OK;

	if (a->freq_arg && a->period_arg)
		return usage_err("enable: give -F or -c, not both");
	if (a->period_arg) {
		min_period = ctl->event == PVPROF_EVENT_CPU_CLOCK ?
			     CPU_CLOCK_MIN_PERIOD_NS : 1;
		ret = parse_u64("-c", a->period_arg, min_period, UINT64_MAX, &v);
		ctl->sample_period = v;
		return ret;
	}
	/* Without -F the host's default rate applies (sample_freq 0). */
	ctl->flags |= PVPROF_ENABLE_F_FREQ;
	if (a->freq_arg) {
		ret = parse_u64("-F", a->freq_arg, 1, PVPROF_MAX_FREQ, &v);
		ctl->sample_freq = v;
	}
	return ret;
}

static int enable_parse(int argc, char **argv, struct enable_args *a,
			bool *helped)
{
	static const struct option opts[] = {
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "vm-rate", required_argument, NULL, OPT_VM_RATE },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t v;
	int opt, ret;

	*helped = false;
	scan_json_option(argc, argv, ":F:c:e:jh", opts);
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":F:c:e:jh", opts, NULL)) != -1) {
		ret = EXIT_OK;
		switch (opt) {
		case 'F':
			a->freq_arg = optarg;
			break;
		case 'c':
			a->period_arg = optarg;
			break;
		case 'e':
			ret = event_parse(optarg, &a->ctl.event);
			break;
		case OPT_MAX_DEPTH:
			ret = parse_u64("--max-depth", optarg, 1,
					PVPROF_MAX_DEPTH, &v);
			a->ctl.max_depth = (uint32_t)v;
			break;
		case OPT_VM_RATE:
			ret = parse_u64("--vm-rate", optarg, 1, UINT32_MAX, &v);
			a->ctl.vm_rate_cap = (uint32_t)v;
			break;
		case OPT_CALL_GRAPH:
			ret = parse_call_graph(optarg, &a->ctl.ustack_size);
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			*helped = true;
			return enable_help();
		default:
			return option_err(opt, argv);
		}
		if (ret)
			return ret;
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		*helped = true;
		return enable_help();
	}
	ret = expect_operands(argc, argv, 1, "VM");
	if (ret)
		return ret;
	return enable_check(a);
}

int do_enable(int argc, char **argv)
{
	struct enable_args a = { 0 };
	struct vm_session s;
	bool helped;
	int ret;

	ret = enable_parse(argc, argv, &a, &helped);
	if (ret || helped)
		return ret;
	ret = vm_session__open(&s, argv[optind]);
	if (ret)
		return ret;
	a.ctl.vm_fd = s.vm_fd;
	if (!ioctl(s.kvm_fd, PVPROF_CTL_ENABLE, &a.ctl)) {
		vm_session__close(&s);
		return done();
	}
	ret = errno;
	if (ret == EOPNOTSUPP)
		p_err_hint("sample on cpu-clock (-e cpu-clock), which needs no PMU",
			   "enable VM %s: the host cannot count %s (no PMU)",
			   s.label, event_name(a.ctl.event));
	else if (ret == EINVAL)
		p_err("enable VM %s: the host refused the configuration (%s)",
		      s.label, strerror(ret));
	else
		vm_session__ioctl_err(&s, "enable", ret);
	vm_session__close(&s);
	return EXIT_FAILED;
}

int do_disable(int argc, char **argv)
{
	struct pvprof_ctl_vm ctl = { 0 };
	struct vm_session s;
	bool helped;
	int ret;

	ret = parse_vm_options(argc, argv, disable_help, &helped);
	if (ret || helped)
		return ret;
	ret = expect_operands(argc, argv, 1, "VM");
	if (ret)
		return ret;
	ret = vm_session__open(&s, argv[optind]);
	if (ret)
		return ret;
	ctl.vm_fd = s.vm_fd;
	if (!ioctl(s.kvm_fd, PVPROF_CTL_DISABLE, &ctl)) {
		vm_session__close(&s);
		return done();
	}
	ret = errno;
	if (ret == ENOENT)
		p_err("disable VM %s: pvprof is not enabled for it", s.label);
	else
		vm_session__ioctl_err(&s, "disable", ret);
	vm_session__close(&s);
	return EXIT_FAILED;
}

static int expose_mode(const char *arg, uint32_t *mode)
{
	if (!strcmp(arg, "visible"))
		*mode = PVPROF_EXPOSE_VISIBLE;
	else if (!strcmp(arg, "hidden"))
		*mode = PVPROF_EXPOSE_HIDDEN;
	else if (!strcmp(arg, "default"))
		*mode = PVPROF_EXPOSE_DEFAULT;
	else
		return usage_err("expose: expected 'visible', 'hidden' or 'default', got: '%s'",
				 arg);
	return EXIT_OK;
}

int do_expose(int argc, char **argv)
{
	struct pvprof_ctl_expose ctl = { 0 };
	struct vm_session s;
	bool helped;
	int ret;

	ret = parse_vm_options(argc, argv, expose_help, &helped);
	if (ret || helped)
		return ret;
	ret = expect_operands(argc, argv, 2, "VM and MODE");
	if (ret)
		return ret;
	ret = expose_mode(argv[optind + 1], &ctl.mode);
	if (ret)
		return ret;
	ret = vm_session__open(&s, argv[optind]);
	if (ret)
		return ret;
	ctl.vm_fd = s.vm_fd;
	ret = ioctl(s.kvm_fd, PVPROF_CTL_EXPOSE, &ctl) ?
	      vm_session__ioctl_err(&s, "expose", errno) : done();
	vm_session__close(&s);
	return ret;
}
