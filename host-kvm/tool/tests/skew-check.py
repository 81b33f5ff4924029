#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Skewed callchains by how far the stack moved, against a recording whose
every callchain entry, notice IP and symbol this script made up.

usage: skew-check.py KVM_PVPROF PERFOPTS_GEN TMPDIR

A callchain the guest flagged PVPROF_CHAIN_F_SKEWED was taken after the
vCPU had left the instruction the host sampled (the notice's IP, the
stream's notice_ip and notice_cpl).  report counts those whose first frame
(the IP the guest's NMI interrupted) and notice_ip resolve to one symbol as
"within the same function" (doc/kvm-pvprof-report.8, HEADER).  The cases
below pair the two IPs: in one kernel function or two, in one user
function or two (of the sample's process), in no symbol, in a symbol of
the same name at another address, in the other mode; with and without
pvprof's own NMI mark (never counted), folded samples, no frames, and a
chain the guest did not flag.  What each case should count as is worked
out here from the symbols the recording publishes (this file's own
model of the symbol tables), and checked against report's header and
JSON, case by case and all together, under every filter and view, and for
a version 1 recording (no marks: every flagged chain counts).  Prints
PASS/FAIL lines.
"""
import json
import sys

import checklib
from checklib import header_line

BIN, GEN, TMP = sys.argv[1:4]
checks = checklib.Checks(why_len=700)
check = checks.check


def run(*args, ok_rc=0):
    return checklib.run(BIN, *args, ok_rc=ok_rc)


def write(name, desc):
    return checklib.write_in(GEN, TMP, name, desc)


NS = 10**9
MS = 10**6
START_NS = 9000 * NS
LENGTH = 100 * MS
STEXT = 0xffffffff81000000
# Kernel symbols, without sizes: each ends where the next begins.  Nothing
# below the first; k_dup twice, at two addresses.
KSYMS = [(0x1000, "k_entry"), (0x2000, "k_write"), (0x3000, "asm_sysvec_apic_timer_interrupt"),
         (0x4000, "native_write_msr"), (0x5000, "k_dup"), (0x6000, "k_dup"),
         (0x7000, "k_last")]
ETEXT = STEXT + 0x8000
KERNEL_DSO = "[kernel.kallsyms]"
EXE = {"web": 0x555555554000, "db": 0x555555600000}
EXE_LEN = 0x10000
PID = {"web": 100, "db": 200}
BID = {"web": 0xb1, "db": 0xb2}
# ELF symbols (offset in the image, size, name); web has a gap at 0x280.
USYMS = {"web": [(0x100, 0x80, "main"), (0x200, 0x80, "serve"), (0x300, 0x80, "work")],
         "db": [(0x100, 0x80, "main"), (0x200, 0x80, "query")]}
F_USER, F_SKEWED = 1, 4

def k(name, off, nth=0):
    """The address @off bytes into the @nth kernel symbol called @name."""
    return STEXT + [a for a, n in KSYMS if n == name][nth] + off


def u(comm, name, off):
    return EXE[comm] + [a for a, _, n in USYMS[comm] if n == name][0] + off


# ------------------------------------------------------------------
# The model of the symbol tables: what an address resolves to
# ------------------------------------------------------------------

def symbol(addr, kernel, comm):
    """(name, dso, start) of the symbol @addr lies in, None outside every one."""
    if kernel:
        starts = [(STEXT + a, n) for a, n in KSYMS] + [(ETEXT, None)]
        for (start, name), (end, _) in zip(starts, starts[1:]):
            if start <= addr < end:
                return (name, KERNEL_DSO, start)
        return None
    base = EXE[comm]
    for off, size, name in USYMS[comm]:
        if base + off <= addr < base + off + size:
            return (name, "/usr/bin/" + comm, base + off)
    return None


# ------------------------------------------------------------------
# The recording, described
# ------------------------------------------------------------------

class Entry:
    """One callchain entry: what it counts as (case), its frames (kernel then
    user, innermost first), its flags, the notice's IP and CPL, the host's
    marks."""

    def __init__(self, case, comm, kernel, user, notice, cpl, flags=F_SKEWED, own=False,
                 folded=0, vcpu=0):
        self.case, self.comm, self.pid = case, comm, PID[comm]
        self.kernel, self.user = kernel, user
        self.flags = flags | (F_USER if user and not kernel else 0)
        self.notice, self.cpl = notice, cpl
        self.own, self.folded, self.vcpu = own, folded, vcpu

    def same_function(self):
        """The model's answer: the first frame and the notice IP in one symbol."""
        if not self.kernel and not self.user:
            return False
        kernel = bool(self.kernel)
        first = (self.kernel or self.user)[0]
        if self.cpl != (0 if kernel else 3):
            return False
        a, b = symbol(first, kernel, self.comm), symbol(self.notice, kernel, self.comm)
        return a is not None and a == b

    def counted(self):
        """What the header counts it as: None (not skewed), "same" or "other"."""
        if not self.flags & F_SKEWED or self.own:
            return None
        return "same" if self.same_function() else "other"


WEB_USER = [u("web", "work", 0x10), u("web", "serve", 0x8), u("web", "main", 0x8)]
WRITE_PATH = [k("k_write", 0x10), k("k_entry", 0x10)]

# The construction: (what it should count as, the entry).  The first is
# checked against the model, so that a case that does not test what it
# says fails here, not silently.
CASES = [
    # Not flagged: the first frame is the notice's (fills the frame cache
    # with native_write_msr+0x6 before the skewed chains ask for it).
    (None, Entry("unflagged, the notice's IP its first frame", "web",
                 [k("native_write_msr", 0x6)] + WRITE_PATH, WEB_USER,
                 k("native_write_msr", 0x6), 0, flags=0)),
    # Not flagged although the IPs differ within a function: the guest's
    # flag decides what is skewed, not report.
    (None, Entry("unflagged, the IPs apart in one function", "web",
                 [k("native_write_msr", 0x6)] + WRITE_PATH, WEB_USER,
                 k("native_write_msr", 0x2), 0, flags=0)),
    ("same", Entry("kernel: the wrmsr emulated, the NMI at the next instruction", "web",
                   [k("native_write_msr", 0x6)] + WRITE_PATH, WEB_USER,
                   k("native_write_msr", 0x2), 0, vcpu=1)),
    ("same", Entry("kernel: the same again (answers from the frame cache)", "web",
                   [k("native_write_msr", 0x6)] + WRITE_PATH, WEB_USER,
                   k("native_write_msr", 0x2), 0)),
    ("other", Entry("kernel: an interrupt taken at its entry before the NMI", "web",
                    [k("asm_sysvec_apic_timer_interrupt", 0), k("native_write_msr", 0x6)]
                    + WRITE_PATH, WEB_USER, k("native_write_msr", 0x2), 0)),
    ("other", Entry("kernel: a return into the caller", "web", WRITE_PATH, WEB_USER,
                    k("native_write_msr", 0x20), 0)),
    ("other", Entry("kernel: both IPs below the first symbol (no function)", "web",
                    [STEXT + 0x20] + WRITE_PATH, WEB_USER, STEXT + 0x10, 0)),
    ("other", Entry("kernel: the first frame in no symbol, the notice's in one", "web",
                    [STEXT + 0x20] + WRITE_PATH, WEB_USER, k("k_entry", 0x4), 0)),
    ("other", Entry("kernel: two symbols of one name at two addresses", "web",
                    [k("k_dup", 0x4, 1)] + WRITE_PATH, WEB_USER, k("k_dup", 0x4, 0), 0)),
    ("same", Entry("kernel: one symbol of a name given twice", "web",
                   [k("k_dup", 0x8, 1)] + WRITE_PATH, WEB_USER, k("k_dup", 0x4, 1), 0)),
    ("same", Entry("user: within work", "web", [], WEB_USER, u("web", "work", 0x4), 3, vcpu=1)),
    ("other", Entry("user: from work back into serve", "web", [], WEB_USER[1:],
                    u("web", "work", 0x20), 3)),
    ("other", Entry("user: both IPs in the image's gap between symbols", "web", [],
                    [EXE["web"] + 0x290] + WEB_USER[1:], EXE["web"] + 0x288, 3)),
    ("other", Entry("user: the notice's IP in no mapping", "web", [], WEB_USER, 0x1000, 3)),
    ("same", Entry("user: within query, of the sample's process (db)", "db", [],
                   [u("db", "query", 0x10), u("db", "main", 0x8)], u("db", "query", 0x2), 3)),
    ("other", Entry("user: the notice's IP is work's in web, not mapped in db", "db", [],
                    [u("db", "query", 0x10), u("db", "main", 0x8)], u("web", "work", 0x10), 3)),
    ("other", Entry("modes: sampled in user mode, an interrupt's kernel stack", "web",
                    [k("asm_sysvec_apic_timer_interrupt", 0)], WEB_USER,
                    u("web", "work", 0x4), 3)),
    ("other", Entry("modes: the notice's CPL 3 names a user address, not the kernel's", "web",
                    [k("native_write_msr", 0x6)] + WRITE_PATH, WEB_USER,
                    k("native_write_msr", 0x2), 3)),
    ("other", Entry("modes: the notice's CPL 0 names a kernel address, not work's", "web", [],
                    WEB_USER, u("web", "work", 0x4), 0)),
    ("other", Entry("no frames", "web", [], [], k("native_write_msr", 0x2), 0)),
    ("same", Entry("four samples folded into it: one callchain", "db", [],
                   [u("db", "query", 0x10), u("db", "main", 0x8)], u("db", "query", 0x2), 3,
                   folded=4, vcpu=1)),
    # Marked as taken inside pvprof's own NMI path: never counted.
    (None, Entry("marked own NMI, within one function", "web",
                 [k("native_write_msr", 0x6)] + WRITE_PATH, WEB_USER,
                 k("native_write_msr", 0x2), 0, own=True)),
    (None, Entry("marked own NMI, in another function", "web", [], WEB_USER[1:],
                 u("web", "work", 0x20), 3, own=True, folded=2)),
]
ENTRIES = [e for _, e in CASES]


def describe(entries, version=None, marks=True):
    lines = ["host %d" % START_NS]
    if version:
        lines.append("version %d" % version)
    lines.append("vcpus 2")
    lines.append("kernel %d %d %d" % (STEXT, ETEXT, len(KSYMS)))
    lines += ["ksym %d %s" % (STEXT + a, n) for a, n in KSYMS]
    for comm in ("web", "db"):
        lines.append("process %d %s" % (PID[comm], comm))
        lines.append("mmap %d %d %d %d /usr/bin/%s" % (PID[comm], EXE[comm], EXE_LEN, BID[comm],
                                                       comm))
    for comm in ("web", "db"):
        lines += ["elfsym %d %d %d %s" % (BID[comm], off, size, name)
                  for off, size, name in USYMS[comm]]
    for i, e in enumerate(entries):
        if marks and (e.own or e.folded):
            lines.append("nmi %d %d" % (int(e.own), e.folded))
        lines.append("notice %d %d" % (e.notice, e.cpl))
        frames = e.kernel + e.user
        lines.append("sample %d %d %d %d %d %d %d %s" % (
            START_NS + (i + 1) * MS, e.vcpu, e.pid, e.pid, e.flags, len(e.kernel), len(e.user),
            " ".join(str(a) for a in frames)))
    lines.append("end %d" % (START_NS + LENGTH))
    return "\n".join(lines) + "\n"


def skew_line(skewed, same):
    return ("skewed: %d (stacks taken after the sampled instruction had moved on; "
            "%d within the same function)" % (skewed, same))


def counts(entries, marks=True):
    """(skewed, same function) as the header should count them."""
    got = [e.counted() if marks else
           ("same" if e.same_function() else "other") if e.flags & F_SKEWED else None
           for e in entries]
    return got.count("same") + got.count("other"), got.count("same")


def report_counts(data, *opts):
    doc = json.loads(run("report", "-i", data, "-j", *opts)[0])
    return doc["skewed"], doc["skewed_same_function"]


# ------------------------------------------------------------------
# Checks
# ------------------------------------------------------------------

def check_construction():
    bad = [(want, e.case, e.counted()) for want, e in CASES if e.counted() != want]
    check("construction: each case counts, by the model of the symbol tables, as it says",
          not bad, bad)
    check("construction: a model of one symbol ends where the next begins",
          symbol(k("k_dup", 0xfff), True, "web") == ("k_dup", KERNEL_DSO, k("k_dup", 0))
          and symbol(k("k_dup", 0, 1), True, "web") != symbol(k("k_dup", 0), True, "web")
          and symbol(STEXT + 0x10, True, "web") is None, "")


def check_each_case():
    for i, (want, e) in enumerate(CASES):
        data = write("case%d" % i, describe([e]))
        skewed, same = counts([e])
        got = report_counts(data)
        check("case %d, %s: %s" % (i, e.case, {None: "not counted", "same": "same function",
                                               "other": "another function"}[want]),
              got == (skewed, same), "skewed %d, same function %d; built %d, %d" %
              (got + (skewed, same)))


def check_all(data):
    skewed, same = counts(ENTRIES)
    want = skew_line(skewed, same)
    text = run("report", "-i", data)[0]
    check("header: %s" % want, header_line(text, "skewed:") == want,
          "%r" % header_line(text, "skewed:"))
    check("JSON: skewed %d, skewed_same_function %d" % (skewed, same),
          report_counts(data) == (skewed, same), report_counts(data))
    long = [l for l in text.splitlines() if l.startswith("#") and len(l) > 100]
    check("header: every line within 100 columns", not long, long)
    # Counts of callchains, as skewed is: the same whatever the filters.
    for opts in (["--vcpu", "1"], ["--pid", "200"], ["--comm", "db"], ["--kernel"], ["--user"],
                 ["--time", "0.005,0.010"]):
        check("filters %s: the same counts" % " ".join(opts),
              report_counts(data, *opts) == (skewed, same), report_counts(data, *opts))
    for view in (["--callgraph"], ["--per-vcpu"]):
        out = run("report", "-i", data, *view)[0]
        check("%s: the same header line" % view[0], header_line(out, "skewed:") == want,
              header_line(out, "skewed:"))
    out, err = run("report", "-i", data, "--folded")
    check("--folded: the same header line, on stderr",
          header_line(err, "skewed:") == want and "skewed:" not in out, header_line(err, "skewed:"))


def check_version1():
    """Stream version 1 has no marks: every flagged chain counts, by its IPs."""
    data = write("v1", describe(ENTRIES, version=1, marks=False))
    skewed, same = counts(ENTRIES, marks=False)
    check("version 1: every flagged chain counted, %d of %d within the same function"
          % (same, skewed), report_counts(data) == (skewed, same), report_counts(data))
    check("version 1: more counted than with the marks (the construction)",
          (skewed, same) != counts(ENTRIES), (skewed, same))


def main():
    checks.run_each(((check_construction, ()), (check_each_case, ()),
                     (check_all, (write("all", describe(ENTRIES)),)), (check_version1, ())))
    checks.finish()


if __name__ == "__main__":
    main()
