#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# report's and script's perf options (--sort, --percent-limit, -g, --time,
# --per-vcpu, script -F and script's filters), no VM needed:
#   - perfopts-check.py describes a recording sample by sample, has
#     perfopts-gen write it, and checks every option's output against what
#     it computes from its own description;
#   - the golden recording's samples through the same options, counted
#     from script's full output by stackcollapse-perf.pl's rules;
#   - usage errors for bad values, and the help against the man page;
#   - perf-compare.py: perf records a small program; its samples, as perf
#     script prints them, become a recording; perf report and kvm-pvprof
#     report (perf script and kvm-pvprof script) must then agree on every
#     option both have (SKIP lines without perf).
#
# usage: perfopts-test.sh     writes "<passed> <failed>" to $O/results/tool-perfopts
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$O/tool/tests/perfopts-gen
report_test=$O/tool/tests/report-test
for f in "$gen" "$report_test"; do
	[ -x "$f" ] || { echo "${0##*/}: $f is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }
done

echo "== a described recording (perfopts-check.py)"
run_check perfopts-check.py "$bin" "$gen" "$tmp"

echo "== the golden recording: report's rows against script's samples"
data=$tmp/golden.data
"$report_test" gen "$data" || { fail "gen: the golden recording" "report-test gen failed"; finish tool-perfopts; exit; }
"$bin" script -i "$data" >"$tmp/script.txt" 2>/dev/null
# Each key's rows, from script's text parsed by stackcollapse-perf.pl's
# rules (the header's first word the command, frames "ADDR NAME (DSO)"):
# self is the first frame's, total each distinct value once per sample.
for keys in comm comm,dso dso,sym sym; do
	"$bin" report -i "$data" -j --sort "$keys" --limit 0 >"$tmp/rows.json" 2>/dev/null
	if why=$("$python" - "$tmp/script.txt" "$tmp/rows.json" "$keys" <<'PY' 2>&1
import json, re, sys
script, rows, keys = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3].split(",")
def unescape(s):
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), s)
want = {}
for block in script.strip("\n").split("\n\n"):
    lines = block.split("\n")
    comm = unescape(lines[0].split(" ")[0])
    frames = []
    for l in lines[1:]:
        m = re.match(r"^\s*[0-9a-f]+ (\S+) \((\S+)\)$", l)
        sym = re.sub(r"\+0x[0-9a-f]+$", "", unescape(m.group(1)))
        frames.append((sym, unescape(m.group(2))))
    if "dso" not in keys and "sym" not in keys:
        vals = [(comm,)]
    else:
        vals = []
        for sym, dso in frames:
            v = (comm,) if "comm" in keys else ()
            v += (dso,) if "dso" in keys else ()
            v += (sym,) if "sym" in keys else ()
            vals.append(v)
    for i, v in enumerate(vals):
        r = want.setdefault(v, [0, 0])
        r[0] += i == 0
    for v in set(vals):
        want[v][1] += 1
got = {}
for r in rows["functions"]:
    v = (r["comm"],) if "comm" in keys else ()
    v += ((r["dso"] or "[unknown]"),) if "dso" in keys else ()
    if "sym" in keys:
        # script names a frame without symbol [unknown]; report by its label.
        v += (r["name"] if not re.match(r"^(0x|/)", r["name"]) else "[unknown]",)
    g = got.setdefault(v, [0, 0])
    g[0] += r["self"]
    g[1] = max(g[1], r["total"]) if "sym" in keys else g[1] + r["total"]
if "sym" in keys:
    # Labels merged into [unknown] above: compare the named rows only.
    want = {k: v for k, v in want.items() if k[-1] != "[unknown]"}
    got = {k: v for k, v in got.items() if k[-1] != "[unknown]"}
if want != got:
    sys.exit("script gives %r, report %r" % (sorted(want.items())[:4], sorted(got.items())[:4]))
PY
); then
		pass "golden: --sort $keys: report's rows are script's samples, counted in python"
	else
		fail "golden: --sort $keys" "${why:0:400}"
	fi
done

