#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof record, report and script on this machine (no VM needed):
# report-test's reader and writer tests, then the command line against the
# golden recording it synthesizes: every output format compared with the
# files in golden/ (symbolized by the symbolizer library from the agent's
# sideband in the recording: kernel symbols, a mapping with ELF symbols,
# hostile names and comms), perf script output parsed with the rules FlameGraph's
# stackcollapse-perf.pl applies, the SVG parsed as XML, usage errors, and
# damaged recordings.
#
# usage: report-test.sh            writes "<passed> <failed>" to
#                                  $O/results/tool-report
#        PVPROF_UPDATE_GOLDEN=1 report-test.sh   rewrites golden/ instead
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

report_test=$O/tool/tests/report-test
golden=$here/golden
update=${PVPROF_UPDATE_GOLDEN:-0}
[ -x "$report_test" ] || { echo "${0##*/}: $report_test is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

echo "== reader and writers (report-test)"
TMPDIR=$tmp "$report_test" run "$golden" >"$tmp/unit.out" 2>"$tmp/unit.err"
collect report-test $? "$tmp/unit.out" "$tmp/unit.err"

data=$tmp/golden.data
if ! "$report_test" gen "$data"; then
	fail "gen: the golden recording" "report-test gen failed"
	finish tool-report
	exit
fi

# compare NAME FILE GOLDEN: FILE equals golden/GOLDEN (or becomes it).
compare() {
	if [ "$update" = 1 ]; then
		cp "$2" "$golden/$3" && pass "$1" || fail "$1" "cannot write $golden/$3"
	elif cmp -s "$2" "$golden/$3"; then
		pass "$1"
	else
		fail "$1" "differs from golden/$3: $(diff "$golden/$3" "$2" | head -5 | tr '\n' '|')"
	fi
}

# cli NAME GOLDEN ARGS...: exit 0, nothing on stderr, stdout equals GOLDEN.
cli() {
	local name=$1 file=$2
	shift 2
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != 0 ] || [ -s "$tmp/err" ]; then
		fail "$name" "exit status $rc, stderr: $(head -c 300 "$tmp/err")"
	else
		compare "$name" "$tmp/out" "$file"
	fi
}

echo "== report, script and their formats (symbolized from the recording)"
cd "$tmp" || exit 2
cli "report: default (header, top functions)" cli-report.txt report -i golden.data
cli "report: --sort total --limit 3" cli-total.txt report -i golden.data --sort total --limit 3
cli "report: --callgraph --user" cli-callgraph.txt report -i golden.data --callgraph --user
cli "report: --vcpu 0 --kernel" cli-vcpu0-kernel.txt report -i golden.data --vcpu 0 --kernel
cli "report: --pid 100 --comm writer" cli-pid100.txt report -i golden.data --pid 100 --comm writer
cli "script: perf script text" cli-script.txt script -i golden.data

# The header is always there: with --folded it goes to stderr.
"$bin" report -i golden.data --folded >"$tmp/folded" 2>"$tmp/folded.err"
rc=$?
if [ "$rc" != 0 ]; then
	fail "report --folded" "exit status $rc: $(head -c 300 "$tmp/folded.err")"
else
	compare "report --folded: stacks on stdout" "$tmp/folded" cli-folded.txt
	if grep -q '^# losses: 6 (samples that left no callchain), by reason: notice_ring_full 2, throttled 3,$' "$tmp/folded.err" &&
	   grep -q '^# stale: 1 (' "$tmp/folded.err" && grep -q '^# skewed: 1 (' "$tmp/folded.err" &&
	   grep -q '^# truncated: 1 (stacks that end before their outermost caller): at the depth limit 0,$' "$tmp/folded.err" &&
	   grep -q '^#   where the frame-pointer walk ended 1$' "$tmp/folded.err" &&
	   grep -q "^# frame-pointer chains cut at a return address outside the image's code: 0 (0 frames)\$" "$tmp/folded.err" &&
	   grep -q '^# sideband: 8 messages (849 bytes), 1 rejected as malformed$' "$tmp/folded.err" &&
	   grep -q 'unsymbolized frames: 64$' "$tmp/folded.err"; then
		pass "report --folded: header with losses, flags, sideband, unsymbolized on stderr"
	else
		fail "report --folded: header on stderr" "$(head -c 400 "$tmp/folded.err")"
	fi
fi

# Folded stacks as flamegraph.pl reads them: "frames count", frames split at ';'.
if awk '
	!/^[^ ;][^;]*(;[^;]+)* [0-9]+$/ { bad++ }
	{ sum += $NF }
	END { if (bad || sum != 11) { print bad " bad lines, sum " sum; exit 1 } }
' "$tmp/folded" >"$tmp/awk.out"; then
	pass "folded: every line is 'frame;frame;... count', counts sum to 11 samples"
else
	fail "folded: format" "$(cat "$tmp/awk.out")"
fi

