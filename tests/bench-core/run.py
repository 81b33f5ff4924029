#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-core: pvprof's per-sample paths on this machine, against perf.

usage: run.py [--reps N] [--freq HZ] [--fp-seconds S] [--dwarf-seconds S]
              [--host-seconds S] [--guest-recording FILE [--guest-copies N]]
              [--out DIR] [--smoke]

1. host: host-bench, the pvprof KVM module's per-callchain path on the core
   (validation, stream encoding and the copies around them).
2. inputs: bench-core-workload (workload.c), built with and without frame
   pointers, recorded here by perf (`perf record -e cpu-clock --all-user
   --call-graph fp|dwarf`); perf_samples.py and pvprof-gen turn the same
   samples into pvprof recordings, as the host would have streamed them
   with the sideband a guest agent would have sent.
3. tool against perf: kvm-pvprof report, report --folded and script, and
   perf report --stdio, perf report --stdio -g none (kvm-pvprof report's
   table, without call graphs) and perf script, on those recordings, REPS times,
   interleaved, the order rotating each repetition.  Optionally the same
   kvm-pvprof commands on a recording from a guest run, made longer with
   host-kvm/tool/tests/rec-replicate.py.

Writes OUT/result.json and OUT/table.txt (README.md defines the figures),
and checks that every count adds up (samples perf wrote = samples each
command saw, host callchains all accepted); --smoke does that on small sizes
in $O/bench-core-smoke and writes "<passed> <failed>" to
$O/results/bench-core-smoke.  Times are reported, never checked.
"""
import argparse
import datetime
import json
import os
import platform as pyplatform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
O = os.environ.get("O") or os.path.join(ROOT, "out")
BUILD = os.path.join(O, "bench-core", "build")
KVM_PVPROF = os.path.join(O, "bin", "kvm-pvprof")
HOST_BENCH = os.path.join(BUILD, "host-bench")
PVPROF_GEN = os.path.join(BUILD, "pvprof-gen")
REPLICATE = os.path.join(ROOT, "host-kvm", "tool", "tests", "rec-replicate.py")
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE"]
MODES = ("fp", "dwarf")
HOST_CASES = ("validate_encode", "drain", "sample")
# Scratch files of this run; set by main().
WORK = None


class Checks:
    """PASS/FAIL lines, as the other suites print them."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def check(self, name, ok, detail=""):
        if ok:
            print("PASS " + name)
            self.passed += 1
        else:
            print("FAIL %s: %s" % (name, detail))
            self.failed += 1
            self.failures.append(name)

    def skip(self, name, why):
        print("SKIP %s: %s" % (name, why))
        self.skipped += 1


def die(msg):
    sys.exit("bench-core: " + msg)


def log(msg):
    print("== " + msg, flush=True)


def run_text(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw).stdout


def timed(argv, stdout=subprocess.DEVNULL):
    """Run argv; its CPU seconds (user + sys, from wait4) and wall seconds."""
    t0 = time.monotonic()
    with open(os.path.join(WORK, "cmd.err"), "wb") as err:
        p = subprocess.Popen(argv, stdout=stdout, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        with open(os.path.join(WORK, "cmd.err"), errors="replace") as f:
            die("%s failed (exit %d): %s" % (" ".join(argv), p.returncode, f.read()[-2000:]))
    return ru.ru_utime + ru.ru_stime, wall


def summary(values):
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "n": len(values)}


# ---------------------------------------------------------------- platform

