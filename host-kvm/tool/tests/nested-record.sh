#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof record, report and script against the pvprof KVM, on a real
# guest that answers samples with callchains: record-guest, a minimal-guest
# VMM (tests/record-guest.c) whose guest spins in spin_inner <- spin_outer
# <- guest_code, answers every notice with that chain, and publishes its
# symbols and command name through the sideband each time sampling starts.
# Runs inside L1 with the pvprof modules loaded:
#
#   make -C host-kvm/tool check-nested
#   (tests/nested/run-l1 --kvm pvprof -- host-kvm/tool/tests/nested-record.sh)
#
# Checks: record enables and restores (also on SIGINT, and leaves a VM that
# was sampled before as it was); record -j's summary, in both placements,
# is the recording's; the recording's callchains balance with the
# host's counters (every record accepted while recording is in the file or
# counted as a stream overflow, sideband bytes equal the host's, stream
# losses within the host's); report names the guest's functions and
# command; script parses by stackcollapse-perf.pl's rules; a killed record
# leaves a readable recording that report flags as not closed cleanly.
# Writes "<passed> <failed>" to $PVPROF_RESULTS_DIR/tool-record (else
# $O/results/tool-record).
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

suite=tool-record
guest_bin=$O/tool/tests/record-guest
[ -x "$guest_bin" ] || { echo "${0##*/}: $guest_bin is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

# status_json: the VM's status -j document in $tmp/status.json.
status_json() {
	"$bin" status "$gpid" -j >"$tmp/status.json" 2>"$tmp/status.err"
}

# check_py NAME PYTHON: runs PYTHON with s = status -j (dict) and r = the
# report's counts from $tmp/report.json, report -j of the last report_of
# (dict); it exits non-zero with a reason when a check fails.
check_py() {
	local name=$1 code=$2 why
	if ! status_json; then
		fail "$name" "status -j failed: $(head -c 300 "$tmp/status.err")"
		return
	fi
	if why=$("$python" - "$tmp/status.json" "$tmp/report.json" "$code" <<'EOF' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))
j = json.load(open(sys.argv[2]))
r = {"callchains": j["callchains"], "losses": j["losses"],
     "sideband": j["sideband"]["messages"], "sideband_bytes": j["sideband"]["bytes"],
     "rejected": j["sideband"]["rejected"], "frames": j["frames"],
     "unsymbolized": j["unsymbolized_frames"]}
for when in ("start", "end"):
    c = j["host_counters"][when]
    if c is None:
        sys.exit("the report has no host counters at " + when)
    r[when] = {"samples": c["samples"], "notices": c["notices"], "records": c["records"],
               "nmis": c["nmis"], "lost": c["lost"], "sb": c["sideband_bytes"],
               "refused": c["sideband_refused"]}
try:
    exec(sys.argv[3])
except AssertionError as e:
    sys.exit("check failed: %s\n  report: %r\n  status: %s" % (e, {k: r[k] for k in r if k != "losses"}, json.dumps(s)[:400]))
EOF
); then
		pass "$name"
	else
		fail "$name" "${why:0:700}"
	fi
}

# report_of NAME FILE [ARGS...]: report -i FILE into $tmp/report.txt, and
# report -j into $tmp/report.json.
report_of() {
	local name=$1 file=$2
	shift 2
	if "$bin" report -i "$file" "$@" >"$tmp/report.txt" 2>"$tmp/report.err" &&
	   "$bin" report -j -i "$file" "$@" >"$tmp/report.json" 2>>"$tmp/report.err"; then
		pass "$name"
	else
		fail "$name" "exit status $?: $(head -c 300 "$tmp/report.err")"
	fi
}

echo "== preflight"
require_dev_kvm
mkfifo "$tmp/guest.in"
"$guest_bin" <"$tmp/guest.in" >"$tmp/guest.out" 2>"$tmp/guest.err" &
gpid=$!
exec {guest_in}>"$tmp/guest.in"
holder_stdin+=("$guest_in")
helper_pids+=("$gpid")
for _ in $(seq 600); do
	grep -q '^ready ' "$tmp/guest.out" && break
	kill -0 "$gpid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "^ready $gpid\$" "$tmp/guest.out"; then
	fail "preflight: record-guest registered" "$(head -c 400 "$tmp/guest.err")"
	finish "$suite"
	exit
