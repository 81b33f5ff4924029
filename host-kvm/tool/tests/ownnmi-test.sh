#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Samples in pvprof's own NMI path (stream version 2's sample_flags and
# own_nmi_samples), no VM needed: ownnmi-check.py describes a recording
# entry by entry, has perfopts-gen write it, expands each entry into the
# 1 + own_nmi_samples samples it stands for, and checks report (header,
# JSON, the top table, --sort dso, --folded, --per-vcpu, --time,
# --percent-limit, --kernel, --user, the call graph, the flame graph) and
# script (folded by stackcollapse-perf.pl's rules and by demo/chains.awk)
# against them; a version 1 recording must read as the same stream of
# version 2 without marks, byte for byte.  pprof-test.sh reads the same
# kind of recording back with go tool pprof.
#
# usage: ownnmi-test.sh       writes "<passed> <failed>" to $O/results/tool-ownnmi
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$O/tool/tests/perfopts-gen
[ -x "$gen" ] || { echo "${0##*/}: $gen is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

echo "== a described recording (ownnmi-check.py)"
run_check ownnmi-check.py "$bin" "$gen" "$repo/demo/chains.awk" "$tmp"

finish tool-ownnmi
