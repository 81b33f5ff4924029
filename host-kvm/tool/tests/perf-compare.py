#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kvm-pvprof report and script against perf report and perf script, on
the same samples.

usage: perf-compare.py KVM_PVPROF PERFOPTS_GEN WORKLOAD.c TMPDIR

perf records perfopts-workload (built here: static, frame pointers, every
frame named) with a fixed cpu-clock period, so that perf's percentages are
shares of samples as pvprof's are.  Its own 'perf script' output becomes a
pvprof recording through perfopts-gen: each sample with its time, CPU (as
the vCPU), process and frames, each function perf named published as a
kernel or ELF symbol at the address perf's symbol offset gives.  Then each
option both tools have is asked of both, on those samples: --sort
comm,dso, sym and cpu/vcpu with self and children/total, --percent-limit,
--time in seconds and in percentages, -g caller and -g callee, script -F
with and without --time.  What differs by design is compared as the man
page says: perf's --time takes its own absolute timestamps (pvprof's count
from the recording's start, here the first sample), perf's DSOs are short
names, perf's pid key is a thread.

Without perf, or when it cannot record here, every case is a SKIP line.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

import checklib

BIN, GEN, WORKLOAD, TMP = sys.argv[1:5]
PERIOD = 250000
KERNEL_DSO = "[kernel.kallsyms]"
CASES = ["--sort comm,dso", "--sort comm,dso with children/total", "--sort sym", "--sort cpu/vcpu",
         "--percent-limit", "--percent-limit with children/total", "--time", "-g caller",
         "-g callee", "script -F comm,tid,time", "script -F comm,ip,sym", "script --time"]
checks = checklib.Checks(prefix="perf: ")
check = checks.check


def skip_all(why):
    for c in CASES:
        print("SKIP perf: %s: %s" % (c, why))
    sys.exit(0)


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, **kw)


def perf(*args):
    p = sh(["perf"] + list(args))
    if p.returncode:
        raise RuntimeError("perf %s: %s" % (" ".join(args), p.stderr.decode()[:300]))
    return p.stdout.decode("ascii", "replace")


def pvprof(*args):
    return checklib.run(BIN, *args)[0]


# ------------------------------------------------------------------
# perf's samples, as a pvprof recording
# ------------------------------------------------------------------

HEAD = re.compile(r"^\s*(\S+)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\d+)\s*$")
FRAME = re.compile(r"^\s+([0-9a-f]+) (.+?)(?:\+0x([0-9a-f]+))? \((.*)\)$")


def perf_samples(data):
    out = perf("script", "-i", data, "-F", "comm,pid,tid,cpu,time,period,ip,sym,symoff,dso",
               "--ns")
    samples, cur = [], None
    for line in out.splitlines():
        if not line.strip():
            cur = None
            continue
        m = HEAD.match(line)
        if m:
            if int(m.group(7)) != PERIOD:
                raise RuntimeError("a sample's period is %s, not %d" % (m.group(7), PERIOD))
            cur = {"comm": m.group(1), "pid": int(m.group(2)), "tid": int(m.group(3)),
                   "cpu": int(m.group(4)), "time": int(m.group(5)) * 10**9 + int(m.group(6)),
                   "frames": []}
            samples.append(cur)
            continue
        m = FRAME.match(line)
        if not m or cur is None:
            raise RuntimeError("perf script line not understood: %r" % line)
        ip, sym, off, dso = int(m.group(1), 16), m.group(2), m.group(3), m.group(4)
        if sym == "[unknown]" or off is None:
            raise RuntimeError("perf could not name a frame: %r" % line)
        cur["frames"].append((ip, sym, int(off, 16), dso))
    return samples


def symbols(entries):
    """(start, size, name) per function, from (ip, name, offset) frames."""
    syms = {}
    for ip, name, off in entries:
        start = ip - off
        s = syms.setdefault((start, name), [0])
        s[0] = max(s[0], off + 1)
    out = sorted((start, size[0], name) for (start, name), size in syms.items())
    for i in range(len(out) - 1):
        if out[i][0] == out[i + 1][0]:
            raise RuntimeError("two functions at %#x: %s, %s" % (out[i][0], out[i][2],
                                                                out[i + 1][2]))
        if out[i][0] + out[i][1] > out[i + 1][0]:
            raise RuntimeError("functions %s and %s overlap" % (out[i][2], out[i + 1][2]))
    return out


