#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A long recording made of a real one, for measuring report and script.

usage: rec-replicate.py (--copies N | --size BYTES) IN OUT

OUT is IN with its samples N times over: IN's sections as they are (its
whole stream once: HELLO, sideband, samples, losses), then its callchain
entries N - 1 more times, each copy's host times shifted past the one
before, in STREAM sections of at most 64 KiB as record writes them; then
IN's sections after the stream, and an END section that counts the new
stream.  Only the samples repeat: the guest agent's sideband stays as the
agent sent it, so the profile's symbols and unwind tables are IN's, and
what grows is the stream alone.  --size BYTES takes the copies that make
OUT at least that large.

The layout is pvprof-data(5)'s; nothing here comes from kvm-pvprof.
"""
import argparse
import struct
import sys

HEADER = struct.Struct("<8sIIQ")
SECTION = struct.Struct("<IIQ")
STREAM_HDR = struct.Struct("<HHIIIQ")
END = struct.Struct("<QQQII")
SEC_STREAM, SEC_END = 4, 5
ST_CALLCHAIN = 2
MAX_SECTION = 65536


def align8(n):
    return (n + 7) & ~7


def read_sections(data):
    magic, version, header_size, _ = HEADER.unpack_from(data, 0)
    if magic != b"PVPFDATA" or version != 1 or header_size != HEADER.size:
        sys.exit("rec-replicate: not a version 1 pvprof recording")
    off, sections = HEADER.size, []
    while off + SECTION.size <= len(data):
        stype, _, size = SECTION.unpack_from(data, off)
        body = off + SECTION.size
        if body + size > len(data):
            sys.exit("rec-replicate: the input is cut at offset %d" % len(data))
        sections.append((stype, data[body:body + size]))
        off = body + align8(size)
    return sections


def callchains(sections):
    """The callchain entries of the stream, with their host times."""
    out = []
    for stype, payload in sections:
        if stype != SEC_STREAM:
            continue
        pos = 0
        while pos < len(payload):
            rtype, _, size, _, _, time_ns = STREAM_HDR.unpack_from(payload, pos)
            if size < STREAM_HDR.size or pos + size > len(payload):
                sys.exit("rec-replicate: a malformed stream entry")
            if rtype == ST_CALLCHAIN:
                out.append((time_ns, payload[pos:pos + size]))
            pos += size
    return out


class Writer:
    def __init__(self, f):
        self.f = f
        self.stream_bytes = 0
        self.stream_reads = 0
        self.size = 0

    def section(self, stype, payload):
        self.f.write(SECTION.pack(stype, 0, len(payload)))
        self.f.write(payload)
        self.f.write(bytes(align8(len(payload)) - len(payload)))
        self.size += SECTION.size + align8(len(payload))
        if stype == SEC_STREAM:
            self.stream_bytes += len(payload)
            self.stream_reads += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--copies", type=int)
    group.add_argument("--size", type=int)
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()

    with open(args.input, "rb") as f:
        data = f.read()
    sections = read_sections(data)
    samples = callchains(sections)
    if not samples:
        sys.exit("rec-replicate: the input holds no callchain entry")
    first = min(t for t, _ in samples)
    span = max(t for t, _ in samples) - first + 1000000
    sample_bytes = sum(len(r) for _, r in samples)
    copies = args.copies
    if copies is None:
        copies = max(1, -(-(args.size - len(data)) // sample_bytes) + 1)
    last_stream = max(i for i, (t, _) in enumerate(sections) if t == SEC_STREAM)
    end = next((p for t, p in sections if t == SEC_END), None)

    with open(args.output, "wb") as f:
        w = Writer(f)
        f.write(data[:HEADER.size])
        w.size = HEADER.size
        for i, (stype, payload) in enumerate(sections):
            if stype == SEC_END:
                continue
            w.section(stype, payload)
            if i != last_stream:
                continue
            for copy in range(1, copies):
                chunk = bytearray()
                for time_ns, entry in samples:
                    if len(chunk) + len(entry) > MAX_SECTION:
                        w.section(SEC_STREAM, bytes(chunk))
                        chunk = bytearray()
                    start = len(chunk)
                    chunk += entry
                    struct.pack_into("<Q", chunk, start + 16, time_ns + copy * span)
                if chunk:
                    w.section(SEC_STREAM, bytes(chunk))
        end_ns, stop = (END.unpack(end)[0], END.unpack(end)[3]) if end else (0, 2)
        w.section(SEC_END, END.pack(end_ns + (copies - 1) * span, w.stream_bytes,
                                    w.stream_reads, stop, 0))
    print("%s: %d bytes, %d copies of %d samples" % (args.output, w.size, copies,
                                                     len(samples)))


if __name__ == "__main__":
    main()