"$bin" report -i golden.data --flamegraph "$tmp/fg.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" != 0 ]; then
	fail "report --flamegraph" "exit status $rc: $(head -c 300 "$tmp/err")"
else
	compare "report --flamegraph: SVG" "$tmp/fg.svg" cli-flamegraph.svg
	compare "report --flamegraph: the report still on stdout" "$tmp/out" cli-report.txt
	if why=$("$python" -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
if root.tag != ns + "svg":
    sys.exit("root is " + root.tag)
tags = {e.tag.replace(ns, "") for e in root.iter()}
extra = tags - {"svg", "style", "script", "rect", "text", "g", "title"}
if extra:
    sys.exit("unexpected elements " + " ".join(sorted(extra)))
scripts = list(root.iter(ns + "script"))
if len(scripts) != 1 or scripts[0].text != "\n" + open(sys.argv[2]).read():
    sys.exit("the script is not flamegraph.js, unchanged")
for e in root.iter():
    for a in e.attrib:
        if a.lower().startswith("on") or "href" in a:
            sys.exit("active attribute " + a)
titles = [t.text for t in root.iter(ns + "title")]
if not titles or not titles[0].startswith("all (11 samples"):
    sys.exit("first frame is not all (11 samples): %r" % titles[:1])
' "$tmp/fg.svg" "$here/../flamegraph.js" 2>&1); then
		pass "flamegraph: well-formed SVG, only svg/style/script/rect/text/g/title, the script flamegraph.js, no event or link attributes"
	else
		fail "flamegraph: SVG structure" "$why"
	fi
fi

# perf script output against stackcollapse-perf.pl's rules (default options):
# a sample header is "^(\S+\s*?\S*?)\s+(\d+)\s" or "...\s+(\d+)/(\d+)"; a
# frame is "^\s*(\w+)\s*(.+) \((\S*)\)"; a blank line ends a sample; the
# collapsed stack is the process name then the functions, outermost first.
if why=$(perl -e '
	my (@stack, $pname, %collapsed, $samples, $frames, $bad);
	while (<>) {
		next if /^#/;
		chomp;
		if (/^$/) {
			unshift @stack, defined $pname ? $pname : "";
			$collapsed{join(";", @stack)}++;
			$samples++;
			undef @stack; undef $pname;
			next;
		}
		if (/^(\S+\s*?\S*?)\s+(\d+)\s/ or /^(\S+\s*?\S*?)\s+(\d+)\/(\d+)/) {
			if (defined $pname) { $bad .= "header inside a sample: $_\n"; }
			($pname = $1) =~ tr/ /_/;
		} elsif (/^\s*(\w+)\s*(.+) \((\S*)\)/) {
			if (!defined $pname) { $bad .= "frame before a header: $_\n"; }
			unshift @stack, $2;
			$frames++;
		} else {
			$bad .= "unrecognized line: $_\n";
		}
	}
	die $bad if $bad;
	die "samples $samples frames $frames\n" if $samples != 11 or $frames != 158;
	die "idle stack: " . join(",", keys %collapsed) . "\n"
		unless $collapsed{"swapper;cpu_startup_entry+0x0;default_idle+0x0"} == 1;
' "$golden/cli-script.txt" 2>&1); then
	pass "script: stackcollapse-perf.pl rules parse 11 samples, 158 frames, nothing unrecognized"
else
	fail "script: stackcollapse-perf.pl rules" "${why:0:400}"
fi

echo "== usage errors and damaged recordings"
expect_err "report: missing file" 1 "nonexistent.data: cannot open: No such file" -- report -i nonexistent.data
expect_err "script: missing file" 1 "nonexistent.data: cannot open" -- script -i nonexistent.data
expect_err "report: default input missing" 1 "pvprof.data: cannot open" -- report
# A cut recording is read up to the cut with one warning (tests/cut-test.sh
# checks what is read); a cut file header is no recording.
head -c 1000 golden.data >cut.data
run -- report -i cut.data
if [ "$rc" = 0 ] && [ "$(wc -l <<<"$err")" = 1 ] &&
   grep -q '^Warning: cut.data: cut at offset 1000 in a STATUS section at offset 560' <<<"$err"; then
	pass "report: a cut recording is read, one warning names the offset"
else
	fail "report: a cut recording" "exit status $rc, stderr: ${err:0:300}"
fi
run -- script -i cut.data
if [ "$rc" = 0 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q '^Warning: cut.data: cut at offset 1000 ' <<<"$err"; then
	pass "script: a cut recording is read, one warning"
else
	fail "script: a cut recording" "exit status $rc, stderr: ${err:0:300}"
fi
head -c 20 golden.data >cut-header.data
expect_err "report: a cut file header" 1 "cut-header.data: offset 0 (0x0): 20 bytes: too short for a pvprof recording header" -- report -i cut-header.data
printf 'not a recording, just text\n' >text.data
expect_err "report: not a recording" 1 "text.data: offset 0 (0x0): not a pvprof recording (bad magic)" -- report -i text.data
expect_err "report: bad --sort" 2 "--sort: unknown key 'name' (keys: self, total, comm, pid, tid, vcpu, dso, sym)" -- report --sort name
expect_err "report: --kernel and --user" 2 "give --kernel or --user, not both" -- report --kernel --user
expect_err "report: --callgraph and --folded" 2 "give one of --callgraph (or -g), --folded and --per-vcpu" -- report --callgraph --folded
expect_err "report: bad --vcpu" 2 "--vcpu: expected a number from 0 to 4294967295, got: 'x'" -- report --vcpu x
expect_err "report: bad --limit" 2 "--limit: expected a number" -- report --limit -1
expect_err "report: an operand" 2 "report: unexpected argument 'extra'" -- report extra
expect_err "report: unknown option" 2 "report: unknown option '--frob'" -- report --frob
expect_err "report: --flamegraph in a missing directory" 1 "cannot create /nonexistent/fg.svg" -- report -i golden.data --flamegraph /nonexistent/fg.svg
# A run that fails leaves no flame graph behind, half written or whole
# (as --pprof): a file that cannot grow past 1 KiB (the SVG is larger), and
# a report that cannot be written to stdout.
(trap '' XFSZ; ulimit -f 1; exec "$bin" report -i golden.data --flamegraph "$tmp/big.svg") \
	>/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" = 1 ] && grep -qxF "Error: write $tmp/big.svg: File too large" "$tmp/err" &&
	[ ! -e "$tmp/big.svg" ]; then
	pass "report --flamegraph to a file that cannot grow: the error named, exit 1, no file left"
else
	fail "report --flamegraph to a file that cannot grow" \
		"exit $rc, $(head -c 300 "$tmp/err"), $(ls -l "$tmp/big.svg" 2>&1)"
fi
if [ -w /dev/full ]; then
	"$bin" report -i golden.data --flamegraph "$tmp/whole.svg" >/dev/full 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 1 ] && [ ! -e "$tmp/whole.svg" ]; then
		pass "report --flamegraph, the report unwritable: exit 1, no flame graph left"
	else
		fail "report --flamegraph, the report unwritable" \
			"exit $rc, $(head -c 300 "$tmp/err"), $(ls -l "$tmp/whole.svg" 2>&1)"
	fi
else
	skip "report --flamegraph, the report unwritable" "no writable /dev/full"
fi
expect_err "script: an operand" 2 "script: unexpected argument 'x'" -- script x
expect_err "record: without VM" 2 "record: expected VM" -- record
expect_err "record: -d 0" 2 "-d: expected a number from 1 to 604800, got: '0'" -- record -d 0 1
expect_err "record: -F 0" 2 "-F: expected a number from 1 to 10000, got: '0'" -- record -F 0 1
expect_err "record: unknown event" 2 "-e: expected 'cpu-clock', 'cycles' or 'instructions', got: 'x'" -- record -e x 1
expect_err "record: empty -o" 2 "record: -o needs a file name" -- record -o '' 1
expect_err "record: --call-graph foo" 2 "--call-graph: expected 'fp', 'dwarf' or 'dwarf,SIZE', got: 'foo'" -- record --call-graph foo 1
expect_err "record: --call-graph dwarf,12" 2 "--call-graph: SIZE must be a multiple of 8 from 8 to 32768 bytes, got: '12'" -- record --call-graph dwarf,12 1
expect_err "record: --call-graph dwarf,32776" 2 "--call-graph: SIZE must be a multiple of 8 from 8 to 32768 bytes, got: '32776'" -- record --call-graph dwarf,32776 1
expect_err "record: two VMs" 2 "record: unexpected argument '2'" -- record 1 2
expect_err "record: a process that is no VM" 1 "" -- record -d 1 -o "$tmp/novm.data" $$
if [ -e "$tmp/novm.data" ]; then
	fail "record: no file when the VM cannot be opened" "$tmp/novm.data exists"
else
	pass "record: no file when the VM cannot be opened"
fi

echo "== help"
expect_help "help: record" "Usage: kvm-pvprof record [-d SECONDS] [-o FILE] [-F HZ] [-e EVENT]" record help
expect_help "help: record --call-graph and -j" "[--call-graph fp|dwarf[,SIZE]] [-j] VM" record help
expect_help "help: report" "--flamegraph OUT.svg" report --help
expect_help "help: script" "stackcollapse-perf.pl" help script
expect_help "help: top level lists record, report, script" "record, report, script" help
for page in kvm-pvprof-record.8 kvm-pvprof-report.8 pvprof-data.5; do
	if [ -s "$repo/doc/$page" ] && grep -q '^\.TH ' "$repo/doc/$page"; then
		pass "man page: doc/$page"
	else
		fail "man page: doc/$page" "missing or without .TH"
	fi
done

finish tool-report
