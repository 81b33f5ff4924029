#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof report --pprof on this machine (no VM needed), read back by
# Go's own pprof (go tool pprof), not by pvprof: on the golden recording of
# report-test (kernel and user frames, unsymbolized ones, hostile names, a
# sample without frames) with and without filters, and on --call-graph dwarf
# recordings of a real program (tests/unwind/fixture.c, as in
# dwarf-report-test.sh), and on samples in pvprof's own NMI path (a
# perfopts-gen recording with [pvprof overhead]).  For each, pprof's -top
# must agree with report's top functions (total samples, each function's
# self samples, and its total where report has one function of that
# name) and pprof's -traces with
# report --folded (each stack and its count, the command label at its
# root).  The labels must be the ones the generators put in the samples,
# the build-ids the ones readelf reads from the files.  Also: one run with
# --folded, --flamegraph and --pprof together, the same bytes twice, and
# the errors: a path that cannot be created, the recording itself, a full
# device, a file that cannot grow (nothing left behind).
#
# usage: pprof-test.sh              writes "<passed> <failed>" to
#                                   $O/results/tool-pprof
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

report_test=$O/tool/tests/report-test
gen=$O/tool/tests/dwarf-report-gen
cc=${CC:-gcc}
for f in "$report_test" "$gen" "$O/tool/tests/perfopts-gen"; do
	[ -x "$f" ] || { echo "${0##*/}: $f is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }
done

# check NAME OK DETAIL: one PASS or FAIL line.
check() {
	if [ "$2" = 0 ]; then pass "$1"; else fail "$1" "$3"; fi
}

if ! command -v go >/dev/null; then
	fail "preflight: go tool pprof" "no go command: install golang-go (scripts/install-deps.sh)"
	finish tool-pprof
	exit
fi
# Go's caches and settings stay in this run's directory.
export HOME=$tmp/home GOCACHE=$tmp/gocache GOPATH=$tmp/gopath GOFLAGS= GOENV=off
mkdir -p "$HOME"

# gopprof ARGS...: go tool pprof, sample counts, names as the file has them
# (no demangling), stderr in $tmp/pprof.err.
gopprof() {
	go tool pprof -symbolize=none -sample_index=samples "$@" 2>"$tmp/pprof.err"
}

# compare.py REPORT_TOP FOLDED PPROF_TOP PPROF_TRACES: report against pprof.
cat >"$tmp/compare.py" <<'EOF'
import re, sys
from collections import Counter, defaultdict

report_top, folded, pprof_top, pprof_traces = (open(p, encoding="ascii").read()
                                               for p in sys.argv[1:5])
problems = []

# report's header and top functions ("--limit 0": all of them).
total = int(re.search(r"^# samples shown: (\d+),", report_top, re.M).group(1))
self_by_name, total_by_name, funcs_by_name = Counter(), {}, Counter()
row = re.compile(r"^ *[0-9.]+% +[0-9.]+% +(\d+) +(\d+)  (?:kernel|user  )  (.*)$")
for line in report_top.splitlines():
    m = row.match(line)
    if not m:
        continue
    name = m.group(3)
    # "NAME  (DSO)"; the names here hold no "  (".
    if name.endswith(")") and "  (" in name:
        name = name[:name.rindex("  (")]
    self_by_name[name] += int(m.group(1))
    total_by_name[name] = int(m.group(2))
    funcs_by_name[name] += 1

# pprof -top: "flat flat% sum% cum cum% name".
m = re.search(r"^Showing nodes accounting for \d+, [0-9.]+% of (\d+) total$", pprof_top, re.M)
if not m:
    sys.exit("pprof -top: no total line")
if int(m.group(1)) != total:
    problems.append("total: report %d, pprof %s" % (total, m.group(1)))
flat, cum = Counter(), {}
row = re.compile(r"^ *(\d+) +[0-9.]+% +[0-9.]+% +(\d+) +[0-9.]+%  (.*)$")
for line in pprof_top.splitlines():
    m = row.match(line)
    if m:
        flat[m.group(3)] += int(m.group(1))
        cum[m.group(3)] = int(m.group(2))
for name in sorted(set(self_by_name) | set(flat)):
    if self_by_name[name] != flat[name]:
        problems.append("self of %r: report %d, pprof flat %d" % (name, self_by_name[name], flat[name]))
    if funcs_by_name[name] == 1 and total_by_name[name] != cum.get(name, 0):
        problems.append("total of %r: report %d, pprof cum %d" % (name, total_by_name[name], cum.get(name, 0)))
if not flat:
    problems.append("pprof -top listed no function")

# report --folded: "comm;outer;...;inner COUNT", ';' in names as \x3b.
stacks, frameless, folded_total = Counter(), 0, 0
for line in folded.splitlines():
    stack, count = line.rsplit(" ", 1)
    folded_total += int(count)
    if ";" in stack:
        stacks[stack] += int(count)
    else:
        frameless += int(count)
if folded_total != total:
    problems.append("folded: %d samples, report's header %d" % (folded_total, total))

# pprof -traces: blocks of "LABEL:  VALUE" lines, then "COUNT   leaf" and
# "             caller" lines; a sample without frames is not listed.
traces, labelled = Counter(), []
for block in pprof_traces.split("-----------+-------------------------------------------------------\n")[1:]:
    labels, frames, count = {}, [], None
    for line in block.splitlines():
        if line[10:13] == ":  ":
            labels[line[:10].strip()] = line[13:]
        elif line[10:13] == "   ":
            if line[:10].strip():
                count = int(line[:10])
            frames.append(line[13:])
    if not block.strip():
        continue  # the line that closes the last trace
    if count is None:
        problems.append("a trace without count: %r" % block[:200])
        continue
    esc = lambda s: s.replace(";", "\\x3b")
    key = ";".join([esc(labels.get("comm", "?"))] + [esc(f) for f in reversed(frames)])
    traces[key] += count
    labelled.append((labels, frames, count))
if traces != stacks:
    for k in sorted(set(traces) | set(stacks)):
        if traces[k] != stacks[k]:
            problems.append("stack %s: folded %d, pprof %d" % (k[:300], stacks[k], traces[k]))
if sum(traces.values()) + frameless != total:
    problems.append("traces %d + %d without frames != %d" % (sum(traces.values()), frameless, total))

# Expected labels: "LEAF COUNT key=value,..." lines on stdin.
for want in sys.stdin.read().splitlines():
    # The leaf may hold a space ("[pvprof overhead]"); the labels hold none.
    leaf, count, kv = want.rsplit(" ", 2)
    exp = dict(p.split("=", 1) for p in kv.split(","))
    got = [l for l, f, c in labelled if f and f[0] == leaf]
    if len(got) != 1 or any(got[0].get(k) != v for k, v in exp.items()) or \
       [c for l, f, c in labelled if f and f[0] == leaf] != [int(count)]:
        problems.append("labels of the %s trace: want %s x%s, got %r" % (leaf, exp, count, got))

if problems:
    sys.exit("; ".join(problems)[:1500])
print("%d samples, %d functions, %d stacks" % (total, len(flat), len(stacks)))
EOF

# agree NAME DATA [REPORT ARGS...]: report --pprof of DATA read by pprof
# agrees with report and report --folded; expected labels on stdin.
agree() {
	local name=$1 data=$2 why
	shift 2
	rm -f "$tmp/p.pb.gz"
	"$bin" report -i "$data" "$@" --limit 0 --pprof "$tmp/p.pb.gz" >"$tmp/top" 2>"$tmp/err" &&
		[ ! -s "$tmp/err" ] &&
		"$bin" report -i "$data" "$@" --folded >"$tmp/folded" 2>/dev/null &&
		gzip -t "$tmp/p.pb.gz" 2>"$tmp/err" &&
		gopprof -top -nodecount=1000000 -nodefraction=0 "$tmp/p.pb.gz" >"$tmp/ptop" &&
		gopprof -traces "$tmp/p.pb.gz" >"$tmp/ptraces"
	if [ $? != 0 ]; then
		fail "$name" "report or pprof failed: $(head -c 300 "$tmp/err") $(head -c 300 "$tmp/pprof.err")"
		return
	fi
	if why=$("$python" "$tmp/compare.py" "$tmp/top" "$tmp/folded" "$tmp/ptop" "$tmp/ptraces" 2>&1); then
		pass "$name: $why"
	else
		fail "$name" "$why"
	fi
}

# raw_has NAME FILE PATTERN...: go tool pprof -raw of FILE has a line
# matching each extended regular expression.
raw_has() {
	local name=$1 file=$2 pattern missing=
	shift 2
	gopprof -raw "$file" >"$tmp/raw"
	for pattern in "$@"; do
		grep -qE -- "$pattern" "$tmp/raw" || missing="$missing [$pattern]"
	done
	check "$name" "$([ -z "$missing" ]; echo $?)" "no line matches:$missing in: $(head -c 600 "$tmp/raw")"
}

echo "== the golden recording (report-test gen)"
cd "$tmp" || exit 2
if ! "$report_test" gen golden.data; then
	fail "gen: the golden recording" "report-test gen failed"
	finish tool-pprof
	exit
fi
# The samples as report-test.c's write_golden() makes them: leaf, count, labels.
agree "golden: pprof agrees with report and report --folded, labels as generated" golden.data <<'EOF'
vfs_write 4 vm=4242,comm=writer,pid=100,tid=100,vcpu=0
compute 3 vm=4242,comm=writer,pid=100,tid=101,vcpu=1
default_idle 1 vm=4242,comm=swapper,pid=0,tid=0,vcpu=1
EOF
cp "$tmp/p.pb.gz" "$tmp/golden.pb.gz"
raw_has "golden -raw: cpu-clock at 1000 Hz is 1 ms a sample; comments are report's header" golden.pb.gz \
	'^PeriodType: cpu nanoseconds$' '^Period: 1000000$' '^samples/count cpu/nanoseconds$' \
	'^ +4 +4000000: ' '^Comment: samples shown: 11, frames: 158, unsymbolized frames: 64$' \
	'^Comment: losses: 6 \(samples that left no callchain\), by reason: notice_ring_full 2, throttled 3,'
raw_has "golden -raw: labels vm, comm, pid, tid, vcpu; pid 0 and vCPU 0 kept" golden.pb.gz \
	'comm:\[writer\] vm:\[4242\]' 'pid:\[100 pid\] tid:\[101 tid\] vcpu:\[1 vcpu\]' \
	'comm:\[swapper\]' 'pid:\[0 pid\] tid:\[0 tid\] vcpu:\[1 vcpu\]' \
	'pid:\[200 pid\] tid:\[200 tid\] vcpu:\[0 vcpu\]'
# write_golden()'s MMAP: /usr/bin/writer at U(0), 0x10000 bytes, build-id 20 x 0xab.
raw_has "golden -raw: mappings with ranges, file and build-id" golden.pb.gz \
	'^[0-9]+: 0x555555554000/0x555555564000/0x0 /usr/bin/writer (ab){20} \[FN\]$' \
	'^[0-9]+: 0xffffffff81000000/0xffffffff81100000/0x0 \[kernel.kallsyms\]  \[FN\]$'
# The hostile command "<b>;\e[1m(x) y" escaped as report's text escapes it.
raw_has "golden -raw: a hostile command name escaped like report's" golden.pb.gz \
	'comm:\[<b>;\\x1b\[1m\(x\) y\]'

agree "golden --vcpu 0 --kernel: the filtered samples" golden.data --vcpu 0 --kernel <<'EOF'
vfs_write 4 comm=writer,pid=100,tid=100,vcpu=0
EOF
agree "golden --pid 100 --user: the filtered samples" golden.data --pid 100 --user <<'EOF'
compute 3 comm=writer,pid=100,tid=101,vcpu=1
write_loop 4 comm=writer,pid=100,tid=100,vcpu=0
EOF
agree "golden --comm swapper: one sample" golden.data --comm swapper </dev/null

# One run, every output: the same pprof bytes, the same folded stacks.
"$bin" report -i golden.data --folded --flamegraph "$tmp/fg.svg" --pprof "$tmp/all.pb.gz" \
	>"$tmp/all.folded" 2>"$tmp/all.err"
rc=$?
"$bin" report -i golden.data --folded >"$tmp/folded" 2>/dev/null
ok=1
[ "$rc" = 0 ] && cmp -s "$tmp/all.pb.gz" "$tmp/golden.pb.gz" && cmp -s "$tmp/all.folded" "$tmp/folded" &&
	grep -q '<svg' "$tmp/fg.svg" && ok=0
check "golden: --folded, --flamegraph and --pprof in one run; the pprof file byte for byte the same" \
	$ok "exit $rc: $(head -c 300 "$tmp/all.err")"

echo "== samples in pvprof's own NMI path (stream version 2)"
# perfopts-gen's description (perfopts-gen.c): the entry at 2 ms has 3
# samples folded into it, the one at 3 ms is marked and has 1: with the 2 ms
# entry's own sample and the plain one at 1 ms, web's work stack has 2
# samples and the same stack under [pvprof overhead] 5; pprof must count them
# so, with [pvprof overhead] a location without mapping at address 0.
cat >"$tmp/own.txt" <<'EOF2'
host 1000000000000
vcpus 2
kernel 0xffffffff81000000 0xffffffff81100000 2
ksym 0xffffffff81001000 k_write
ksym 0xffffffff81002000 k_syscall
process 100 web
mmap 100 0x555555554000 0x10000 171 /usr/bin/web
elfsym 171 0x100 0x80 main
elfsym 171 0x200 0x80 serve
elfsym 171 0x300 0x80 work
sample 1000001000000 0 100 100 1 0 3 0x555555554310 0x555555554210 0x555555554110
nmi 0 3
sample 1000002000000 0 100 100 1 0 3 0x555555554310 0x555555554210 0x555555554110
nmi 1 1
sample 1000003000000 0 100 100 1 0 3 0x555555554310 0x555555554210 0x555555554110
sample 1000004000000 1 100 101 0 2 2 0xffffffff81001010 0xffffffff81002010 0x555555554210 0x555555554110
end 1000010000000
EOF2
if "$O/tool/tests/perfopts-gen" "$tmp/own.data" <"$tmp/own.txt" 2>"$tmp/err"; then
	agree "own NMI: pprof agrees with report and report --folded, samples by weight" own.data <<'EOF2'
work 2 vm=4242,comm=web,pid=100,tid=100,vcpu=0
[pvprof overhead] 5 vm=4242,comm=web,pid=100,tid=100,vcpu=0
k_write 1 comm=web,pid=100,tid=101,vcpu=1
EOF2
	cp "$tmp/p.pb.gz" "$tmp/own.pb.gz"
	raw_has "own NMI -raw: [pvprof overhead] at 0x0 without mapping, 5 samples of 1 ms" own.pb.gz \
		'^ +[0-9]+: 0x0 \[pvprof overhead\] :0 s=0$' '^ +5 +5000000: [0-9]+ [0-9]+ [0-9]+ [0-9]+ $' \
		'^Comment: pvprof overhead: 5 samples \(62\.50% of the samples shown\) taken inside pvprof'"'"'s own NMI path:$'
	agree "own NMI --user: [pvprof overhead] left out like a kernel frame" own.data --user <<'EOF2'
work 7 comm=web,pid=100,tid=100,vcpu=0
EOF2
	go tool pprof -sample_index=samples -top -nodecount=1000000 -nodefraction=0 \
		"$tmp/own.pb.gz" >"$tmp/ptop-default" 2>"$tmp/default.err"
	gopprof -top -nodecount=1000000 -nodefraction=0 "$tmp/own.pb.gz" >"$tmp/ptop"
	ok=1
	cmp -s "$tmp/ptop" "$tmp/ptop-default" && grep -q '\[pvprof overhead\]$' "$tmp/ptop" && ok=0
	check "own NMI: pprof's default symbolization leaves [pvprof overhead] as it is" $ok \
		"$(diff "$tmp/ptop" "$tmp/ptop-default" | head -5) $(head -c 300 "$tmp/default.err")"
else
	fail "own NMI: perfopts-gen" "$(head -c 300 "$tmp/err")"
fi

echo "== --call-graph dwarf recordings of a real program"
if "$cc" -O2 -fomit-frame-pointer -pthread -o "$tmp/fx-dyn" "$here/unwind/fixture.c" 2>"$tmp/cc.err" &&
	"$tmp/fx-dyn" chain "$tmp/chain.snap" && "$tmp/fx-dyn" qsort "$tmp/qsort.snap" &&
	"$gen" "$tmp/chain.snap" "$tmp/chain.data" &&
	"$gen" --kernel --copies 3 --republish "$tmp/qsort.snap" "$tmp/qsort.data"; then
	pass "fixture: built, snapshots of chain and qsort, recordings"
	# dwarf-report-gen's callchains: vCPU 0, pid and tid its PID (4321).
	agree "dwarf chain: pprof agrees with report and report --folded" chain.data <<'EOF2'
fx_c 1 vm=4242,comm=fixture,pid=4321,tid=4321,vcpu=0
EOF2
	cp "$tmp/p.pb.gz" "$tmp/chain.pb.gz"
	agree "dwarf qsort under kernel frames, 3 copies, mappings republished" qsort.data <<'EOF2'
0xffffffff81000100 3 comm=fixture,pid=4321,vcpu=0
EOF2
	# The oracle: the fixture's /proc/self/maps lines in its snapshot
	# ("map START END OFFSET PATH") and readelf's build-ids.
	mappings=()
	for file in "$tmp/fx-dyn" "$(awk '$1 == "map" && $NF ~ /\/libc\.so/ { print $NF; exit }' "$tmp/chain.snap")"; do
		id=$(readelf -n "$file" | awk '/Build ID:/ { print $3 }')
		range=$(awk -v f="$file" '$1 == "map" && $NF == f { print "0x" $2 "/0x" $3 "/0x" $4; exit }' \
			"$tmp/chain.snap")
		mappings+=("^[0-9]+: ${range:-none} $file ${id:-none} \\[FN\\]\$")
	done
	raw_has "dwarf -raw: the fixture's and libc's mappings as mapped, with readelf's build-ids" \
		chain.pb.gz "${mappings[@]}"
	# The guest's files are this host's here: pprof must still keep the
	# profile's names, not look the addresses up in them.
	go tool pprof -sample_index=samples -top -nodecount=1000000 -nodefraction=0 \
		"$tmp/chain.pb.gz" >"$tmp/ptop-default" 2>"$tmp/default.err"
	gopprof -top -nodecount=1000000 -nodefraction=0 "$tmp/chain.pb.gz" >"$tmp/ptop"
	ok=1
	cmp -s "$tmp/ptop" "$tmp/ptop-default" && ! grep -qi 'symboliz' "$tmp/default.err" && ok=0
	check "dwarf: pprof's default symbolization leaves the names as they are" $ok \
		"$(diff "$tmp/ptop" "$tmp/ptop-default" | head -5) $(head -c 300 "$tmp/default.err")"
else
	fail "fixture: build, snapshots, recordings" "$(head -c 300 "$tmp/cc.err")"
fi

echo "== errors"
expect_err "--pprof in a missing directory" 1 \
	"cannot create /nonexistent/p.pb.gz: No such file or directory" -- \
	report -i golden.data --pprof /nonexistent/p.pb.gz
mkdir -p "$tmp/dir.pb.gz"
expect_err "--pprof naming a directory" 1 "cannot create $tmp/dir.pb.gz: Is a directory" -- \
	report -i golden.data --pprof "$tmp/dir.pb.gz"
cp golden.data keep.data
expect_err "--pprof naming the recording" 1 "--pprof keep.data: that is the recording keep.data" -- \
	report -i keep.data --pprof keep.data
check "--pprof naming the recording: the recording is intact" "$(cmp -s keep.data golden.data; echo $?)" \
	"keep.data changed"
expect_err "--pprof without a file" 2 "--pprof" -- report -i golden.data --pprof
if [ -w /dev/full ]; then
	run -- report -i golden.data --folded --pprof /dev/full
	ok=1
	[ "$rc" = 1 ] && grep -qxF "Error: write /dev/full: No space left on device" <<<"$err" &&
		[ -c /dev/full ] && ok=0
	check "--pprof /dev/full: the write error named, exit 1, the device stays" $ok \
		"exit $rc, stderr: ${err:0:300}"
else
	skip "--pprof /dev/full" "no writable /dev/full"
fi
# A file that cannot grow past 1 KiB (the profile is larger): EFBIG, and
# the part written is removed.
size=$(stat -c %s "$tmp/golden.pb.gz")
(trap '' XFSZ; ulimit -f 1; exec "$bin" report -i golden.data --pprof "$tmp/big.pb.gz") \
	>/dev/null 2>"$tmp/err"
rc=$?
ok=1
[ "$size" -gt 1024 ] && [ "$rc" = 1 ] &&
	grep -qxF "Error: write $tmp/big.pb.gz: File too large" "$tmp/err" &&
	[ ! -e "$tmp/big.pb.gz" ] && ok=0
check "--pprof to a file that cannot grow: the error named, exit 1, no file left" $ok \
	"size $size, exit $rc, $(head -c 300 "$tmp/err"), $(ls -l "$tmp/big.pb.gz" 2>&1)"

echo "== help"
expect_help "help: report --pprof" "--pprof OUT.pb.gz" report --help
if grep -q -- '--pprof' "$repo/doc/kvm-pvprof-report.8"; then
	pass "man page: doc/kvm-pvprof-report.8 describes --pprof"
else
	fail "man page: doc/kvm-pvprof-report.8" "no --pprof"
fi

finish tool-pprof
