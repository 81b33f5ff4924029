#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of summarize.py's exits beyond the platform's floor and its
skew rates, without a VM: each case writes a runs/ directory as in-l1.sh
would, with counters and report headers chosen by hand so that the floor,
the longer runs' exits at the unsampled rate, what pvprof causes beyond
them and the skewed callchains are known exactly, runs summarize.py on it
and reads result.json and table.txt.

SUMMARIZE=path runs another summarize.py (main's, to see these fail
without the change). Prints unittest's lines, then "N passed, N failed",
writes "<passed> <failed>" to $O/results/bench-summarize and exits non-zero
on a failure.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
SUMMARIZE = os.environ.get("SUMMARIZE", os.path.join(HERE, "summarize.py"))
REPS = 3
# KVM's counters are cumulative over the VM's life: every window starts
# from a non-zero reading, so summarize.py must take differences.
COUNTER_START = 5000

# The unsampled run, as every case has it: 10 s, 1000 exits, of which 110
# come once per run (100 I/O: the console line, the workload's start and
# exit; 10 halts) and 890 with time: 89 exits per second, 50 of them
# interrupts, 10 interrupt windows, 29 others (the timer's MSR writes).
NONE_SECONDS = 10.0
NONE_KINDS = {"irq_exits": 500, "irq_window_exits": 100, "io_exits": 100, "halt_exits": 10,
              "other_exits": 290, "nmi_window_exits": 0, "nmi_injections": 0}
TIMED_PER_SECOND = {"irq_exits": 50, "irq_window_exits": 10, "other_exits": 29}


def longer_run(seconds):
    """The exits a run `seconds` longer than the unsampled one takes at the
    unsampled rate."""
    return {k: round(v * seconds) for k, v in TIMED_PER_SECOND.items()}


def window(seconds, samples, *parts):
    """One window's counters: the unsampled run's, plus the parts (dicts of
    counts by kind); "exits" is the sum of every kind."""
    kinds = dict(NONE_KINDS)
    for part in parts:
        for k, v in part.items():
            kinds[k] += v
    counters = {k: v for k, v in kinds.items() if k != "other_exits"}
    counters["exits"] = sum(v for k, v in kinds.items() if k != "nmi_injections")
    return {"seconds": seconds, "samples": samples, "counters": counters}


def ip_only(extra=None):
    # 12 s, 1000 guest-mode samples, each one interrupt exit (0.5 of its
    # own per sample once the longer run's share is taken out).
    return window(12.0, 1000, longer_run(2.0), {"irq_exits": 500}, extra or {})


def pvprof(extra=None, injections=2200, iret_exits=2000):
    # 20 s, 2000 samples: the longer run's 10 s at the unsampled rate, 0.5
    # interrupt exits per sample as IP-only, and the IRET intercepts of
    # its NMIs (2200 injections, of which 200 re-injections, 2000 IRETs:
    # a floor of 2000 / 2200 x 2200 / 2000 = 1.0 per sample).
    return window(20.0, 2000, longer_run(10.0), {"irq_exits": 1000},
                  {"nmi_injections": injections, "nmi_window_exits": iret_exits}, extra or {})


def pvprof_dwarf(extra=None):
    # 16 s, 1000 samples, one injection and one IRET intercept each.
    return window(16.0, 1000, longer_run(6.0), {"irq_exits": 500},
                  {"nmi_injections": 1000, "nmi_window_exits": 1000}, extra or {})


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_counters(path, counters):
    write(path, "".join(f"{k} {v}\n" for k, v in counters.items()))


def status(samples):
    losses = {"stale": 0, "slot_busy": 0, "stream_overflow": 0}
    return json.dumps({"totals": {"samples": samples, "notices": samples, "records": samples,
                                  "nmis": samples}, "losses": losses})


