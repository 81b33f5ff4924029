// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof: the host command of pvprof. It controls sampling of a running
 * VM through the pvprof system ioctls on /dev/kvm (spec pvprof-ctl).
 *
 * Exit status: 0 ok, 1 the operation failed, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "abi/pvprof_ctl.h"
#include "main.h"

static void print_help(FILE *f)
{
	fprintf(f,
		"Usage: %1$s [OPTIONS] COMMAND ARGS...\n"
		"       %1$s help [COMMAND]\n"
		"       %1$s --version\n"
		"       COMMAND := { enable | disable | status | expose | record | report | script | help }\n"
		HELP_SPEC_VM
		HELP_SPEC_OPTIONS
		"\n"
		"Commands:\n"
		"  " USAGE_ENABLE "\n"
		"        start sampling a VM, or change how it is sampled\n"
		"  " USAGE_DISABLE "\n"
		"        stop sampling a VM\n"
		"  " USAGE_STATUS "\n"
		"        show the VM's pvprof state, vCPUs, counters and losses\n"
		"  " USAGE_EXPOSE "\n"
		"        decide whether the guest sees pvprof at all\n"
		"  record, report, script\n"
		"        record a VM's samples into a file, show the profile in it,\n"
		"        print its samples as perf script does: '%1$s help record',\n"
		"        kvm-pvprof-record(8), kvm-pvprof-report(8), pvprof-data(5)\n"
		"  help [COMMAND]\n"
		"        this text, or the help of COMMAND\n"
		"\n"
		"VM is a QEMU process id, PID:FD for one of several VMs in a process,\n"
		"or a libvirt domain name. The pvprof ioctls need CAP_SYS_ADMIN or\n"
		"CAP_PERFMON, and taking the VM fd needs ptrace access to the VMM:\n"
		"run as root.\n"
		"\n"
		"Exit status: 0 ok, 1 the operation failed, 2 usage error.\n"
		"See kvm-pvprof(8).\n",
		bin_name);
}

static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "enable",	do_enable },
	{ "disable",	do_disable },
	{ "status",	do_status },
	{ "expose",	do_expose },
	{ "record",	do_record },
	{ "report",	do_report },
	{ "script",	do_script },
	{ "help",	do_help },
	{ 0 }
};

/* "help" alone, or "help COMMAND" as "COMMAND help". */
static int do_help(int argc, char **argv)
{
	char *cmd_help[] = { NULL, "help", NULL };

	if (!argv) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	if (argc < 2) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return usage_err("help: unexpected argument '%s' (see '%s help')",
				 argv[2], bin_name);
	if (!strcmp(argv[1], "help")) {
		print_help(stdout);
		return EXIT_OK;
	}
	cmd_help[0] = argv[1];
	return cmd_select(cmds, 2, cmd_help, do_help);
}

static int do_version(void)
{
	if (json_output) {
		jw_begin_object();
		jw_name("version");
		jw_string(KVM_PVPROF_VERSION);
		jw_name("abi_version");
		jw_uint(PVPROF_ABI_VERSION);
		jw_name("stream_version");
		jw_uint(PVPROF_STREAM_VERSION);
		jw_end_object();
		jw_end_document();
		return EXIT_OK;
	}
	printf("%s %s (pvprof ABI %d, stream version %d)\n", bin_name,
	       KVM_PVPROF_VERSION, PVPROF_ABI_VERSION, PVPROF_STREAM_VERSION);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	bool version = false;
	int opt;

	argv[0] = (char *)bin_name;
	opterr = 0;
	/* '+': options after COMMAND belong to COMMAND. */
	while ((opt = getopt_long(argc, argv, "+:jhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json_output = true;
			break;
		case 'h':
			print_help(stdout);
			return EXIT_OK;
		case 'V':
			version = true;
			break;
		default:
			if (optopt)
				return usage_err("unknown option '-%c' (see '%s help')",
						 optopt, bin_name);
			return usage_err("unknown option '%s' (see '%s help')",
					 argv[optind - 1], bin_name);
		}
	}
	if (version)
		return do_version();
	return cmd_select(cmds, argc - optind, argv + optind, do_help);
}
