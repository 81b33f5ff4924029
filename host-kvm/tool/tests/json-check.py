#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The oracle of json-test.sh for report -j: what the hostile recording
was built with (json-test gen's manifest), modelled here in Python, against
report's JSON and its text.

    json-check.py MANIFEST JSON TEXT [REPORT OPTIONS...]
    json-check.py --warnings MANIFEST STDERR JSON [REPORT OPTIONS...]

JSON and TEXT are report's outputs for the same REPORT OPTIONS (-i is
ignored; --vcpu, --pid, --comm, --kernel, --user, --sort, --limit are
modelled).  Checks, each exiting with a reason:
  - JSON is valid UTF-8 with no raw control character, parses, and every
    guest string in it is Python's decode(errors="replace") of the bytes
    the recording holds;
  - its totals are the recording's construction, and the text header's;
  - its function table is the model's, row for row (name, mode, DSO, self,
    total, percentages), and the text's table is the model's rows printed
    with report's escaping.
The second form checks the warnings for filters that match nothing: the
text report's standard error is exactly "Warning: MESSAGE" lines, the
JSON's "warnings" the same messages, and both the model's (worded as
doc/kvm-pvprof-report.8 says; at least one expected).
Prints a one-line summary on success.
"""
import json
import re
import sys

TEXT_NAME_MAX = 255
KIND = {"kernel": 2, "user": 3}     # report's PROFILE_KIND_*, its tie-break order


def esc_text(raw):
    """report's esc_text(): \\xHH for all but printable ASCII, and cut."""
    out = "".join(chr(b) if 0x20 <= b < 0x7f and b != 0x5c else "\\x%02x" % b
                  for b in raw[:TEXT_NAME_MAX])
    return out + ("..." if len(raw) > TEXT_NAME_MAX else "")


def utf8(raw):
    return raw.decode("utf-8", "replace")


def load_manifest(path):
    m = {"comm": {}, "ksym": {}, "msym": {}, "usym": {}, "samples": [], "losses": {}}
    for line in open(path):
        f = line.split()
        if f[0] in ("vcpus", "sideband", "entries"):
            m[f[0]] = int(f[1])
        elif f[0] == "ubase":
            m["ubase"] = int(f[1], 16)
        elif f[0] == "comm":
            m["comm"][int(f[1])] = bytes.fromhex(f[2])
        elif f[0] in ("ksym", "msym", "usym"):
            m[f[0]][int(f[1], 16)] = bytes.fromhex(f[2])
        elif f[0] in ("module", "dso", "domain"):
            m[f[0]] = bytes.fromhex(f[1])
        elif f[0] == "sample":
            vcpu, pid, count, flags, nk, nu = (int(x) for x in f[1:7])
            m["samples"].append({"vcpu": vcpu, "pid": pid, "count": count, "flags": flags,
                                 "nr_kernel": nk, "frames": [int(x, 16) for x in f[7:]]})
        elif f[0] == "loss":
            m["losses"][f[1]] = int(f[2])
    return m


def resolve(m, addr, kernel):
    """(name, mode, dso) of a frame, as the agent's messages describe it."""
    if kernel and addr in m["ksym"]:
        return m["ksym"][addr], "kernel", b"[kernel.kallsyms]"
    if kernel and addr in m["msym"]:
        return m["msym"][addr], "kernel", b"[" + m["module"] + b"]"
    if not kernel and addr - m["ubase"] in m["usym"]:
        return m["usym"][addr - m["ubase"]], "user", m["dso"]
    sys.exit("the manifest does not name frame %#x" % addr)


def parse_options(argv):
    o = {"vcpu": None, "pid": None, "comm": None, "frames": "all", "sort": "self", "limit": 50}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--vcpu", "--pid", "--limit"):
            o[a[2:]] = int(argv[i + 1])
            i += 1
        elif a in ("--comm", "--sort", "-i"):
            o[a.lstrip("-")] = argv[i + 1]
            i += 1
        elif a in ("--kernel", "--user"):
            o["frames"] = a[2:]
        elif a not in ("-j", "--json"):
            sys.exit("json-check.py: option %s is not modelled" % a)
        i += 1
    return o


