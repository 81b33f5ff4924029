// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-pvprof report and script: the commands (doc/kvm-pvprof-report.8),
 * their options and which writers they run.
 *
 * Both read the recording's symbol and unwind tables first
 * (report_symbolizer.c).  report then builds the profile in one walk
 * (profile.c) and prints the header totals (report_header.c) and the top
 * table (report_sort.c), the call graph (report_callgraph.c), the per-vCPU
 * table (report_vcpu.c) or folded stacks (report_folded.c), or all of it
 * as JSON (report_json.c); an SVG flame graph (flamegraph.c) and a pprof
 * profile (report_pprof.c) on the side.  script prints every sample as
 * perf script does (report_script.c).  The filters both take are
 * report_select.c's.
 *
 * The options perf users reach for have perf's syntax where perf has the
 * option:
 *
 *   --sort KEY,...        the top table's rows and order (report_sort.c)
 *   --percent-limit PCT   rows and call-graph branches below PCT% hidden
 *   -g caller|callee      the call tree's direction (report_callgraph.c)
 *   --time START,END      samples in a time window (report_select.c)
 *   --per-vcpu            samples and losses per vCPU (report_vcpu.c)
 *   script -F FIELD,...   perf script's fields (report_script.c)
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flamegraph.h"
#include "main.h"
#include "profile.h"
#include "recording.h"
#include "report_callgraph.h"
#include "report_escape.h"
#include "report_filter.h"
#include "report_folded.h"
#include "report_header.h"
#include "report_json.h"
#include "report_pprof.h"
#include "report_resolve.h"
#include "report_script.h"
#include "report_select.h"
#include "report_sort.h"
#include "report_symbolizer.h"
#include "report_unwind.h"
#include "report_vcpu.h"
#include "symbolize.h"

#define REPORT_DEFAULT_INPUT	"pvprof.data"
#define REPORT_DEFAULT_LIMIT	50

enum {
	OPT_SORT = 256,
	OPT_CALLGRAPH,
	OPT_FOLDED,
	OPT_FLAMEGRAPH,
	OPT_VCPU,
	OPT_PID,
	OPT_COMM,
	OPT_KERNEL,
	OPT_USER,
	OPT_LIMIT,
	OPT_PPROF,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_INVERTED,
	OPT_PERCENT_LIMIT,
	OPT_TIME,
	OPT_PER_VCPU,
	OPT_RELTIME,
};

struct report_args {
	const char *input;
	struct report_sort_spec sort;
	bool callgraph, folded, per_vcpu;
	struct callgraph_options cg;
	bool percent_given;
	double percent_limit;
	const char *flamegraph;
	const char *pprof;
	struct flamegraph_options fg;
	uint64_t limit;
	struct report_time time;
	struct report_filter filter;
};

/* The filters report and script share (report_sample_selected()). */
#define FILTER_LONG_OPTIONS \
	{ "vcpu", required_argument, NULL, OPT_VCPU }, \
	{ "pid", required_argument, NULL, OPT_PID }, \
	{ "comm", required_argument, NULL, OPT_COMM }, \
	{ "kernel", no_argument, NULL, OPT_KERNEL }, \
	{ "user", no_argument, NULL, OPT_USER }, \
	{ "time", required_argument, NULL, OPT_TIME }

/*
 * Parses @opt when it is a filter: returns true and sets *@ret to the
 * exit status so far; false when @opt is no filter.
 */
static bool filter_option(int opt, const char *arg, struct report_filter *flt,
			  struct report_time *time, int *ret)
{
	uint64_t v;

	*ret = EXIT_OK;
	switch (opt) {
	case OPT_VCPU:
		*ret = parse_u64("--vcpu", arg, 0, UINT32_MAX, &v);
		flt->vcpu = (int64_t)v;
		return true;
	case OPT_PID:
		*ret = parse_u64("--pid", arg, 0, UINT32_MAX, &v);
		flt->pid = (int64_t)v;
		return true;
	case OPT_COMM:
		flt->comm = arg;
		return true;
	case OPT_KERNEL:
		flt->flags |= REPORT_F_KERNEL_ONLY;
		return true;
	case OPT_USER:
		flt->flags |= REPORT_F_USER_ONLY;
		return true;
	case OPT_TIME:
		*ret = report_time_parse(arg, time);
		flt->time = time;
		return true;
	default:
		return false;
	}
}

