#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""perf.data's user samples, for pvprof-gen to stream as the host would.

usage: perf_samples.py [--pid PID] PERF_DATA OUT

Reads a perf.data of `perf record -e cpu-clock --all-user --call-graph
fp|dwarf PROGRAM` and writes, for pvprof-gen, each process it saw (COMM),
its executable file mappings (MMAP, MMAP2), and every sample: pid, tid,
time, the user callchain perf recorded (the IP alone in dwarf mode, where
perf leaves the user chain to its unwinder), and in dwarf mode the user
registers DWARF needs and the stack bytes.  So both profilers are measured
on the same samples.  Prints "samples N frames F snapshots S".

Output: "PVBCSMP1", then items of u32 tag, u32 payload length, the
payload, padded to 8 bytes:
  1 map      u32 pid, u32 0, u64 start, len, pgoff, then the path
  2 process  u32 pid, then the comm (16 bytes, NUL-padded)
  3 sample   u32 pid, tid, u64 time, u32 nr_frames, u32 stack_size,
             u32 has_regs, u32 0, u64 frames[nr], then with has_regs
             u64 regs[8] (pvprof's PVPROF_UREG_* order) and the stack

The layout read is perf's own (include/uapi/linux/perf_event.h,
tools/perf/util/header.h); nothing here runs perf.
"""
import argparse
import struct
import sys

FILE_HEADER = struct.Struct("<8sQQQQQQQQ")
EVENT_HEADER = struct.Struct("<IHH")
ATTR_HEAD = struct.Struct("<IIQQQQQ")  # type, size, config, period, sample_type, read_format, flags

REC_MMAP, REC_COMM, REC_SAMPLE, REC_MMAP2 = 1, 3, 9, 10
MISC_MMAP_DATA = 1 << 13
MISC_MMAP_BUILD_ID = 1 << 14
PROT_EXEC = 4

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD = (1 << i for i in range(9))
S_STREAM_ID, S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = (1 << i for i in range(9, 14))
S_IDENTIFIER = 1 << 16
# Fields before the user stack whose size this parser does not work out;
# those after it (weight, data_src, ...) end the record and are not read.
UNPARSED_BEFORE_STACK = S_READ | S_RAW | S_BRANCH_STACK

# Callchain entries at or above this are context markers (PERF_CONTEXT_*).
CONTEXT_MAX = (1 << 64) - 4095
# x86 perf_regs bit numbers of what pvprof's snapshot carries, in its
# PVPROF_UREG_* order: IP, SP, BP, BX, R12, R13, R14, R15.
PVPROF_REG_BITS = (8, 7, 6, 1, 20, 21, 22, 23)

TAG_MAP, TAG_PROCESS, TAG_SAMPLE = 1, 2, 3


def die(msg):
    sys.exit("perf_samples: " + msg)


def cstr(b):
    return b.split(b"\0", 1)[0]


class Out:
    def __init__(self, f):
        self.f = f
        f.write(b"PVBCSMP1")

    def put(self, tag, payload):
        pad = (-len(payload)) % 8
        self.f.write(struct.pack("<II", tag, len(payload)))
        self.f.write(payload)
        self.f.write(bytes(pad))


def read_attr(data):
    (magic, _, attr_size, attrs_off, attrs_size, data_off, data_size, _, _) = \
        FILE_HEADER.unpack_from(data, 0)
    if magic != b"PERFILE2":
        die("not a perf.data file (or not little-endian PERFILE2)")
    attrs = []
    for off in range(attrs_off, attrs_off + attrs_size, attr_size):
        _, size, _, _, sample_type, _, flags = ATTR_HEAD.unpack_from(data, off)
        regs_user = struct.unpack_from("<Q", data, off + 80)[0] if size >= 88 else 0
        attrs.append((sample_type, flags, regs_user))
    if not attrs:
        die("no event in the file")
    # With several events every sample starts with PERF_SAMPLE_IDENTIFIER;
    # perf record of one cpu-clock event writes one.
    if len({a[0] for a in attrs}) != 1 or len({a[2] for a in attrs}) != 1:
        die("events with different sample layouts")
    return attrs[0], data_off, data_size


def parse_sample(data, off, end, sample_type, regs_user):
    """pid, tid, time, user callchain, regs (or None), stack bytes."""
    pid = tid = time = 0
    ip = None
    chain = []
    if sample_type & S_IDENTIFIER:
        off += 8
    if sample_type & S_IP:
        ip = struct.unpack_from("<Q", data, off)[0]
        off += 8
    if sample_type & S_TID:
        pid, tid = struct.unpack_from("<II", data, off)
        off += 8
    if sample_type & S_TIME:
        time = struct.unpack_from("<Q", data, off)[0]
        off += 8
    for bit in (S_ADDR, S_ID, S_STREAM_ID, S_CPU, S_PERIOD):
        if sample_type & bit:
            off += 8
    if sample_type & S_CALLCHAIN:
        nr = struct.unpack_from("<Q", data, off)[0]
        ips = struct.unpack_from("<%dQ" % nr, data, off + 8)
        off += 8 + 8 * nr
        chain = [a for a in ips if a < CONTEXT_MAX]
    regs = None
    stack = b""
    if sample_type & S_REGS_USER:
        abi = struct.unpack_from("<Q", data, off)[0]
        off += 8
        if abi:
            n = bin(regs_user).count("1")
            vals = struct.unpack_from("<%dQ" % n, data, off)
            off += 8 * n
            by_bit, i = {}, 0
            for bit in range(64):
                if regs_user & (1 << bit):
                    by_bit[bit] = vals[i]
                    i += 1
            regs = [by_bit.get(b, 0) for b in PVPROF_REG_BITS]
    if sample_type & S_STACK_USER:
        size = struct.unpack_from("<Q", data, off)[0]
        off += 8
        if size:
            raw = data[off:off + size]
            off += size
            dyn = struct.unpack_from("<Q", data, off)[0]
            off += 8
            stack = raw[:min(dyn, size)]
    if off > end:
        die("a sample runs past its record")
    if not chain and ip is not None:
        chain = [ip]
    elif ip is not None and chain[0] != ip:
        # The first user frame is the IP, as in pvprof's user-mode callchains.
        chain.insert(0, ip)
    return pid, tid, time, chain, regs, stack


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pid", type=int, help="only this process (default: all)")
    ap.add_argument("perf_data")
    ap.add_argument("output")
    args = ap.parse_args()

    with open(args.perf_data, "rb") as f:
        data = f.read()
    (sample_type, _, regs_user), data_off, data_size = read_attr(data)
    if sample_type & UNPARSED_BEFORE_STACK:
        die("sample fields this parser does not know: %#x" % sample_type)
    mapped = set()
    counts = {"samples": 0, "frames": 0, "snapshots": 0}
    with open(args.output, "wb") as f:
        out = Out(f)
        off, end = data_off, data_off + data_size
        while off + EVENT_HEADER.size <= end:
            rtype, misc, size = EVENT_HEADER.unpack_from(data, off)
            if size < EVENT_HEADER.size or off + size > end:
                die("a malformed record at offset %d" % off)
            body = off + EVENT_HEADER.size
            if rtype in (REC_MMAP, REC_MMAP2):
                pid, _, start, length, pgoff = struct.unpack_from("<IIQQQ", data, body)
                fname_off = body + 32
                executable = not misc & MISC_MMAP_DATA
                if rtype == REC_MMAP2:
                    prot = struct.unpack_from("<I", data, body + 56)[0]
                    executable = bool(prot & PROT_EXEC)
                    fname_off = body + 64
                path = cstr(data[fname_off:off + size])
                # Files only: a guest agent has no tables for [vdso] either.
                if (executable and path.startswith(b"/") and pid != 0xffffffff and
                        (args.pid is None or pid == args.pid) and
                        (pid, start) not in mapped):
                    mapped.add((pid, start))
                    out.put(TAG_MAP, struct.pack("<IIQQQ", pid, 0, start, length, pgoff) + path)
            elif rtype == REC_COMM:
                pid = struct.unpack_from("<I", data, body)[0]
                comm = cstr(data[body + 8:off + size])[:15]
                if args.pid is None or pid == args.pid:
                    out.put(TAG_PROCESS, struct.pack("<I16s", pid, comm))
            elif rtype == REC_SAMPLE:
                pid, tid, time, chain, regs, stack = parse_sample(
                    data, body, off + size, sample_type, regs_user)
                if (args.pid is None or pid == args.pid) and chain:
                    payload = struct.pack("<IIQIIII", pid, tid, time, len(chain), len(stack),
                                          regs is not None, 0)
                    payload += struct.pack("<%dQ" % len(chain), *chain)
                    if regs is not None:
                        payload += struct.pack("<8Q", *regs) + stack
                        counts["snapshots"] += 1
                    out.put(TAG_SAMPLE, payload)
                    counts["samples"] += 1
                    counts["frames"] += len(chain)
            off += size
    print("samples %(samples)d frames %(frames)d snapshots %(snapshots)d" % counts)


if __name__ == "__main__":
    main()