def describe(samples):
    """perfopts-gen's description of perf's samples, and the first and last time."""
    first, last = min(s["time"] for s in samples), max(s["time"] for s in samples)
    lines = ["host %d" % first, "vcpus %d" % (max(s["cpu"] for s in samples) + 1)]
    kernel = symbols((ip, sym, off) for s in samples for ip, sym, off, dso in s["frames"]
                     if dso == KERNEL_DSO)
    dsos = sorted({dso for s in samples for _, _, _, dso in s["frames"] if dso != KERNEL_DSO})
    if kernel:
        top = max(ip for s in samples for ip, _, _, dso in s["frames"] if dso == KERNEL_DSO)
        lines.append("kernel %d %d %d" % (kernel[0][0], top + 0x1000, len(kernel)))
        lines += ["ksym %d %s" % (start, name) for start, _, name in kernel]
    base = {dso: 0x400000000000 + i * 0x1000000000 for i, dso in enumerate(dsos)}
    # A pid whose samples carry two command names (a fork before its
    # prctl) is two pvprof processes: a recording names a process image
    # once.
    pids, comm_of = {}, {}
    for s in samples:
        key = (s["pid"], s["comm"])
        if key not in pids:
            pids[key] = s["pid"] if s["pid"] not in comm_of else 1000000 + len(pids)
            comm_of.setdefault(s["pid"], s["comm"])
    for (pid, comm), gen_pid in sorted(pids.items(), key=lambda kv: kv[1]):
        lines.append("process %d %s" % (gen_pid, comm))
        for i, dso in enumerate(dsos):
            top = max(ip for s in samples for ip, _, _, d in s["frames"] if d == dso)
            lines.append("mmap %d %d %d %d %s" % (gen_pid, base[dso],
                                                   (top + 0x2000) & ~0xfff, i + 1, dso))
    for i, dso in enumerate(dsos):
        for start, size, name in symbols((ip, sym, off) for s in samples
                                         for ip, sym, off, d in s["frames"] if d == dso):
            lines.append("elfsym %d %d %d %s" % (i + 1, start, size, name))
    for s in sorted(samples, key=lambda s: s["time"]):
        kf = [ip for ip, _, _, dso in s["frames"] if dso == KERNEL_DSO]
        uf = [base[dso] + ip for ip, _, _, dso in s["frames"] if dso != KERNEL_DSO]
        if s["frames"][:len(kf)] != [f for f in s["frames"] if f[3] == KERNEL_DSO]:
            raise RuntimeError("a chain with user frames inside its kernel frames")
        lines.append("sample %d %d %d %d %d %d %d %s" % (
            s["time"], s["cpu"], pids[(s["pid"], s["comm"])], s["tid"], int(not kf), len(kf),
            len(uf), " ".join(str(a) for a in kf + uf)))
    lines.append("end %d" % last)
    return "\n".join(lines) + "\n", first, last


# ------------------------------------------------------------------
# Reading both reports
# ------------------------------------------------------------------

def perf_rows(data, *args):
    """perf report --stdio rows: the leading percentages and the keys after them.

    With a field separator perf neither pads nor cuts its columns (it cuts a
    command name to the column's width otherwise)."""
    out = perf("report", "-i", data, "--stdio", "-g", "none", "-t", "|", *args)
    rows = []
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        rows.append([f.strip() for f in line.split("|")])
    return rows


def pv_rows(data, sort, *args):
    return json.loads(pvprof("report", "-i", data, "-j", "--sort", sort, "--limit", "0",
                             *args))["functions"]


def short(dso):
    return dso if dso == KERNEL_DSO else os.path.basename(dso or "[unknown]")


def perf_self_counts(data, *args):
    """{(comm, dso): samples} from perf report --no-children --show-nr-samples."""
    return {(r[2], r[3]): int(r[1]) for r in
            perf_rows(data, "--no-children", "--sort", "comm,dso", "--show-nr-samples",
                      "--percent-limit", "0", *args)}


def pv_self_counts(data, *args):
    return {(r["comm"], short(r["dso"])): r["self"] for r in pv_rows(data, "comm,dso", *args)
            if r["self"]}