static int filter_check(const char *cmd, const struct report_filter *flt)
{
	if ((flt->flags & REPORT_F_KERNEL_ONLY) && (flt->flags & REPORT_F_USER_ONLY))
		return usage_err("%s: give --kernel or --user, not both", cmd);
	return EXIT_OK;
}

/* -g and --callgraph=ORDER: perf report's call-graph orders. */
static int parse_callgraph_order(const char *what, const char *arg, bool *callee)
{
	if (!strcmp(arg, "caller"))
		*callee = false;
	else if (!strcmp(arg, "callee"))
		*callee = true;
	else
		return usage_err("%s: expected 'caller' or 'callee', got: '%s'", what, arg);
	return EXIT_OK;
}

static int report_help(void)
{
	printf("Usage: %1$s " USAGE_REPORT "\n"
	       HELP_SPEC_FILTERS
	       "       KEY := { self | total | comm | pid | tid | vcpu | dso | sym }\n"
	       "       ORDER := { caller | callee }\n"
	       "       %1$s report help\n"
	       "\n"
	       "Show the profile in a recording made by '%1$s record'. The header gives\n"
	       "the recording's totals: stream entries, callchains, stale, skewed and\n"
	       "truncated ones (at the depth limit, or where the frame-pointer walk\n"
	       "ended), chains cut at a return address outside the image's code, losses\n"
	       "by reason, sideband messages and rejected ones, and frames left\n"
	       "unsymbolized; kvm-pvprof-report(8), HEADER, explains each line. Lines\n"
	       "wrap before 100 columns. Then the top table, or the chosen view.\n"
	       "A callchain may stand for several samples; those taken inside pvprof's\n"
	       "own NMI path are shown as the frame [pvprof overhead] above the stack it\n"
	       "interrupted (kvm-pvprof-report(8), PVPROF OVERHEAD).\n"
	       "\n"
	       "  -i FILE           the recording (default %2$s)\n"
	       "  --sort KEY[,KEY...]  the top table's rows and order, as perf report's:\n"
	       "                    comm, pid, tid, vcpu (perf's cpu), dso and sym (symbol)\n"
	       "                    group the samples into rows; self (overhead: samples\n"
	       "                    whose innermost frame is the row's) and total\n"
	       "                    (overhead_children: samples with a frame that is) order\n"
	       "                    them, with the other keys, in the order given; self\n"
	       "                    first when no count is given (default: self, rows of\n"
	       "                    functions)\n"
	       "  --percent-limit PCT  leave out the rows, and the call graph's branches,\n"
	       "                    below PCT%% of the samples shown (by the first count of\n"
	       "                    --sort; the call graph's default is %8$g)\n"
	       "  --limit N         rows listed, 0 for all (default %3$d)\n"
	       "  --callgraph[=ORDER], -g ORDER  the call tree instead of the top table:\n"
	       "                    caller order (the default: outermost frame first) or\n"
	       "                    callee order (sampled functions first, callers below)\n"
	       "  --folded          FlameGraph's folded stacks on stdout (the header goes\n"
	       "                    to stderr)\n"
	       "  --per-vcpu        per vCPU: the samples shown and their share, and the\n"
	       "                    recording's callchains and losses by reason\n"
	       "  --flamegraph OUT.svg  also write an interactive SVG flame graph: click a\n"
	       "                    frame to zoom, Search (Ctrl-F) for a regular expression\n"
	       "  --title TEXT      its title (default \"pvprof flame graph: FILE\")\n"
	       "  --width PIXELS    its width, %5$d to %6$d (default %7$d)\n"
	       "  --inverted        an icicle graph: callers at the top, callees below\n"
	       "  --pprof OUT.pb.gz also write the samples as a gzipped pprof profile\n"
	       "                    (profile.proto: go tool pprof, Parca, Pyroscope),\n"
	       "                    labelled vm, vcpu, pid, tid and comm\n"
	       "  --vcpu N          only samples of vCPU N\n"
	       "  --pid PID         only samples of guest process PID\n"
	       "  --comm NAME       only samples of processes named NAME\n"
	       "  --time START,END  only samples in this window, in seconds from the\n"
	       "                    recording's start (either side may be empty; several\n"
	       "                    windows separated by spaces), or percentages of its\n"
	       "                    length as perf takes them: A%%-B%%[,C%%-D%%...] or P%%/N\n"
	       "  --kernel          only kernel frames (samples without any are left out)\n"
	       "  --user            only user frames (samples without any are left out)\n"
	       "                    When the filters leave no sample, a warning on stderr\n"
	       "                    names the filter and what the recording has (exit 0)\n"
	       "  -j, --json        the header and the top table as one JSON object on\n"
	       "                    stdout (errors too; not with --callgraph, --folded or\n"
	       "                    --per-vcpu); kvm-pvprof-report(8) lists its members\n"
	       "\n"
	       "Strings from the guest are escaped: bytes other than printable ASCII\n"
	       "show as \\xHH, names longer than %4$d bytes are cut and end in '...'.\n"
	       "In JSON they are whole, valid UTF-8 kept and other bytes replaced\n"
	       "by U+FFFD.\n",
	       bin_name, REPORT_DEFAULT_INPUT, REPORT_DEFAULT_LIMIT, REPORT_NAME_MAX,
	       FLAMEGRAPH_WIDTH_MIN, FLAMEGRAPH_WIDTH_MAX, FLAMEGRAPH_WIDTH_DEFAULT,
	       CALLGRAPH_DEFAULT_PERCENT);
	return EXIT_OK;
}