def model(m, o):
    """The samples and functions report should show under options o."""
    comm_filter = o["comm"].encode("utf-8", "surrogateescape") if o["comm"] else None
    samples = frames = 0
    funcs = {}
    for s in m["samples"]:
        if o["vcpu"] is not None and s["vcpu"] != o["vcpu"]:
            continue
        if o["pid"] is not None and s["pid"] != o["pid"]:
            continue
        if comm_filter is not None and m["comm"][s["pid"]] != comm_filter:
            continue
        nk = s["nr_kernel"]
        idx = list(range(len(s["frames"])))
        if o["frames"] == "kernel":
            idx = idx[:nk]
        elif o["frames"] == "user":
            idx = idx[nk:]
        if not idx:
            continue
        samples += s["count"]
        frames += s["count"] * len(idx)
        keys = [resolve(m, s["frames"][i], i < nk) for i in idx]
        for k in set(keys):
            funcs.setdefault(k, [0, 0])[1] += s["count"]
        funcs.setdefault(keys[0], [0, 0])[0] += s["count"]
    self_first = o["sort"] == "self"
    order = sorted(funcs.items(), key=lambda kv: (
        -kv[1][0 if self_first else 1], -kv[1][1 if self_first else 0],
        kv[0][0], KIND[kv[0][1]], kv[0][2]))
    return samples, frames, order


def text_header(text):
    """The text header's counts, under the JSON's names."""
    text = text.replace("\n#   ", " ")     # lines wrapped before 100 columns

    def num(pattern, n=1):
        mm = re.search(pattern, text, re.M)
        if not mm:
            sys.exit("the text header lacks " + pattern)
        return [int(x) for x in mm.groups()] if n > 1 else int(mm.group(1))
    h = {}
    h["stream_records"], h["stream_bytes"], h["callchains"], h["user_mode"], \
        h["without_frames"] = num(r"^# stream entries: (\d+) \((\d+) bytes\), callchains: "
                                  r"(\d+) \((\d+) in user mode, (\d+) without frames\)$", 5)
    h["stale"] = num(r"^# stale: (\d+) \(")
    h["skewed"], h["skewed_same_function"] = num(
        r"^# skewed: (\d+) \(stacks taken after the sampled instruction had moved on; "
        r"(\d+) within the same function\)$", 2)
    h["truncated"], h["truncated_depth_limit"], h["truncated_walk_ended"] = num(
        r"^# truncated: (\d+) \(stacks that end before their outermost caller\): "
        r"at the depth limit (\d+), where the frame-pointer walk ended (\d+)", 3)
    h["cut_chains"] = dict(zip(("samples", "frames"), num(
        r"^# frame-pointer chains cut at a return address outside the image's code: "
        r"(\d+) \((\d+) frames\)$", 2)))
    h["lost"] = num(r"^# losses: (\d+) \(samples that left no callchain\), by reason: ")
    h["losses"] = {k: int(v) for k, v in re.findall(
        r"(\w+) (\d+)", re.search(r"^# losses: .*, by reason: (.*)$", text, re.M).group(1))}
    h["vcpu_events"] = dict(zip(("registered", "unregistered", "dropped"), num(
        r"^# vCPU events: registered (\d+), unregistered (\d+), dropped (\d+);", 3)))
    h["unknown_records"] = num(r"; unknown entries skipped: (\d+)$")
    h["sideband"] = dict(zip(("messages", "bytes", "rejected"), num(
        r"^# sideband: (\d+) messages \((\d+) bytes\), (\d+) rejected as malformed$", 3)))
    mm = re.search(r"^# symbols from the guest agent: (\d+) of the kernel image \(([^)]*)\), "
                   r"(\d+) of modules, (\d+) of ELF files; processes (\d+), mappings (\d+); "
                   r"messages the agent could not send (\d+) \((\d+) bytes\)$", text, re.M)
    if not mm:
        sys.exit("the text header lacks the guest agent's line")
    image, note = int(mm.group(1)), mm.group(2)
    modules, elf, procs, maps, lost, lost_bytes = (int(x) for x in mm.groups()[2:])
    announced = {"as announced": image, "none announced": 0}.get(note)
    if announced is None:
        announced = int(re.match(r"(\d+) announced", note).group(1))
    h["agent"] = {"kernel_syms": image, "kernel_syms_announced": announced,
                  "module_syms": modules, "elf_syms": elf, "processes": procs,
                  "mappings": maps, "lost_messages": lost, "lost_bytes": lost_bytes}
    h["samples"], h["frames"], h["unsymbolized_frames"] = num(
        r"^# samples shown: (\d+), frames: (\d+), unsymbolized frames: (\d+)$", 3)
    # Only for a recording with samples in pvprof's own NMI path.
    mm = re.search(r"^# pvprof overhead: (\d+) samples \(", text, re.M)
    h["own_nmi_samples"] = int(mm.group(1)) if mm else 0
    keys = ("samples", "notices", "records", "nmis", "lost", "sideband_bytes",
            "sideband_refused")
    h["host_counters"] = {when: dict(zip(keys, num(
        r"^# host counters at %s: samples (\d+), notices (\d+), callchains (\d+), NMIs (\d+), "
        r"losses (\d+), sideband bytes (\d+), refused (\d+)$" % when, 7)))
        for when in ("start", "end")}
    return h