def write_window(runs, name, cond, w):
    write(os.path.join(runs, name + ".bench"),
          f"BENCH elapsed_ns {round(w['seconds'] * 1e9)} rounds 3000 checksum 0\n")
    write_counters(os.path.join(runs, name + ".exits-before"),
                   {k: COUNTER_START for k in w["counters"]})
    write_counters(os.path.join(runs, name + ".exits-after"),
                   {k: COUNTER_START + v for k, v in w["counters"].items()})
    samples = w["samples"]
    if cond == "ip_only":
        # perf also samples the vCPU thread in KVM and QEMU (host mode,
        # misc 0x1); only the guest-mode ones (0x4, 0x5) count.
        host_mode = 150
        write(os.path.join(runs, name + ".perf-stats"),
              f"cpu-clock stats:\n          SAMPLE events: {samples + host_mode}\n")
        write(os.path.join(runs, name + ".perf-cpumode"),
              f"   {host_mode} 0x1\n   {samples // 2} 0x4\n   {samples - samples // 2} 0x5\n")
    elif cond in ("pvprof", "pvprof_dwarf", "host-cost"):
        write(os.path.join(runs, name + ".status-before.json"), status(COUNTER_START))
        write(os.path.join(runs, name + ".status-after.json"), status(COUNTER_START + samples))
        write(os.path.join(runs, name + ".data-bytes"), f"{samples * 137}\n")
        write(os.path.join(runs, name + ".report-ns"), f"{samples * 50000}\n")
        # A twentieth of the samples shown hit pvprof's own NMI path.
        write(os.path.join(runs, name + ".report.txt"),
              f"# stream entries: {samples} (0 bytes), callchains: {samples} (0 in user mode)\n"
              + w.get("skew_line", "# stale: 0, skewed: 0\n") +
              f"# samples shown: {samples}, frames: {samples}, "
              f"unsymbolized frames: {samples if w.get('no_symbols') else 0}\n"
              f"# pvprof overhead: {samples // 20} samples (5.00% of the samples shown) taken inside\n")


def build(out, reps_by_cond):
    """A make bench output directory: reps_by_cond maps each condition to
    its REPS windows."""
    runs = os.path.join(out, "runs")
    os.makedirs(runs)
    for cond, windows in reps_by_cond.items():
        for rep, w in enumerate(windows, 1):
            write_window(runs, f"{cond}-{rep}", cond, w)
    write_window(runs, "host-cost", "host-cost", pvprof())
    write(os.path.join(runs, "host-cost.overrun"), "0\n")
    write(os.path.join(runs, "host-cost.trace"),
          "# tracer: function_graph\n 0)   9.368 us    |  pvprof_overflow [kvm]();\n")
    write(os.path.join(out, "l1-facts.txt"),
          "l1_kernel 6.1.0-test\nl1_cpu AMD EPYC Processor\nl1_cpus 1\nl1_flag svm\n")