static int report_parse(int argc, char **argv, struct report_args *a, bool *helped)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "callgraph", optional_argument, NULL, OPT_CALLGRAPH },
		{ "per-vcpu", no_argument, NULL, OPT_PER_VCPU },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		FILTER_LONG_OPTIONS,
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char optstring[] = ":i:g:jh";
	uint64_t v;
	int opt, ret;

	*helped = false;
	a->input = REPORT_DEFAULT_INPUT;
	a->limit = REPORT_DEFAULT_LIMIT;
	report_sort_parse("self", &a->sort);
	a->filter.vcpu = -1;
	a->filter.pid = -1;
	scan_json_option(argc, argv, optstring, opts);
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		ret = EXIT_OK;
		switch (opt) {
		case 'i':
			a->input = optarg;
			break;
		case OPT_SORT:
			ret = report_sort_parse(optarg, &a->sort);
			break;
		case OPT_PERCENT_LIMIT:
			ret = report_percent_parse("--percent-limit", optarg, &a->percent_limit);
			a->percent_given = true;
			break;
		case OPT_CALLGRAPH:
			a->callgraph = true;
			if (optarg)
				ret = parse_callgraph_order("--callgraph", optarg, &a->cg.callee);
			break;
		case 'g':
			a->callgraph = true;
			ret = parse_callgraph_order("-g", optarg, &a->cg.callee);
			break;
		case OPT_PER_VCPU:
			a->per_vcpu = true;
			break;

		case OPT_FOLDED:
			a->folded = true;
			break;
		case OPT_FLAMEGRAPH:
			a->flamegraph = optarg;
			break;
		case OPT_PPROF:
			a->pprof = optarg;
			break;
		case OPT_TITLE:
			a->fg.title = optarg;
			break;
		case OPT_WIDTH:
			ret = parse_u64("--width", optarg, FLAMEGRAPH_WIDTH_MIN,
					FLAMEGRAPH_WIDTH_MAX, &v);
			a->fg.width = (unsigned int)v;
			break;
		case OPT_INVERTED:
			a->fg.inverted = true;
			break;
		case OPT_LIMIT:
			ret = parse_u64("--limit", optarg, 0, UINT32_MAX, &a->limit);
			break;
		case 'j':
			json_output = true;
			break;
		case 'h':
			*helped = true;
			return report_help();
		default:
			if (!filter_option(opt, optarg, &a->filter, &a->time, &ret))
				return option_err(opt, argv);
		}
		if (ret)
			return ret;
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		*helped = true;
		return report_help();
	}
	ret = filter_check(argv[0], &a->filter);
	if (ret)
		return ret;
	if (a->callgraph + a->folded + a->per_vcpu > 1)
		return usage_err("report: give one of --callgraph (or -g), --folded and --per-vcpu");
	if (a->percent_given && (a->folded || a->per_vcpu))
		return usage_err("report: --percent-limit applies to the top table and the call"
				 " graph, not to %s", a->folded ? "--folded" : "--per-vcpu");
	a->cg.min_percent = a->percent_given ? a->percent_limit : CALLGRAPH_DEFAULT_PERCENT;
	if (!a->flamegraph && (a->fg.title || a->fg.width || a->fg.inverted))
		return usage_err("report: --title, --width and --inverted need --flamegraph OUT.svg");
	if (json_output && (a->callgraph || a->folded || a->per_vcpu))
		return usage_err("report: -j gives the header and the top table;"
				 " %s has no JSON form", a->callgraph ? "--callgraph" :
				 a->folded ? "--folded" : "--per-vcpu");
	return expect_operands(argc, argv, 0, "no operand");
}