def platform_info():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        perf = run_text(["perf", "version"]).strip()
    except (OSError, subprocess.CalledProcessError):
        perf = None
    try:
        gcc = run_text(["gcc", "--version"]).splitlines()[0]
    except (OSError, subprocess.CalledProcessError):
        gcc = None
    try:
        commit = run_text(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    virt = None
    try:
        for line in run_text(["lscpu"]).splitlines():
            if line.startswith("Hypervisor vendor:"):
                virt = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return {"cpu_model": cpu, "cores": os.cpu_count(), "kernel": pyplatform.release(),
            "perf_version": perf, "gcc": gcc, "hypervisor": virt, "commit": commit,
            "load_avg_start": list(os.getloadavg())}


# ------------------------------------------------------------------- host

def host_path(args):
    log("host: host-bench (%d reps of %.2f s per case)" % (args.host_reps, args.host_seconds))
    out = run_text([HOST_BENCH, "--seconds", str(args.host_seconds),
                    "--reps", str(args.host_reps)])
    raw = json.loads(out)
    host = {}
    # result.json keeps the key "records" (here: callchains), as earlier results have it.
    for name, c in raw.items():
        rates = [r["records"] / r["cpu_s"] for r in c["reps"]]
        wall = [r["records"] / r["wall_s"] for r in c["reps"]]
        host[name] = {"records_per_sec": summary(rates), "wall_records_per_sec": summary(wall),
                      "records": c["records"], "accepted": c["accepted"],
                      "rejected": c["rejected"], "lost": c["lost"], "span": c["span"],
                      "slots": c["slots"], "distinct_records": c["distinct"]}
    return host


# ----------------------------------------------------------------- inputs

def build_workloads():
    src = os.path.join(HERE, "workload.c")
    exes = {}
    for mode, fp_flag in (("fp", "-fno-omit-frame-pointer"), ("dwarf", "-fomit-frame-pointer")):
        exe = os.path.join(WORK, "bench-core-workload-" + mode)
        subprocess.run(["gcc"] + CFLAGS + [fp_flag, "-o", exe, src], check=True)
        exes[mode] = exe
    return exes


def perf_can_record():
    probe = os.path.join(WORK, "probe.data")
    try:
        subprocess.run(["perf", "record", "-q", "-N", "-e", "cpu-clock", "--all-user",
                        "-o", probe, "true"], check=True, capture_output=True, timeout=60)
        os.unlink(probe)
        return None
    except FileNotFoundError:
        return "no perf (make deps installs linux-perf)"
    except subprocess.CalledProcessError as e:
        return "perf record failed: " + e.stderr.decode(errors="replace").strip()[-300:]
    except subprocess.TimeoutExpired:
        return "perf record took over 60 s"


def make_inputs(args, exes):
    inputs = {}
    for mode in MODES:
        seconds = args.fp_seconds if mode == "fp" else args.dwarf_seconds
        perf_data = os.path.join(WORK, "perf-%s.data" % mode)
        log("input %s: perf record --call-graph %s, %g CPU s at %d Hz" %
            (mode, mode, seconds, args.freq))
        subprocess.run(["perf", "record", "-q", "-N", "-e", "cpu-clock", "-F", str(args.freq),
                        "--all-user", "--call-graph", mode, "-o", perf_data,
                        exes[mode], str(seconds)], check=True, stdout=subprocess.DEVNULL)
        samples_file = os.path.join(WORK, "samples-%s.bin" % mode)
        conv = run_text([PYTHON, os.path.join(HERE, "perf_samples.py"), perf_data,
                         samples_file])
        conv_counts = dict(zip(conv.split()[::2], map(int, conv.split()[1::2])))
        pv_data = os.path.join(WORK, "pvprof-%s.data" % mode)
        gen = run_text([PVPROF_GEN] + (["--fp"] if mode == "fp" else []) +
                       [samples_file, pv_data])
        gen_counts = dict(zip(gen.split()[::2], map(int, gen.split()[1::2])))
        os.unlink(samples_file)
        inputs[mode] = {
            "source": "perf record -e cpu-clock -F %d --all-user --call-graph %s of "
                      "bench-core-workload (workload.c, gcc -O2 %s), %g CPU s; its samples "
                      "written as pvprof callchains by perf_samples.py and pvprof-gen" %
                      (args.freq, mode, "-fno-omit-frame-pointer" if mode == "fp"
                       else "-fomit-frame-pointer", seconds),
            "perf_data": perf_data, "pvprof_data": pv_data,
            "perf_data_bytes": os.path.getsize(perf_data),
            "pvprof_data_bytes": os.path.getsize(pv_data),
            "converted": conv_counts, "generated": gen_counts,
        }
    return inputs


def guest_input(args):
    src = args.guest_recording
    copy = os.path.join(WORK, "guest-source.data")
    # The source may be rewritten by a run elsewhere: one copy, read once.
    shutil.copyfile(src, copy)
    out = os.path.join(WORK, "guest.data")
    log("input guest: %s, %d copies (rec-replicate.py)" % (src, args.guest_copies))
    msg = run_text([PYTHON, REPLICATE, "--copies", str(args.guest_copies), copy, out])
    os.unlink(copy)
    return {"source": "%s (a recording of a guest run) made %d times longer by "
                      "rec-replicate.py" % (src, args.guest_copies),
            "pvprof_data": out, "pvprof_data_bytes": os.path.getsize(out),
            "replicate": msg.strip()}


# ------------------------------------------------------------------ tools

def commands(inputs):
    cmds = []
    for mode in MODES:
        pv, pd = inputs[mode]["pvprof_data"], inputs[mode]["perf_data"]
        cmds += [
            ("report_" + mode, [KVM_PVPROF, "report", "-i", pv]),
            ("folded_" + mode, [KVM_PVPROF, "report", "-i", pv, "--folded"]),
            ("script_" + mode, [KVM_PVPROF, "script", "-i", pv]),
            ("perf_report_" + mode, ["perf", "report", "-i", pd, "--stdio"]),
            # The table kvm-pvprof report prints (Children and Self per
            # function), without perf's call graph under each entry.
            ("perf_report_table_" + mode, ["perf", "report", "-i", pd, "--stdio",
                                           "-g", "none"]),
            ("perf_script_" + mode, ["perf", "script", "-i", pd]),
        ]
    if "guest" in inputs:
        pv = inputs["guest"]["pvprof_data"]
        cmds += [("report_guest", [KVM_PVPROF, "report", "-i", pv]),
                 ("script_guest", [KVM_PVPROF, "script", "-i", pv])]
    return cmds


def script_counts(path):
    """Samples and frames in perf script's text (either tool's): a line that
    starts a sample, then an indented line per frame."""
    samples = frames = 0
    with open(path, "rb") as f:
        for line in f:
            if line[:1] in (b"\t", b" "):
                frames += 1
            elif line[:1] not in (b"\n", b"#", b""):
                samples += 1
    return {"samples": samples, "frames": frames}


def header_counts(path):
    """kvm-pvprof report's header: callchains, samples shown, frames."""
    with open(path, errors="replace") as f:
        text = f.read(1 << 16)
    counts = {}
    for key, pat in (("callchains", r"callchains: (\d+)"),
                     ("samples_shown", r"samples shown: (\d+)"),
                     ("frames", r"samples shown: \d+, frames: (\d+)"),
                     ("unwound", r"user stacks: (\d+) unwound")):
        m = re.search(pat, text)
        if m:
            counts[key] = int(m.group(1))
    return counts


def first_pass(cmds):
    """Each command once, untimed (it warms the page cache): what it saw."""
    seen = {}
    for name, argv in cmds:
        out = os.path.join(WORK, name + ".out")
        with open(out, "wb") as f:
            timed(argv, stdout=f)
        if name.startswith("folded_"):
            # --folded prints the header on stderr, "STACK COUNT" lines on stdout.
            seen[name] = header_counts(os.path.join(WORK, "cmd.err"))
            with open(out, "rb") as f:
                seen[name]["folded_samples"] = sum(int(line.rsplit(b" ", 1)[1])
                                                   for line in f if line.strip())
        elif name.startswith("report_"):
            seen[name] = header_counts(out)
        elif "script" in name:
            seen[name] = script_counts(out)
        else:
            seen[name] = {}     # perf report: nothing counted in its text
        os.unlink(out)
    return seen


def measure(cmds, reps):
    times = {name: {"cpu_s": [], "wall_s": []} for name, _ in cmds}
    for rep in range(reps):
        k = rep % len(cmds)
        order = cmds[k:] + cmds[:k]
        log("tool rep %d/%d" % (rep + 1, reps))
        for name, argv in order:
            cpu, wall = timed(argv)
            times[name]["cpu_s"].append(cpu)
            times[name]["wall_s"].append(wall)
    return times


def perf_samples_in(perf_data):
    """perf's own count of its samples (perf report --stats)."""
    out = run_text(["perf", "report", "-i", perf_data, "--stats"])
    m = re.search(r"^\s*SAMPLE events:\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else None


# ----------------------------------------------------------------- result

def rate_block(samples, t):
    cpu = [samples / c for c in t["cpu_s"] if c > 0]
    wall = [samples / w for w in t["wall_s"] if w > 0]
    return {"samples": samples, "cpu_s": t["cpu_s"], "wall_s": t["wall_s"],
            "samples_per_sec": summary(cpu), "wall_samples_per_sec": summary(wall)}


def median_of(s):
    return s["median"] if s else None


def paired_ratios(a, b):
    """Per repetition, a's rate over b's (they ran in the same repetition)."""
    return summary([bc / ac for ac, bc in zip(a["cpu_s"], b["cpu_s"]) if ac > 0])


def fmt_rate(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return "%.2f M" % (x / 1e6)
    if x >= 1e3:
        return "%.1f k" % (x / 1e3)
    return "%.0f" % x


def fmt_span(s):
    if not s:
        return "-"
    return "%s (%s..%s)" % (fmt_rate(s["median"]), fmt_rate(s["min"]), fmt_rate(s["max"]))


def table(result):
    lines = []
    p = result["platform"]
    lines.append("bench-core on %s, %s cores, Linux %s, %s; load %.1f at start, %.1f at end" % (
        p["cpu_model"], p["cores"], p["kernel"], p["perf_version"],
        p["load_avg_start"][0], p["load_avg_end"][0]))
    lines.append("rates per CPU second of the command (user + sys), median (min..max) "
                 "of %d reps" % result["config"]["reps"])
    lines.append("")
    lines.append("host path (host-bench, callchains/s per core)   fp                        "
                 "dwarf (8 KiB snapshot)")
    for case, label in (("validate_encode", "validate + encode"),
                        ("drain", "drain: copy, validate, encode, queue"),
                        ("sample", "sample: notice, gate, drain")):
        h = result["host"]
        lines.append("  %-44s %-25s %s" % (label, fmt_span(h[case + "_fp"]["records_per_sec"]),
                                           fmt_span(h[case + "_dwarf"]["records_per_sec"])))
    lines.append("")
    lines.append("tool (samples/s)        kvm-pvprof                 perf                       "
                 "kvm-pvprof / perf, per rep")
    m = result["measurements"]
    for mode in MODES:
        inp = result["inputs"][mode]
        lines.append("%s: %d samples; frames per sample printed by script %.1f, by perf script %.1f"
                     % (mode, inp["samples"], inp["script_frames_per_sample"],
                        inp["perf_script_frames_per_sample"]))
        for what, theirs, label in (("report", "report", "report"),
                                    ("report", "report_table", "report / perf -g none"),
                                    ("script", "script", "script")):
            ours, perf = m[what + "_" + mode], m["perf_%s_%s" % (theirs, mode)]
            r = result["ratios"]["%s_%s" % (theirs, mode)]
            lines.append("  %-22s %-25s  %-25s  %s" % (
                label, fmt_span(ours["samples_per_sec"]), fmt_span(perf["samples_per_sec"]),
                "%.2fx (%.2f..%.2f)" % (r["median"], r["min"], r["max"]) if r else "-"))
        lines.append("  %-22s %-25s" % ("report --folded",
                                        fmt_span(m["folded_" + mode]["samples_per_sec"])))
    if "report_guest" in m:
        g = result["inputs"]["guest"]
        lines.append("guest recording: %d samples, %.1f frames/sample (%s)" % (
            g["samples"], g["frames_per_sample"], os.path.basename(g["source"].split()[0])))
        for what in ("report", "script"):
            lines.append("  %-22s %-25s" % (what, fmt_span(m[what + "_guest"]["samples_per_sec"])))
    return "\n".join(lines) + "\n"


def main():
    global WORK
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--freq", type=int, default=4000)
    ap.add_argument("--fp-seconds", type=float, default=8.0)
    ap.add_argument("--dwarf-seconds", type=float, default=5.0)
    ap.add_argument("--host-seconds", type=float, default=0.5)
    ap.add_argument("--host-reps", type=int)
    ap.add_argument("--guest-recording")
    ap.add_argument("--guest-copies", type=int, default=2)
    ap.add_argument("--out", help="default $O/bench-core, $O/bench-core-smoke with --smoke")
    ap.add_argument("--keep", action="store_true", help="keep the recordings")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.reps, args.freq = 1, 1000
        args.fp_seconds = args.dwarf_seconds = 0.3
        args.host_seconds, args.host_reps = 0.02, 1
        args.guest_recording = None
    if args.host_reps is None:
        args.host_reps = args.reps
    if args.reps < 1 or args.host_reps < 1:
        die("--reps must be at least 1")
    for f in (KVM_PVPROF, HOST_BENCH, PVPROF_GEN):
        if not os.access(f, os.X_OK):
            die("%s is missing: run 'make -C tests/bench-core all tool'" % f)
    if args.guest_recording and not os.path.isfile(args.guest_recording):
        die("no recording at " + args.guest_recording)

    # The smoke test never overwrites a benchmark's result.
    out_dir = args.out or os.path.join(O, "bench-core-smoke" if args.smoke else "bench-core")
    WORK = os.path.join(out_dir, "work")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    started = time.monotonic()
    checks = Checks()
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "platform": platform_info(),
              "config": {"reps": args.reps, "freq": args.freq, "fp_seconds": args.fp_seconds,
                         "dwarf_seconds": args.dwarf_seconds,
                         "host_seconds": args.host_seconds, "host_reps": args.host_reps,
                         "smoke": args.smoke},
              "rate_basis": "samples (host-bench: callchains) per CPU second, user + sys, of the command "
                            "(host-bench: of its thread); wall-clock rates under wall_*"}

    # The host path first: it needs no perf.
    host = host_path(args)
    result["host"] = host
    for name, h in sorted(host.items()):
        checks.check("host %s: every callchain accepted and queued" % name,
                     h["accepted"] >= h["records"] > 0 and not h["rejected"] and not h["lost"],
                     "callchains %d accepted %d rejected %d lost %d" % (
                         h["records"], h["accepted"], h["rejected"], h["lost"]))
    for mode in MODES:
        for case in HOST_CASES:
            key = "host_%s_per_sec%s" % ({"drain": "records", "sample": "samples",
                                          "validate_encode": "validate_encode"}[case],
                                         "" if mode == "fp" else "_dwarf")
            result[key] = median_of(host["%s_%s" % (case, mode)]["records_per_sec"])

    why = perf_can_record()
    if why:
        checks.skip("tool against perf", why)
    else:
        exes = build_workloads()
        inputs = make_inputs(args, exes)
        if args.guest_recording:
            inputs["guest"] = guest_input(args)
        cmds = commands(inputs)
        log("first pass: every command once, what it saw")
        seen = first_pass(cmds)
        for mode in MODES:
            inp = inputs[mode]
            perf_n = perf_samples_in(inp["perf_data"])
            conv, gen = inp["converted"], inp["generated"]
            inp["samples"] = gen["samples"]
            inp["record_frames"] = gen["frames"]
            inp["perf_samples"] = perf_n
            checks.check("%s: perf's samples (perf report --stats) all converted" % mode,
                         perf_n == conv["samples"] > 0,
                         "perf %s, perf_samples.py %d" % (perf_n, conv["samples"]))
            checks.check("%s: pvprof-gen wrote every sample and frame" % mode,
                         conv["samples"] == gen["samples"] and conv["frames"] == gen["frames"],
                         "%s against %s" % (conv, gen))
            if mode == "dwarf":
                checks.check("dwarf: every callchain carries its stack snapshot",
                             gen["snapshots"] == gen["samples"] == conv["snapshots"],
                             "%s" % gen)
            rep_seen = seen["report_" + mode]
            checks.check("%s: kvm-pvprof report saw every sample" % mode,
                         rep_seen.get("callchains") == rep_seen.get("samples_shown") ==
                         gen["samples"], "report %s, written %d" % (rep_seen, gen["samples"]))
            fold_seen = seen["folded_" + mode]
            checks.check("%s: report --folded folded every sample" % mode,
                         fold_seen.get("folded_samples") == gen["samples"],
                         "folded %s, written %d" % (fold_seen.get("folded_samples"),
                                                    gen["samples"]))
            for tool in ("script", "perf_script"):
                n = seen["%s_%s" % (tool, mode)]["samples"]
                checks.check("%s: %s printed every sample" % (mode, tool.replace("_", " ")),
                             n == gen["samples"], "printed %d, written %d" % (n, gen["samples"]))
            for tool in ("script", "perf_script"):
                c = seen["%s_%s" % (tool, mode)]
                inp[tool + "_frames_per_sample"] = c["frames"] / c["samples"] if c["samples"] else 0
            frames = rep_seen.get("frames", 0)
            inp["frames_shown"] = frames
            inp["frames_per_sample"] = frames / gen["samples"] if gen["samples"] else 0
            if mode == "dwarf":
                inp["unwound_with_dwarf"] = rep_seen.get("unwound")
        if "guest" in inputs:
            g = seen["report_guest"]
            inputs["guest"]["samples"] = g.get("callchains", 0)
            inputs["guest"]["frames_per_sample"] = (g.get("frames", 0) / g["callchains"]
                                                     if g.get("callchains") else 0)
            checks.check("guest: script printed every sample report counted",
                         seen["script_guest"]["samples"] == g.get("callchains") == g.get(
                             "samples_shown"), "script %s, report %s" % (
                                 seen["script_guest"]["samples"], g))
        result["inputs"] = inputs

        times = measure(cmds, args.reps)
        meas = {}
        for name, _ in cmds:
            mode = name.rsplit("_", 1)[1]
            meas[name] = rate_block(inputs[mode]["samples"], times[name])
        result["measurements"] = meas
        result["ratios"] = {}
        for mode in MODES:
            for what, theirs in (("report", "report"), ("script", "script"),
                                 ("report", "report_table")):
                result["ratios"]["%s_%s" % (theirs, mode)] = paired_ratios(
                    times["%s_%s" % (what, mode)], times["perf_%s_%s" % (theirs, mode)])
            for what in ("report", "script", "folded", "perf_report", "perf_report_table",
                         "perf_script"):
                result["%s_samples_per_sec_%s" % (what, mode)] = \
                    median_of(meas["%s_%s" % (what, mode)]["samples_per_sec"])
        if "guest" in inputs:
            for what in ("report", "script"):
                result["%s_samples_per_sec_guest" % what] = \
                    median_of(meas[what + "_guest"]["samples_per_sec"])
        if not args.keep:
            for inp in inputs.values():
                for key in ("perf_data", "pvprof_data"):
                    if key in inp and os.path.exists(inp[key]):
                        os.unlink(inp[key])

    result["platform"]["load_avg_end"] = list(os.getloadavg())
    result["seconds"] = round(time.monotonic() - started, 1)
    result["checks"] = {"passed": checks.passed, "failed": checks.failed,
                        "skipped": checks.skipped, "failures": checks.failures}
    path = os.path.join(out_dir, "result.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    # Well-formed as written: read back, every key the issue names present.
    with open(path) as f:
        back = json.load(f)
    required = ["host_records_per_sec", "platform"]
    if not checks.skipped:
        required += ["report_samples_per_sec_fp", "perf_report_samples_per_sec_fp",
                     "report_samples_per_sec_dwarf", "perf_report_samples_per_sec_dwarf"]
    missing = [k for k in required if not back.get(k)]
    missing += ["platform." + k for k in ("cpu_model", "cores", "kernel") +
                (("perf_version",) if not checks.skipped else ())
                if not back["platform"].get(k)]
    checks.check("result.json: well-formed, every key the issue names set", not missing,
                 "missing or zero: %s" % ", ".join(missing))
    if "measurements" in result:
        text = table(result)
        with open(os.path.join(out_dir, "table.txt"), "w") as f:
            f.write(text)
        print()
        print(text, end="")
    print("result: %s (%.0f s)" % (path, result["seconds"]))
    if args.smoke:
        os.makedirs(os.path.join(O, "results"), exist_ok=True)
        with open(os.path.join(O, "results", "bench-core-smoke"), "w") as f:
            f.write("%d %d\n" % (checks.passed, checks.failed))
    print("%d passed, %d failed" % (checks.passed, checks.failed) +
          (" (%d skipped, not counted as passed)" % checks.skipped if checks.skipped else ""))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