def check_strings(raw_json):
    text = raw_json.decode("utf-8")         # strict
    bad = [c for c in text if ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) < 0xa0
           or c in "\u2028\u2029"]
    if bad:
        sys.exit("raw control characters in the JSON: %r" % bad[:5])
    if text.count("\n") != 1 or not text.endswith("\n"):
        sys.exit("the JSON is not one line")
    return json.loads(text)


def ranges(values):
    """[0, 1, 2, 5] -> "0-2, 5"."""
    out, i = [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else "%d-%d" % (values[i], values[j]))
        i = j + 1
    return ", ".join(out)


def busiest(tally, show):
    """The 8 keys with the most samples, ties by key: "k (n), ... and N more"."""
    order = sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join("%s (%d)" % (show(k), n) for k, n in order[:8])
    return text + (" and %d more" % (len(order) - 8) if len(order) > 8 else "")


def expected_warnings(m, o):
    comm = o["comm"].encode("utf-8", "surrogateescape") if o["comm"] else None
    samples, _, _ = model(m, o)
    if samples or all(o[k] is None for k in ("vcpu", "pid", "comm")) and o["frames"] == "all":
        return []
    hits = {"vcpu": 0, "pid": 0, "comm": 0, "all": 0}
    vcpus, pids, comms = set(), {}, {}
    for s in m["samples"]:
        ok = {"vcpu": o["vcpu"] is None or s["vcpu"] == o["vcpu"],
              "pid": o["pid"] is None or s["pid"] == o["pid"],
              "comm": comm is None or m["comm"][s["pid"]] == comm}
        for k in ok:
            hits[k] += s["count"] * ok[k]
        hits["all"] += s["count"] * all(ok.values())
        vcpus.add(s["vcpu"])
        pids[s["pid"]] = pids.get(s["pid"], 0) + s["count"]
        name = m["comm"][s["pid"]]
        comms[name] = comms.get(name, 0) + s["count"]
    out = []
    if o["vcpu"] is not None and not hits["vcpu"]:
        out.append("--vcpu %d matches no sample; the recording has samples of vCPU%s %s "
                   "(the VM has %d)" % (o["vcpu"], "s" if len(vcpus) > 1 else "",
                                        ranges(sorted(vcpus)), m["vcpus"]))
    if o["pid"] is not None and not hits["pid"]:
        out.append("--pid %d matches no sample; the pids with the most samples: %s"
                   % (o["pid"], busiest(pids, str)))
    if comm is not None and not hits["comm"]:
        out.append("--comm %s matches no sample; the commands with the most samples: %s"
                   % (esc_text(comm), busiest(comms, esc_text)))
    if out:
        return out
    given = [("--vcpu %d" % o["vcpu"], hits["vcpu"]) if o["vcpu"] is not None else None,
             ("--pid %d" % o["pid"], hits["pid"]) if o["pid"] is not None else None,
             ("--comm %s" % esc_text(comm), hits["comm"]) if comm is not None else None]
    given = [g for g in given if g]
    if not hits["all"]:
        return ["no sample matches %s together; alone, %s" % (
            " ".join(g for g, _ in given), ", ".join("%s matches %d" % g for g in given))]
    return ["--%s leaves no sample: none of the %d sample%s%s has %s frames" % (
        o["frames"], hits["all"], "s" if hits["all"] > 1 else "",
        " of " + " ".join(g for g, _ in given) if given else "", o["frames"])]


def check_warnings():
    m = load_manifest(sys.argv[2])
    stderr = open(sys.argv[3], "rb").read().decode("ascii")
    doc = check_strings(open(sys.argv[4], "rb").read())
    want = expected_warnings(m, parse_options(sys.argv[5:]))
    if not want:
        sys.exit("json-check.py: these options leave samples: nothing to warn of")
    if stderr != "".join("Warning: %s\n" % w for w in want):
        sys.exit("stderr %r, expected the warnings %r" % (stderr, want))
    if doc["warnings"] != want:
        sys.exit("JSON warnings %r, expected %r" % (doc["warnings"], want))
    if doc["samples"] != 0 or doc["functions"]:
        sys.exit("the JSON shows samples")
    print(want[0])


