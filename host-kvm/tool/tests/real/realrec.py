#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Small recordings cut from a real one, for the unwinder's tests.

usage: realrec.py cut --tool KVM_PVPROF --functions FILE [options] IN OUT
       realrec.py variant NAME IN OUT
       realrec.py variants

cut: OUT keeps, of IN (a recording of
tests/unwind/workload.c made by `make check-unwind`), a few callchain
entries of each hot leaf whose snapshot `kvm-pvprof script` unwinds to the
chain the construction gives (tests/unwind/chains.py), each one sample (the
marks of pvprof's own NMI path of stream version 2 cleared), and what they
need: HOST, VM and STATUS as they were, the stream's HELLO and VCPU
entries, and of the sideband the KERNEL message (kernel frames are then
named [kernel.kallsyms]+offset: the kernel's 870 KB of symbols stay out)
and, for the sampled process images (and the images they were forked
from), their PROCESS, MMAP and EXIT messages and the ELF_SYMS and UNWIND
messages of the build-ids those mappings name.  Each snapshot is cut to
the bytes the unwinder reads, plus a margin: every size from 0 to the
snapshot's own, in steps of 8, goes through `kvm-pvprof script` in one
probe recording; the smallest size from which every larger one gives the
sample's frames (addresses, the kernel's included) exactly as the whole
snapshot does is what the unwinder needs.  The cut recording is read back
the same way and must give every sample's frames as IN did.  A manifest
(--manifest) names the samples, their chains and their sizes.

variant: OUT is IN made hostile in one way, for the tests (variants lists
the names); nothing else changes.

The layout is pvprof-data(5)'s and the specification's (spec pvprof-ustack,
spec pvprof-stream, spec pvprof-sideband); the reader and writer are
tests/rec-replicate.py's.
"""
import argparse
import collections
import importlib.util
import io
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rr = load("rec_replicate", os.path.join(HERE, "..", "rec-replicate.py"))

SEC_STREAM, SEC_END = 4, 5
ST_HELLO, ST_CALLCHAIN, ST_VCPU, ST_SIDEBAND = 1, 2, 4, 5
SB_KERNEL, SB_PROCESS, SB_MMAP, SB_ELF_SYMS, SB_EXIT, SB_UNWIND = 1, 4, 5, 6, 7, 9
CHAIN_F_USER, CHAIN_F_USTACK = 1 << 0, 1 << 6
PROC_F_FORK = 1 << 0

# struct pvprof_st_callchain: the stream header (24), notice_ip, guest_tsc,
# notice_cpl, event, sample_flags, own_nmi_samples (stream version 2; zero
# in version 1 and in the recordings here), then struct pvprof_callchain.
NOTICE = struct.Struct("<QQBBHI")
NOTICE_OFF = 24
CHAIN_OFF = NOTICE_OFF + NOTICE.size
CHAIN = struct.Struct("<QQIIIIHHHH")
FRAMES_OFF = CHAIN_OFF + CHAIN.size
USTACK = struct.Struct("<8QII")
UREG_IP, UREG_SP = 0, 1
SB_HDR = struct.Struct("<HHIQ")
SB_OFF = 24


def align8(n):
    return (n + 7) & ~7


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Recording:
    """A recording as its sections, the stream as its entries, in order."""

    def __init__(self, data):
        self.header = data[:rr.HEADER.size]
        self.before, self.after = [], []
        self.entries = []
        self.end = None
        seen_stream = False
        for stype, payload in rr.read_sections(data):
            if stype == SEC_STREAM:
                seen_stream = True
                pos = 0
                while pos < len(payload):
                    size = rr.STREAM_HDR.unpack_from(payload, pos)[2]
                    self.entries.append(bytearray(payload[pos:pos + size]))
                    pos += size
            elif stype == SEC_END:
                self.end = payload
            elif seen_stream:
                self.after.append((stype, payload))
            else:
                self.before.append((stype, payload))

    def write(self, entries):
        """The file with ENTRIES as its stream, END counting it."""
        buf = io.BytesIO()
        buf.write(self.header)
        w = rr.Writer(buf)
        for stype, payload in self.before:
            w.section(stype, payload)
        chunk = bytearray()
        for entry in entries:
            if len(chunk) + len(entry) > rr.MAX_SECTION:
                w.section(SEC_STREAM, bytes(chunk))
                chunk = bytearray()
            chunk.extend(entry)
        if chunk:
            w.section(SEC_STREAM, bytes(chunk))
        for stype, payload in self.after:
            w.section(stype, payload)
        end_ns, stop = 0, 2
        if self.end is not None:
            fields = rr.END.unpack(self.end)
            end_ns, stop = fields[0], fields[3]
        w.section(SEC_END, rr.END.pack(end_ns, w.stream_bytes, w.stream_reads, stop, 0))
        return buf.getvalue()


def rtype(entry):
    return struct.unpack_from("<H", entry, 0)[0]


def sb_type(entry):
    return SB_HDR.unpack_from(entry, SB_OFF)[0]


def build_id(entry, off):
    n = entry[off]
    return bytes(entry[off + 8:off + 8 + min(n, 32)])


class Callchain:
    """Views of a CALLCHAIN stream entry's fields."""

    def __init__(self, entry):
        self.entry = entry
        (_, _, self.pid, self.tid, self.exec_gen, self.flags, self.size,
         self.nr_kernel, self.nr_user, _) = CHAIN.unpack_from(entry, CHAIN_OFF)
        self.nr = self.nr_kernel + self.nr_user
        self.ustack_off = FRAMES_OFF + 8 * self.nr
        self.has_ustack = bool(self.flags & CHAIN_F_USTACK)
        if self.has_ustack:
            fields = USTACK.unpack_from(entry, self.ustack_off)
            self.regs = list(fields[:8])
            self.stack_size = fields[8]
            self.data_off = self.ustack_off + USTACK.size

    def stack(self):
        return bytes(self.entry[self.data_off:self.data_off + self.stack_size])


def clear_marks(entry):
    """Clear a CALLCHAIN entry's marks of pvprof's own NMI path in place:
    it is then one sample, shown with its chain's stack."""
    struct.pack_into("<HI", entry, NOTICE_OFF + 18, 0, 0)


def callchain_with(entry, stack=None, regs=None):
    """ENTRY with its snapshot's bytes and/or registers replaced."""
    c = Callchain(entry)
    stack = c.stack() if stack is None else stack
    regs = c.regs if regs is None else regs
    body = bytearray(entry[:c.ustack_off])
    body += USTACK.pack(*regs, len(stack), 0)
    body += stack + bytes(align8(len(stack)) - len(stack))
    chain_size = len(body) - CHAIN_OFF
    struct.pack_into("<I", body, 4, len(body))
    struct.pack_into("<H", body, CHAIN_OFF + 32, chain_size)
    return body


def parse_script(text):
    """kvm-pvprof script's samples: (header fields, [(addr, symbol, dso)])."""
    samples = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            samples.append((line.split(), []))
            continue
        fields = line.split()
        sym = re.sub(r"\+0x[0-9a-f]+$", "", " ".join(fields[1:-1]))
        samples[-1][1].append((int(fields[0], 16), sym, fields[-1].strip("()")))
    return samples


def run_script(tool, data):
    with tempfile.NamedTemporaryFile(suffix=".data") as f:
        f.write(data)
        f.flush()
        p = subprocess.run([tool, "script", "-i", f.name], capture_output=True, check=False)
    if p.returncode or p.stderr:
        sys.exit("realrec: kvm-pvprof script failed (%d): %s" %
                 (p.returncode, p.stderr.decode(errors="replace")[:300]))
    return parse_script(p.stdout.decode(errors="replace"))


def fold(frames, dso, functions):
    """A sample's chain, as demo/chains.awk folds it."""
    tokens = []
    for _, sym, owner in reversed(frames):
        if owner == "[vdso]":
            token = "[vdso]"
        elif owner == dso and sym in functions:
            token = sym
        else:
            continue
        if token == "[vdso]" and tokens and tokens[-1] == "[vdso]":
            continue
        tokens.append(token)
    return ";".join(tokens) or "-"


def needed_sideband(entries, images):
    """Indices of the sideband entries that IMAGES, (pid, exec_gen), need."""
    # A forked image starts with its parent's mappings: follow them up.
    todo, images = list(images), set(images)
    while todo:
        pid, gen = todo.pop()
        for entry in entries:
            if rtype(entry) == ST_SIDEBAND and sb_type(entry) == SB_PROCESS:
                p, g, parent, flags = struct.unpack_from("<IIII", entry, SB_OFF + 16)
                if (p, g) == (pid, gen) and flags & PROC_F_FORK and (parent, g) not in images:
                    images.add((parent, g))
                    todo.append((parent, g))
    ids, keep = set(), []
    for i, entry in enumerate(entries):
        if rtype(entry) != ST_SIDEBAND:
            continue
        t = sb_type(entry)
        if t in (SB_PROCESS, SB_MMAP, SB_EXIT):
            if struct.unpack_from("<II", entry, SB_OFF + 16) in images:
                keep.append(i)
                if t == SB_MMAP:
                    ids.add(build_id(entry, SB_OFF + 56))
        elif t == SB_KERNEL:
            keep.append(i)
    for i, entry in enumerate(entries):
        if rtype(entry) == ST_SIDEBAND and sb_type(entry) in (SB_ELF_SYMS, SB_UNWIND) \
                and build_id(entry, SB_OFF + 16) in ids:
            keep.append(i)
    return sorted(set(keep))


def spread(items, n):
    """N of ITEMS, spread evenly over the run."""
    if len(items) <= n:
        return list(items)
    return [items[(2 * k + 1) * len(items) // (2 * n)] for k in range(n)]


def frames_key(frames):
    return [addr for addr, _, _ in frames]


def cut(args):
    chains = load("chains", os.path.join(REPO, "tests", "unwind", "chains.py"))
    with open(args.functions, encoding="utf-8") as f:
        functions = set(f.read().split())
    data = read_file(args.input)
    recording = Recording(data)
    head = [i for i, r in enumerate(recording.entries) if rtype(r) in (ST_HELLO, ST_VCPU)]
    calls = [i for i, r in enumerate(recording.entries) if rtype(r) == ST_CALLCHAIN]
    # One sample per entry: a stream version 2 host marks the samples that
    # hit pvprof's own NMI path and folds more into an entry, which script
    # prints as samples of their own.  The chains are what is judged here.
    if any(NOTICE.unpack_from(recording.entries[i], NOTICE_OFF)[4:] != (0, 0) for i in calls):
        for i in calls:
            clear_marks(recording.entries[i])
        data = recording.write(recording.entries)
    samples = run_script(args.tool, data)
    if len(samples) != len(calls):
        sys.exit("realrec: script printed %d samples for %d callchain entries" %
                 (len(samples), len(calls)))

    # The candidates: the workload's samples with a snapshot whose chain is
    # one the construction gives, by leaf, chain and mode.
    wanted = {}
    for leaf, expected in chains.EXPECTED.items():
        for chain in (expected,) if isinstance(expected, str) else expected:
            wanted[chain] = leaf
    cands = collections.defaultdict(list)
    for i, (hdr, frames) in zip(calls, samples):
        c = Callchain(recording.entries[i])
        chain = fold(frames, args.dso, functions)
        if hdr[0] == args.comm and c.has_ustack and chain in wanted:
            mode = "user" if c.flags & CHAIN_F_USER else "kernel"
            cands[(chain, mode)].append((i, frames))
    chosen = []
    for chain, leaf in wanted.items():
        for mode, n in (("user", args.user), ("kernel", args.kernel)):
            for i, frames in spread(cands[(chain, mode)], n):
                chosen.append((i, leaf, chain, mode, frames))
    chosen.sort(key=lambda c: c[0])
    if not chosen:
        sys.exit("realrec: no sample of %s carries an expected chain" % args.comm)
    images = set()
    for i, *_ in chosen:
        c = Callchain(recording.entries[i])
        images.add((c.pid, c.exec_gen))
    context = head + needed_sideband(recording.entries, images)

    # The entries kept, in IN's order: a sample sees the sideband that came
    # before it, as in IN.
    def stream(samples_at):
        order = sorted([(i, 0, recording.entries[i]) for i in context] +
                       [(i, 1 + k, r) for k, (i, r) in enumerate(samples_at)])
        return [r for _, _, r in order]

    kept = []
    for i, leaf, chain, mode, frames in chosen:
        c = Callchain(recording.entries[i])
        whole = c.stack()
        sizes = list(range(0, len(whole), 8)) + [len(whole)]
        probe = [(i, callchain_with(recording.entries[i], whole[:s])) for s in sizes]
        got = run_script(args.tool, recording.write(stream(probe)))
        want = frames_key(frames)
        if frames_key(got[-1][1]) != want:
            sys.exit("realrec: stream entry %d unwinds differently alone than in %s" %
                     (i, args.input))
        need = len(whole)
        for s, (_, fr) in reversed(list(zip(sizes, got))):
            if frames_key(fr) != want:
                break
            need = s
        size = min(len(whole), need + args.margin)
        kept.append((i, leaf, chain, mode, len(whole), need, size,
                     callchain_with(recording.entries[i], whole[:size]), frames))

    out = recording.write(stream([(k[0], k[7]) for k in kept]))
    got = run_script(args.tool, out)
    if [frames_key(fr) for _, fr in got] != [frames_key(k[8]) for k in kept]:
        sys.exit("realrec: the cut recording unwinds differently from %s" % args.input)
    write_file(args.output, out)
    if args.manifest:
        with open(args.manifest, "w", encoding="utf-8") as f:
            f.write("# SPDX-License-Identifier: GPL-2.0\n"
                    "# realrec.py cut: the samples of %s, in stream order\n"
                    "# leaf mode pid/tid snapshot-bytes-recorded needed kept chain\n"
                    % os.path.basename(args.output))
            for i, leaf, chain, mode, whole, need, size, r, _ in kept:
                c = Callchain(r)
                f.write("%s %s %d/%d %d %d %d %s\n" % (leaf, mode, c.pid, c.tid,
                                                       whole, need, size, chain))
    print("%s: %d bytes, %d samples, %d sideband messages; "
          "snapshots %d bytes as recorded, %d needed, %d kept" %
          (args.output, len(out), len(kept), len(context) - len(head),
           sum(k[4] for k in kept), sum(k[5] for k in kept), sum(k[6] for k in kept)))


# The hostile variants: each takes the recording and changes one thing.

def each_callchain(recording, fn):
    for j, r in enumerate(recording.entries):
        if rtype(r) == ST_CALLCHAIN and Callchain(r).has_ustack:
            recording.entries[j] = fn(r)


def v_size(n):
    def apply(recording):
        each_callchain(recording, lambda r: callchain_with(r, Callchain(r).stack()[:n]))
    return apply


def v_sp(fn):
    def apply(recording):
        def one(r):
            regs = Callchain(r).regs
            regs[UREG_SP] = fn(regs[UREG_SP]) & (2**64 - 1)
            return callchain_with(r, regs=regs)
        each_callchain(recording, one)
    return apply


def v_self_return(recording):
    # Every word of the stack is the sampled IP: each return address found
    # leads back into the frame just left.  8 KiB of them, the size record
    # asks for by default: enough words for the depth cap to end the walks
    # (a frame takes a word or more), not the end of the bytes.
    def one(r):
        return callchain_with(r, struct.pack("<Q", Callchain(r).regs[UREG_IP]) * 1024)
    each_callchain(recording, one)


def uleb(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def elf_symbols(recording):
    """{build-id: {name: ELF address}} from the ELF_SYMS messages."""
    out = collections.defaultdict(dict)
    for r in recording.entries:
        if rtype(r) != ST_SIDEBAND or sb_type(r) != SB_ELF_SYMS:
            continue
        end = SB_OFF + SB_HDR.unpack_from(r, SB_OFF)[2]
        addr, nr = struct.unpack_from("<QH", r, SB_OFF + 56)
        pos, name = SB_OFF + 72, b""
        for _ in range(nr):
            delta, pos = uleb(r, pos)
            _, pos = uleb(r, pos)
            prefix, suffix = r[pos], r[pos + 1]
            name = name[:prefix] + bytes(r[pos + 2:pos + 2 + suffix])
            pos += 2 + suffix
            addr += delta
            out[build_id(r, SB_OFF + 16)][name.decode(errors="replace")] = addr
        if pos != end:
            sys.exit("realrec: an ELF_SYMS message does not end with its entries")
    return out


def runtime_addresses(recording, name):
    """Where each process image maps the function NAME."""
    syms = elf_symbols(recording)
    found = set()
    for r in recording.entries:
        if rtype(r) == ST_SIDEBAND and sb_type(r) == SB_MMAP:
            start, length, _, vaddr = struct.unpack_from("<QQQQ", r, SB_OFF + 24)
            value = syms.get(build_id(r, SB_OFF + 56), {}).get(name)
            if value is not None and vaddr <= value < vaddr + length:
                found.add(value - vaddr + start)
    return found


def v_sigframe_loop(recording):
    # A handler returns into __restore_rt, on the kernel's signal frame:
    # the word after that return address starts the ucontext, whose saved
    # rsp (uc_mcontext's 16th register, 160 bytes in) is where glibc's CFI
    # for __restore_rt finds the interrupted code's stack.  Pointed back at
    # the sample's own stack pointer, it makes the walk go down the stack.
    restorers = runtime_addresses(recording, "__restore_rt")
    if not restorers:
        sys.exit("realrec: no __restore_rt in the ELF symbols")

    def one(r):
        c = Callchain(r)
        stack = bytearray(c.stack())
        for off in range(0, len(stack) - 8 - 168, 8):
            if struct.unpack_from("<Q", stack, off)[0] in restorers:
                struct.pack_into("<Q", stack, off + 8 + 160, c.regs[UREG_SP])
                return callchain_with(r, bytes(stack))
        return r
    each_callchain(recording, one)


def unwind_entries(recording):
    return [j for j, r in enumerate(recording.entries)
            if rtype(r) == ST_SIDEBAND and sb_type(r) == SB_UNWIND]


UNWIND_DATA = SB_OFF + 80


def v_tables(how):
    def apply(recording):
        rng = random.Random(2405)
        for j in unwind_entries(recording):
            r = recording.entries[j]
            n = SB_HDR.unpack_from(r, SB_OFF)[2] - 80
            part = r[UNWIND_DATA:UNWIND_DATA + n]
            if how == "zero":
                part = bytes(n)
            elif how == "random":
                part = bytes(rng.getrandbits(8) for _ in range(n))
            elif how == "flip":
                part = bytes(b ^ 0xff for b in part)
            r[UNWIND_DATA:UNWIND_DATA + n] = part
        if how == "none":
            gone = set(unwind_entries(recording))
            recording.entries = [r for j, r in enumerate(recording.entries) if j not in gone]
        if how == "lost-part":
            # A section's second part never arrived (the agent's rate limit).
            gone = [j for j in unwind_entries(recording)
                    if struct.unpack_from("<I", recording.entries[j], SB_OFF + 68)[0] != 0]
            seen, drop = set(), set()
            for j in gone:
                r = recording.entries[j]
                key = (build_id(r, SB_OFF + 16), struct.unpack_from("<H", r, SB_OFF + 72)[0])
                if key not in seen:
                    seen.add(key)
                    drop.add(j)
            recording.entries = [r for j, r in enumerate(recording.entries) if j not in drop]
    return apply


VARIANTS = {
    "size-0": v_size(0),
    "size-8": v_size(8),
    "size-64": v_size(64),
    "sp-up-1m": v_sp(lambda sp: sp + (1 << 20)),
    "sp-0": v_sp(lambda sp: 0),
    "sp-wrap": v_sp(lambda sp: 2**64 - 8),
    "self-return": v_self_return,
    "sigframe-loop": v_sigframe_loop,
    "tables-none": v_tables("none"),
    "tables-zero": v_tables("zero"),
    "tables-random": v_tables("random"),
    "tables-flip": v_tables("flip"),
    "tables-lost-part": v_tables("lost-part"),
}


def variant(args):
    recording = Recording(read_file(args.input))
    VARIANTS[args.name](recording)
    write_file(args.output, recording.write(recording.entries))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cut")
    c.add_argument("--tool", required=True, help="kvm-pvprof")
    c.add_argument("--functions", required=True, help="the workload's function names")
    c.add_argument("--dso", default="/demo/unwind-workload")
    c.add_argument("--comm", default="unwind-workload")
    c.add_argument("--user", type=int, default=3, help="user-mode samples per chain")
    c.add_argument("--kernel", type=int, default=1, help="kernel-mode samples per chain")
    c.add_argument("--margin", type=int, default=128, help="bytes kept past the need")
    c.add_argument("--manifest")
    c.add_argument("input")
    c.add_argument("output")
    v = sub.add_parser("variant")
    v.add_argument("name", choices=sorted(VARIANTS))
    v.add_argument("input")
    v.add_argument("output")
    sub.add_parser("variants")
    args = ap.parse_args()
    if args.cmd == "cut":
        cut(args)
    elif args.cmd == "variant":
        variant(args)
    else:
        print(" ".join(VARIANTS))


if __name__ == "__main__":
    main()
