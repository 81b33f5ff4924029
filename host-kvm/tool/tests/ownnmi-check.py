#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Samples in pvprof's own NMI path (stream version 2), against a recording
whose every callchain entry this script made up.

usage: ownnmi-check.py KVM_PVPROF PERFOPTS_GEN CHAINS_AWK TMPDIR

The recording (perfopts-gen's description) has callchain entries with and
without PVPROF_ST_SAMPLE_F_OWN_NMI, with own_nmi_samples 0 and more, in
kernel and user mode, without frames, and SKEWED chains with and without
the mark.  Each entry stands for 1 + own_nmi_samples samples: its own, with
the frame [pvprof overhead] above the chain's when marked, and the folded
ones, always with it (doc/kvm-pvprof-report.8, PVPROF OVERHEAD).  The
samples are expanded here from the construction, and every output is
checked against them: report's header and JSON (samples, own_nmi_samples,
skewed), the function table, --sort dso, --folded, script (folded by
stackcollapse-perf.pl's rules and by demo/chains.awk), --per-vcpu, --time,
--percent-limit, --kernel, --user, the call graph and the flame graph.
A version 1 recording and a version 2 one without marks must give the same
bytes in every output.  Prints PASS/FAIL lines.
"""
import json
import re
import subprocess
import sys
from collections import Counter

import checklib
from checklib import header_line

BIN, GEN, CHAINS_AWK, TMP = sys.argv[1:5]
NS = 10**9
MS = 10**6
START_NS = 7000 * NS
LENGTH = 100 * MS
STEXT = 0xffffffff81000000
EXE = {"web": 0x555555554000, "db": 0x555555600000}
BID = {"web": 0xa1, "db": 0xa2}
KSYMS = ["k_entry", "k_syscall", "k_write", "k_read", "k_idle", "k_start"]
USYMS = {"web": ["main", "serve", "work"], "db": ["main", "query"]}
OWN = "[pvprof overhead]"
OWN_DSO = "[pvprof]"
OWN_FRAME = (OWN, "kernel", OWN_DSO)
KERNEL_DSO = "[kernel.kallsyms]"
F_USER, F_SKEWED, F_STALE = 1, 4, 8

checks = checklib.Checks(why_len=700)
check = checks.check


def run(*args, ok_rc=0):
    return checklib.run(BIN, *args, ok_rc=ok_rc)


# ------------------------------------------------------------------
# The recording, described
# ------------------------------------------------------------------

class Entry:
    """One callchain entry: its chain, its flags, the host's marks."""

    def __init__(self, ms, vcpu, comm, pid, tid, kernel, user, flags=0, own=False, folded=0):
        self.time = START_NS + ms * MS
        self.vcpu, self.comm, self.pid, self.tid = vcpu, comm, pid, tid
        self.kernel, self.user = kernel, user       # names, innermost first
        self.flags = flags | (F_USER if user and not kernel else 0)
        self.own, self.folded = own, folded


def kaddr(name):
    return STEXT + 0x1000 * (KSYMS.index(name) + 1) + 0x10


def uaddr(comm, name):
    return EXE[comm] + 0x100 * (USYMS[comm].index(name) + 1) + 0x8


# The construction: the oracle of every check below.
ENTRIES = [
    Entry(10, 0, "web", 100, 100, ["k_write", "k_syscall", "k_entry"], ["work", "serve", "main"]),
    # Marked: its own sample hit the NMI path, in user mode.
    Entry(20, 0, "web", 100, 101, [], ["serve", "main"], own=True),
    # Not marked, three samples folded: one ordinary, three overhead.
    Entry(30, 1, "web", 100, 100, ["k_write", "k_syscall", "k_entry"], ["work", "serve", "main"],
          folded=3),
    # Marked, two folded, the idle task: kernel frames only.
    Entry(40, 1, "swapper", 0, 0, ["k_idle", "k_start"], [], own=True, folded=2),
    # SKEWED and marked: not counted as skewed.
    Entry(50, 0, "db", 200, 200, [], ["query", "main"], flags=F_SKEWED, own=True, folded=1),
    # SKEWED, not marked: counted.
    Entry(60, 1, "db", 200, 200, [], ["query", "main"], flags=F_SKEWED),
    # SKEWED, not marked, four folded: counted once, as one callchain.
    Entry(70, 0, "db", 200, 201, ["k_read", "k_syscall", "k_entry"], ["query", "main"],
          flags=F_SKEWED, folded=4),
    # Without frames: marked with one folded, and not marked with two.
    Entry(80, 1, "web", 100, 100, [], [], flags=F_STALE, own=True, folded=1),
    Entry(90, 0, "web", 100, 100, [], [], flags=F_STALE, folded=2),
]


def describe(entries, version=None, marks=True):
    lines = ["host %d" % START_NS]
    if version:
        lines.append("version %d" % version)
    lines.append("vcpus 2")
    lines.append("kernel %d %d %d" % (STEXT, STEXT + 0x1000 * (len(KSYMS) + 2), len(KSYMS)))
    for i, name in enumerate(KSYMS):
        lines.append("ksym %d %s" % (STEXT + 0x1000 * (i + 1), name))
    for comm, pid in (("web", 100), ("db", 200)):
        lines.append("process %d %s" % (pid, comm))
        lines.append("mmap %d %d %d %d /usr/bin/%s" % (pid, EXE[comm], 0x10000, BID[comm], comm))
    for comm in ("web", "db"):
        for i, name in enumerate(USYMS[comm]):
            lines.append("elfsym %d %d %d %s" % (BID[comm], 0x100 * (i + 1), 0x80, name))
    for e in entries:
        if marks and (e.own or e.folded):
            lines.append("nmi %d %d" % (int(e.own), e.folded))
        frames = [kaddr(n) for n in e.kernel] + [uaddr(e.comm, n) for n in e.user]
        lines.append("sample %d %d %d %d %d %d %d %s" % (
            e.time, e.vcpu, e.pid, e.tid, e.flags, len(e.kernel), len(e.user),
            " ".join(str(a) for a in frames)))
    lines.append("end %d" % (START_NS + LENGTH))
    return "\n".join(lines) + "\n"


def write(name, desc):
    return checklib.write_in(GEN, TMP, name, desc)


# ------------------------------------------------------------------
# The model: each entry's samples
# ------------------------------------------------------------------

class Sample:
    def __init__(self, e, own):
        self.e, self.own = e, own
        self.kframes = ([OWN_FRAME] if own else []) + \
            [(n, "kernel", KERNEL_DSO) for n in e.kernel]
        self.uframes = [(n, "user", "/usr/bin/" + e.comm) for n in e.user]

    def frames(self, mode="all"):
        return {"kernel": self.kframes, "user": self.uframes}.get(mode, self.kframes + self.uframes)


def samples_of(entries):
    """Each entry's own sample first, then those folded into it."""
    out = []
    for e in entries:
        out.append(Sample(e, e.own))
        out += [Sample(e, True) for _ in range(e.folded)]
    return out


def shown(samples, mode="all", window=None):
    out = []
    for s in samples:
        if window and not window[0] <= s.e.time - START_NS <= window[1]:
            continue
        if mode != "all" and not s.frames(mode):
            continue
        out.append(s)
    return out


def folded(samples, mode="all"):
    c = Counter()
    for s in samples:
        c[";".join([s.e.comm] + [f[0] for f in reversed(s.frames(mode))])] += 1
    return c


def functions(samples, mode="all"):
    """{(name, mode, dso): [self, total]}."""
    rows = {}
    for s in samples:
        frames = s.frames(mode)
        for i, f in enumerate(frames):
            rows.setdefault(f, [0, 0])[0] += i == 0
        for f in set(frames):
            rows[f][1] += 1
    return rows


def own_count(samples, mode="all"):
    return sum(1 for s in samples if OWN_FRAME in s.frames(mode))


# ------------------------------------------------------------------
# Parsers of kvm-pvprof's outputs
# ------------------------------------------------------------------

def parse_folded(out):
    c = Counter()
    for line in out.splitlines():
        stack, n = line.rsplit(" ", 1)
        c[stack] += int(n)
    return c


def stackcollapse(out):
    """script's text folded by stackcollapse-perf.pl's rules: the header's
    first word the command, frames "ADDR FUNC (DSO)" innermost first, FUNC
    without its +0xOFFSET, a blank line ending the sample."""
    c = Counter()
    for block in out.strip("\n").split("\n\n"):
        lines = block.split("\n")
        comm = re.match(r"^(\S.+?)\s+(\d+)/(\d+)\s", lines[0]).group(1)
        stack = []
        for l in lines[1:]:
            m = re.match(r"^\s*(\w+)\s*(.+) \((\S*)\)$", l)
            stack.insert(0, re.sub(r"\+0x[\da-f]+$", "", m.group(2)))
        c[";".join([comm] + stack)] += 1
    return c


def json_functions(doc):
    return {(r["name"], r["mode"], r["dso"]): [r["self"], r["total"]] for r in doc["functions"]}


# ------------------------------------------------------------------
# Checks
# ------------------------------------------------------------------

def check_totals(data, samples):
    n_own = own_count(samples)
    skewed = sum(1 for e in ENTRIES if e.flags & F_SKEWED and not e.own)
    doc = json.loads(run("report", "-i", data, "-j", "--limit", "0")[0])
    text = run("report", "-i", data, "--limit", "0")[0]
    want = {"callchains": len(ENTRIES), "samples": len(samples), "own_nmi_samples": n_own,
            "skewed": skewed, "without_frames": 2, "stale": 2}
    got = {k: doc[k] for k in want}
    check("JSON: samples are 1 + own_nmi_samples of each entry, own_nmi_samples those marked"
          " or folded, skewed only unmarked chains", got == want, "got %r, built %r" % (got, want))
    line = header_line(text, "pvprof overhead:")
    want_line = ("pvprof overhead: %d samples (%.2f%% of the samples shown) taken inside pvprof's"
                 " own NMI path: shown as [pvprof overhead] above the stack it interrupted,"
                 " never counted as skewed" % (n_own, 100.0 * n_own / len(samples)))
    check("header: the pvprof overhead line counts the samples shown as [pvprof overhead]",
          line == want_line, "%r, expected %r" % (line, want_line))
    check("header: samples shown and skewed as built",
          "\n# samples shown: %d, " % len(samples) in text and
          "\n# skewed: %d (stacks taken after" % skewed in text,
          re.findall(r"^# (?:samples shown|skewed):.*$", text, re.M))
    long = [l for l in text.splitlines() if l.startswith("#") and len(l) > 100]
    check("header: every line within 100 columns", not long, long)
    want_rows = functions(samples)
    check("JSON functions: each function's self and total, [pvprof overhead] the samples"
          " in pvprof's NMI path", json_functions(doc) == want_rows and
          want_rows[OWN_FRAME][0] == n_own,
          "got %r, expected %r" % (sorted(json_functions(doc).items())[:4],
                                   sorted(want_rows.items())[:4]))
    rows = re.findall(r"^ +[\d.]+% +[\d.]+% +(\d+) +(\d+)  kernel  \[pvprof overhead\]"
                      r"  \(\[pvprof\]\)$", text, re.M)
    check("report: the top table's row 'kernel [pvprof overhead] ([pvprof])'",
          rows == [(str(n_own), str(n_own))], rows)
    dso = json.loads(run("report", "-i", data, "-j", "--sort", "dso", "--limit", "0")[0])
    got = {r["dso"]: [r["self"], r["total"]] for r in dso["functions"]}
    want = {}
    for s in samples:
        dsos = [f[2] for f in s.frames()]
        for i, d in enumerate(dsos):
            want.setdefault(d, [0, 0])[0] += i == 0
        for d in set(dsos):
            want[d][1] += 1
    check("--sort dso: the row [pvprof] has the samples in pvprof's NMI path",
          got == want and want[OWN_DSO] == [n_own, n_own], "got %r, expected %r" % (got, want))


def check_folded(data, samples):
    want = folded(samples)
    out = run("report", "-i", data, "--folded")[0]
    got = parse_folded(out)
    check("--folded: every stack and count, [pvprof overhead] innermost",
          got == want, "got %r, expected %r" % (sorted(got.items()), sorted(want.items())))
    check("--folded: the lines as built, 'web;main;serve;work;[pvprof overhead] 3' among them",
          "web;main;serve;work;k_entry;k_syscall;k_write;[pvprof overhead] 3\n" in out and
          "web;main;serve;[pvprof overhead] 1\n" in out and
          "swapper;k_start;k_idle;[pvprof overhead] 3\n" in out and
          "web;[pvprof overhead] 4\n" in out and "\nweb 1\n" in "\n" + out, out)


def check_script(data, samples):
    out = run("script", "-i", data)[0]
    blocks = out.strip("\n").split("\n\n")
    got = stackcollapse(out)
    want = folded(samples)
    check("script: folded by stackcollapse-perf.pl's rules, the samples report folds",
          got == want and parse_folded(run("report", "-i", data, "--folded")[0]) == got,
          "got %r, expected %r" % (sorted(got.items()), sorted(want.items())))
    heads = [b.split("\n")[0] for b in blocks]
    want_heads = []
    for s in samples:
        t = s.e.time
        want_heads.append("%s %d/%d [%03d] %d.%06d: 1000000 cpu-clock:" % (
            s.e.comm, s.e.pid, s.e.tid, s.e.vcpu, t // NS, t % NS // 1000))
    check("script: each entry's samples, its own first, each folded one with the entry's line",
          heads == want_heads, "%d samples, expected %d; %r" % (len(heads), len(want_heads),
                                                              [(a, b) for a, b in zip(heads, want_heads) if a != b][:2]))
    firsts = [b.split("\n")[1] if "\n" in b else "" for b in blocks]
    own_lines = [f for f, s in zip(firsts, samples) if s.own]
    check("script: a sample in pvprof's NMI path starts with '0 [pvprof overhead] ([pvprof])'",
          own_lines == ["\t               0 [pvprof overhead] ([pvprof])"] * own_count(samples) and
          not any(OWN in f for f, s in zip(firsts, samples) if not s.own), firsts[:6])
    out = run("script", "-i", data, "-F", "comm,ip,sym,symoff")[0]
    check("script -F comm,ip,sym,symoff: the frame has no offset",
          "\n\t               0 [pvprof overhead]\n" in out and "overhead]+" not in out, out[:300])
    # demo/chains.awk folds the program's frames of the command's samples.
    for comm in ("web", "db"):
        p = subprocess.run(["awk", "-v", "dso=/usr/bin/" + comm, "-v", "comm=" + comm, "-f",
                            CHAINS_AWK], input=run("script", "-i", data)[0].encode(),
                           capture_output=True, check=True)
        got = {}
        for line in p.stdout.decode().splitlines():
            f = line.split(" ")
            got[f[0] if f[0] == "SAMPLES" else (f[0], f[1])] = int(f[-1])
        want = Counter()
        for s in samples:
            # It counts the samples with frames, "-" for none of the program's.
            if s.e.comm != comm or not s.frames():
                continue
            chain = ";".join(reversed(s.e.user)) or "-"
            want[(s.e.user[0] if s.e.user else "-", chain)] += 1
        want["SAMPLES"] = sum(1 for s in samples if s.e.comm == comm and s.frames())
        check("demo/chains.awk on script, %s: every sample counted, folded ones too" % comm,
              got == dict(want), "got %r, expected %r" % (got, dict(want)))


def check_filters(data, samples):
    for mode in ("kernel", "user"):
        sub = shown(samples, mode)
        doc = json.loads(run("report", "-i", data, "-j", "--" + mode, "--limit", "0")[0])
        got = parse_folded(run("report", "-i", data, "--" + mode, "--folded")[0])
        script = stackcollapse(run("script", "-i", data, "--" + mode)[0])
        ok = doc["samples"] == len(sub) and doc["own_nmi_samples"] == own_count(sub, mode) and \
            json_functions(doc) == functions(sub, mode) and got == folded(sub, mode) and \
            script == got
        check("--%s: [pvprof overhead] is a kernel frame (%d of %d samples shown, %d with it)" % (
            mode, len(sub), len(samples), own_count(sub, mode)), ok,
            "samples %d own %d; folded %r, expected %r" % (
                doc["samples"], doc["own_nmi_samples"], sorted(got.items()),
                sorted(folded(sub, mode).items())))
    # Only the entry at 30 ms: its own sample and the three folded into it.
    sub = shown(samples, window=(25 * MS, 35 * MS))
    doc = json.loads(run("report", "-i", data, "-j", "--time", "0.025,0.035")[0])
    out = run("script", "-i", data, "--time", "0.025,0.035", "-F", "comm")[0]
    check("--time 0.025,0.035: one entry, its 4 samples in report and script",
          len(sub) == 4 and doc["samples"] == 4 and doc["own_nmi_samples"] == 3 and
          out == "web\n" * 4, (doc["samples"], doc["own_nmi_samples"], out))
    # By weight: [pvprof overhead] has most samples, no entry has as many.
    doc = json.loads(run("report", "-i", data, "-j", "--percent-limit", "30", "--limit", "0")[0])
    want = {k: v for k, v in functions(samples).items() if v[0] * 100 >= 30 * len(samples)}
    check("--percent-limit 30: the rows by samples, [pvprof overhead] above it",
          json_functions(doc) == want and OWN_FRAME in want, (json_functions(doc), want))


def check_per_vcpu(data, samples):
    out = run("report", "-i", data, "--per-vcpu")[0]
    rows = re.findall(r"^ +(\d+) +(\d+) +([\d.]+)% +(\d+) +(\d+)$", out, re.M)
    want = []
    for v in (0, 1):
        n = sum(1 for s in samples if s.e.vcpu == v)
        want.append((str(v), str(n), "%.2f" % (100.0 * n / len(samples)),
                     str(sum(1 for e in ENTRIES if e.vcpu == v)), "0"))
    check("--per-vcpu: samples by weight, callchains by entry", rows == want,
          "got %r, expected %r" % (rows, want))


def graph_lines(out):
    """The call graph's lines: (depth, total %, name), "all" at depth 0."""
    body = out.split("#  Total%   Self%  Function\n", 1)[1]
    lines = []
    for line in body.splitlines():
        m = re.match(r"^ *([\d.]+)% +[\d.]+%  ( *)(.*)$", line)
        if m:
            lines.append((len(m.group(2)) // 2, float(m.group(1)), m.group(3)))
    return lines


def check_graphs(data, samples):
    lines = graph_lines(run("report", "-i", data, "-g", "callee", "--percent-limit", "0")[0])
    got, comm = {}, None
    for depth, total, name in lines:
        if depth == 1:
            comm = name
        elif depth == 2 and name == OWN + " [k]":
            got[comm] = total
    per_comm = Counter(s.e.comm for s in samples if s.own)
    want = {c: round(100.0 * n / len(samples), 2) for c, n in per_comm.items()}
    check("-g callee: [pvprof overhead] [k] first under each command, its share by weight",
          got == want, "got %r, expected %r (%d lines)" % (got, want, len(lines)))
    svg = "%s/own.svg" % TMP
    run("report", "-i", data, "--flamegraph", svg)
    doc = open(svg).read()
    titles = re.findall(r"<title>\[pvprof overhead\] \((\d+) samples, [\d.]+%\)</title>", doc)
    sub = re.search(r">(\d+) samples, \d+ frames unsymbolized", doc)
    check("flame graph: the [pvprof overhead] frames hold the samples in pvprof's NMI path",
          sorted(int(t) for t in titles) ==
          sorted(n for k, n in folded(samples).items() if k.endswith(OWN)) and
          sub and int(sub.group(1)) == len(samples), (titles, sub and sub.group(1)))


def check_versions():
    """A version 1 recording (its entries have zeros where version 2 has
    the marks) and the same stream as version 2 read alike, byte for byte."""
    v1 = write("v1", describe(ENTRIES, version=1, marks=False))
    v2 = write("v2", describe(ENTRIES, marks=False))
    with open(v1, "rb") as a, open(v2, "rb") as b:
        da, db = a.read(), b.read()
    diff = [i for i in range(min(len(da), len(db))) if da[i] != db[i]]
    check("version 1: the recordings differ only in HELLO's stream_version",
          len(da) == len(db) and len(diff) == 1 and da[diff[0]] == 1 and db[diff[0]] == 2, diff)
    outs = {}
    path, svg, pb = TMP + "/same.data", TMP + "/same.svg", TMP + "/same.pb.gz"
    for name, data in (("v1", da), ("v2", db)):
        # The same name: the outputs name the recording.
        with open(path, "wb") as f:
            f.write(data)
        o = []
        for args in (["report"], ["report", "-j"], ["report", "--folded"], ["report", "-g", "caller"],
                     ["report", "--per-vcpu"], ["report", "--sort", "dso,sym", "--kernel"],
                     ["script"], ["report", "--flamegraph", svg, "--pprof", pb]):
            o.append(run(args[0], "-i", path, *args[1:])[0])
        o.append(open(svg, "rb").read())
        o.append(open(pb, "rb").read())
        outs[name] = o
    check("version 1: every output is the same as version 2's without marks",
          outs["v1"] == outs["v2"],
          [i for i, (a, b) in enumerate(zip(outs["v1"], outs["v2"])) if a != b])
    text = outs["v1"][0]
    doc = json.loads(outs["v1"][1])
    skewed = sum(1 for e in ENTRIES if e.flags & F_SKEWED)
    check("version 1: no pvprof overhead line, a sample per entry, every SKEWED chain skewed",
          "pvprof overhead" not in text and doc["own_nmi_samples"] == 0 and
          doc["samples"] == len(ENTRIES) and doc["skewed"] == skewed and
          OWN not in outs["v1"][2] + outs["v1"][6],
          (doc["samples"], doc["own_nmi_samples"], doc["skewed"]))


def main():
    data = write("ownnmi", describe(ENTRIES))
    samples = samples_of(ENTRIES)
    checks.run_each(((check_totals, (data, samples)), (check_folded, (data, samples)),
                      (check_script, (data, samples)), (check_filters, (data, samples)),
                      (check_per_vcpu, (data, samples)), (check_graphs, (data, samples)),
                      (check_versions, ())))
    checks.finish()


if __name__ == "__main__":
    main()
