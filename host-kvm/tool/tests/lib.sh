# SPDX-License-Identifier: GPL-2.0
# Shared by kvm-pvprof's test scripts: paths, PASS/FAIL/SKIP counting, running
# the command and checking what it printed, and kvm-vm-holder, a test VMM.
# shellcheck shell=bash disable=SC2034 # variables for the scripts that source this

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
O=${O:-$repo/out}
bin=$O/bin/kvm-pvprof
holder=$O/tool/tests/kvm-vm-holder
man_page=$repo/doc/kvm-pvprof.8
yama=/proc/sys/kernel/yama/ptrace_scope
# The distro's interpreter: a version-manager shim can cost seconds a call.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
no_pvprof="host KVM does not support pvprof: load the pvprof KVM modules (make host-install)"

for f in "$bin" "$holder"; do
	[ -x "$f" ] || { echo "${0##*/}: $f is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }
done

passed=0 failed=0 skipped=0
tmp=$(mktemp -d)
holder_stdin=()
helper_pids=()

cleanup() {
	local fd pid
	for fd in "${holder_stdin[@]}"; do
		exec {fd}>&-
	done
	for pid in "${helper_pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }

# run [PREFIX...] -- ARGS...: runs kvm-pvprof ARGS (under PREFIX, e.g.
# setpriv) and sets out, err and rc.
run() {
	local prefix=()
	while [ "$1" != -- ]; do
		prefix+=("$1")
		shift
	done
	shift
	out=$("${prefix[@]}" "$bin" "$@" 2>"$tmp/err")
	rc=$?
	err=$(<"$tmp/err")
}

# run_check SCRIPT ARGS...: runs the Python check SCRIPT (in this directory)
# with ARGS, prints its PASS and FAIL lines and counts them; one that exits
# non-zero without a FAIL line is one failure more.
run_check() {
	local script=$1 rc n_failed
	shift
	"$python" "$here/$script" "$@" >"$tmp/check.out" 2>"$tmp/check.err"
	rc=$?
	grep -E '^(PASS|FAIL) ' "$tmp/check.out"
	passed=$((passed + $(grep -c '^PASS ' "$tmp/check.out")))
	n_failed=$(grep -c '^FAIL ' "$tmp/check.out")
	failed=$((failed + n_failed))
	if [ "$rc" != 0 ] && [ "$n_failed" = 0 ]; then
		fail "$script" "exit status $rc: $(head -c 400 "$tmp/check.err")"
	fi
}

# expect_err NAME RC TEXT [PREFIX...] -- ARGS...: exit status RC, nothing on
# stdout, and an "Error: " line on stderr that contains TEXT.
expect_err() {
	local name=$1 want_rc=$2 text=$3
	shift 3
	run "$@"
	if [ "$rc" != "$want_rc" ]; then
		fail "$name" "exit status $rc, expected $want_rc (stderr: ${err:0:200})"
	elif [ -n "$out" ]; then
		fail "$name" "printed to stdout: ${out:0:200}"
	elif [ "${err#Error: }" = "$err" ]; then
		fail "$name" "stderr does not start with 'Error: ': ${err:0:200}"
	elif ! grep -qF -- "$text" <<<"$err"; then
		fail "$name" "stderr lacks '$text': ${err:0:300}"
	else
		pass "$name"
	fi
}

# expect_ok NAME [PREFIX...] -- ARGS...: exit status 0, nothing on stderr.
expect_ok() {
	local name=$1
	shift
	run "$@"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc: ${err:0:300}"
	elif [ -n "$err" ]; then
		fail "$name" "printed to stderr: ${err:0:300}"
	else
		pass "$name"
	fi
}

# require_dev_kvm: the nested suites run in L1; without /dev/kvm they end
# here with one failure.
require_dev_kvm() {
	[ -c /dev/kvm ] && return
	fail "preflight: /dev/kvm" "no /dev/kvm: run inside L1 (tests/nested/run-l1 --kvm pvprof)"
	finish "$suite"
	exit
}

# expect_no_stdout NAME: the last run printed nothing on stdout.
expect_no_stdout() {
	if [ -z "$out" ]; then
		pass "$1"
	else
		fail "$1" "stdout: ${out:0:200}"
	fi
}

# expect_text NAME VM GREP_FLAG PATTERN...: 'status VM' succeeds without a
# word on stderr and has a line matching each PATTERN, a fixed string
# (GREP_FLAG -F) or an extended regular expression (-E).
expect_text() {
	local name=$1 vm=$2 flag=$3 pattern missing=
	shift 3
	run -- status "$vm"
	if [ "$rc" != 0 ] || [ -n "$err" ]; then
		fail "$name" "status exit status $rc: ${err:0:300}"
		return
	fi
	for pattern in "$@"; do
		grep -q "$flag" -- "$pattern" <<<"$out" || missing="$missing [$pattern]"
	done
	if [ -z "$missing" ]; then
		pass "$name"
	else
		fail "$name" "no line matches:$missing in: ${out:0:900}"
	fi
}

# expect_help NAME TEXT ARGS...: exit status 0, TEXT on stdout, no stderr.
expect_help() {
	local name=$1 text=$2
	shift 2
	run -- "$@"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc (stderr: ${err:0:200})"
	elif [ -n "$err" ]; then
		fail "$name" "printed to stderr: ${err:0:200}"
	elif ! grep -qF -- "$text" <<<"$out"; then
		fail "$name" "stdout lacks '$text'"
	else
		pass "$name"
	fi
}

# expect_json_err NAME RC TEXT ARGS...: exit status RC, no stderr, and one
# JSON object on stdout whose "error" member contains TEXT.
expect_json_err() {
	local name=$1 want_rc=$2 text=$3 why
	shift 3
	run -- "$@"
	if [ "$rc" != "$want_rc" ]; then
		fail "$name" "exit status $rc, expected $want_rc"
	elif [ -n "$err" ]; then
		fail "$name" "printed to stderr: ${err:0:200}"
	elif ! why=$("$python" -c '
import json, sys
doc = json.loads(sys.stdin.read())
if not isinstance(doc, dict) or not isinstance(doc.get("error"), str):
    sys.exit("no error member in " + repr(doc))
if sys.argv[1] not in doc["error"]:
    sys.exit("error member lacks " + repr(sys.argv[1]) + ": " + doc["error"])
' "$text" <<<"$out" 2>&1); then
		fail "$name" "${why:0:300}"
	else
		pass "$name"
	fi
}

# expect_in_err NAME TEXT: the stderr of the last run contains TEXT.
expect_in_err() {
	if grep -qF -- "$2" <<<"$err"; then
		pass "$1"
	else
		fail "$1" "stderr lacks '$2': ${err:0:400}"
	fi
}

# start_holder [PREFIX...] -- ARGS...: starts kvm-vm-holder ARGS and waits
# for its "ready" line; sets holder_pid and holder_fds. It runs until this
# script closes its stdin (at exit).
start_holder() {
	local prefix=() n=${#holder_stdin[@]} in out line fd_in fd_out
	while [ "$1" != -- ]; do
		prefix+=("$1")
		shift
	done
	shift
	in=$tmp/holder$n.in
	out=$tmp/holder$n.out
	mkfifo "$in" "$out"
	"${prefix[@]}" "$holder" "$@" <"$in" >"$out" 2>"$tmp/holder$n.err" &
	holder_pid=$!
	exec {fd_in}>"$in"
	holder_stdin+=("$fd_in")
	exec {fd_out}<"$out"
	read -r -t 60 line <&"$fd_out"
	exec {fd_out}<&-
	read -r -a holder_fds <<<"$line"
	if [ "${holder_fds[0]:-}" != ready ]; then
		holder_error=$(head -c 300 "$tmp/holder$n.err")
		return 1
	fi
	holder_fds=("${holder_fds[@]:2}")
	return 0
}

# finish SUITE: prints the totals, writes "<passed> <failed>" to
# $PVPROF_RESULTS_DIR/SUITE (run-l1's writable --out in L1), else
# $O/results/SUITE, and exits 0 only when nothing failed.
finish() {
	local results=${PVPROF_RESULTS_DIR:-$O/results}

	echo "$passed passed, $failed failed"
	[ "$skipped" = 0 ] || echo "($skipped skipped, not counted as passed)"
	mkdir -p "$results"
	echo "$passed $failed" >"$results/$1"
	[ "$failed" = 0 ]
}
