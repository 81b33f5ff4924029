/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof: shared declarations of the host command (command tables, the
 * error printer, argument parsing and the JSON writer).
 */
#ifndef KVM_PVPROF_MAIN_H
#define KVM_PVPROF_MAIN_H

#include <stdbool.h>
#include <stdint.h>

/* User space never uses the kernel's short type names. */
#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

#define KVM_PVPROF_VERSION	"0.1"

/* Exit statuses, documented in doc/kvm-pvprof.8. */
#define EXIT_OK			0
#define EXIT_FAILED		1
#define EXIT_USAGE		2

/* Help fragments shared by every command, so the syntax reads the same. */
#define HELP_SPEC_VM \
	"       VM := { PID | PID:FD | DOMAIN }\n"
#define HELP_SPEC_OPTIONS \
	"       OPTIONS := { -j|--json | -h|--help | -V|--version }\n"
#define HELP_SPEC_EVENT \
	"       EVENT := { cpu-clock | cycles | instructions }\n"
#define HELP_SPEC_MODE \
	"       MODE := { visible | hidden | default }\n"

/* Each command's grammar, in its own help and in the top-level help. */
#define USAGE_ENABLE \
	"enable VM [-F HZ | -c PERIOD] [-e EVENT] [--max-depth N] [--vm-rate N]\n" \
	"              [--call-graph fp|dwarf[,SIZE]]"
#define USAGE_DISABLE	"disable VM"
#define USAGE_STATUS	"status VM [-j]"
#define USAGE_EXPOSE	"expose VM MODE"
#define USAGE_RECORD \
	"record [-d SECONDS] [-o FILE] [-F HZ] [-e EVENT]\n" \
	"              [--call-graph fp|dwarf[,SIZE]] [-j] VM"
#define USAGE_REPORT \
	"report [-i FILE] [--sort KEY[,KEY...]] [--percent-limit PCT]\n" \
	"              [--limit N] [--callgraph[=ORDER] | -g ORDER | --folded | --per-vcpu]\n" \
	"              [--flamegraph OUT.svg [--title TEXT] [--width PIXELS] [--inverted]]\n" \
	"              [--pprof OUT.pb.gz] [FILTERS] [-j]"
#define USAGE_SCRIPT \
	"script [-i FILE] [-F FIELD[,FIELD...]] [--reltime] [FILTERS]"
/* The sample filters report and script share. */
#define HELP_SPEC_FILTERS \
	"       FILTERS := [--vcpu N] [--pid PID] [--comm NAME] [--time START,END]\n" \
	"                  [--kernel|--user]\n"

extern const char *bin_name;
extern bool json_output;

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
};

int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv));
int option_err(int opt, char **argv);
int parse_vm_options(int argc, char **argv, int (*help)(void), bool *helped);
struct option;
void scan_json_option(int argc, char **argv, const char *optstring,
		      const struct option *opts);
int expect_operands(int argc, char **argv, int nr, const char *what);
int event_parse(const char *name, uint32_t *event);
const char *event_name(uint32_t event);

/* Diagnostics: "Error: ..." on stderr, or one JSON object with -j. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_err_hint(const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int parse_call_graph(const char *arg, uint32_t *ustack_size);
int parse_u64(const char *what, const char *arg, uint64_t min, uint64_t max,
	      uint64_t *out);

/* The JSON document on stdout, through json.c's writer (its string rules). */
void jw_begin_object(void);
void jw_end_object(void);
void jw_begin_array(void);
void jw_end_array(void);
void jw_name(const char *name);
void jw_string(const char *s);
void jw_uint(uint64_t v);
void jw_int(int64_t v);
void jw_bool(bool v);
void jw_null(void);
void jw_end_document(void);

/* The top-level commands, one file each (main.c's table lists them). */
int do_enable(int argc, char **argv);
int do_disable(int argc, char **argv);
int do_expose(int argc, char **argv);
int do_status(int argc, char **argv);
int do_record(int argc, char **argv);
int do_report(int argc, char **argv);
int do_script(int argc, char **argv);

#endif /* KVM_PVPROF_MAIN_H */
