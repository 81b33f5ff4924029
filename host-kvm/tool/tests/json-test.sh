#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof's JSON output (-j) and the escaping of guest strings, judged by
# Python's json module and by stackcollapse-perf.pl's rules, never by
# kvm-pvprof itself (no VM needed):
#   - the JSON string writer on every byte, every ill-formed UTF-8 shape and
#     random bytes: valid UTF-8 out, json.loads() gives what Python's own
#     decoder makes of the bytes, no raw control character;
#   - script on a hostile recording (json-test gen: command names and
#     symbols with ';', "->", quotes, spaces, control bytes, bad UTF-8)
#     collapsed by stackcollapse-perf.pl's rules (a Python copy of its
#     default behaviour, or the real script when STACKCOLLAPSE_PERF names
#     it): as many samples and frames as the recording was built with;
#   - record's summary, by record's own counting and writing functions
#     (json-test summary), as text and as JSON: the numbers the recording
#     was built with;
#   - report -j on the hostile recording, in both placements and with
#     filters, --sort and --limit: json-check.py models the recording from
#     the manifest and checks the JSON's totals and function table against
#     the model and against the text report of the same options, and the
#     guest strings against Python's decoding of their bytes;
#   - report's header within 100 columns, with 12-digit counts too;
#   - report's warnings for filters that match nothing, worded by the model
#     with what the recording has instead, on stderr or in the JSON, exit 0;
#   - -j usage and read errors of record and report as JSON objects, and
#     script -j refused in both placements;
#
# usage: json-test.sh      writes "<passed> <failed>" to $O/results/tool-json
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

json_test=$O/tool/tests/json-test
[ -x "$json_test" ] || { echo "${0##*/}: $json_test is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

# check NAME PYTHON [ARGS...]: PYTHON exits 0 (pass) or with a reason.
check() {
	local name=$1 code=$2 why
	shift 2
	if why=$("$python" -c "$code" "$@" 2>&1); then
		pass "$name${why:+ ($why)}"
	else
		fail "$name" "${why:0:600}"
	fi
}

echo "== the JSON string writer"
"$python" - >"$tmp/strings.hex" <<'EOF'
import random
cases = [bytes([b]) for b in range(1, 256)]
cases += [bytes([a, b]) for a in range(0x80, 0x100) for b in range(1, 256)]
# Three- and four-byte shapes around every boundary of Unicode's table 3-7.
edges = [0x01, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff]
for lead in (0xe0, 0xe1, 0xe2, 0xec, 0xed, 0xee, 0xef):
    cases += [bytes([lead, b, c]) for b in edges for c in edges]
for lead in (0xf0, 0xf1, 0xf3, 0xf4, 0xf5):
    cases += [bytes([lead, b, c, d]) for b in edges for c in edges[:6] for d in edges[:6]]
cases += ["\u2028\u2029\u0085\u009b\u00a0\u00e9\u20ac\U0001f600".encode(),
          b'"\\/\x08\x0c\n\r\t', b'fn"quote\\back', b'']
rng = random.Random(24)
cases += [bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 40)))
          for _ in range(3000)]
for c in cases:
    print(c.hex())
EOF
if "$json_test" strings <"$tmp/strings.hex" >"$tmp/strings.json" 2>"$tmp/strings.err"; then
	check "strings: valid UTF-8, json.loads() equals Python's decode(errors='replace'), no raw control character" '
import json, sys
inputs = [bytes.fromhex(l) for l in open(sys.argv[1]).read().split("\n")[:-1]]
outputs = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
if len(inputs) != len(outputs):
    sys.exit("%d inputs, %d outputs" % (len(inputs), len(outputs)))
banned = {chr(c) for c in list(range(0x20)) + list(range(0x7f, 0xa0)) + [0x2028, 0x2029]}
for raw, out in zip(inputs, outputs):
    text = out.decode("utf-8")          # strict: raises on invalid UTF-8
    if banned & set(text):
        sys.exit("raw control character in %r for %r" % (out, raw))
    got = json.loads(text)
    want = raw.decode("utf-8", "replace")
    if got != want:
        sys.exit("%r: got %r, want %r" % (raw, got, want))
print("%d strings" % len(inputs))
' "$tmp/strings.hex" "$tmp/strings.json"
else
	fail "strings: json-test strings" "$(head -c 300 "$tmp/strings.err")"
