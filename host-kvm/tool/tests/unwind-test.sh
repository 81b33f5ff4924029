#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DWARF user-stack unwinder (unwind.c) on this machine, no VM needed:
# builds the fixture (tests/unwind/fixture.c) with gcc -O2
# -fomit-frame-pointer, dynamic and -static, and once with .debug_frame only,
# runs each case so that it snapshots its own registers, stack and mappings
# at a known call chain, then runs unwind-test (built with ASan and UBSan)
# on the snapshots: the chains, caching, hostile stacks and tables,
# hand-made CFI that loops, and random mutations.  It prints the unwinder's
# speed on a real snapshot as an INFO line (not a pass condition).
#
# usage: unwind-test.sh      writes "<passed> <failed>" to $O/results/tool-unwind
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unwind_test=$O/tool/tests/unwind-test
cc=${CC:-gcc}
[ -x "$unwind_test" ] || { echo "${0##*/}: $unwind_test is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

cases="chain rec qsort tail signal thread"
snaps=$tmp/snap
mkdir -p "$snaps"

# fixture NAME CASES FLAGS...: builds the fixture as NAME with FLAGS and
# writes NAME-CASE.snap for each of CASES.
fixture() {
	local name=$1 list=$2 c bad=
	shift 2
	if ! "$cc" -O2 -fomit-frame-pointer "$@" -pthread -o "$tmp/fixture-$name" \
		"$here/unwind/fixture.c" 2>"$tmp/cc.err"; then
		fail "fixture: $name build ($*)" "$(head -c 300 "$tmp/cc.err")"
		return
	fi
	for c in $list; do
		"$tmp/fixture-$name" "$c" "$snaps/$name-$c.snap" 2>>"$tmp/run.err" || bad="$bad $c"
	done
	if [ -n "$bad" ]; then
		fail "fixture: $name snapshots" "failed:$bad: $(head -c 300 "$tmp/run.err")"
	else
		pass "fixture: $name build ($*) and snapshots of: $list"
	fi
}

echo "== fixtures"
fixture dyn "$cases"
fixture static "$cases" -static
fixture debug chain -g -fno-asynchronous-unwind-tables -fno-unwind-tables

echo "== unwinder (unwind-test)"
# libdwfl's expression evaluator leaks its stack on some malformed CFI
# (elfutils 0.188): not ours to fix, and the fuzzer finds it.
echo "leak:libdw.so" >"$tmp/lsan.supp"
LSAN_OPTIONS=suppressions=$tmp/lsan.supp:print_suppressions=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$unwind_test" "$snaps" >"$tmp/unit.out" 2>"$tmp/unit.err"
if collect unwind-test $? "$tmp/unit.out" "$tmp/unit.err" && [ -s "$tmp/unit.err" ]; then
	fail "unwind-test: nothing on stderr (sanitizers)" "$(head -c 600 "$tmp/unit.err")"
fi

finish tool-unwind
