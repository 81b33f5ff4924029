#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Skewed callchains by how far the stack moved (report's "within the same
# function"), no VM needed: skew-check.py describes a recording entry by
# entry, with the notice's IP and CPL beside each chain, has perfopts-gen
# write it, and checks report's header and JSON, case by case, together,
# under the filters and in every view, against what its own model of the
# published symbols says each case counts as.
#
# usage: skew-test.sh       writes "<passed> <failed>" to $O/results/tool-skew
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

gen=$O/tool/tests/perfopts-gen
[ -x "$gen" ] || { echo "${0##*/}: $gen is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

echo "== a described recording (skew-check.py)"
"$python" "$here/skew-check.py" "$bin" "$gen" "$tmp" >"$tmp/check.out" 2>"$tmp/check.err"
collect skew-check.py $? "$tmp/check.out" "$tmp/check.err"

finish tool-skew
