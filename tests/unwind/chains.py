#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Compare guest user call chains with the workload's construction.

Reads the chains demo/chains.awk folded from `kvm-pvprof script` and,
optionally, from the guest's own `perf script` (demo/run.sh --guest-perf),
and prints, for each hot leaf of tests/unwind/workload.c, one line:

    LEAF EXPECTED PVPROF_MATCHING PVPROF_TOTAL PERF_MATCHING PERF_TOTAL PERF_COMMONEST

EXPECTED holds the chains the construction allows, separated by "|";
PERF_COMMONEST is the chain perf gave most often under LEAF, with a "!"
before it when the construction does not allow it; the perf columns are
"- - -" without --perf.
"""

import argparse
import collections
import sys

RECURSE_DEPTH = 6  # workload.c

# What workload.c's construction puts on the stack under each hot leaf, as
# chains.awk writes chains: the workload's own frames, the vDSO's as
# "[vdso]", outermost first.  A leaf reached from two places has two.
EXPECTED = {
    "chain_leaf": "_start;main;chain_a;chain_b;chain_leaf",
    "by_key": "_start;main;sort_phase;by_key",
    "recurse_bottom": ";".join(["_start", "main"] + ["recurse"] * (RECURSE_DEPTH + 1) + ["recurse_bottom"]),
    # tail_from jumps to tail_to: no frame of it is left.
    "tail_to": "_start;main;tail_to",
    "signal_leaf": "_start;main;signal_phase;on_signal;signal_leaf",
    # A thread's stack starts in glibc's start_thread, not in the program.
    "thread_leaf": "thread_main;thread_leaf",
    # clock_gettime in glibc, then the vDSO (and the kernel, if the vDSO
    # falls back to the system call); main reads the clock too, 3 times a
    # round.
    "[vdso]": ("_start;main;vdso_phase;[vdso]", "_start;main;[vdso]"),
}


def read_chains(path):
    """(leaf, chain) -> samples, from chains.awk's "LEAF CHAIN COUNT" lines."""
    counts = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as chains:
        for line in chains:
            fields = line.split()
            if len(fields) == 3 and fields[2].isdigit():
                counts[(fields[0], fields[1])] += int(fields[2])
    return counts


def tally(counts, leaf, expected):
    total = sum(n for (l, _), n in counts.items() if l == leaf)
    matching = sum(counts.get((leaf, chain), 0) for chain in expected)
    commonest = max(((n, c) for (l, c), n in counts.items() if l == leaf), default=(0, "-"))[1]
    return matching, total, commonest


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pvprof", required=True, help="chains.awk over kvm-pvprof script")
    parser.add_argument("--perf", help="chains.awk over the guest's perf script")
    args = parser.parse_args()

    try:
        pvprof = read_chains(args.pvprof)
        perf = read_chains(args.perf) if args.perf else None
    except OSError as err:
        sys.exit(f"chains.py: {err}")

    for leaf, expected in EXPECTED.items():
        if isinstance(expected, str):
            expected = (expected,)
        ok, total, _ = tally(pvprof, leaf, expected)
        if perf is None:
            perf_columns = "- - -"
        else:
            perf_ok, perf_total, commonest = tally(perf, leaf, expected)
            # perf agrees when its commonest chain is one the construction has.
            commonest = commonest if commonest in expected else "!" + commonest
            perf_columns = f"{perf_ok} {perf_total} {commonest}"
        print(f"{leaf} {'|'.join(expected)} {ok} {total} {perf_columns}")


if __name__ == "__main__":
    main()