fi

echo "== a hostile recording"
data=$tmp/hostile.data
manifest=$tmp/hostile.manifest
golden_data=$tmp/golden.data
if ! "$json_test" gen "$data" >"$manifest" || ! "$O/tool/tests/report-test" gen "$golden_data"; then
	fail "gen: the hostile recording" "json-test gen or report-test gen failed"
	finish tool-json
	exit
fi
pass "gen: the hostile recording"

# stackcollapse-perf.pl's reading of perf script output with its default
# options (process names on, --tidy-generic on, no inline, no annotations),
# FlameGraph commit 41fee1f: a blank line ends a sample, a header line
# names the process (spaces become '_'), a frame line's function loses its
# +0xOFFSET, is split at "->" and tidied (';' -> ':', from '(' on dropped,
# quotes dropped; the parts after the first marked "_[i]"); the stack is the process name then the frames,
# outermost first, joined with ';', counted by the header's period.
stackcollapse_py='
import re, sys
stack, pname, period, collapsed = [], None, 1, {}
for line in open(sys.argv[1], encoding="latin-1"):
    line = line.rstrip("\n")
    if line.startswith("#"):
        continue
    if line == "":
        if pname:
            key = ";".join([pname] + stack)
            collapsed[key] = collapsed.get(key, 0) + period
        stack, pname = [], None
        continue
    m = re.match(r"^(\S.+?)\s+(\d+)/*(\d+)*\s+", line)
    if m:
        p = re.search(r":\s*(\d+)*\s+(\S+):\s*$", line)
        period = int(p.group(1)) if p and p.group(1) else 1
        pname = m.group(1).replace(" ", "_")
        continue
    m = re.match(r"^\s*(\w+)\s*(.+) \((.*)\)", line)
    if not m:
        print("Unrecognized line: " + line, file=sys.stderr)
        continue
    if not pname:
        continue
    rawfunc, mod = re.sub(r"\+0x[\da-f]+$", "", m.group(2)), m.group(3)
    if rawfunc.startswith("("):
        continue
    parts = rawfunc.split("->")
    while parts and not parts[-1]:      # as Perl'"'"'s split drops them
        parts.pop()
    inline = []
    for func in parts:
        if func == "[unknown]":
            func = "[" + (re.sub(r".*/", "", mod) if mod != "[unknown]" else "unknown") + "]"
        func = func.replace(";", ":")
        if not re.search(r"\.\(.*\)\.", func):
            func = re.sub(r"\((?!anonymous namespace\)).*", "", func)
        func = func.replace("\"", "").replace("'"'"'", "")
        if inline and "_[i]" not in func:
            func += "_[i]"
        inline.append(func)
    stack = inline + stack
for k in sorted(collapsed):
    print("%s %d" % (k, collapsed[k]))
'

# collapsed_check NAME FILE: FILE, collapsed stacks, holds every sample of
# the manifest with its command name and frames, none split or merged.
collapsed_check() {
	check "$1" '
import sys
samples = frames = 0
procs = set()
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "sample":
        count, nr = int(f[3]), int(f[5]) + int(f[6])
        samples += count
        frames += count * nr
        procs.add(int(f[2]))
got_samples = got_fields = 0
names = set()
for line in open(sys.argv[2], encoding="latin-1"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    n = int(count) // 1000000
    got_samples += n
    got_fields += n * len(stack.split(";"))
    names.add(stack.split(";")[0])
if (got_samples, got_fields) != (samples, samples + frames):
    sys.exit("%d samples with %d fields; built with %d samples, %d frames, plus a "
             "command name each: %d" % (got_samples, got_fields, samples, frames,
                                       samples + frames))
if len(names) != len(procs):
    sys.exit("%d distinct command names, %d processes: %s" % (len(names), len(procs), sorted(names)))
print("%d samples, %d frames, %d command names" % (samples, frames, len(names)))
' "$manifest" "$2"
}

if "$bin" script -i "$data" >"$tmp/script.txt" 2>"$tmp/script.err"; then
	"$python" -c "$stackcollapse_py" "$tmp/script.txt" >"$tmp/collapsed.txt" 2>"$tmp/collapse.err"
	if [ -s "$tmp/collapse.err" ]; then
		fail "script: stackcollapse rules recognize every line" "$(head -c 300 "$tmp/collapse.err")"
	else
		pass "script: stackcollapse rules recognize every line"
	fi
	collapsed_check "script | stackcollapse rules: no command name or function split or merged" \
		"$tmp/collapsed.txt"
	if [ -n "${STACKCOLLAPSE_PERF:-}" ]; then
		perl "$STACKCOLLAPSE_PERF" "$tmp/script.txt" >"$tmp/collapsed-real.txt" 2>"$tmp/real.err"
		collapsed_check "script | $STACKCOLLAPSE_PERF: no command name or function split or merged" \
			"$tmp/collapsed-real.txt"
		if cmp -s "$tmp/collapsed.txt" "$tmp/collapsed-real.txt"; then
			pass "stackcollapse: the Python copy gives the real script's bytes"
		else
			fail "stackcollapse: the Python copy gives the real script's bytes" \
				"$(diff "$tmp/collapsed-real.txt" "$tmp/collapsed.txt" | head -5 | tr '\n' '|')"
		fi
	fi
else
	fail "script: the hostile recording" "exit status $?: $(head -c 300 "$tmp/script.err")"
fi

echo "== record's summary (record_summary.c on the recording's reads)"
"$json_test" summary "$data" text >"$tmp/summary.txt" 2>"$tmp/summary.err"
"$json_test" summary "$data" json >"$tmp/summary.json" 2>>"$tmp/summary.err"
if [ -s "$tmp/summary.err" ]; then
	fail "summary: json-test summary" "$(head -c 300 "$tmp/summary.err")"
else
	check "summary: the JSON summary holds what the recording was built with" '
import json, struct, sys
facts = [l.split() for l in open(sys.argv[1])]
s = json.load(open(sys.argv[2]))
callchains = sum(int(f[3]) for f in facts if f[0] == "sample")
losses = {f[1]: int(f[2]) for f in facts if f[0] == "loss"}
want = {
    "output": sys.argv[3], "stopped": "duration elapsed",
    "callchains": callchains,
    "stream_records": int([f[1] for f in facts if f[0] == "entries"][0]),
    "lost": sum(losses.values()),
}
for k, v in want.items():
    if s[k] != v:
        sys.exit("%s: %r, built with %r" % (k, s[k], v))
nonzero = {k: v for k, v in s["losses"].items() if v}
if nonzero != losses or len(s["losses"]) != 12:
    sys.exit("losses %r, built with %r" % (s["losses"], losses))
if s["sideband"]["messages"] != int([f[1] for f in facts if f[0] == "sideband"][0]):
    sys.exit("sideband %r" % s["sideband"])
# pvprof-data(5): a 24-byte header, then sections: type, flags, size, payload
# padded to 8 bytes; type 4 is a stream section.
data, pos, stream = open(sys.argv[3], "rb").read(), 24, 0
while pos < len(data):
    kind, _, size = struct.unpack_from("<IIQ", data, pos)
    stream += size if kind == 4 else 0
    pos += 16 + (size + 7) // 8 * 8
if s["stream_bytes"] != stream:
    sys.exit("stream_bytes %d, the stream sections hold %d" % (s["stream_bytes"], stream))
if s["duration_ns"] <= 0:
    sys.exit("duration_ns %r" % s["duration_ns"])
print("%d callchains, %d stream entries, %d lost" % (s["callchains"], s["stream_records"], s["lost"]))
' "$manifest" "$tmp/summary.json" "$data"
	check "summary: the text line says the same as the JSON" '
import json, re, sys
s = json.load(open(sys.argv[2]))
line = open(sys.argv[1]).read()
want = "recorded %d records, %d losses, %d sideband bytes to %s\n" % (
    s["callchains"], s["lost"], s["sideband"]["bytes"], s["output"])
if line != want:
    sys.exit("%r, expected %r" % (line, want))
' "$tmp/summary.txt" "$tmp/summary.json"
fi

echo "== report -j on the hostile recording"
# json_report NAME OPTIONS...: 'report --json' and '-j report' give the same
# bytes, and json-check.py accepts them with the text of the same options.
json_report() {
	local name=$1 why rc1 rc2 rc3
	shift
	"$bin" report -i "$data" --json "$@" >"$tmp/after.json" 2>"$tmp/after.err"
	rc1=$?
	"$bin" -j report -i "$data" "$@" >"$tmp/before.json" 2>"$tmp/before.err"
	rc2=$?
	"$bin" report -i "$data" "$@" >"$tmp/report.txt" 2>"$tmp/report.err"
	rc3=$?
	if [ "$rc1$rc2$rc3" != 000 ]; then
		fail "$name" "exit status $rc1 (report --json), $rc2 (-j report), $rc3 (text): $(cat "$tmp/after.err" "$tmp/before.err" "$tmp/report.err" | head -c 300)"
	elif ! cmp -s "$tmp/after.json" "$tmp/before.json"; then
		fail "$name" "'report -j' and '-j report' differ"
	elif [ -s "$tmp/after.err" ] || [ -s "$tmp/before.err" ]; then
		fail "$name" "stderr: $(head -c 300 "$tmp/after.err")"
	elif why=$("$python" "$here/json-check.py" "$manifest" "$tmp/after.json" "$tmp/report.txt" "$@" 2>&1); then
		pass "$name ($why)"
	else
		fail "$name" "${why:0:600}"
	fi
}
json_report "report -j: default, both placements, against the model and the text"
json_report "report -j --limit 0: every function" --limit 0
json_report "report -j --sort total --limit 5 --vcpu 1 --user" --sort total --limit 5 --vcpu 1 --user
json_report "report -j --pid 105 --kernel" --pid 105 --kernel
json_report "report -j --comm with a quote and a backslash" --comm 'quo"te\back' --limit 0
json_report "report -j --comm with bytes that are not UTF-8" --comm $'bad\xff\xfeutf8' --limit 0
json_report "report -j --sort total" --sort total
if "$bin" report -i "$data" --json --flamegraph "$tmp/fg.svg" >"$tmp/fg.json" 2>"$tmp/fg.err" &&
   [ -s "$tmp/fg.svg" ] && "$python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/fg.json"; then
	pass "report -j --flamegraph: the SVG in its file, the JSON on stdout"
else
	fail "report -j --flamegraph" "$(head -c 300 "$tmp/fg.err")"
fi
expect_json_err "report -j --folded: no JSON form" 2 "--folded has no JSON form" report -i "$data" -j --folded
expect_json_err "-j report --callgraph: no JSON form" 2 "--callgraph has no JSON form" -j report -i "$data" --callgraph
expect_json_err "report -j: a usage error before -j" 2 "--sort: unknown key 'x'" report --sort x -j
expect_json_err "report -j: a missing recording" 1 "nonexistent.data: cannot open" report -i "$tmp/nonexistent.data" -j
expect_json_err "-j report: a missing recording" 1 "nonexistent.data: cannot open" -j report -i "$tmp/nonexistent.data"
# A file header cut short is damage; a recording cut later is read up to
# the cut (kvm-pvprof-report(8), DAMAGED AND LONG RECORDINGS).
head -c 16 "$data" >"$tmp/cut.data"
expect_json_err "report -j: a damaged recording" 1 "cut.data: offset 0 (0x0): 16 bytes: too short" \
	report -i "$tmp/cut.data" -j
head -c 1000 "$data" >"$tmp/cut-later.data"
if "$bin" report -i "$tmp/cut-later.data" -j >"$tmp/cut-later.json" 2>"$tmp/cut-later.err" &&
   "$python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/cut-later.json" &&
   grep -q '^Warning: .*cut at offset 1000' "$tmp/cut-later.err"; then
	pass "report -j: a recording cut after its header: JSON on stdout, the cut's warning on stderr"
else
	fail "report -j: a recording cut after its header" "$(head -c 300 "$tmp/cut-later.err")"
fi

echo "== the header fits 100 columns"
# header_width NAME FILE: every line of FILE that starts with '#' is at most
# 100 columns long (lines of the header: "#", "# ..." or "#   ...").
header_width() {
	local long
	long=$(awk 'length($0) > 100 || !/^#( |$)/ { print NR ": " length($0) ": " $0 }' "$2" | head -3)
	if [ -z "$long" ] && [ -s "$2" ]; then
		pass "$1"
	else
		fail "$1" "${long:-empty}"
	fi
}
"$json_test" header "$data" >"$tmp/header.txt" 2>"$tmp/header.err"
header_width "header: 12-digit counts, every filter, a long domain: within 100 columns" "$tmp/header.txt"
grep '^#' "$tmp/report.txt" >"$tmp/header.txt"
header_width "header of the hostile recording's report: within 100 columns" "$tmp/header.txt"
"$json_test" header "$golden_data" >"$tmp/header.txt" 2>>"$tmp/header.err"
header_width "header of report-test's golden recording, 12-digit counts: within 100 columns" "$tmp/header.txt"

echo "== filters that match nothing: a warning, exit status 0"
# warn_case NAME OPTIONS...: report exits 0 with its (empty) report, and
# stderr holds exactly the warnings json-check.py models; with -j they are
# the document's "warnings" and stderr stays empty.
warn_case() {
	local name=$1 why rc1 rc2
	shift
	"$bin" report -i "$data" "$@" >"$tmp/w.txt" 2>"$tmp/w.err"
	rc1=$?
	"$bin" report -i "$data" -j "$@" >"$tmp/w.json" 2>"$tmp/w.jerr"
	rc2=$?
	if [ "$rc1$rc2" != 00 ] || [ -s "$tmp/w.jerr" ] || ! grep -q '^# samples shown: 0,' "$tmp/w.txt"; then
		fail "$name" "exit status $rc1 (text), $rc2 (-j); -j stderr: $(head -c 200 "$tmp/w.jerr")"
	elif why=$("$python" "$here/json-check.py" --warnings "$manifest" "$tmp/w.err" "$tmp/w.json" "$@" 2>&1); then
		pass "$name: $why"
	else
		fail "$name" "${why:0:600}"
	fi
}
warn_case "--vcpu 5 on a 2-vCPU recording" --vcpu 5
warn_case "--pid without samples" --pid 7
warn_case "--comm without samples" --comm nosuch
warn_case "--vcpu, --pid and --comm each without samples" --vcpu 2 --pid 1 --comm 'quo"te'
warn_case "--vcpu and --pid that match apart, not together" --vcpu 0 --pid 102
warn_case "--kernel on a process in user mode only" --pid 102 --kernel
warn_case "a hostile --comm and --vcpu that match apart" --comm $'ctl\x01\x1b[\x7f' --vcpu 0
if "$bin" report -i "$data" --vcpu 1 --folded >"$tmp/w.folded" 2>"$tmp/w.err" &&
   [ -s "$tmp/w.folded" ] && ! grep -q '^Warning' "$tmp/w.err"; then
	pass "a filter that matches: no warning"
else
	fail "a filter that matches: no warning" "$(grep '^Warning' "$tmp/w.err" | head -c 300)"
fi

echo "== script -j: refused in both placements"
expect_json_err "script -j: refused, as JSON" 2 "script: -j is not supported" script -i "$data" -j
expect_json_err "-j script: refused, as JSON" 2 "'report -j' gives the profile as JSON" -j script -i "$data"
expect_json_err "script --json before a usage error" 2 "script: unknown option '--frob'" script --json --frob

echo "== a usage error before -j is JSON for every command"
expect_json_err "status: an unknown option before -j" 2 "status: unknown option '--frob'" status --frob -j
expect_json_err "enable: a bad event before -j" 2 "-e: expected 'cpu-clock', 'cycles' or 'instructions', got: 'bogus'" enable 1 -e bogus -j
expect_json_err "expose: an unknown option before --json" 2 "expose: unknown option '-x'" expose -x 1 hidden --json

echo "== record -j without a VM: errors as JSON in both placements"
expect_json_err "record -j: a usage error after -j" 2 "-d: expected a number from 1 to 604800, got: '0'" record -j -d 0 1
expect_json_err "record -j: a usage error before -j" 2 "-d: expected a number from 1 to 604800, got: '0'" record -d 0 --json 1
expect_json_err "-j record: a usage error" 2 "record: expected VM" -j record
expect_json_err "record -j: a process that is no VM" 1 "is not a KVM process" record -j -d 1 -o "$tmp/novm.data" $$
# Looking for -j must not reorder the arguments the real parse reads.
expect_err "record: -d without a value after the VM" 2 "record: option '-d' needs an argument" -- record 1 -d
expect_json_err "record -j: -d without a value after the VM" 2 "record: option '-d' needs an argument" record 1 -j -d
expect_err "enable: -F without a value after the VM" 2 "enable: option '-F' needs an argument" -- enable 1 -F
[ -e "$tmp/novm.data" ] && fail "record -j: no file when the VM cannot be opened" "$tmp/novm.data exists"

finish tool-json
