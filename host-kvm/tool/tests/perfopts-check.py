#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report's and script's perf options against a recording whose every
sample this script made up.

usage: perfopts-check.py KVM_PVPROF PERFOPTS_GEN TMPDIR

It describes a recording (seeded, so always the same): processes with
command names, executables and a shared library with ELF symbols, kernel
symbols, samples on four vCPUs at chosen host times (some exactly on the
edges of the windows asked for below), stacks with recursion, samples
without frames, idle samples, a process the agent never described,
losses per vCPU and for none, and callchains the host marked as taken in
pvprof's own NMI path or folded more such samples into (stream version 2:
each stands for 1 + own_nmi_samples samples, those in the NMI path under
the frame [pvprof overhead]).  perfopts-gen writes it as a recording.
Every expectation (rows of --sort, what --percent-limit hides, the samples
of a --time window, the trees of -g caller and -g callee, the per-vCPU
table, each field of script -F) is computed here from that description,
by the rules doc/kvm-pvprof-report.8 states; nothing is taken from
kvm-pvprof's output but what is compared.  Prints PASS/FAIL lines.
"""
import json
import random
import re
import sys
from fractions import Fraction

from checklib import check, run, run_checks, setup, write

setup(*sys.argv[1:4])
NS = 10**9
START_NS = 5000 * NS
LENGTH = 1600000005       # the recording's: END is this long after its start
STEXT = 0xffffffff81000000
KSYM_STEP = 0x1000
EXE_START = 0x555555554000
LIB_START = 0x7f0000000000
MAP_LEN = 0x20000
SYM_STEP = 0x200          # user symbols: SYM_SIZE bytes every SYM_STEP
SYM_SIZE = 0x100
PERIOD = 1000000
LOSS_NAMES = ["notice_ring_full", "throttled", "unregistered", "protected", "nested",
              "smm", "stale", "invalid", "buffer_gone", "unanswered", "stream_overflow",
              "slot_busy"]
KERNEL_DSO = "[kernel.kallsyms]"

# ------------------------------------------------------------------
# The recording, described
# ------------------------------------------------------------------

class Frame:
    """A frame as report names it: function label, user or kernel, DSO."""

    def __init__(self, addr, name, kernel, dso, symoff):
        self.addr, self.name, self.kernel, self.dso, self.symoff = \
            addr, name, kernel, dso, symoff


# The frame of a sample taken inside pvprof's own NMI path: a kernel frame
# at no address, without offset (doc/kvm-pvprof-report.8, PVPROF OVERHEAD).
OWN_NMI = Frame(0, "[pvprof overhead]", True, "[pvprof]", None)


class Sample:
    """A callchain entry (own, folded: the host's marks), or one sample of it."""

    def __init__(self, time, vcpu, pid, tid, comm, kframes, uframes):
        self.time, self.vcpu, self.pid, self.tid, self.comm = time, vcpu, pid, tid, comm
        self.kframes, self.uframes = kframes, uframes     # innermost first
        self.own, self.folded = False, 0

    def with_own_nmi(self):
        return Sample(self.time, self.vcpu, self.pid, self.tid, self.comm,
                      [OWN_NMI] + self.kframes, self.uframes)

    @property
    def rel(self):
        return max(0, self.time - START_NS)

    def frames(self, mode="all"):
        if mode == "kernel":
            return self.kframes
        if mode == "user":
            return self.uframes
        return self.kframes + self.uframes


def describe(rnd):
    lines = ["host %d" % START_NS, "vcpus 4"]
    ksyms = ["k_%s" % n for n in ("entry_SYSCALL_64", "do_syscall_64", "ksys_write",
                                  "vfs_write", "ext4_file_write_iter", "ksys_read",
                                  "vfs_read", "schedule", "default_idle",
                                  "cpu_startup_entry", "irq_exit", "copy_user")]
    ksyms.append("zz_etext_boundary")
    lines.append("kernel %d %d %d" % (STEXT, STEXT + KSYM_STEP * (len(ksyms) + 1), len(ksyms)))
    for i, name in enumerate(ksyms):
        lines.append("ksym %d %s" % (STEXT + KSYM_STEP * i, name))
    kaddr = {name: STEXT + KSYM_STEP * i for i, name in enumerate(ksyms)}

    libc = ["memcpy", "malloc", "free", "write", "read", "strlen"]
    progs = {
        "web": ["main", "serve", "handle_request", "parse_header", "render", "gzip_block"],
        "db": ["main", "query", "btree_lookup", "page_read", "lock_acquire"],
        "batch": ["main", "run", "compute", "reduce"],
    }
    procs = [(100, "web"), (101, "web"), (200, "db"), (300, "batch")]
    bid = {"web": 0xa1, "db": 0xa2, "batch": 0xa3, "libc": 0xc1}
    syms = {}   # (pid) -> {name: (addr, dso)}
    for pid, comm in procs:
        lines.append("process %d %s" % (pid, comm))
        lines.append("mmap %d %d %d %d /usr/bin/%s" % (pid, EXE_START, MAP_LEN, bid[comm], comm))
        lines.append("mmap %d %d %d %d /lib/libc.so.6" % (pid, LIB_START, MAP_LEN, bid["libc"]))
        table = {}
        for i, name in enumerate(progs[comm]):
            table[name] = (EXE_START + SYM_STEP * (i + 1), "/usr/bin/" + comm)
        for i, name in enumerate(libc):
            table[name] = (LIB_START + SYM_STEP * (i + 1), "/lib/libc.so.6")
        syms[pid] = table
    for comm, names in sorted(progs.items()):
        for i, name in enumerate(names):
            lines.append("elfsym %d %d %d %s" % (bid[comm], SYM_STEP * (i + 1), SYM_SIZE, name))
    for i, name in enumerate(libc):
        lines.append("elfsym %d %d %d %s" % (bid["libc"], SYM_STEP * (i + 1), SYM_SIZE, name))

    def kframe(name):
        off = rnd.randrange(0, KSYM_STEP)
        return Frame(kaddr[name] + off, name, True, KERNEL_DSO, off)

    def uframe(pid, name):
        if pid not in syms:            # a process the agent never described
            addr = EXE_START + rnd.randrange(0, MAP_LEN)
            return Frame(addr, "%#x" % addr, False, None, None)
        base, dso = syms[pid][name]
        if name == "main" and rnd.random() < 0.15:
            # Past the symbol's end, in no symbol: "DSO+0xOFFSET" from the
            # mapping's start (file offset 0 there).
            addr = base + SYM_SIZE + rnd.randrange(0, SYM_STEP - SYM_SIZE)
            start = EXE_START if dso.startswith("/usr") else LIB_START
            return Frame(addr, "%s+%#x" % (dso, addr - start), False, dso, None)
        off = rnd.randrange(0, SYM_SIZE)
        return Frame(base + off, name, False, dso, off)

    # An entry queued before record noted its start counts as at 0 s.
    samples = [make_sample(rnd, START_NS - 20000, procs, progs, libc, kframe, uframe)]
    # Samples exactly on the edges of windows asked for below: 0.5, 1 and
    # 1.2345 s; and on both sides of the edges of 10%, 20%, 25% and 50% of
    # the recording's LENGTH, which rounds 10% and 50% up (.5 ns, .5 ns).
    edges = [NS // 2, NS, 1234500000, 160000000, 160000001, 320000000, 320000001,
             400000001, 400000002, 800000002, 800000003]
    for rel in edges:
        samples.append(make_sample(rnd, START_NS + rel, procs, progs, libc, kframe, uframe))
    t = START_NS
    while True:
        t += rnd.choice([1000, 250000, 999999, 4000000, 7000000])
        if t >= START_NS + LENGTH - 1000:
            break
        samples.append(make_sample(rnd, t, procs, progs, libc, kframe, uframe))
    end_ns = START_NS + LENGTH
    samples.sort(key=lambda s: s.time)
    # The host's marks, drawn apart so that the rest stays as it was.
    marks = random.Random(31)
    for s in samples:
        if marks.random() < 0.2:
            s.own = marks.random() < 0.5
            s.folded = marks.choice([0, 1, 2, 5]) if s.own else marks.choice([1, 2, 5])
    losses = []
    for i in range(24):
        lt = START_NS + rnd.randrange(0, end_ns - START_NS)
        vcpu = rnd.choice([0, 1, 1, 2, 3, 0xffffffff if i % 6 == 0 else 3])
        reason = rnd.choice([0, 1, 1, 6, 10])
        losses.append((lt, vcpu, reason, rnd.randrange(1, 9)))
    events = [(s.time, 0, s) for s in samples] + [(l[0], 1, l) for l in losses]
    for when, kind, ev in sorted(events, key=lambda e: (e[0], e[1])):
        if kind:
            lines.append("loss %d %d %d %d" % ev)
        else:
            if ev.own or ev.folded:
                lines.append("nmi %d %d" % (int(ev.own), ev.folded))
            lines.append("sample %d %d %d %d %d %d %d %s" % (
                ev.time, ev.vcpu, ev.pid, ev.tid, int(not ev.kframes), len(ev.kframes),
                len(ev.uframes), " ".join(str(f.addr) for f in ev.kframes + ev.uframes)))
    lines.append("end %d" % end_ns)
    return "\n".join(lines) + "\n", samples, losses, end_ns


def expand(entries):
    """Each entry's samples: its own (under OWN_NMI when marked), then
    the ones folded into it, under OWN_NMI."""
    out = []
    for e in entries:
        out.append(e.with_own_nmi() if e.own else e)
        out += [e.with_own_nmi() for _ in range(e.folded)]
    return out


def make_sample(rnd, t, procs, progs, libc, kframe, uframe):
    vcpu = rnd.choice([0, 0, 1, 1, 1, 2, 3])
    roll = rnd.random()
    if roll < 0.08:       # idle
        return Sample(t, vcpu, 0, 0, "swapper",
                      [kframe("k_default_idle"), kframe("k_cpu_startup_entry")], [])
    if roll < 0.11:       # answered without a stack
        pid, comm = rnd.choice(procs)
        return Sample(t, vcpu, pid, pid, comm, [], [])
    if roll < 0.16:       # a process the agent never described
        return Sample(t, vcpu, 400, 401, ":400", [],
                      [uframe(400, None) for _ in range(rnd.randrange(1, 4))])
    pid, comm = rnd.choice(procs)
    tid = pid + rnd.choice([0, 0, 1])
    names = progs[comm]
    chain = ["main"] + [rnd.choice(names[1:]) for _ in range(rnd.randrange(1, 5))]
    if rnd.random() < 0.2:                     # recursion: a function twice
        chain.append(chain[-1])
    if rnd.random() < 0.5:
        chain.append(rnd.choice(libc))
    user = [uframe(pid, n) for n in reversed(chain)]
    kernel = []
    if rnd.random() < 0.45:
        path = rnd.choice([["k_entry_SYSCALL_64", "k_do_syscall_64", "k_ksys_write", "k_vfs_write",
                            "k_ext4_file_write_iter"],
                           ["k_entry_SYSCALL_64", "k_do_syscall_64", "k_ksys_read", "k_vfs_read",
                            "k_copy_user", "k_copy_user"],
                           ["k_irq_exit", "k_schedule"]])
        path = path[:rnd.randrange(2, len(path) + 1)]
        kernel = [kframe(n) for n in reversed(path)]
    return Sample(t, vcpu, pid, tid, comm, kernel, user)


# ------------------------------------------------------------------
# The model: what the report should say
# ------------------------------------------------------------------

def selected(samples, vcpu=None, pid=None, comm=None, mode="all", window=None):
    out = []
    for s in samples:
        if vcpu is not None and s.vcpu != vcpu:
            continue
        if pid is not None and s.pid != pid:
            continue
        if comm is not None and s.comm != comm:
            continue
        if window is not None and not any(a <= s.rel <= b for a, b in window):
            continue
        if mode != "all" and not s.frames(mode):
            continue
        out.append(s)
    return out


GROUP_KEYS = ["comm", "pid", "tid", "vcpu", "dso", "sym"]
ALIASES = {"overhead": "self", "overhead_children": "total", "cpu": "vcpu", "symbol": "sym"}


def sort_chain(arg):
    """The keys rows are compared by, as the man page states the rule."""
    given = [ALIASES.get(k, k) for k in arg.split(",")]
    chain = list(given)
    if "self" not in chain and "total" not in chain:
        chain.insert(0, "self")
    counts = [i for i, k in enumerate(chain) if k in ("self", "total")]
    if len(counts) == 1:
        chain.insert(counts[0] + 1, "total" if chain[counts[0]] == "self" else "self")
    columns = [k for k in given if k in GROUP_KEYS]
    if not columns:
        columns = ["sym"]
        chain.append("sym")
    primary = next(k for k in chain if k in ("self", "total"))
    return chain, columns, primary


def frame_key(f, columns):
    key = {}
    if "sym" in columns:
        key["sym"] = (f.name, "kernel" if f.kernel else "user", f.dso)
    if "dso" in columns:
        key["dso"] = f.dso
    return key


def sample_key(s, columns):
    return {k: getattr(s, k) for k in ("comm", "pid", "tid", "vcpu") if k in columns}


def table(samples, arg, mode="all"):
    chain, columns, primary = sort_chain(arg)
    rows = {}
    per_frame = "sym" in columns or "dso" in columns
    for s in samples:
        base = sample_key(s, columns)
        if not per_frame:
            k = tuple(sorted(base.items()))
            r = rows.setdefault(k, [0, 0])
            r[0] += 1
            r[1] += 1
            continue
        seen = set()
        for i, f in enumerate(s.frames(mode)):
            key = dict(base, **frame_key(f, columns))
            k = tuple(sorted(key.items()))
            r = rows.setdefault(k, [0, 0])
            if i == 0:
                r[0] += 1
            if k not in seen:
                seen.add(k)
                r[1] += 1

    def order(item):
        k, (self_, total) = item
        key = dict(k)
        out = []
        for c in chain:
            if c == "self":
                out.append(-self_)
            elif c == "total":
                out.append(-total)
            elif c == "sym":
                name, kind, dso = key["sym"]
                out.append((name, kind, dso or ""))
            elif c == "dso":
                out.append(key["dso"] or "")
            else:
                out.append(key[c])
        return out
    return sorted(rows.items(), key=order), columns, primary


def json_rows(doc, columns):
    rows = []
    for r in doc["functions"]:
        key = {}
        for c in columns:
            if c == "sym":
                key["sym"] = (r["name"], r["mode"], r["dso"])
            else:
                key[c] = r[c]
        rows.append((tuple(sorted(key.items())), [r["self"], r["total"]]))
    return rows


def text_rows(out):
    """The top table's rows as text: (self, total, the cells after them)."""
    rows, body = [], False
    for line in out.splitlines():
        if line.startswith("#   Self%"):
            body = True
            continue
        if body and not line.startswith("#"):
            m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(\d+)  (.*)$", line)
            rows.append((int(m.group(3)), int(m.group(4)), re.split(r"\s{2,}", m.group(5).strip())))
    return rows


def cells(key, columns):
    out = []
    for c in columns:
        v = key[c]
        if c == "sym":
            out += [v[1], v[0]] + (["(%s)" % v[2]] if v[2] and "dso" not in columns else [])
        elif c == "dso":
            out.append(v or "[unknown]")
        else:
            out.append(str(v))
    return out


# ------------------------------------------------------------------
# Checks
# ------------------------------------------------------------------

def check_sort(data, samples):
    total = len(samples)
    for arg in ["comm,dso", "comm,dso,sym", "sym", "total", "dso,sym", "vcpu", "cpu,comm",
                "pid,tid", "comm,self", "total,comm", "symbol,overhead", "tid,dso,total,sym"]:
        name = "--sort %s: rows, self and total, and their order" % arg
        try:
            want, columns, _ = table(samples, arg)
            doc = json.loads(run("report", "-i", data, "-j", "--sort", arg, "--limit", "0")[0])
            got = json_rows(doc, columns)
            text = text_rows(run("report", "-i", data, "--sort", arg, "--limit", "0")[0])
            if doc["samples"] != total:
                check(name, False, "%d samples, made %d" % (doc["samples"], total))
            elif [(k, v) for k, v in want] != got:
                diff = [(w, g) for w, g in zip(want, got) if w != g][:2]
                check(name, False, "%d rows, expected %d; first differences %r" %
                      (len(got), len(want), diff))
            elif [(r[0], r[1], r[2]) for r in text] != [(v[0], v[1], cells(dict(k), columns))
                                                          for k, v in want]:
                check(name, False, "the text table differs: %r" % text[:3])
            else:
                check(name, True)
        except Exception as e:      # noqa: BLE001 - any failure is a FAIL line
            check(name, False, e)

    # The shares are of the samples shown, two decimals.
    want, columns, _ = table(samples, "comm")
    out = run("report", "-i", data, "--sort", "comm")[0]
    pcts = re.findall(r"^\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)", out, re.M)
    check("--sort comm: Self% is the share of the samples shown",
          [p[0] for p in pcts] == ["%.2f" % (100.0 * v[0] / total) for k, v in want], pcts[:3])
    # perf's prefix rule: no count given, self first; its title says so.
    check("--sort comm,dso: the title names the order",
          "# top rows of comm,dso by self samples (all)" in
          run("report", "-i", data, "--sort", "comm,dso", "--limit", "0")[0])
    check("--sort comm,self: ordered by command first",
          "# top commands by comm, then self samples (all)" in
          run("report", "-i", data, "--sort", "comm,self")[0])
    # Filters apply before the rows are made.
    sub = selected(samples, vcpu=2, mode="user")
    want, columns, _ = table(sub, "dso", mode="user")
    doc = json.loads(run("report", "-i", data, "-j", "--sort", "dso", "--vcpu", "2", "--user",
                         "--limit", "0")[0])
    check("--sort dso --vcpu 2 --user: rows of the filtered samples",
          json_rows(doc, columns) == [(k, v) for k, v in want] and doc["samples"] == len(sub),
          "%r" % doc["functions"][:2])


def check_percent_limit(data, samples):
    total = len(samples)
    for arg, pct in [("sym", "2.5"), ("comm,dso", "10"), ("total", "7.5%"), ("vcpu", "0"),
                     ("dso", "100")]:
        name = "--sort %s --percent-limit %s: rows below it hidden and counted" % (arg, pct)
        want, columns, primary = table(samples, arg)
        p = Fraction(pct.rstrip("%"))
        idx = 0 if primary == "self" else 1
        shown = [(k, v) for k, v in want if v[idx] * 100 >= p * total]
        below = len(want) - len(shown)
        doc = json.loads(run("report", "-i", data, "-j", "--sort", arg, "--limit", "0",
                             "--percent-limit", pct)[0])
        out = run("report", "-i", data, "--sort", arg, "--limit", "0", "--percent-limit", pct)[0]
        footer = re.search(r"^# (\d+) \S+ below ([\d.]+)% of the samples shown not shown", out, re.M)
        ok = json_rows(doc, columns) == shown and doc["below_percent_limit"] == below and \
            len(text_rows(out)) == len(shown) and \
            ((footer and int(footer.group(1)) == below) if below else not footer)
        check(name, ok, "%d rows shown, %d below; expected %d, %d" % (
            len(doc["functions"]), doc["below_percent_limit"], len(shown), below))
    # --limit counts after --percent-limit.
    want, columns, _ = table(samples, "sym")
    shown = [(k, v) for k, v in want if v[0] * 100 >= 1 * total]
    doc = json.loads(run("report", "-i", data, "-j", "--percent-limit", "1", "--limit", "3")[0])
    check("--percent-limit 1 --limit 3: the first three rows above 1%",
          json_rows(doc, columns) == shown[:3], doc["functions"])


def tree(samples, callee, mode="all"):
    """{path tuple: [total, self]} with paths (comm, frame, frame...)."""
    nodes = {(): [0, 0]}
    for s in samples:
        frames = [(f.name, "k" if f.kernel else "u") for f in s.frames(mode)]
        if not callee:
            frames.reverse()
        path = ((s.comm, ""),) + tuple(frames)
        nodes[()][0] += 1
        for i in range(1, len(path) + 1):
            nodes.setdefault(path[:i], [0, 0])[0] += 1
        nodes[path][1] += 1
    return nodes


def tree_lines(nodes, total, min_pct):
    """The call graph's lines and its hidden subtrees, as the man page orders them."""
    lines, hidden = [], 0
    kids = {}
    for path in nodes:
        if path:
            kids.setdefault(path[:-1], []).append(path)

    def walk(path, depth):
        nonlocal hidden
        t, s = nodes[path]
        name, kind = path[-1] if path else ("all", "")
        suffix = {"k": " [k]", "u": " [u]"}.get(kind, "")
        lines.append("%8.2f%% %7.2f%%  %s%s%s" % (100.0 * t / total, 100.0 * s / total,
                                                "  " * depth, name, suffix))
        # Kernel frames (kind 2) before user frames (kind 3) of the same name.
        for k in sorted(kids.get(path, []), key=lambda p: (-nodes[p][0], p[-1][0],
                                                            {"": 1, "k": 2, "u": 3}[p[-1][1]])):
            if nodes[k][0] * 100 < min_pct * total:
                hidden += 1
                continue
            walk(k, depth + 1)
    walk((), 0)
    return lines, hidden


def graph_lines(out):
    body = out.split("#  Total%   Self%  Function\n", 1)[1]
    lines = [l for l in body.splitlines() if not l.startswith("#")]
    m = re.search(r"^# (\d+) subtrees below ([\d.]+)% not shown$", body, re.M)
    return lines, int(m.group(1)) if m else 0


def check_callgraph(data, samples):
    total = len(samples)
    cases = [("caller", ["-g", "caller"], Fraction(0)), ("callee", ["-g", "callee"], Fraction(0)),
             ("caller", ["--callgraph"], Fraction(1, 2)), ("callee", ["--callgraph=callee"], Fraction(1, 2)),
             ("callee", ["-g", "callee", "--percent-limit", "3"], Fraction(3)),
             ("caller", ["-g", "caller", "--percent-limit", "12.5"], Fraction(25, 2))]
    for order, args, pct in cases:
        name = "%s: the %s tree of every sample, %s%% branches hidden" % (
            " ".join(args), order, float(pct))
        want, hidden = tree_lines(tree(samples, order == "callee"), total, pct)
        if "--percent-limit" not in args and pct == 0:
            args = args + ["--percent-limit", "0"]
        out = run("report", "-i", data, *args)[0]
        got, got_hidden = graph_lines(out)
        header = "callees above their callers" if order == "callee" else "callers above callees"
        ok = got == want and got_hidden == hidden and header in out
        check(name, ok, "%d lines (expected %d), %d hidden (expected %d); first difference %r" % (
            len(got), len(want), got_hidden, hidden,
            next(((g, w) for g, w in zip(got, want) if g != w), None)))
    # Both orders count the same stacks: each command's total, and the
    # sum of the self column, agree between them.
    sub = selected(samples, pid=200, mode="kernel")
    want, _ = tree_lines(tree(sub, True, "kernel"), len(sub), Fraction(0))
    got, _ = graph_lines(run("report", "-i", data, "-g", "callee", "--pid", "200", "--kernel",
                             "--percent-limit", "0")[0])
    check("-g callee --pid 200 --kernel: the tree of the filtered frames", got == want,
          next(((g, w) for g, w in zip(got, want) if g != w), (len(got), len(want))))


def window_of(spec, end_ns):
    """The man page's rule: seconds inclusive; percentages of the length,
    rounded to the ns, the end excluded unless it is 100%."""
    length = end_ns - START_NS
    out = []
    if "%" in spec:
        for part in spec.split(","):
            if "/" in part:
                size, n = part.split("%/")
                a, b = Fraction(size) * (int(n) - 1), Fraction(size) * int(n)
            else:
                a, b = (Fraction(x.rstrip("%")) for x in part.split("-"))
            lo = int(length * a / 100 + Fraction(1, 2))
            hi = int(length * b / 100 + Fraction(1, 2))
            if hi > lo and b != 100:
                hi -= 1
            out.append((lo, hi))
    else:
        for part in spec.split():
            a, b = part.split(",")
            out.append((int(Fraction(a) * NS) if a else 0, int(Fraction(b) * NS) if b else 2**64))
    return out


def script_samples(out):
    """script -F comm,pid,tid,vcpu,time --reltime: (comm, pid, tid, vcpu, usec)."""
    got = []
    for line in out.splitlines():
        m = re.match(r"(\S+) (\d+)/(\d+) \[(\d+)\] (\d+)\.(\d{6}):$", line)
        got.append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                    int(m.group(5)) * 10**6 + int(m.group(6))))
    return got