fi
pass "preflight: record-guest registered"
run -- status "$gpid"
if grep -qF "$no_pvprof" <<<"$err"; then
	fail "preflight: pvprof ioctls" "this L1's KVM lacks the pvprof control plane"
	finish "$suite"
	exit
fi

echo "== record a VM never enabled"
run -- record -d 3 -o "$tmp/first.data" "$gpid"
printf '%s\n' "$err" >"$tmp/first.err"
if [ "$rc" = 0 ] && grep -qE "^recorded [1-9][0-9]* records, [0-9]+ losses, [0-9]+ sideband bytes to $tmp/first.data\$" <<<"$err"; then
	pass "record -d 3: summary line with records"
else
	fail "record -d 3" "exit $rc, stderr: ${err:0:400}"
fi
recorded=$(sed -n 's/^recorded \([0-9]*\) records.*/\1/p' <<<"$err")
report_of "report: the first recording" "$tmp/first.data"
check_py "record: sampling disabled again (it was never enabled)" \
	'assert s["enabled"] is False, "still enabled"'
check_py "report: the summary's records are the report's callchains" \
	"assert r['callchains'] == $recorded, 'summary %s' % $recorded"
# A VM never enabled has no stream before record's ENABLE: the reader opens
# just after it, and the start snapshot just after that, so the records the
# host accepted in between may or may not be in the file: exactly those are
# the slack (start["records"], all accepted since that ENABLE).
check_py "balance: every record accepted while recording is in the file or a stream overflow" \
	'got = r["callchains"] + r["losses"]["stream_overflow"]; assert r["end"]["records"] - r["start"]["records"] <= got <= r["end"]["records"], (got, r["start"]["records"], r["end"]["records"])'
check_py "balance: nothing accepted after the recording ended" \
	'assert s["totals"]["records"] == r["end"]["records"], "status %d records, recording ended at %d" % (s["totals"]["records"], r["end"]["records"])'
check_py "balance: stream losses within the host's, by reason" \
	'assert all(r["losses"][k] <= s["losses"][k] for k in s["losses"]), r["losses"]'
check_py "balance: host identities (samples, notices) at the end" \
	'v = s["vcpus"][0]; L = v["losses"]; d = v["samples"] - v["notices"] - sum(L[k] for k in ("protected", "nested", "smm", "unregistered", "throttled", "slot_busy", "buffer_gone", "notice_ring_full")); assert d in (0, 1), v; assert v["notices"] >= v["records"] + L["stale"] + L["invalid"] + L["unanswered"], v'

# Records the VM accepted before the second recording (sampling was off since).
first_end=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["totals"]["records"])' \
	"$tmp/status.json" 2>/dev/null)
first_sb=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["sideband_bytes"])' \
	"$tmp/status.json" 2>/dev/null)

echo "== record a VM enabled before (the stream exists: the reader comes first)"
run -- record -d 3 -o "$tmp/second.data" "$gpid"
if [ "$rc" = 0 ]; then pass "record again"; else fail "record again" "exit $rc: ${err:0:300}"; fi
report_of "report: the second recording" "$tmp/second.data"
grep -E '^# (stream entries|losses|sideband|samples shown|host counters)' "$tmp/report.txt" | sed 's/^# /measured: /'
check_py "sideband: one round of the guest's messages (KERNEL, KSYMS, PROCESS), none rejected" \
	'assert r["sideband"] == 3 and r["rejected"] == 0, (r["sideband"], r["rejected"])'
# The reader opens before ENABLE and the start snapshot follows ENABLE: what
# the host accepted in between is in the file too (the guest sends its
# sideband as soon as it sees sampling on, often before the snapshot), and
# nothing from before.
check_py "sideband: bytes in the file are the host's count since the reader opened" \
	'before = '"${first_sb:-0}"'; assert r["end"]["sb"] - r["start"]["sb"] <= r["sideband_bytes"] == r["end"]["sb"] - before, (r["sideband_bytes"], r["start"]["sb"], r["end"]["sb"], before)'
check_py "balance: second recording's callchains" \
	'got = r["callchains"] + r["losses"]["stream_overflow"]; before = '"${first_end:-0}"'; assert r["callchains"] > 0 and r["end"]["records"] - r["start"]["records"] <= got <= r["end"]["records"] - before, (got, r["start"]["records"], r["end"]["records"], before)'