/**
 * report_open() - load a recording for report or script
 * @path: its name
 * @r: the recording
 *
 * A recording that was not closed cleanly is read as far as it goes, with
 * one warning on stderr that says where it ends and what was lost there.
 * Return: EXIT_OK, or EXIT_FAILED after naming the file and the problem.
 */
static int report_open(const char *path, struct recording *r)
{
	char err[512], esc[REPORT_ESC_SIZE];

	if (recording_load(r, path, err, sizeof(err))) {
		p_err("%s: %s", esc_text(path, esc), err);
		return EXIT_FAILED;
	}
	if (!r->has_end) {
		recording_describe_end(r, err, sizeof(err));
		fprintf(stderr, "Warning: %s: %s\n", esc_text(path, esc), err);
	}
	return EXIT_OK;
}

int do_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	struct pvprof_symbolizer *sym;
	struct report_pprof *pprof = NULL;
	struct report_table *table = NULL;
	struct report_vcpus *vcpus = NULL;
	const struct profile_sink *sink = NULL;
	struct report_resolver res;
	char **warnings = NULL;
	FILE *svg = NULL;
	struct stat svg_stat;
	bool svg_regular = false;
	struct recording r;
	struct profile p;
	int nr_warnings = 0, i;
	bool helped;
	int ret;

	ret = report_parse(argc, argv, &a, &helped);
	if (ret || helped)
		return ret;
	ret = report_open(a.input, &r);
	if (ret)
		return ret;
	if (a.filter.time) {
		ret = report_time_resolve(&a.time, &r);
		if (ret) {
			recording_free(&r);
			return ret;
		}
	}
	/* Before any output: a report is not half written for a bad path. */
	if (a.pprof) {
		pprof = report_pprof_create(a.pprof, a.input);
		if (!pprof) {
			recording_free(&r);
			return EXIT_FAILED;
		}
		sink = report_pprof_sink(pprof);
	}
	if (a.flamegraph) {
		svg = fopen(a.flamegraph, "w");
		if (!svg) {
			p_err("cannot create %s: %s", a.flamegraph, strerror(errno));
			ret = EXIT_FAILED;
			goto close_svg;
		}
		/* Only a regular file is removed on failure: not /dev/stdout. */
		svg_regular = !fstat(fileno(svg), &svg_stat) && S_ISREG(svg_stat.st_mode);
	}
	/* The views that count more than the tree: they see every sample too. */
	if (json_output || !(a.callgraph || a.folded || a.per_vcpu)) {
		table = report_table_new(&a.sort);
		if (!table) {
			ret = EXIT_FAILED;
			goto close_svg;
		}
		sink = report_table_sink(table, sink);
	}
	if (a.per_vcpu) {
		vcpus = report_vcpus_new();
		if (!vcpus) {
			ret = EXIT_FAILED;
			goto close_svg;
		}
		sink = report_vcpus_sink(vcpus, sink);
	}
	sym = recording_resolver(&r, &res);
	if (!sym) {
		ret = EXIT_FAILED;
		goto close_svg;
	}
	if (profile_build_sink(&p, &r, &a.filter, &res, sink)) {
		ret = EXIT_FAILED;
		goto free_profile;
	}
	nr_warnings = report_filter_warnings(&r, &p.stats, &a.filter, &res, &warnings);
	if (nr_warnings < 0) {
		nr_warnings = 0;
		ret = EXIT_FAILED;
		goto free_profile;
	}
	if (json_output) {
		struct report_json j = {
			.path = a.input, .r = &r, .p = &p, .flt = &a.filter, .res = &res,
			.sym = sym, .table = table, .limit = a.limit,
			.percent_limit = a.percent_limit,
			.warnings = warnings, .nr_warnings = (size_t)nr_warnings,
		};

		if (report_write_json(stdout, &j))
			ret = EXIT_FAILED;
	} else if (a.folded) {
		if (report_write_header(stderr, a.input, &r, &p, &a.filter, &res) ||
		    report_write_folded(stdout, &p))
			ret = EXIT_FAILED;
	} else if (report_write_header(stdout, a.input, &r, &p, &a.filter, &res)) {
		ret = EXIT_FAILED;
	} else if (a.callgraph) {
		if (report_write_callgraph(stdout, &p, &a.cg))
			ret = EXIT_FAILED;
	} else if (a.per_vcpu) {
		/* -2: a read error, already printed. */
		ret = report_write_per_vcpu(stdout, vcpus, &r, &p, &a.filter);
		if (ret == -2)
			goto free_profile;
		ret = ret ? EXIT_FAILED : EXIT_OK;
	} else if (report_write_table(stdout, table, &p, a.limit, a.percent_limit)) {
		ret = EXIT_FAILED;
	}
	a.fg.source = a.input;
	if (ret) {
		p_err("write the report: %s", strerror(errno));
	} else if (svg && flamegraph_write(svg, &p, &a.fg)) {
		p_err("write %s: %s", a.flamegraph, strerror(errno));
		ret = EXIT_FAILED;
	} else if (pprof && report_pprof_write(pprof, a.input, &r, &p, &a.filter, &res)) {
		ret = EXIT_FAILED;
	}
	/* Last, where a reader of the terminal sees them; -j has them inside. */
	for (i = 0; i < nr_warnings && !json_output; i++)
		fprintf(stderr, "Warning: %s\n", warnings[i]);