def main():
    if sys.argv[1] == "--warnings":
        check_warnings()
        return
    m = load_manifest(sys.argv[1])
    doc = check_strings(open(sys.argv[2], "rb").read())
    text = open(sys.argv[3], encoding="ascii").read()
    o = parse_options(sys.argv[4:])
    samples, frames, order = model(m, o)
    callchains = sum(s["count"] for s in m["samples"])

    want = {
        "callchains": callchains,
        "user_mode": sum(s["count"] for s in m["samples"] if s["flags"] & 1),
        "without_frames": 0, "stale": 0, "skewed": 0, "skewed_same_function": 0,
        "truncated": 0,
        "stream_records": m["entries"],
        "lost": sum(m["losses"].values()),
        "samples": samples, "own_nmi_samples": 0, "frames": frames, "unsymbolized_frames": 0,
    }
    for k, v in want.items():
        if doc[k] != v:
            sys.exit("%s: %r, the recording was built with %r" % (k, doc[k], v))
    if {k: v for k, v in doc["losses"].items() if v} != m["losses"]:
        sys.exit("losses %r, built with %r" % (doc["losses"], m["losses"]))
    if doc["sideband"] != {"messages": m["sideband"], "bytes": doc["sideband"]["bytes"],
                           "rejected": 0}:
        sys.exit("sideband %r, built with %d messages" % (doc["sideband"], m["sideband"]))
    agent = {"kernel_syms": len(m["ksym"]), "kernel_syms_announced": len(m["ksym"]),
             "module_syms": len(m["msym"]), "elf_syms": len(m["usym"]),
             "processes": len(m["comm"]), "mappings": len(m["comm"]),
             "lost_messages": 0, "lost_bytes": 0}
    if doc["agent"] != agent:
        sys.exit("agent %r, built with %r" % (doc["agent"], agent))
    if doc["vm"]["nr_vcpus"] != m["vcpus"]:
        sys.exit("nr_vcpus %r" % doc["vm"]["nr_vcpus"])
    if doc["vm"]["domain"] != utf8(m["domain"]):
        sys.exit("domain %r, the recording holds %r" % (doc["vm"]["domain"], m["domain"]))
    comm = o["comm"].encode("utf-8", "surrogateescape") if o["comm"] else None
    # --time is not modelled here (perfopts-test.sh checks it): never given.
    filters = {"vcpu": o["vcpu"], "pid": o["pid"], "comm": comm and utf8(comm),
               "frames": o["frames"], "time": None}
    if doc["filters"] != filters:
        sys.exit("filters %r, given %r" % (doc["filters"], filters))

    for k, v in text_header(text).items():
        if doc[k] != v:
            sys.exit("%s: JSON %r, text header %r" % (k, doc[k], v))

    limit = o["limit"] or len(order)
    if (doc["sort"], doc["limit"], doc["nr_functions"]) != (o["sort"], o["limit"], len(order)):
        sys.exit("sort/limit/nr_functions %r, expected %r" % (
            (doc["sort"], doc["limit"], doc["nr_functions"]), (o["sort"], o["limit"], len(order))))
    rows = []
    for (name, mode, dso), (self_, total) in order[:limit]:
        want = {"name": utf8(name), "mode": mode, "dso": utf8(dso), "self": self_,
                "total": total}
        got = doc["functions"][len(rows)] if len(rows) < len(doc["functions"]) else {}
        for k, v in want.items():
            if got.get(k) != v:
                sys.exit("function %d: %s is %r, expected %r" % (len(rows), k, got.get(k), v))
        for k, n in (("self_percent", self_), ("total_percent", total)):
            if abs(got[k] - 100.0 * n / samples) > 0.005 + 1e-9:
                sys.exit("function %d: %s %r" % (len(rows), k, got[k]))
        rows.append("%8.2f%% %7.2f%% %9d %9d  %-6s  %s  (%s)" % (
            100.0 * self_ / samples, 100.0 * total / samples, self_, total, mode,
            esc_text(name), esc_text(dso)))
    if len(doc["functions"]) != len(rows):
        sys.exit("%d functions in the JSON, expected %d" % (len(doc["functions"]), len(rows)))
    table = [l for l in text.split("\n") if re.match(r"^ +\d+\.\d\d% ", l)]
    if table != rows:
        diff = [(a, b) for a, b in zip(table, rows) if a != b][:1]
        sys.exit("text table: %d rows, expected %d; first difference %r" % (
            len(table), len(rows), diff))
    print("%d samples, %d frames, %d of %d functions" % (samples, frames, len(rows), len(order)))


main()