def perf_folded(data, order):
    """{path from the command: samples} from perf's folded call chains."""
    out = perf("report", "-i", data, "--stdio", "--no-children", "--sort", "comm",
               "-g", "folded,0,%s,function,count" % order, "--percent-limit", "0", "-t", "|")
    nodes, comm = defaultdict(int), None
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^\s*[\d.]+%\s*\|(.*?)\s*$", line)
        if m:
            comm = m.group(1)
            continue
        count, chain = line.split(" ", 1)
        path = (comm,)
        nodes[path] += int(count)
        for name in chain.split("|"):
            path += (name,)
            nodes[path] += int(count)
    return nodes


def pv_tree(data, order, total):
    """{path from the command: samples}, from the call graph's Total%."""
    out = pvprof("report", "-i", data, "-g", order, "--percent-limit", "0")
    body = out.split("#  Total%   Self%  Function\n", 1)[1]
    nodes, stack = {}, []
    for line in body.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^\s*([\d.]+)%\s+[\d.]+%  ( *)(.*?)(?: \[[ku]\])?$", line)
        depth = len(m.group(2)) // 2
        if depth == 0:
            continue
        stack[depth - 1:] = [m.group(3)]
        nodes[tuple(stack)] = m.group(1)
    return nodes


# ------------------------------------------------------------------
# The comparisons
# ------------------------------------------------------------------

