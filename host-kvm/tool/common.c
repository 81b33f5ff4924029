// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof: the command selector, the one error printer, number parsing
 * and a compact JSON writer.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/pvprof.h"
#include "abi/pvprof_ctl.h"
#include "json.h"
#include "main.h"

const char *bin_name = "kvm-pvprof";
bool json_output;

/**
 * cmd_select() - run the command named by argv[0]
 * @cmds: the level's table, ended by an entry with a NULL name
 * @argc: arguments, argv[0] being the command's name
 * @argv: see @argc
 * @help: the level's help, run when no command is given (as a usage error)
 *
 * The command receives argv with its own name at argv[0], like a main().
 * Return: the exit status.
 */
int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv))
{
	const struct cmd *c;

	if (argc < 1) {
		help(0, NULL);
		return EXIT_USAGE;
	}
	for (c = cmds; c->name; c++)
		if (!strcmp(argv[0], c->name))
			return c->func(argc, argv);
	return usage_err("unknown command '%s' (see '%s help')", argv[0],
			 bin_name);
}

static void p_err_va(const char *hint, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* With -j, the error is the document a JSON consumer reads. */
	if (json_output) {
		fputs("{\"error\":", stdout);
		json_write_string(stdout, msg);
		if (hint) {
			fputs(",\"hint\":", stdout);
			json_write_string(stdout, hint);
		}
		fputs("}\n", stdout);
		fflush(stdout);
		return;
	}
	fprintf(stderr, "Error: %s\n", msg);
	if (hint)
		fprintf(stderr, "Hint: %s\n", hint);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_err_va(NULL, fmt, ap);
	va_end(ap);
}

void p_err_hint(const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_err_va(hint, fmt, ap);
	va_end(ap);
}

/* Prints the error and returns EXIT_USAGE, for "return usage_err(...)". */
int usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_err_va(NULL, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

/**
 * option_err() - report what getopt_long() refused
 * @opt: its return value, '?' (unknown option) or ':' (missing argument)
 * @argv: the argv it parsed (optstrings start with ':')
 *
 * Return: EXIT_USAGE.
 */
int option_err(int opt, char **argv)
{
	const char *cmd = argv[0];

	if (opt == ':')
		return usage_err("%s: option '%s' needs an argument (see '%s %s help')",
				 cmd, argv[optind - 1], bin_name, cmd);
	if (optopt)
		return usage_err("%s: unknown option '-%c' (see '%s %s help')",
				 cmd, optopt, bin_name, cmd);
	return usage_err("%s: unknown option '%s' (see '%s %s help')", cmd,
			 argv[optind - 1], bin_name, cmd);
}

/**
 * parse_vm_options() - parse the options of a command that has none of its own
 * @argc: arguments, argv[0] being the command's name
 * @argv: see @argc
 * @help: the command's help
 * @helped: set when help was asked for (and printed)
 *
 * Leaves optind at the first operand.
 * Return: the exit status so far, EXIT_OK to go on.
 */
int parse_vm_options(int argc, char **argv, int (*help)(void), bool *helped)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	*helped = false;
	scan_json_option(argc, argv, ":jh", opts);
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json_output = true;
			break;
		case 'h':
			*helped = true;
			return help();
		default:
			return option_err(opt, argv);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		*helped = true;
		return help();
	}
	return EXIT_OK;
}

/**
 * scan_json_option() - set json_output when a command's options hold -j
 * @argc: arguments, argv[0] being the command's name
 * @argv: see @argc
 * @optstring: the command's getopt_long() options, with 'j'
 * @opts: its long options, with "json"
 *
 * A command that checks its options as it parses them runs this first, so
 * that a usage error before the -j, as in "report --sort x -j", comes out
 * as JSON too.  The command's own table skips option arguments ("-i -j"
 * names a file); errors are left to the real parse, which starts again
 * with optind = 0.  getopt_long() permutes what it scans, and a permuted
 * argv parses differently ("enable 1 -F" would become "enable -F 1"), so
 * the scan runs on a copy.
 */
void scan_json_option(int argc, char **argv, const char *optstring,
		      const struct option *opts)
{
	char **copy = malloc((size_t)(argc + 1) * sizeof(*copy));
	int opt;

	if (!copy)
		return;
	memcpy(copy, argv, (size_t)(argc + 1) * sizeof(*copy));
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, copy, optstring, opts, NULL)) != -1)
		if (opt == 'j')
			json_output = true;
	free(copy);
}