check_py "symbols: only the interrupted IP may lack a symbol" \
	'assert r["frames"] == 3 * r["callchains"] and r["unsymbolized"] <= r["callchains"], (r["frames"], r["unsymbolized"])'
"$bin" report -i "$tmp/second.data" --folded >"$tmp/folded.txt" 2>/dev/null
if why=$(awk -v total="$(sed -n 's/.*callchains: \([0-9]*\).*/\1/p' "$tmp/report.txt")" '
	$1 == "rec-guest;guest_code;spin_outer;spin_inner" { n = $2 }
	END { if (n * 2 <= total) { print "spin_inner stack has " n + 0 " of " total; exit 1 } }
' "$tmp/folded.txt"); then
	pass "report --folded: most samples in rec-guest;guest_code;spin_outer;spin_inner"
else
	fail "report --folded: the guest's stack by name" "$why: $(head -c 300 "$tmp/folded.txt")"
fi
if grep -qE '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9]+  kernel  spin_inner  \(\[kernel.kallsyms\]\)$' "$tmp/report.txt"; then
	pass "report: spin_inner in the top functions"
else
	fail "report: spin_inner in the top functions" "$(sed -n '/top functions/,$p' "$tmp/report.txt" | head -8)"
fi
"$bin" report -i "$tmp/second.data" --flamegraph "$tmp/fg.svg" >/dev/null 2>&1
if grep -q '<title>spin_inner (' "$tmp/fg.svg" && grep -q '<title>rec-guest (' "$tmp/fg.svg"; then
	pass "flamegraph: the guest's command and functions"
else
	fail "flamegraph: the guest's command and functions" "$(grep -o '<title>[^<]*' "$tmp/fg.svg" | head -5)"
fi
"$bin" script -i "$tmp/second.data" >"$tmp/script.txt" 2>"$tmp/script.err"
if why=$(perl -e '
	my ($samples, $frames, $in, $bad) = (0, 0, 0, "");
	while (<>) {
		chomp;
		if (/^$/) { $samples++ if $in; $in = 0; next; }
		if (/^(\S+\s*?\S*?)\s+(\d+)\/(\d+)/) { $in = 1; next; }
		if (/^\s*(\w+)\s*(.+) \((\S*)\)/) { $frames++; next; }
		$bad .= "unrecognized: $_\n";
	}
	die $bad if $bad;
	print "$samples $frames\n";
' "$tmp/script.txt" 2>&1) &&
   # Three frames a sample, and [pvprof overhead] above those the host took
   # inside pvprof's own NMI path (the header counts both).
   shown=$(sed -n 's/^# samples shown: \([0-9]*\).*/\1/p' "$tmp/report.txt") &&
   own=$(sed -n 's/^# pvprof overhead: \([0-9]*\) samples.*/\1/p' "$tmp/report.txt") &&
   [ "$why" = "$shown $((3 * shown + ${own:-0}))" ]; then
	pass "script: every sample and frame parses by stackcollapse-perf.pl's rules"
else
	fail "script: stackcollapse-perf.pl rules" "${why:0:300}"
fi

echo "== record -j: the summary as JSON on stdout, in both placements"
# record_json NAME FILE ARGS...: kvm-pvprof ARGS (a record into FILE)
# exits 0 with one line of JSON on stdout and nothing on stderr (not a
# terminal: no progress line), and the summary's counts are the
# recording's, as report -j reads them.
record_json() {
	local name=$1 file=$2 why rc
	shift 2
	"$bin" "$@" >"$tmp/summary.json" 2>"$tmp/summary.err"
	rc=$?
	"$bin" report -j -i "$file" >"$tmp/summary-report.json" 2>>"$tmp/summary.err"
	if [ "$rc" != 0 ] || [ -s "$tmp/summary.err" ]; then
		fail "$name" "exit $rc: $(head -c 300 "$tmp/summary.err")"
	elif why=$("$python" - "$tmp/summary.json" "$tmp/summary-report.json" "$file" <<'EOF' 2>&1
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
if text.count("\n") != 1 or not text.endswith("\n"):
    sys.exit("not one line: %r" % text[:300])
s, r = json.loads(text), json.load(open(sys.argv[2]))
assert s["output"] == sys.argv[3] and s["stopped"] == "duration elapsed", (s["output"], s["stopped"])
assert s["callchains"] > 0, s
for k, v in (("callchains", r["callchains"]), ("stream_records", r["stream_records"]),
             ("stream_bytes", r["stream_bytes"]), ("lost", r["lost"]), ("losses", r["losses"]),
             ("sideband", {"messages": r["sideband"]["messages"], "bytes": r["sideband"]["bytes"]}),
             ("duration_ns", r["recorded"]["duration_ns"])):
    assert s[k] == v, "%s: summary %r, recording %r" % (k, s[k], v)
print("%d callchains, %d stream entries, %d lost" % (s["callchains"], s["stream_records"], s["lost"]))
EOF
); then
		pass "$name ($why)"
	else
		fail "$name" "${why:0:500}"
	fi
}
record_json "record -j -d 2: the summary is the recording's" "$tmp/json-after.data" \
	record -j -d 2 -o "$tmp/json-after.data" "$gpid"
record_json "-j record -d 2: the same" "$tmp/json-before.data" \
	-j record -d 2 -o "$tmp/json-before.data" "$gpid"
check_py "record -j: sampling disabled again" 'assert s["enabled"] is False'

echo "== Ctrl-C"
"$bin" record -o "$tmp/int.data" "$gpid" 2>"$tmp/int.err" &
rec_pid=$!
# Interrupt once the recording holds stream data (header and status are ~700 bytes).
for _ in $(seq 300); do
	[ "$(stat -c %s "$tmp/int.data" 2>/dev/null || echo 0)" -gt 2000 ] && break
	sleep 0.1
done
kill -INT "$rec_pid"
wait "$rec_pid"
rc=$?
if [ "$rc" = 0 ] && grep -q '^recorded [0-9]* records' "$tmp/int.err"; then
	pass "SIGINT: record ends cleanly with its summary"
else
	fail "SIGINT: record ends cleanly" "exit $rc: $(head -c 300 "$tmp/int.err")"
fi
report_of "report: the interrupted recording" "$tmp/int.data"
if grep -q 'stopped: interrupted$' "$tmp/report.txt"; then
	pass "report: the recording says it was interrupted"
else
	fail "report: stopped: interrupted" "$(grep '^# recorded' "$tmp/report.txt")"
fi
check_py "SIGINT: sampling disabled again" 'assert s["enabled"] is False'

echo "== a VM sampled before keeps its configuration"
run -- enable "$gpid" -F 200
run -- record -F 100 -d 1 -o "$tmp/refused.data" "$gpid"
if [ "$rc" = 2 ] && grep -q 'it is sampled already (cpu-clock)' <<<"$err"; then
	pass "record -F on a sampled VM: usage error"
else
	fail "record -F on a sampled VM" "exit $rc: ${err:0:300}"
fi
run -- record -d 2 -o "$tmp/before.data" "$gpid"
if [ "$rc" = 0 ]; then pass "record a sampled VM"; else fail "record a sampled VM" "exit $rc: ${err:0:300}"; fi
report_of "report: recording of a sampled VM" "$tmp/before.data"
check_py "a sampled VM stays enabled at its rate" \
	'assert s["enabled"] is True and s["sample_freq"] == 200, (s["enabled"], s["sample_freq"])'
if grep -q 'cpu-clock at 200 Hz, enabled before record$' "$tmp/report.txt"; then
	pass "report: configuration and 'enabled before record'"
else
	fail "report: configuration" "$(grep '^# VM' "$tmp/report.txt")"
fi
run -- disable "$gpid"

echo "== an error while recording"
# 2 KiB of file: the header sections fit, the stream does not (EFBIG).
(ulimit -f 2; exec "$bin" record -d 3 -o "$tmp/small.data" "$gpid") >/dev/null 2>"$tmp/small.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "^Error: write $tmp/small.data at offset [0-9]*: File too large" "$tmp/small.err"; then
	pass "record: a failed write is reported (file size limit), exit 1"
else
	fail "record: a failed write is reported" "exit $rc: $(head -c 300 "$tmp/small.err")"
fi
check_py "record: sampling disabled again after the write error" 'assert s["enabled"] is False'
run -- report -i "$tmp/small.data"
if [ "$rc" = 1 ] && grep -q 'small.data: offset ' <<<"$err" || grep -q 'not closed cleanly' <<<"$out"; then
	pass "report: the cut recording is refused with its offset or flagged"
else
	fail "report: the cut recording" "exit $rc: ${err:0:300}"
fi

echo "== progress line only on a terminal"
if grep -q 'samples/s' "$tmp/first.err"; then
	fail "no progress line when stderr is not a terminal" "$(head -c 200 "$tmp/first.err")"
else
	pass "no progress line when stderr is not a terminal"
fi
script -qec "$bin record -d 3 -o $tmp/tty.data $gpid" /dev/null </dev/null >"$tmp/tty.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -qE $'\r[0-9]+ s: [0-9]+ samples/s, [0-9]+ entries, [0-9]+ losses' "$tmp/tty.out" &&
   grep -q '^recorded [0-9]* records' "$tmp/tty.out"; then
	pass "progress line on a terminal (samples/s, stream entries, losses), then the summary"
else
	fail "progress line on a terminal" "exit $rc: $(tr '\r' '|' <"$tmp/tty.out" | head -c 300)"
fi

echo "== a killed record"
"$bin" record -o "$tmp/killed.data" "$gpid" 2>/dev/null &
rec_pid=$!
for _ in $(seq 300); do
	[ "$(stat -c %s "$tmp/killed.data" 2>/dev/null || echo 0)" -gt 2000 ] && break
	sleep 0.1
done
{ kill -KILL "$rec_pid"; wait "$rec_pid"; } 2>/dev/null
run -- report -i "$tmp/killed.data"
if [ "$rc" = 0 ] && grep -q 'WARNING: the recording was not closed cleanly (no END section)' <<<"$out" &&
   grep -qE '^# stream entries: [1-9]' <<<"$out"; then
	pass "report: a killed recording is read, flagged as not closed cleanly"
else
	fail "report: a killed recording" "exit $rc: ${err:0:300} $(grep '^# re' <<<"$out")"
fi
# SIGKILL leaves sampling on (nothing can restore it): say so, then undo.
check_py "a killed record leaves sampling on (documented)" 'assert s["enabled"] is True'
run -- disable "$gpid"

echo "== the VMM exits while recording"
# Not holding the guest's stdin open: closing it below must end the guest.
"$bin" record -o "$tmp/vmm-exit.data" "$gpid" 2>"$tmp/vmm-exit.err" {guest_in}>&- &
rec_pid=$!
for _ in $(seq 300); do
	[ "$(stat -c %s "$tmp/vmm-exit.data" 2>/dev/null || echo 0)" -gt 2000 ] && break
	sleep 0.1
done
# Closing its stdin ends record-guest, the VMM of the recorded VM.
exec {guest_in}>&-
holder_stdin=()
wait "$gpid"
grc=$?
for _ in $(seq 300); do
	kill -0 "$rec_pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$rec_pid" 2>/dev/null; then
	kill -INT "$rec_pid"
	wait "$rec_pid"
	fail "record ends when the VMM exits" "still recording 30 s after the VMM exited"
else
	wait "$rec_pid"
	rrc=$?
	run -- report -i "$tmp/vmm-exit.data"
	if [ "$rrc" = 0 ] && [ "$rc" = 0 ] && grep -q 'stopped: the VM went away' <<<"$out" &&
	   ! grep -q 'not closed cleanly' <<<"$out" && grep -qE '^# stream entries: [1-9]' <<<"$out"; then
		pass "record ends when the VMM exits, the recording closed cleanly"
	else
		fail "record ends when the VMM exits" "record exit $rrc: $(head -c 300 "$tmp/vmm-exit.err"); report exit $rc: $(grep -E '^# (re|st)' <<<"$out" | head -3)"
	fi
fi
if [ "$grc" = 0 ] && grep -qE '^guest: nmis [1-9][0-9]* callchains [1-9][0-9]* sideband_rounds ([2-9]|[1-9][0-9]+)\b' "$tmp/guest.out"; then
	pass "record-guest: exits cleanly ($(grep '^guest:' "$tmp/guest.out"))"
else
	fail "record-guest: exits cleanly" "exit $grc: $(tail -c 300 "$tmp/guest.out") $(head -c 300 "$tmp/guest.err")"
fi

finish "$suite"