def compare(data, pv, first, last, n):
    # Which samples a function or DSO entry counts: the sampled frame's
    # (perf --no-children, pvprof self).
    p, v = perf_self_counts(data), pv_self_counts(pv)
    check("--sort comm,dso: samples per command and DSO, %d rows" % len(p), p == v,
          "perf %r, pvprof %r" % (sorted(p.items()), sorted(v.items())))

    # And every frame's, once per sample (perf --children, pvprof total).
    rows = perf_rows(data, "--children", "--sort", "comm,dso", "--percent-limit", "0")
    p = {(r[2], r[3]): (r[0], r[1]) for r in rows}
    v = {(r["comm"], short(r["dso"])): ("%.2f%%" % r["total_percent"], "%.2f%%" % r["self_percent"])
         for r in pv_rows(pv, "comm,dso")}
    check("--sort comm,dso: perf's Children and Self are pvprof's Total and Self", p == v,
          "perf %r, pvprof %r" % (sorted(p.items()), sorted(v.items())))

    rows = perf_rows(data, "--no-children", "--sort", "sym", "--show-nr-samples",
                     "--percent-limit", "0")
    p = {tuple(r[2].split(" ", 1)): int(r[1]) for r in rows}
    v = defaultdict(int)
    for r in pv_rows(pv, "sym"):
        if r["self"]:
            v[("[k]" if r["mode"] == "kernel" else "[.]", r["name"])] += r["self"]
    check("--sort sym: samples per function, %d rows" % len(p), p == dict(v),
          "perf %r, pvprof %r" % (sorted(p.items())[:6], sorted(v.items())[:6]))

    rows = perf_rows(data, "--no-children", "--sort", "cpu", "--show-nr-samples",
                     "--percent-limit", "0")
    p = {int(r[2]): int(r[1]) for r in rows}
    v = {r["vcpu"]: r["self"] for r in pv_rows(pv, "cpu")}
    check("--sort cpu: perf's CPUs are pvprof's vCPUs", p == v, "perf %r, pvprof %r" % (p, v))

    for pct in ("5", "0.5", "40"):
        p = {(r[2], r[3]) for r in perf_rows(data, "--no-children", "--sort", "comm,dso",
                                             "--show-nr-samples", "--percent-limit", pct)}
        v = {(r["comm"], short(r["dso"])) for r in pv_rows(pv, "comm,dso", "--percent-limit", pct)}
        check("--percent-limit %s: the rows shown" % pct, p == v, "perf %r, pvprof %r" % (p, v))
    # perf's --children orders by and limits on Children: pvprof's total.
    for pct in ("50", "99"):
        p = {(r[2], r[3]) for r in perf_rows(data, "--children", "--sort", "comm,dso",
                                             "--percent-limit", pct)}
        v = {(r["comm"], short(r["dso"]))
             for r in pv_rows(pv, "total,comm,dso", "--percent-limit", pct)}
        check("--percent-limit %s with perf's --children and pvprof's --sort total" % pct,
              p == v, "perf %r, pvprof %r" % (p, v))

    span = last - first

    def abs_time(ns):
        return "%d.%09d" % (ns // 10**9, ns % 10**9)

    def rel_time(ns):
        return "%d.%09d" % ((ns - first) // 10**9, (ns - first) % 10**9)
    a, b = first + span // 5, first + span * 3 // 5
    windows = [(abs_time(a) + "," + abs_time(b), rel_time(a) + "," + rel_time(b)),
               ("," + abs_time(b), "," + rel_time(b)), (abs_time(a) + ",", rel_time(a) + ","),
               ("10%-20%", "10%-20%"), ("25%/2", "25%/2"), ("0%-10%,30%-40%", "0%-10%,30%-40%"),
               ("90%-100%", "90%-100%")]
    for pt, vt in windows:
        p, v = perf_self_counts(data, "--time", pt), pv_self_counts(pv, "--time", vt)
        check("--time %s (pvprof %s): the samples per command and DSO" % (pt, vt), p == v,
              "perf %r, pvprof %r" % (sorted(p.items()), sorted(v.items())))

    for order in ("caller", "callee"):
        p = {k: "%.2f" % (100.0 * c / n) for k, c in perf_folded(data, order).items()}
        v = pv_tree(pv, order, n)
        check("-g %s: every branch of the tree, %d nodes" % (order, len(p)), p == v,
              "perf only %r; pvprof only %r" % (sorted(set(p.items()) - set(v.items()))[:4],
                                                 sorted(set(v.items()) - set(p.items()))[:4]))

    def words(text):
        return [" ".join(line.split()) for line in text.splitlines()]
    p = words(perf("script", "-i", data, "-F", "comm,tid,time"))
    v = words(pvprof("script", "-i", pv, "-F", "comm,tid,time"))
    check("script -F comm,tid,time: the same lines, %d samples" % len(p), p == v,
          next(((x, y) for x, y in zip(p, v) if x != y), (len(p), len(v))))

    def names(text):
        return [line.split()[1] if line.startswith(("\t", " ")) else line.strip()
                for line in text.splitlines()]
    p = names(perf("script", "-i", data, "-F", "comm,ip,sym"))
    v = names(pvprof("script", "-i", pv, "-F", "comm,ip,sym"))
    check("script -F comm,ip,sym: the same functions in every sample", p == v,
          next(((x, y) for x, y in zip(p, v) if x != y), (len(p), len(v))))

    for pt, vt in (windows[0], windows[3]):
        p = words(perf("script", "-i", data, "-F", "comm,tid,time", "--time", pt))
        v = words(pvprof("script", "-i", pv, "-F", "comm,tid,time", "--time", vt))
        check("script --time %s (pvprof %s): the same samples, %d" % (pt, vt, len(p)), p == v,
              (len(p), len(v)))


def main():
    if not shutil.which("perf"):
        skip_all("perf is not installed (Debian package linux-perf)")
    wl = TMP + "/perfopts-workload"
    cc = os.environ.get("CC", "cc")
    if not shutil.which(cc):
        skip_all("no C compiler %s for the workload" % cc)
    p = sh([cc, "-O0", "-fno-omit-frame-pointer", "-fno-stack-protector", "-static",
            "-nostdlib", "-o", wl, WORKLOAD])
    if p.returncode:
        skip_all("cannot build the workload: " + p.stderr.decode()[:200])
    data = TMP + "/perf.data"
    p = sh(["perf", "record", "-q", "-e", "cpu-clock", "-c", str(PERIOD), "-g", "--sample-cpu",
            "-o", data, "--", wl, "6000"])
    if p.returncode:
        skip_all("perf record cannot record here: " + p.stderr.decode()[:200])
    try:
        samples = perf_samples(data)
        desc, first, last = describe(samples)
        pv = TMP + "/perf-compare.data"
        checklib.write_recording(GEN, pv, desc)
        n = json.loads(pvprof("report", "-i", pv, "-j"))["samples"]
        check("the recording holds perf's %d samples" % len(samples), n == len(samples),
              "%d in pvprof's report" % n)
        compare(data, pv, first, last, n)
    except Exception as e:      # noqa: BLE001 - any failure is one FAIL line
        check("perf-compare", False, "%s: %s" % (type(e).__name__, e))
    checks.finish()


if __name__ == "__main__":
    main()