/* Checks there are exactly @nr operands from optind; @what names them. */
int expect_operands(int argc, char **argv, int nr, const char *what)
{
	if (argc - optind < nr)
		return usage_err("%s: expected %s (see '%s %s help')", argv[0],
				 what, bin_name, argv[0]);
	if (argc - optind > nr)
		return usage_err("%s: unexpected argument '%s' (see '%s %s help')",
				 argv[0], argv[optind + nr], bin_name, argv[0]);
	return EXIT_OK;
}

static const char *const event_names[] = {
	[PVPROF_EVENT_CPU_CLOCK]	= "cpu-clock",
	[PVPROF_EVENT_HW_CYCLES]	= "cycles",
	[PVPROF_EVENT_HW_INSTRUCTIONS]	= "instructions",
};

_Static_assert(sizeof(event_names) / sizeof(event_names[0]) ==
	       PVPROF_EVENT_MAX + 1, "every event has a name");

int event_parse(const char *name, uint32_t *event)
{
	uint32_t i;

	for (i = 0; i <= PVPROF_EVENT_MAX; i++) {
		if (!strcmp(name, event_names[i])) {
			*event = i;
			return EXIT_OK;
		}
	}
	return usage_err("-e: expected 'cpu-clock', 'cycles' or 'instructions', got: '%s'",
			 name);
}

/* NULL for an event this tool does not know. */
const char *event_name(uint32_t event)
{
	return event <= PVPROF_EVENT_MAX ? event_names[event] : NULL;
}

/**
 * parse_u64() - parse a decimal number in [@min, @max]
 * @what: the option or argument, for the message
 * @arg: the text
 * @min: smallest accepted value
 * @max: largest accepted value
 * @out: the value
 *
 * Return: EXIT_OK, or EXIT_USAGE after printing what was expected.
 */
int parse_u64(const char *what, const char *arg, uint64_t min, uint64_t max,
	      uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*arg < '0' || *arg > '9')
		goto bad;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return EXIT_OK;
bad:
	if (max == UINT64_MAX)
		return usage_err("%s: expected a number of at least %" PRIu64
				 ", got: '%s'", what, min, arg);
	return usage_err("%s: expected a number from %" PRIu64 " to %" PRIu64
			 ", got: '%s'", what, min, max, arg);
}

/**
 * parse_call_graph() - the argument of --call-graph
 * @arg: "fp", "dwarf" or "dwarf,SIZE"
 * @ustack_size: receives the user stack bytes per sample (0 for fp)
 *
 * SIZE is in bytes, a multiple of 8 from 8 to PVPROF_USTACK_MAX, the
 * snapshot sizes the ABI accepts (struct pvprof_ctl_enable): refusing
 * others here names the option instead of a bare EINVAL from the host.
 *
 * Return: EXIT_OK, or EXIT_USAGE after a one-line error.
 */
int parse_call_graph(const char *arg, uint32_t *ustack_size)
{
	unsigned long long v;
	char *end;

	if (!strcmp(arg, "fp")) {
		*ustack_size = 0;
		return EXIT_OK;
	}
	if (!strcmp(arg, "dwarf")) {
		*ustack_size = PVPROF_USTACK_DEFAULT;
		return EXIT_OK;
	}
	if (strncmp(arg, "dwarf,", 6))
		return usage_err("--call-graph: expected 'fp', 'dwarf' or 'dwarf,SIZE', got: '%s'",
				 arg);
	errno = 0;
	if (arg[6] < '0' || arg[6] > '9')
		goto bad;
	v = strtoull(arg + 6, &end, 10);
	if (errno || *end || v < 8 || v > PVPROF_USTACK_MAX || v % 8)
		goto bad;
	*ustack_size = (uint32_t)v;
	return EXIT_OK;
bad:
	return usage_err("--call-graph: SIZE must be a multiple of 8 from 8 to %u bytes, got: '%s'",
			 PVPROF_USTACK_MAX, arg + 6);
}

/* The commands' JSON document on stdout (json.c writes it). */
static struct json_writer stdout_json;

static struct json_writer *jw(void)
{
	if (!stdout_json.f)
		json_init(&stdout_json, stdout);
	return &stdout_json;
}

void jw_begin_object(void) { json_begin_object(jw()); }
void jw_end_object(void) { json_end_object(jw()); }
void jw_begin_array(void) { json_begin_array(jw()); }
void jw_end_array(void) { json_end_array(jw()); }
void jw_name(const char *name) { json_name(jw(), name); }
void jw_string(const char *s) { json_string(jw(), s); }
void jw_uint(uint64_t v) { json_uint(jw(), v); }
void jw_int(int64_t v) { json_int(jw(), v); }
void jw_bool(bool v) { json_bool(jw(), v); }
void jw_null(void) { json_null(jw()); }
void jw_end_document(void) { json_end_document(jw()); }