def check_time(data, samples, entries, end_ns):
    total = len(samples)
    specs = ["0.5,1", "1,", ",1", "0,0.000001", "1.2345,1.2345", "0.25,0.5 1,1.2345", "10%-20%",
             "0%-10%,30%-40%", "25%/2", "50%-100%", "33.333333%-66.666667%", "0,", ","]
    for spec in specs:
        name = "--time '%s': the samples in its windows, in report and script" % spec
        window = window_of(spec, end_ns)
        want = selected(samples, window=window)
        doc = json.loads(run("report", "-i", data, "-j", "--time", spec, "--sort", "vcpu")[0])
        out, err = run("script", "-i", data, "--time", spec, "-F", "comm,pid,tid,vcpu,time",
                       "--reltime")
        got = script_samples(out)
        expect = [(s.comm, s.pid, s.tid, s.vcpu, s.rel // 1000) for s in want]
        per_vcpu = {}
        for s in want:
            per_vcpu[s.vcpu] = per_vcpu.get(s.vcpu, 0) + 1
        ok = doc["samples"] == len(want) and got == expect and \
            {r["vcpu"]: r["self"] for r in doc["functions"]} == per_vcpu and \
            doc["filters"]["time"] == spec
        check(name, ok and (len(want) > 0 or "matches no sample" in err),
              "report %d, script %d, expected %d of %d" % (doc["samples"], len(got), len(want),
                                                           total))
    # The windows are the ones asked for, at the edges too: samples were made
    # at exactly 0.5, 1 and 1.2345 s.
    on_edge = [s for s in entries if s.rel in (NS // 2, NS, 1234500000)]
    check("--time: samples exactly on a window's edges are in it (perf's inclusive ends)",
          len(on_edge) == 3 and all(s in selected(entries, window=window_of("0.5,1", end_ns) +
                                                  window_of("1.2345,1.2345", end_ns))
                                    for s in on_edge), len(on_edge))
    out = run("report", "-i", data, "--time", "10%-20%")[0]
    lo, hi = window_of("10%-20%", end_ns)[0]
    check("--time 10%-20%: the header gives the window in seconds",
          "time %d.%09d-%d.%09d s" % (lo // NS, lo % NS, hi // NS, hi % NS) in out,
          re.findall(r"^# filters:.*$", out, re.M))
    out, err = run("report", "-i", data, "--time", "100,200")
    first, last = min(s.rel for s in samples), max(s.rel for s in samples)
    check("--time 100,200: a window without samples warns with the samples' span",
          "Warning: --time 100,200 (100.000000000-200.000000000 s from the recording's start)"
          " matches no sample; its samples are from %d.%09d to %d.%09d s" % (
              first // NS, first % NS, last // NS, last % NS) in err, err)
    check("--time: samples queued before the start count as at 0 s",
          any(s.time < START_NS for s in samples) and
          len(selected(samples, window=[(0, 0)])) ==
          json.loads(run("report", "-i", data, "-j", "--time", "0,0")[0])["samples"])


def check_per_vcpu(data, samples, entries, losses, end_ns):
    for args, vcpu, spec in [([], None, None), (["--comm", "web"], None, None),
                             (["--vcpu", "1"], 1, None), (["--time", "25%-75%"], None, "25%-75%")]:
        name = "--per-vcpu %s: samples shown, callchains and losses per vCPU" % " ".join(args)
        window = window_of(spec, end_ns) if spec else None
        shown = selected(samples, vcpu=vcpu, comm="web" if "--comm" in args else None,
                         window=window)
        recorded = selected(entries, vcpu=vcpu, window=window)
        rows = {}
        for v in ([vcpu] if vcpu is not None else range(4)):
            rows[v] = [0, 0, {}]
        for s in shown:
            rows[s.vcpu][0] += 1
        for s in recorded:
            rows[s.vcpu][1] += 1
        for t, v, reason, count in losses:
            if (vcpu is not None and v not in (vcpu, 0xffffffff)) or \
               (window and not any(a <= max(0, t - START_NS) <= b for a, b in window)):
                continue
            r = rows.setdefault(v, [0, 0, {}])
            r[2][reason] = r[2].get(reason, 0) + count
        want = []
        for v in sorted(rows):
            n, cc, lost = rows[v]
            by = ", ".join("%s %d" % (LOSS_NAMES[i], lost[i]) for i in sorted(lost))
            if v == 0xffffffff:
                line = "%7s %9s %8s" % ("none", "-", "-")
            else:
                line = "%7u %9d %7.2f%%" % (v, n, 100.0 * n / len(shown) if shown else 0)
            line += " %11d %9d" % (cc, sum(lost.values()))
            want.append(line + ("  " + by if by else ""))
        out = run("report", "-i", data, "--per-vcpu", *args)[0]
        got = out.split("#  vCPU   Samples   Share%  Callchains    Losses  Losses by reason\n")[1]
        check(name, got.splitlines() == want, "got %r, expected %r" % (got.splitlines()[:3],
                                                                       want[:3]))


def script_text(samples, fields, mode="all", reltime=False):
    """perf script's text of the samples with these fields, as the man page says."""
    out = []
    for s in samples:
        head = []
        if "comm" in fields:
            head.append(s.comm)
        if "pid" in fields and "tid" in fields:
            head.append("%d/%d" % (s.pid, s.tid))
        elif "pid" in fields or "tid" in fields:
            head.append(str(s.pid if "pid" in fields else s.tid))
        if "vcpu" in fields:
            head.append("[%03d]" % s.vcpu)
        if "time" in fields:
            t = s.rel if reltime else s.time
            head.append("%d.%06d:" % (t // NS, t % NS // 1000))
        if "period" in fields:
            head.append(str(PERIOD))
        if "event" in fields:
            head.append("cpu-clock:")
        if head:
            out.append(" ".join(head))
        if "ip" not in fields:
            continue
        for f in s.frames(mode):
            line = "\t%16x" % f.addr
            if "sym" in fields:
                if f is OWN_NMI:
                    line += " " + f.name
                elif f.symoff is not None:
                    line += " " + f.name + ("+%#x" % f.symoff if "symoff" in fields else "")
                else:
                    line += " [unknown]"
            if "dso" in fields:
                line += " (%s)" % (f.dso or "[unknown]")
            out.append(line)
        out.append("")
    return "".join(l + "\n" for l in out)


def check_script(data, samples, end_ns):
    every = ["comm", "pid", "tid", "vcpu", "time", "period", "event", "ip", "sym", "symoff", "dso"]
    cases = [
        ([], every, {}),
        (["-F", "comm,tid,time"], ["comm", "tid", "time"], {}),
        (["-F", "pid,cpu,event,ip,sym,dso"], ["pid", "vcpu", "event", "ip", "sym", "dso"], {}),
        (["-F", "ip"], ["ip"], {}),
        (["-F", "comm,pid,tid,ip,sym,symoff"], ["comm", "pid", "tid", "ip", "sym", "symoff"], {}),
        (["-F", "-dso,-period"], [f for f in every if f not in ("dso", "period")], {}),
        (["-F", "+time,-symoff"], [f for f in every if f != "symoff"], {}),
        (["-F", "time,vcpu", "--reltime"], ["time", "vcpu"], {"reltime": True}),
        (["--vcpu", "3"], every, {"vcpu": 3}),
        (["--pid", "101", "-F", "comm,tid,ip,sym"], ["comm", "tid", "ip", "sym"], {"pid": 101}),
        (["--comm", "db", "--kernel"], every, {"comm": "db", "mode": "kernel"}),
        (["--user", "--time", "0.5,1"], every, {"mode": "user", "time": "0.5,1"}),
        (["--comm", ":400"], every, {"comm": ":400"}),
    ]
    for args, fields, f in cases:
        name = "script %s: every sample's fields, from the description" % " ".join(args)
        window = window_of(f["time"], end_ns) if "time" in f else None
        mode = f.get("mode", "all")
        want = script_text(selected(samples, vcpu=f.get("vcpu"), pid=f.get("pid"),
                                    comm=f.get("comm"), mode=mode, window=window),
                           fields, mode, f.get("reltime", False))
        out = run("script", "-i", data, *args)[0]
        diff = next((i for i, (a, b) in enumerate(zip(out.splitlines(), want.splitlines()))
                     if a != b), None)
        check(name, out == want, "%d lines, expected %d; line %r: %r, expected %r" % (
            len(out.splitlines()), len(want.splitlines()), diff,
            out.splitlines()[diff] if diff is not None else "",
            want.splitlines()[diff] if diff is not None else ""))
    # report and script count the same samples under the same filters.
    for args in (["--vcpu", "0", "--comm", "web"], ["--pid", "0", "--user"],
                 ["--time", "10%-30%", "--kernel"]):
        doc = json.loads(run("report", "-i", data, "-j", *args)[0])
        out, err = run("script", "-i", data, "-F", "comm", *args)
        check("report and script %s: the same samples" % " ".join(args),
              doc["samples"] == len(out.splitlines()) and
              (doc["samples"] or "matches no sample" in err or "leaves no sample" in err),
              "report %d, script %d" % (doc["samples"], len(out.splitlines())))


def main():
    rnd = random.Random(24)
    desc, entries, losses, end_ns = describe(rnd)
    samples = expand(entries)
    data = write("perfopts", desc)
    run_checks(((check_sort, (data, samples)), (check_percent_limit, (data, samples)),
                (check_callgraph, (data, samples)),
                (check_time, (data, samples, entries, end_ns)),
                (check_per_vcpu, (data, samples, entries, losses, end_ns)),
                (check_script, (data, samples, end_ns))))


if __name__ == "__main__":
    main()
