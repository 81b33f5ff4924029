#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn make bench's raw per-run data (OUT/runs, written in L1 by in-l1.sh)
into OUT/result.json and OUT/table.txt. Definitions are in README.md."""

import argparse
import json
import math
import os
import random
import re
import statistics
import sys

CONDITIONS = ("none", "ip_only", "pvprof", "pvprof_dwarf")
SAMPLERS = ("ip_only", "pvprof", "pvprof_dwarf")
STALL_FACTOR = 3
# include/uapi/linux/perf_event.h: a sample that interrupted a KVM guest
# carries a guest cpumode.
PERF_RECORD_MISC_CPUMODE_MASK = 7
GUEST_CPUMODES = (4, 5)     # PERF_RECORD_MISC_GUEST_KERNEL, _GUEST_USER
EXIT_COUNTERS = ("exits", "irq_exits", "nmi_window_exits", "io_exits",
                 "halt_exits", "nmi_injections", "irq_window_exits")
# Every exit is of one of these kinds: the named counters, and the rest
# (MSR writes re-arming L2's timer, single steps, nested page faults, ...).
NAMED_EXIT_KINDS = ("nmi_window_exits", "irq_window_exits", "io_exits", "halt_exits", "irq_exits")
EXIT_KINDS = NAMED_EXIT_KINDS + ("other_exits",)
# Exits that come a fixed number of times per run whatever its length (the
# console line, the workload's start and exit): 106-109 I/O exits in every
# window of session 20, from 11.6 s to 43.6 s. The other kinds come with
# the run's time (L2's timer) and scale with a longer run.
PER_RUN_EXIT_KINDS = ("io_exits", "halt_exits")
# Issue #26: pvprof's exits beyond the platform's floor, per sample, at most.
BEYOND_FLOOR_TARGET = 0.15


def fail(msg):
    sys.exit("summarize.py: " + msg)


def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")


def read_counters(path):
    counters = {}
    for line in read_text(path).splitlines():
        name, value = line.split()
        counters[name] = int(value)
    return counters


def read_json(path):
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        fail(f"{path} is not JSON: {e}")


def report_counts(path):
    """The callchain, skewed and sample counts of a kvm-pvprof report's header
    ("# stream entries: N (...), callchains: N", "# skewed: N (...; M within
    the same function)", "# samples shown: N, ...") and its samples of
    pvprof's own NMI path ("# pvprof overhead: N samples ...", only when
    there are some). skewed_same_function is None in the report of a
    kvm-pvprof that did not count it, and in one without symbols."""
    text = read_text(path)
    counts = {}
    for m in re.finditer(r"^# .*?\b(skewed|callchains|samples shown): (\d+)", text, re.M):
        counts.setdefault(m.group(1), int(m.group(2)))
    for key in ("skewed", "callchains"):
        if key not in counts:
            fail(f"{path}: no '{key}: N' in the report header")
    m = re.search(r"^# pvprof overhead: (\d+) samples", text, re.M)
    counts["own_nmi"] = int(m.group(1)) if m else 0
    # A header line too long goes on in a line starting "#   ".
    m = re.search(r"^# skewed: \d+ \([^)]*?; (\d+) within the same function\)",
                  text.replace("\n#   ", " "), re.M)
    counts["skewed_same_function"] = int(m.group(1)) if m else None
    # Without symbols (no guest agent) no two addresses share a function:
    # the split would call every skewed stack "another function".
    m = re.search(r"^# samples shown: \d+, frames: (\d+), unsymbolized frames: (\d+)", text, re.M)
    if m and int(m.group(1)) > 0 and m.group(1) == m.group(2):
        counts["skewed_same_function"] = None
    return counts


def perf_cpumodes(path):
    """Samples by cpumode (the low bits of the record's misc field) from
    "uniq -c" of the misc values perf report -D prints."""
    by_mode = {}
    for line in read_text(path).splitlines():
        count, misc = line.split()
        mode = int(misc, 16) & PERF_RECORD_MISC_CPUMODE_MASK
        by_mode[mode] = by_mode.get(mode, 0) + int(count)
    return by_mode


def load_run(runs, cond, rep):
    name = f"{cond}-{rep}"
    bench = read_text(os.path.join(runs, name + ".bench")).split()
    if len(bench) < 3 or bench[:2] != ["BENCH", "elapsed_ns"]:
        fail(f"{name}.bench has no BENCH line")
    before = read_counters(os.path.join(runs, name + ".exits-before"))
    after = read_counters(os.path.join(runs, name + ".exits-after"))
    run = {
        "condition": cond,
        "rep": rep,
        "seconds": int(bench[2]) / 1e9,
        "exits": {c: after[c] - before[c] for c in EXIT_COUNTERS},
        "samples": 0,
    }
    run["exit_kinds"] = exit_kinds(run["exits"])
    if cond == "ip_only":
        stats = read_text(os.path.join(runs, name + ".perf-stats"))
        m = re.search(r"^\s*SAMPLE events:\s+(\d+)", stats, re.M)
        if not m:
            fail(f"{name}.perf-stats has no 'SAMPLE events' line")
        run["samples_all"] = int(m.group(1))
        by_mode = perf_cpumodes(os.path.join(runs, name + ".perf-cpumode"))
        if sum(by_mode.values()) != run["samples_all"]:
            fail(f"{name}: {sum(by_mode.values())} samples in perf report -D, "
                 f"{run['samples_all']} in perf report --stats")
        run["samples"] = sum(n for mode, n in by_mode.items() if mode in GUEST_CPUMODES)
        lost = re.search(r"^\s*LOST_SAMPLES events:\s+(\d+)", stats, re.M)
        run["perf_lost_events"] = int(lost.group(1)) if lost else 0
    elif cond in ("pvprof", "pvprof_dwarf"):
        run["data_bytes"] = int(read_text(os.path.join(runs, name + ".data-bytes")))
        run["report_ns"] = int(read_text(os.path.join(runs, name + ".report-ns")))
        sb = read_json(os.path.join(runs, name + ".status-before.json"))
        sa = read_json(os.path.join(runs, name + ".status-after.json"))
        tb, ta = sb["totals"], sa["totals"]
        run["samples"] = ta["samples"] - tb["samples"]
        run["notices"] = ta["notices"] - tb["notices"]
        # status -j's "records" are the callchains the host accepted.
        run["callchains"] = ta["records"] - tb["records"]
        run["nmis"] = ta["nmis"] - tb["nmis"]
        run["losses"] = {k: sa["losses"][k] - sb["losses"].get(k, 0) for k in sa["losses"]}
        run["report"] = report_counts(os.path.join(runs, name + ".report.txt"))
    return run


# function_graph lines: "CPU) [mark] DURATION us | name();" for a call
# that returned before anything else was traced, "CPU) | name() {" and
# "CPU) [mark] DURATION us | } /* name */" (funcgraph-tail) around one
# that did not. The mark flags long durations; a module's function carries
# " [module]".
TRACE_LEAF = re.compile(r"^\s*\d+\)\s*(?:[-+!#*@$]\s*)?([0-9.]+) us\s*\|\s*(\w+)(?: \[\w+\])?\(\);")
TRACE_OPEN = re.compile(r"^\s*\d+\)\s*\|\s*(\w+)(?: \[\w+\])?\(\) \{")
TRACE_CLOSE = re.compile(r"^\s*\d+\)\s*(?:[-+!#*@$]\s*)?([0-9.]+) us\s*\|\s*\} /\* (\w+)(?: \[\w+\])? \*/")


def host_cost(runs_dir):
    """pvprof's time in KVM per sample, from the host-cost window's trace of
    its hooks. A hook traced inside another (the overflow handler's hardirq
    inside a hook that runs with interrupts on) counts for itself but not
    again in the total."""
    name = "host-cost"
    sb = read_json(os.path.join(runs_dir, name + ".status-before.json"))
    sa = read_json(os.path.join(runs_dir, name + ".status-after.json"))
    samples = sa["totals"]["samples"] - sb["totals"]["samples"]
    overrun = int(read_text(os.path.join(runs_dir, name + ".overrun")).strip())
    hooks, depth, total_ns = {}, 0, 0.0
    for line in read_text(os.path.join(runs_dir, name + ".trace")).splitlines():
        if TRACE_OPEN.match(line):
            depth += 1
            continue
        m = TRACE_LEAF.match(line) or TRACE_CLOSE.match(line)
        if not m:
            continue
        if TRACE_CLOSE.match(line):
            depth = max(depth - 1, 0)
        ns = float(m.group(1)) * 1000
        hooks.setdefault(m.group(2), []).append(ns)
        if depth == 0:
            total_ns += ns
    if not hooks:
        fail(f"{name}.trace has no traced hook")
    return {
        "samples": samples,
        "ns_per_sample": rnd(total_ns / samples, 0) if samples else None,
        "hooks": {h: {"calls": len(v), "median_ns": rnd(statistics.median(v), 0),
                      "calls_per_sample": rnd(len(v) / samples, 3) if samples else None,
                      "ns_per_sample": rnd(sum(v) / samples, 0) if samples else None}
                  for h, v in sorted(hooks.items())},
        "trace_overrun": overrun,
        "method": "function_graph tracer on pvprof's hooks in KVM, in one untimed "
                  "pvprof window; each duration includes the tracer's own entry and exit",
    }


def overhead_ratio(runs):
    """overhead(c) / overhead(b) over the given runs; None when (b) added
    no time (the ratio is then unbounded)."""
    mean = {c: statistics.mean(r["seconds"] for r in runs[c]) for c in CONDITIONS}
    ov_b = mean["ip_only"] / mean["none"] - 1
    ov_c = mean["pvprof"] / mean["none"] - 1
    return ov_c / ov_b if ov_b > 0 else None


def exit_kinds(counters):
    """A window's exits by kind; other_exits is what the named kinds leave."""
    kinds = {k: counters[k] for k in NAMED_EXIT_KINDS}
    kinds["other_exits"] = counters["exits"] - sum(kinds.values())
    return kinds


def average(values):
    """The mean in floating point: statistics.mean's exact fractions are
    too slow for a statistic evaluated in every bootstrap draw."""
    values = list(values)
    return math.fsum(values) / len(values)


def exits_beyond_floor(runs, sampler, reference="ip_only"):
    """The exits per sample that `sampler` causes itself: its added exits
    per sample less `reference`'s, less the platform's floor, less the
    exits its longer runs take at the unsampled rate beyond those of
    `reference`'s, by kind (README.md, "Exits beyond the platform's
    floor"). None when either condition took no sample."""
    seconds_none = average(r["seconds"] for r in runs["none"])
    kinds_none = {k: average(r["exit_kinds"][k] for r in runs["none"])
                  for k in EXIT_KINDS}
    # The unsampled exit rate, by kind: what one more second of a run
    # brings without a sampler.
    rate = {k: 0.0 if k in PER_RUN_EXIT_KINDS else kinds_none[k] / seconds_none
            for k in EXIT_KINDS}

    def per_sample(cond):
        """cond's added exits per sample and the part of them its longer
        run takes at the unsampled rate, by kind."""
        rs = runs[cond]
        samples = average(r["samples"] for r in rs)
        if not samples:
            return None
        longer_s = average(r["seconds"] for r in rs) - seconds_none
        return {"samples": samples,
                "added": {k: (average(r["exit_kinds"][k] for r in rs)
                              - kinds_none[k]) / samples for k in EXIT_KINDS},
                "longer_run": {k: rate[k] * longer_s / samples for k in EXIT_KINDS}}

    own, ref = per_sample(sampler), per_sample(reference)
    if own is None or ref is None:
        return None
    # The floor: every NMI KVM injects costs one IRET intercept. Both
    # factors count KVM's injections (re-injections of an NMI whose entry
    # was cut short included), so their product is the NMI-window exits
    # the injections brought, per sample.
    rs = runs[sampler]
    injections = sum(r["exits"]["nmi_injections"] for r in rs)
    window_per_injection = (sum(r["exits"]["nmi_window_exits"] for r in rs) / injections
                            if injections else 0.0)
    injections_per_sample = (average(r["exits"]["nmi_injections"] for r in rs)
                             - average(r["exits"]["nmi_injections"] for r in runs["none"])
                             ) / own["samples"]
    floor = window_per_injection * injections_per_sample
    by_kind = {k: own["added"][k] - own["longer_run"][k] - (ref["added"][k] - ref["longer_run"][k])
               - (floor if k == "nmi_window_exits" else 0.0) for k in EXIT_KINDS}
    added = sum(own["added"].values()) - sum(ref["added"].values())
    longer_run = sum(own["longer_run"].values()) - sum(ref["longer_run"].values())
    return {
        "floor": floor,
        "nmi_window_exits_per_nmi_injection": window_per_injection,
        "nmi_injections_per_sample": injections_per_sample,
        "unsampled_exits_per_second": sum(rate.values()),
        "added_over_reference": added,
        "longer_run_over_reference": longer_run,
        "beyond_floor": sum(by_kind.values()),
        "beyond_floor_by_kind": by_kind,
    }


def bootstrap_draws(runs, reps, draws=4000):
    """Resamplings of the repetitions for a percentile bootstrap. The unit
    drawn is the repetition, all its conditions together: they ran back to
    back, so the machine's speed at the time is shared between them, and
    the draws keep that pairing. A draw that lacks a condition (its runs
    were all left out as stalls) is redrawn; a seeded generator makes every
    interval repeatable."""
    by_rep = {rep: {c: [r for r in runs[c] if r["rep"] == rep] for c in CONDITIONS}
              for rep in range(1, reps + 1)}
    gen = random.Random(0)
    resamples = []
    while len(resamples) < draws:
        drawn = {c: [] for c in CONDITIONS}
        for _ in range(reps):
            for c, rs in by_rep[gen.randint(1, reps)].items():
                drawn[c] += rs
        if any(not rs for rs in drawn.values()):
            continue
        resamples.append(drawn)
    return resamples


def bootstrap_interval(values, target=None, level=0.90):
    """The central `level` share of a statistic's values over the
    resamples, and the share of them at or under `target` if there is one.
    A value that is None (unbounded: a denominator of zero) counts as
    infinite; `high` is None when such values reach the upper percentile."""
    values = sorted(float("inf") if v is None else v for v in values)
    tail = (1 - level) / 2
    lo, hi = values[int(tail * len(values))], values[int((1 - tail) * len(values)) - 1]
    ci = {"level": level, "low": rnd(lo), "high": None if hi == float("inf") else rnd(hi),
          "draws": len(values)}
    if target is not None:
        ci["share_at_or_under_" + str(target).replace(".", "_")] = \
            rnd(sum(v <= target for v in values) / len(values))
    return ci


def overhead_ratio_interval(resamples):
    """A percentile bootstrap interval for overhead_ratio."""
    return bootstrap_interval([overhead_ratio(drawn) for drawn in resamples], 2.5)


def exits_beyond_floor_figures(runs, resamples, sampler):
    """exits_beyond_floor() for the runs, rounded, with bootstrap intervals
    for the floor and what is beyond it; None without samples."""
    fig = exits_beyond_floor(runs, sampler)
    if fig is None:
        return None
    drawn = [exits_beyond_floor(d, sampler) for d in resamples]
    # + 0.0: a kind that rounds to zero from below reads 0.0, not -0.0.
    out = {k: rnd(v, 1 if k == "unsampled_exits_per_second" else 4) + 0.0
           for k, v in fig.items() if k != "beyond_floor_by_kind"}
    out["beyond_floor_by_kind"] = {k: rnd(v) + 0.0 for k, v in fig["beyond_floor_by_kind"].items()}
    out["floor_interval"] = bootstrap_interval([d and d["floor"] for d in drawn])
    out["beyond_floor_interval"] = bootstrap_interval([d and d["beyond_floor"] for d in drawn],
                                                      BEYOND_FLOOR_TARGET)
    return out


def spread(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}


def rnd(x, digits=4):
    return None if x is None else round(x, digits)


def call_graph_costs(rs, per_cond):
    chains = sum(r["report"]["callchains"] for r in rs)
    return {
        "slowdown": rnd(per_cond["slowdown"]),
        "us_guest_per_sample": rnd(per_cond["us_per_sample"], 1),
        "stream_bytes_per_sample": rnd(sum(r["data_bytes"] for r in rs) / chains, 1) if chains else None,
        "report_us_per_sample": rnd(sum(r["report_ns"] for r in rs) / 1e3 / chains, 2) if chains else None,
    }


def beyond_floor_table(beyond):
    """The table's block on exits beyond the floor: how the figure comes
    from the added exits, and which kinds of exit it is made of."""
    cols = ("pvprof", "pvprof_dwarf")

    def row(label, values, spec=".3f"):
        return f"{label:40}" + "".join(
            f"{'n/a' if v is None else format(round(v, 3) + 0.0, spec):>16}" for v in values)

    def field(key):
        return [None if beyond[c] is None else beyond[c][key] for c in cols]

    def interval(c):
        ci = beyond[c] and beyond[c]["beyond_floor_interval"]
        if not ci:
            return "n/a"
        return f"{ci['low']:.3f}..{'unbounded' if ci['high'] is None else format(ci['high'], '.3f')}"

    return [
        row("exits beyond the floor, per sample", [], "") + "".join(f"{c:>16}" for c in cols),
        row("  added, minus IP-only's", field("added_over_reference")),
        row("  - floor (IRET intercepts of the NMIs)", field("floor")),
        row("      NMI-window exits / NMI injection", field("nmi_window_exits_per_nmi_injection")),
        row("      NMI injections / sample", field("nmi_injections_per_sample")),
        row("  - longer run at the unsampled rate", field("longer_run_over_reference")),
        row("      unsampled exits / s (not io, halt)", field("unsampled_exits_per_second"), ".1f"),
        row(f"  = beyond the floor (target <= {BEYOND_FLOOR_TARGET})", field("beyond_floor")),
        f"{'    90% bootstrap interval':40}" + "".join(f"{interval(c):>16}" for c in cols),
        "  of them, by kind of exit:",
    ] + [row(f"    {k.removesuffix('_exits')}",
             [None if beyond[c] is None else beyond[c]["beyond_floor_by_kind"][k] for c in cols])
         for k in EXIT_KINDS]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hz", type=int, required=True)
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--outer-cpu", required=True)
    ap.add_argument("--outer-cpus", type=int, required=True)
    args = ap.parse_args()

    runs_dir = os.path.join(args.out, "runs")
    runs = {c: [load_run(runs_dir, c, r) for r in range(1, args.reps + 1)] for c in CONDITIONS}
    # A run that took several times its condition's median did not measure
    # the sampler: the shared machine (or the nested host) stalled it. Seen
    # here: a 6 s run taking 214 s. Such runs are left out of every figure
    # and listed in the result.
    excluded = []
    for c in CONDITIONS:
        median = statistics.median(r["seconds"] for r in runs[c])
        kept = [r for r in runs[c] if r["seconds"] <= STALL_FACTOR * median]
        excluded += [{"condition": c, "rep": r["rep"], "seconds": rnd(r["seconds"], 3),
                      "median_seconds": rnd(median, 3)}
                     for r in runs[c] if r["seconds"] > STALL_FACTOR * median]
        if len(kept) < 2:
            fail(f"fewer than 2 usable runs of {c}")
        runs[c] = kept
    mean_t = {c: statistics.mean(r["seconds"] for r in runs[c]) for c in CONDITIONS}
    base = mean_t["none"]

    resamples = bootstrap_draws(runs, args.reps)

    none_exits = {k: statistics.mean(r["exits"][k] for r in runs["none"]) for k in EXIT_COUNTERS}
    per = {}
    for c in SAMPLERS:
        rs = runs[c]
        slow = [r["seconds"] / base for r in rs]
        # Guest time the sampler added, per sample it took, run by run.
        # A sample is an overflow that interrupted guest code, for both
        # samplers: pvprof counts only those, and only those can cost an
        # exit; perf's others landed in KVM or QEMU on the vCPU thread.
        us = [(r["seconds"] - base) * 1e6 / r["samples"] if r["samples"] else None for r in rs]
        samples = statistics.mean(r["samples"] for r in rs)
        # Exits the sampler added: beyond those of an unsampled run (the
        # console line, timer ticks, the workload's start and exit).
        exits = {k: statistics.mean(r["exits"][k] for r in rs) - none_exits[k]
                 for k in EXIT_COUNTERS}
        per[c] = {
            "seconds": [rnd(r["seconds"], 3) for r in rs],
            "slowdown": statistics.mean(slow),
            "slowdown_spread": spread(slow),
            "samples_per_run": samples,
            "samples_per_sec": statistics.mean(r["samples"] / r["seconds"] for r in rs),
            "us_per_sample": (mean_t[c] - base) * 1e6 / samples if samples else None,
            "us_per_sample_spread": spread(us) if None not in us else None,
            "exits_per_sample": {k: exits[k] / samples if samples else None for k in EXIT_COUNTERS},
            # Of the interrupt exits above, those the run's extra length
            # brings at the unsampled run's rate (L2's timer, L1's own
            # interrupts): a slower run takes more of them per sample
            # without the sampler causing them one by one.
            "longer_run_irq_exits_per_sample":
                none_exits["irq_exits"] / base * (mean_t[c] - base) / samples if samples else None,
        }

    pv = runs["pvprof"]
    pv_samples = sum(r["samples"] for r in pv)
    losses = {}
    for r in pv:
        for k, v in r["losses"].items():
            losses[k] = losses.get(k, 0) + v
    delivered = sum(r["callchains"] for r in pv) - losses.get("stream_overflow", 0)
    # The recording spans a little more than the timed window: the skew
    # rate is the share of its callchains marked skewed.
    skewed = [r["report"].get("skewed") for r in pv]
    chains = [r["report"].get("callchains") for r in pv]
    skew_rate = None
    if None not in skewed and None not in chains and sum(chains) > 0:
        skew_rate = sum(skewed) / sum(chains)
    # Of them, the stacks that moved on to another function (or to an
    # address without a symbol): those within the sampled function are
    # right function by function, only their innermost offset moved.
    same = [r["report"].get("skewed_same_function") for r in pv]
    skew_rate_other = None
    if skew_rate is not None and None not in same:
        skew_rate_other = (sum(skewed) - sum(same)) / sum(chains)
    # Samples the host took inside pvprof's own NMI path (spec
    # pvprof-own-nmi-samples): shown as [pvprof overhead], not as skew.
    shown = sum(r["report"].get("samples shown", 0) for r in pv)
    own_nmi_share = sum(r["report"].get("own_nmi", 0) for r in pv) / shown if shown else None
    eps = {c: per[c]["exits_per_sample"] for c in per}
    beyond = {c: exits_beyond_floor_figures(runs, resamples, c) for c in ("pvprof", "pvprof_dwarf")}
    pv_beyond = beyond["pvprof"] or {}

    facts = dict(line.split(" ", 1) for line in
                 read_text(os.path.join(args.out, "l1-facts.txt")).splitlines()
                 if " " in line and not line.startswith("l1_flag"))
    flags = re.findall(r"^l1_flag (\S+)$", read_text(os.path.join(args.out, "l1-facts.txt")), re.M)
    platform = (f"AMD SVM {'with' if 'vnmi' in flags else 'without'} vNMI: L1 Linux "
                f"{facts.get('l1_kernel', '?')} on {facts.get('l1_cpus', '?')} vCPU(s) "
                f"({facts.get('l1_cpu', '?').strip()}) under QEMU TCG, L2 under L1's KVM "
                f"(1 vCPU); outer host {args.outer_cpu} x{args.outer_cpus}, shared")

    result = {
        "hz": args.hz,
        "reps": args.reps,
        "samples": rnd(per["pvprof"]["samples_per_run"], 1),
        "samples_per_sec": rnd(per["pvprof"]["samples_per_sec"], 1),
        "slowdown_ip_only": rnd(per["ip_only"]["slowdown"]),
        "slowdown_pvprof": rnd(per["pvprof"]["slowdown"]),
        "us_per_sample_ip_only": rnd(per["ip_only"]["us_per_sample"], 1),
        "us_per_sample_pvprof": rnd(per["pvprof"]["us_per_sample"], 1),
        "overhead_ratio": rnd(overhead_ratio(runs)),
        "extra_exits_per_sample": rnd(eps["pvprof"]["exits"] - eps["ip_only"]["exits"])
        if per["pvprof"]["samples_per_run"] and per["ip_only"]["samples_per_run"] else None,
        "nmi_window_exits_per_sample": rnd(eps["pvprof"]["nmi_window_exits"]),
        "floor_exits_per_sample": pv_beyond.get("floor"),
        "exits_beyond_floor_per_sample": pv_beyond.get("beyond_floor"),
        "completeness": rnd(delivered / pv_samples) if pv_samples else None,
        "skew_rate": rnd(skew_rate),
        "skew_rate_other_function": rnd(skew_rate_other),
        "own_nmi_share": rnd(own_nmi_share),
        "stale_rate": rnd(losses.get("stale", 0) / pv_samples) if pv_samples else None,
        "losses": losses,
        "platform": platform,
        # Beyond the keys the issue defines: spreads, per-condition detail.
        "overhead_ratio_interval": overhead_ratio_interval(resamples),
        "floor_exits_per_sample_interval": pv_beyond.get("floor_interval"),
        "exits_beyond_floor_per_sample_interval": pv_beyond.get("beyond_floor_interval"),
        # Both figures for (c) and (d), with their parts and the exits
        # beyond the floor by kind.
        "exits_beyond_floor": beyond,
        "samples_ip_only": rnd(per["ip_only"]["samples_per_run"], 1),
        # perf's samples of the vCPU thread wherever they landed, the
        # host-mode ones (KVM and QEMU handling exits) included.
        "samples_ip_only_all": rnd(statistics.mean(r["samples_all"] for r in runs["ip_only"]), 1),
        "samples_per_sec_ip_only": rnd(per["ip_only"]["samples_per_sec"], 1),
        "seconds_mean": {c: rnd(mean_t[c], 3) for c in CONDITIONS},
        "seconds": {c: [rnd(r["seconds"], 3) for r in runs[c]] for c in CONDITIONS},
        "excluded_runs": excluded,
        "spread": {
            "slowdown_ip_only": {k: rnd(v) for k, v in per["ip_only"]["slowdown_spread"].items()},
            "slowdown_pvprof": {k: rnd(v) for k, v in per["pvprof"]["slowdown_spread"].items()},
            "us_per_sample_ip_only": {k: rnd(v, 1) for k, v in
                                      (per["ip_only"]["us_per_sample_spread"] or {}).items()},
            "us_per_sample_pvprof": {k: rnd(v, 1) for k, v in
                                     (per["pvprof"]["us_per_sample_spread"] or {}).items()},
        },
        "added_exits_per_sample": {c: {k: rnd(v) for k, v in eps[c].items()} for c in eps},
        "longer_run_irq_exits_per_sample": {c: rnd(per[c]["longer_run_irq_exits_per_sample"])
                                            for c in ("ip_only", "pvprof")},
        "exits_per_run_unsampled": {k: rnd(v, 1) for k, v in none_exits.items()},
        "ip_only_lost_samples": sum(r["perf_lost_events"] for r in runs["ip_only"]),
        "host_cost": host_cost(runs_dir),
        # Frame-pointer against DWARF call graphs (user stack snapshots):
        # the guest's time, the recording's bytes and report's time, each
        # per callchain.  This guest runs no agent, so report finds
        # no unwind tables and its dwarf time is decoding alone.
        "call_graph": {mode: call_graph_costs(runs[c], per[c]) for mode, c in
                       (("fp", "pvprof"), ("dwarf", "pvprof_dwarf"))},
    }
    with open(os.path.join(args.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    def fmt(x, spec):
        return "n/a" if x is None else format(x, spec)

    sp = result["spread"]
    ci = result["overhead_ratio_interval"]
    lines = [
        f"pvprof benchmark: {args.hz} Hz, {args.reps} interleaved reps per condition",
        f"platform: {platform}",
        "",
        f"{'':24}{'no sampling':>14}{'IP-only perf':>14}{'pvprof':>14}",
        f"{'guest seconds (mean)':24}{mean_t['none']:>14.3f}{mean_t['ip_only']:>14.3f}{mean_t['pvprof']:>14.3f}",
        f"{'slowdown':24}{1:>14.3f}{result['slowdown_ip_only']:>14.3f}{result['slowdown_pvprof']:>14.3f}",
        f"{'  min..max':24}{'':>14}"
        f"{sp['slowdown_ip_only']['min']:>6.3f}..{sp['slowdown_ip_only']['max']:<6.3f}"
        f"{sp['slowdown_pvprof']['min']:>6.3f}..{sp['slowdown_pvprof']['max']:<6.3f}",
        f"{'samples per run':24}{'':>14}{result['samples_ip_only']:>14.0f}{result['samples']:>14.0f}",
        f"{'  all, host mode too':24}{'':>14}{result['samples_ip_only_all']:>14.0f}{'':>14}",
        f"{'samples per second':24}{'':>14}{result['samples_per_sec_ip_only']:>14.1f}{result['samples_per_sec']:>14.1f}",
        f"{'us guest time / sample':24}{'':>14}{fmt(result['us_per_sample_ip_only'], '14.1f')}"
        f"{fmt(result['us_per_sample_pvprof'], '14.1f')}",
    ]
    for k in ("exits", "irq_exits", "nmi_window_exits", "io_exits", "nmi_injections"):
        lines.append(f"{'+' + k + ' / sample':24}{'':>14}"
                     f"{fmt(eps['ip_only'][k], '14.3f')}{fmt(eps['pvprof'][k], '14.3f')}")
        if k == "irq_exits":
            lr = result["longer_run_irq_exits_per_sample"]
            lines.append(f"{'  of them, longer run':24}{'':>14}"
                         f"{fmt(lr['ip_only'], '14.3f')}{fmt(lr['pvprof'], '14.3f')}")
    lines += [
        "",
        f"overhead_ratio (pvprof/IP-only overhead): {fmt(result['overhead_ratio'], '.3f')}  (target <= 2.5)",
        f"  {ci['level']:.0%} bootstrap interval over the reps: {ci['low']:.3f}.."
        f"{'unbounded' if ci['high'] is None else format(ci['high'], '.3f')};"
        f" at or under 2.5 in {ci['share_at_or_under_2_5']:.0%} of {ci['draws']} draws",
        f"extra exits per sample (pvprof - IP-only): {fmt(result['extra_exits_per_sample'], '.3f')}  (target <= 1.05)",
        "",
    ]
    lines += beyond_floor_table(beyond)
    lines += [
        "",
        f"completeness: {fmt(result['completeness'], '.4f')}  (target >= 0.99)",
        f"skew rate: {fmt(result['skew_rate'], '.4f')}"
        f" ({fmt(result['skew_rate_other_function'], '.4f')} in another function)"
        f"   stale rate: {fmt(result['stale_rate'], '.4f')}"
        f"   pvprof's own NMI path: {fmt(result['own_nmi_share'], '.4f')} of the samples shown",
        "losses: " + (", ".join(f"{k} {v}" for k, v in losses.items() if v) or "none"),
        f"host cost: {fmt(result['host_cost']['ns_per_sample'], '.0f')} ns of pvprof hooks in L1's KVM per sample"
        f" (function_graph, its own cost included; {result['host_cost']['trace_overrun']} trace overruns;"
        " a hook's time includes an overflow that interrupted it, which the total counts once)",
    ]
    for h, v in result["host_cost"]["hooks"].items():
        lines.append(f"  {h:28}{fmt(v['calls_per_sample'], '7.3f')} calls/sample, median {v['median_ns']:>7.0f} ns,"
                     f" {fmt(v['ns_per_sample'], '7.0f')} ns/sample")
    cg = result["call_graph"]
    lines += [
        "",
        f"{'call graphs':24}{'fp':>14}{'dwarf':>14}",
        f"{'slowdown':24}{fmt(cg['fp']['slowdown'], '14.3f')}{fmt(cg['dwarf']['slowdown'], '14.3f')}",
        f"{'us guest time / sample':24}{fmt(cg['fp']['us_guest_per_sample'], '14.1f')}"
        f"{fmt(cg['dwarf']['us_guest_per_sample'], '14.1f')}",
        f"{'stream bytes / sample':24}{fmt(cg['fp']['stream_bytes_per_sample'], '14.0f')}"
        f"{fmt(cg['dwarf']['stream_bytes_per_sample'], '14.0f')}",
        f"{'report us / sample':24}{fmt(cg['fp']['report_us_per_sample'], '14.2f')}"
        f"{fmt(cg['dwarf']['report_us_per_sample'], '14.2f')}  (no unwind tables here)",
    ]
    lines += [
        "runs left out (over {}x their condition's median): ".format(STALL_FACTOR)
        + (", ".join(f"{e['condition']} rep {e['rep']} {e['seconds']} s" for e in excluded) or "none"),
    ]
    with open(os.path.join(args.out, "table.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