echo "== usage errors"
d=$tmp/perfopts.data
expect_err "--sort: unknown key" 2 "--sort: unknown key 'foo' (keys: self, total, comm, pid, tid, vcpu, dso, sym)" -- report -i "$d" --sort comm,foo
expect_err "--sort: a key twice" 2 "--sort: 'comm' given twice in 'comm,dso,comm'" -- report -i "$d" --sort comm,dso,comm
expect_err "--sort: perf's alias twice" 2 "--sort: 'sym' given twice in 'sym,symbol'" -- report -i "$d" --sort sym,symbol
expect_err "--sort: an empty key" 2 "--sort: an empty key in 'comm,'" -- report -i "$d" --sort comm,
expect_err "--percent-limit: above 100" 2 "--percent-limit: expected a percentage from 0 to 100, got: '100.5'" -- report -i "$d" --percent-limit 100.5
expect_err "--percent-limit: negative" 2 "got: '-1'" -- report -i "$d" --percent-limit -1
expect_err "--percent-limit: not a number" 2 "got: 'abc'" -- report -i "$d" --percent-limit abc
expect_err "--percent-limit: exponent" 2 "got: '1e1'" -- report -i "$d" --percent-limit 1e1
expect_err "--percent-limit: two percent signs" 2 "got: '5%%'" -- report -i "$d" --percent-limit 5%%
expect_err "--percent-limit with --folded" 2 "--percent-limit applies to the top table and the call graph, not to --folded" -- report -i "$d" --percent-limit 5 --folded
expect_err "-g: a bad order" 2 "-g: expected 'caller' or 'callee', got: 'graph'" -- report -i "$d" -g graph
expect_err "--callgraph=: a bad order" 2 "--callgraph: expected 'caller' or 'callee', got: 'fractal'" -- report -i "$d" --callgraph=fractal
expect_err "-g with --folded" 2 "give one of --callgraph (or -g), --folded and --per-vcpu" -- report -i "$d" -g callee --folded
expect_err "--per-vcpu with --callgraph" 2 "give one of --callgraph (or -g), --folded and --per-vcpu" -- report -i "$d" --per-vcpu --callgraph
for t in 5 "2,1" "a,b" "1,2,3" "1.0000000001," "1%-" "20%-10%" "10%/0" "60%/2" "101%-102%" "10%-20%,x" "1,2 3"; do
	expect_err "--time '$t': malformed" 2 "--time: expected START,END" -- report -i "$d" --time "$t"
done
expect_err "script --time: malformed, the same message" 2 "--time: expected START,END" -- script -i "$d" --time 2,1
expect_err "script -F: unknown field" 2 "-F: unknown field 'addr' (fields: comm, pid, tid, vcpu or cpu, time, period, event, ip, sym, symoff, dso)" -- script -i "$d" -F comm,addr
expect_err "script -F: symoff without sym" 2 "-F: symoff needs sym" -- script -i "$d" -F ip,symoff
expect_err "script -F: sym without ip" 2 "-F: sym and dso need ip, the address they name" -- script -i "$d" -F comm,sym
expect_err "script -F: + and plain mixed" 2 "-F: give every field with '+' or '-', or none, got: '+comm,tid'" -- script -i "$d" -F +comm,tid
expect_err "script -F: nothing left" 2 "-F: no field left to print" -- script -i "$d" -F -comm,-pid,-tid,-vcpu,-time,-period,-event,-ip,-sym,-symoff,-dso
expect_err "script: --kernel and --user" 2 "script: give --kernel or --user, not both" -- script -i "$d" --kernel --user
run -- report -i "$d" --per-vcpu -j
if [ "$rc" = 2 ] && grep -q '"error":.*--per-vcpu has no JSON form' <<<"$out"; then
	pass "report -j --per-vcpu: refused as JSON"
else
	fail "report -j --per-vcpu" "exit status $rc: ${out:0:200}"
fi

echo "== help and man page"
man=$repo/doc/kvm-pvprof-report.8
nroff -man -Tascii -rLL=250n "$man" 2>/dev/null | col -b | tr -s ' \t' ' ' >"$tmp/man.txt"
warnings=$(groff -man -Tascii -ww -z "$man" 2>&1)
if [ -z "$warnings" ]; then
	pass "man: kvm-pvprof-report.8 renders without warnings"
else
	fail "man: kvm-pvprof-report.8 renders without warnings" "${warnings:0:300}"
fi
for cmd in report script; do
	"$bin" "$cmd" --help >"$tmp/help.txt"
	missing=
	while read -r opt; do
		grep -qE -- "(^|[ [|])$opt([] ,|=]|$)" "$tmp/man.txt" || missing="$missing [$opt]"
	done < <(grep -oE '(^|[ [|(])--?[A-Za-z][a-z-]*' "$tmp/help.txt" | sed 's/^[ [|(]//' | sort -u)
	if [ -z "$missing" ]; then
		pass "man: every option of '$cmd --help' is in kvm-pvprof-report.8"
	else
		fail "man: '$cmd --help' agrees with kvm-pvprof-report.8" "not in the man page:$missing"
	fi
done
for text in "--sort KEY[,KEY...]" "--percent-limit PCT" "-g ORDER" "ORDER := { caller | callee }" "--time START,END" \
	    "--per-vcpu" "-F FIELD[,FIELD...]" "--reltime"; do
	if grep -qF -- "$text" "$tmp/man.txt"; then
		pass "man: documents '$text'"
	else
		fail "man: documents '$text'" "missing"
	fi
done

echo "== perf, on the same samples (perf-compare.py)"
"$python" "$here/perf-compare.py" "$bin" "$gen" "$here/perfopts-workload.c" "$tmp" \
	>"$tmp/perf.out" 2>"$tmp/perf.err"
perf_rc=$?
grep -E '^(PASS|FAIL|SKIP) ' "$tmp/perf.out"
passed=$((passed + $(grep -c '^PASS ' "$tmp/perf.out")))
perf_failed=$(grep -c '^FAIL ' "$tmp/perf.out")
failed=$((failed + perf_failed))
skipped=$((skipped + $(grep -c '^SKIP ' "$tmp/perf.out")))
if [ "$perf_rc" != 0 ] && [ "$perf_failed" = 0 ]; then
	fail "perf-compare.py" "exit status $perf_rc: $(head -c 400 "$tmp/perf.err")"
fi

finish tool-perfopts