free_profile:
	if (ret < 0)
		ret = EXIT_FAILED;
	report_filter_warnings_free(warnings, nr_warnings);
	profile_free(&p);
	report_unwind_free(res.unwind);
	pvprof_symbolizer_free(sym);
close_svg:
	if (svg && fclose(svg) && !ret) {
		p_err("write %s: %s", a.flamegraph, strerror(errno));
		ret = EXIT_FAILED;
	}
	/* A failed run leaves no flame graph, as --pprof leaves no profile. */
	if (svg && ret && svg_regular)
		unlink(a.flamegraph);
	report_vcpus_free(vcpus);
	report_table_free(table);
	/* Removes the file unless it was written whole. */
	report_pprof_free(pprof);
	if (fflush(stdout) && !ret) {
		p_err("write the report: %s", strerror(errno));
		ret = EXIT_FAILED;
	}
	recording_free(&r);
	return ret;
}

static int script_help(void)
{
	printf("Usage: %1$s " USAGE_SCRIPT "\n"
	       HELP_SPEC_FILTERS
	       "       FIELD := { comm | pid | tid | vcpu | cpu | time | period | event | ip |\n"
	       "                  sym | symoff | dso }\n"
	       "       %1$s script help\n"
	       "\n"
	       "Print every sample of a recording in the text form of 'perf script':\n"
	       "a line \"COMM PID/TID [VCPU] SECONDS: PERIOD EVENT:\", one line per frame\n"
	       "(\"ADDRESS SYMBOL+OFFSET (DSO)\", innermost first, kernel frames before\n"
	       "user frames), and a blank line; a sample taken inside pvprof's own NMI\n"
	       "path starts with the frame \"0 [pvprof overhead] ([pvprof])\"; the samples\n"
	       "folded into a callchain follow its own, each printed whole.\n"
	       "FlameGraph's stackcollapse-perf.pl and speedscope read it. Guest strings\n"
	       "are escaped (\\xHH), and so are the characters these tools split on:\n"
	       "spaces, parentheses, ';' and the '>' of \"->\".\n"
	       "\n"
	       "  -i FILE     the recording (default %2$s)\n"
	       "  -F FIELD[,FIELD...]  the fields printed, in perf script's order whatever\n"
	       "              the order given; or +FIELD and -FIELD to add to or take from\n"
	       "              the default (all of them). Frames need ip, sym and dso need\n"
	       "              ip, symoff needs sym; without ip a sample is its line alone\n"
	       "  --reltime   times from the recording's start (the clock of --time), not\n"
	       "              the host's CLOCK_MONOTONIC\n"
	       "  FILTERS     as for report: --vcpu, --pid, --comm, --time (in seconds\n"
	       "              from the recording's start, or percentages), --kernel or\n"
	       "              --user (only those frames; samples without any left out)\n"
	       "\n"
	       "-j is refused, before the command as after it: this output is text\n"
	       "for the tools above; 'report -j' gives the profile as JSON.\n",
	       bin_name, REPORT_DEFAULT_INPUT);
	return EXIT_OK;
}