def summarize(reps_by_cond):
    """Runs summarize.py on the windows; returns result.json and table.txt."""
    with tempfile.TemporaryDirectory(prefix="summarize-test.") as out:
        build(out, reps_by_cond)
        proc = subprocess.run([sys.executable, SUMMARIZE, "--out", out, "--hz", "1000",
                               "--reps", str(REPS), "--outer-cpu", "test", "--outer-cpus", "2"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"summarize.py exited {proc.returncode}: {proc.stderr}")
        with open(os.path.join(out, "result.json"), encoding="utf-8") as f:
            result = json.load(f)
        with open(os.path.join(out, "table.txt"), encoding="utf-8") as f:
            table = f.read()
    return result, table


def same_reps(pvprof_extra=None, dwarf_extra=None, **pvprof_args):
    """Every repetition alike: the bootstrap's intervals are then points."""
    return {"none": [window(NONE_SECONDS, 0)] * REPS,
            "ip_only": [ip_only()] * REPS,
            "pvprof": [pvprof(pvprof_extra, **pvprof_args)] * REPS,
            "pvprof_dwarf": [pvprof_dwarf(dwarf_extra)] * REPS}


KINDS = ("nmi_window", "irq_window", "io", "halt", "irq", "other")


def table_kinds(table):
    """The table's beyond-the-floor rows by kind: {kind: (pvprof, dwarf)}."""
    block = table[table.index("exits beyond the floor, per sample"):]
    rows = {}
    for kind in KINDS:
        m = re.search(rf"^ +{kind} +(-?[0-9.]+) +(-?[0-9.]+)$", block, re.M)
        if not m:
            raise AssertionError(f"no '{kind}' row in the table:\n{block}")
        rows[kind] = (float(m.group(1)), float(m.group(2)))
    return rows


class OwnNmiShare(unittest.TestCase):

    def test_share_of_the_samples_shown(self):
        result, table = summarize(same_reps())
        self.assertAlmostEqual(result["own_nmi_share"], 0.05, places=3)
        self.assertIn("pvprof's own NMI path: 0.0500 of the samples shown", table)


def skew_line(skewed, same, wrap=False):
    """kvm-pvprof report's skewed line; wrapped as a long one is, before 100
    columns, when wrap."""
    return (f"# stale: 0 (samples the guest answered without a stack)\n"
            f"# skewed: {skewed} (stacks taken after the sampled instruction had moved on;"
            + ("\n#   " if wrap else " ") + f"{same} within the same function)\n")


class SkewRate(unittest.TestCase):

    def skewed_reps(self, *lines):
        """Each pvprof rep's report with its skewed line (2000 callchains)."""
        reps = same_reps()
        reps["pvprof"] = [dict(w, skew_line=line) for w, line in zip(reps["pvprof"], lines)]
        return reps

    def test_other_function_rate(self):
        # 100, 50 and 30 skewed of 3 x 2000 callchains, 60, 50 and 10 of
        # them within the same function: 180 / 6000 skewed, 60 / 6000 in
        # another function.
        result, table = summarize(self.skewed_reps(skew_line(100, 60), skew_line(50, 50),
                                                   skew_line(30, 10)))
        self.assertAlmostEqual(result["skew_rate"], 0.03, places=4)
        self.assertAlmostEqual(result["skew_rate_other_function"], 0.01, places=4)
        self.assertIn("skew rate: 0.0300 (0.0100 in another function)", table)

    def test_wrapped_line(self):
        # Large counts wrap the line after "moved on;".
        result = summarize(self.skewed_reps(skew_line(1000, 900, wrap=True),
                                            skew_line(400, 100), skew_line(0, 0)))[0]
        self.assertAlmostEqual(result["skew_rate"], 1400 / 6000, places=4)
        self.assertAlmostEqual(result["skew_rate_other_function"], 400 / 6000, places=4)

    def test_report_without_the_count(self):
        # A kvm-pvprof before the count: skew_rate alone.
        result, table = summarize(self.skewed_reps(
            "# skewed: 30 (stacks taken after the sampled instruction had moved on)\n",
            skew_line(30, 10), skew_line(30, 10)))
        self.assertAlmostEqual(result["skew_rate"], 90 / 6000, places=4)
        self.assertIsNone(result["skew_rate_other_function"])
        self.assertIn("skew rate: 0.0150 (n/a in another function)", table)


    def test_report_without_symbols(self):
        # No guest agent, no symbols: no two addresses share a function, so
        # the split says nothing and is left out.
        reps = self.skewed_reps(skew_line(30, 0), skew_line(30, 0), skew_line(30, 0))
        reps["pvprof"][0] = dict(reps["pvprof"][0], no_symbols=True)
        result, table = summarize(reps)
        self.assertAlmostEqual(result["skew_rate"], 90 / 6000, places=4)
        self.assertIsNone(result["skew_rate_other_function"])
        self.assertIn("skew rate: 0.0150 (n/a in another function)", table)


class BeyondFloor(unittest.TestCase):

    def check_figures(self, fig, floor, beyond, by_kind):
        self.assertAlmostEqual(fig["floor"], floor, places=4)
        self.assertAlmostEqual(fig["beyond_floor"], beyond, places=4)
        for kind in KINDS:
            self.assertAlmostEqual(fig["beyond_floor_by_kind"][kind + "_exits"],
                                   by_kind.get(kind, 0.0), places=4, msg=kind)

    def test_nothing_beyond_floor_and_longer_run_is_zero(self):
        result, table = summarize(same_reps())
        self.assertAlmostEqual(result["floor_exits_per_sample"], 1.0, places=4)
        self.assertAlmostEqual(result["exits_beyond_floor_per_sample"], 0.0, places=4)
        self.assertEqual(result["exits_beyond_floor_per_sample"], 0.0)
        fig = result["exits_beyond_floor"]["pvprof"]
        self.check_figures(fig, 1.0, 0.0, {})
        self.check_figures(result["exits_beyond_floor"]["pvprof_dwarf"], 1.0, 0.0, {})
        self.assertEqual(table_kinds(table), {k: (0.0, 0.0) for k in KINDS})

    def test_parts_of_the_figure(self):
        fig = summarize(same_reps())[0]["exits_beyond_floor"]["pvprof"]
        # 890 timed exits in 10 s; the 110 I/O and halt exits come per run.
        self.assertAlmostEqual(fig["unsampled_exits_per_second"], 89.0, places=1)
        # pvprof: (890 + 1000 + 2000) / 2000 = 1.945 added per sample;
        # IP-only: (178 + 500) / 1000 = 0.678.
        self.assertAlmostEqual(fig["added_over_reference"], 1.945 - 0.678, places=4)
        # 89/s x (10 s / 2000 - 2 s / 1000) = 0.267.
        self.assertAlmostEqual(fig["longer_run_over_reference"], 0.267, places=4)
        self.assertAlmostEqual(fig["nmi_window_exits_per_nmi_injection"], 2000 / 2200, places=4)
        self.assertAlmostEqual(fig["nmi_injections_per_sample"], 1.1, places=4)

    def test_irq_window_exits_show_in_their_row(self):
        # pvprof adds 0.25 interrupt-window exits per sample of its own,
        # its DWARF runs 0.1 other exits (single steps, say).
        result, table = summarize(same_reps(pvprof_extra={"irq_window_exits": 500},
                                            dwarf_extra={"other_exits": 100}))
        self.assertAlmostEqual(result["exits_beyond_floor_per_sample"], 0.25, places=4)
        self.check_figures(result["exits_beyond_floor"]["pvprof"], 1.0, 0.25, {"irq_window": 0.25})
        self.check_figures(result["exits_beyond_floor"]["pvprof_dwarf"], 1.0, 0.1, {"other": 0.1})
        rows = table_kinds(table)
        self.assertEqual(rows["irq_window"], (0.25, 0.0))
        self.assertEqual(rows["other"], (0.0, 0.1))
        for kind in ("nmi_window", "io", "halt", "irq"):
            self.assertEqual(rows[kind], (0.0, 0.0), kind)
        self.assertRegex(table, r"= beyond the floor \(target <= 0\.15\) +0\.250 +0\.100\n")

    def test_floor_counts_injections_not_samples(self):
        # 2400 injections (0.2 per sample re-injected), 1800 IRET
        # intercepts: 0.75 per injection x 1.2 injections per sample.
        result, table = summarize(same_reps(injections=2400, iret_exits=1800))
        self.assertAlmostEqual(result["floor_exits_per_sample"], 0.9, places=4)
        # 200 IRET exits fewer than the first case: 0.1 per sample fewer
        # added exits, all of them the floor's.
        self.assertAlmostEqual(result["exits_beyond_floor_per_sample"], 0.0, places=4)
        self.assertEqual(table_kinds(table)["nmi_window"], (0.0, 0.0))

    def test_ip_only_exits_are_taken_off(self):
        # IP-only's own exits of a kind cancel pvprof's of that kind: here
        # IP-only takes 0.1 halt exits per sample that pvprof does not.
        reps = same_reps()
        reps["ip_only"] = [ip_only({"halt_exits": 100})] * REPS
        result, table = summarize(reps)
        self.assertAlmostEqual(result["exits_beyond_floor_per_sample"], -0.1, places=4)
        self.assertEqual(table_kinds(table)["halt"], (-0.1, -0.1))

    def test_points_when_every_rep_is_alike(self):
        result = summarize(same_reps(pvprof_extra={"irq_window_exits": 500}))[0]
        ci = result["exits_beyond_floor_per_sample_interval"]
        self.assertAlmostEqual(ci["low"], 0.25, places=4)
        self.assertAlmostEqual(ci["high"], 0.25, places=4)
        self.assertEqual(ci["share_at_or_under_0_15"], 0.0)
        floor_ci = result["floor_exits_per_sample_interval"]
        self.assertAlmostEqual(floor_ci["low"], 1.0, places=4)
        self.assertAlmostEqual(floor_ci["high"], 1.0, places=4)
        self.assertEqual(result["exits_beyond_floor"]["pvprof"]["beyond_floor_interval"], ci)

    def test_interval_over_reps(self):
        # Repetitions 1, 2, 3 add 0, 0.1 and 0.2 interrupt-window exits
        # per sample, all else alike: a draw's figure is the mean of its
        # three picks, k / 30 for k = 0..6. 1 draw in 27 has k = 0 and 4
        # in 27 have k <= 1, so the 5th percentile is 1/30; likewise the
        # 95th is 5/30. The figure is at or under 0.15 (k <= 4) in 23 of
        # 27.
        reps = same_reps()
        reps["pvprof"] = [pvprof({"irq_window_exits": n}) for n in (0, 200, 400)]
        result = summarize(reps)[0]
        self.assertAlmostEqual(result["exits_beyond_floor_per_sample"], 0.1, places=4)
        ci = result["exits_beyond_floor_per_sample_interval"]
        self.assertAlmostEqual(ci["low"], 1 / 30, places=4)
        self.assertAlmostEqual(ci["high"], 5 / 30, places=4)
        self.assertAlmostEqual(ci["share_at_or_under_0_15"], 23 / 27, delta=0.03)


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    outcome = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    failed = len(outcome.failures) + len(outcome.errors)
    passed = outcome.testsRun - failed
    out = os.environ.get("O", os.path.join(HERE, "..", "..", "out"))
    os.makedirs(os.path.join(out, "results"), exist_ok=True)
    with open(os.path.join(out, "results", "bench-summarize"), "w") as f:
        f.write(f"{passed} {failed}\n")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