int do_script(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fields", required_argument, NULL, 'F' },
		{ "reltime", no_argument, NULL, OPT_RELTIME },
		FILTER_LONG_OPTIONS,
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char optstring[] = ":i:F:jh";
	struct report_filter flt = { .vcpu = -1, .pid = -1 };
	struct script_options o = { .fields = SCRIPT_F_DEFAULT };
	const char *input = REPORT_DEFAULT_INPUT;
	struct pvprof_symbolizer *sym;
	struct report_resolver res;
	struct report_stats st;
	struct report_time time;
	char **warnings = NULL;
	int nr_warnings, opt, ret, i;
	struct recording r;

	scan_json_option(argc, argv, optstring, opts);
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		ret = EXIT_OK;
		switch (opt) {
		case 'i':
			input = optarg;
			break;
		case 'F':
			ret = script_fields_parse(optarg, &o.fields);
			break;
		case OPT_RELTIME:
			o.reltime = true;
			break;
		case 'j':
			break;
		case 'h':
			return script_help();
		default:
			if (!filter_option(opt, optarg, &flt, &time, &ret))
				return option_err(opt, argv);
		}
		if (ret)
			return ret;
	}
	if (optind < argc && !strcmp(argv[optind], "help"))
		return script_help();
	ret = filter_check(argv[0], &flt);
	if (!ret)
		ret = expect_operands(argc, argv, 0, "no operand");
	if (ret)
		return ret;
	/*
	 * Its output is perf script's text, for the tools that read that; a
	 * JSON form of every sample would be another format to maintain, and
	 * report -j has the profile.
	 */
	if (json_output)
		return usage_err("script: -j is not supported: script prints perf script's text "
				 "(for stackcollapse-perf.pl, speedscope); 'report -j' gives the "
				 "profile as JSON");
	ret = report_open(input, &r);
	if (ret)
		return ret;
	if (flt.time) {
		ret = report_time_resolve(&time, &r);
		if (ret) {
			recording_free(&r);
			return ret;
		}
	}
	sym = recording_resolver(&r, &res);
	if (!sym) {
		recording_free(&r);
		return EXIT_FAILED;
	}
	ret = report_write_script(stdout, &r, &flt, &res, &o, &st);
	if (ret == -1 || (!ret && fflush(stdout)))
		p_err("write the script output: %s", strerror(errno));
	if (ret || ferror(stdout))
		ret = EXIT_FAILED;
	nr_warnings = ret ? 0 : report_filter_warnings(&r, &st, &flt, &res, &warnings);
	if (nr_warnings < 0) {
		nr_warnings = 0;
		ret = EXIT_FAILED;
	}
	for (i = 0; i < nr_warnings; i++)
		fprintf(stderr, "Warning: %s\n", warnings[i]);
	report_filter_warnings_free(warnings, nr_warnings);
	report_unwind_free(res.unwind);
	pvprof_symbolizer_free(sym);
	recording_free(&r);
	return ret;
}
