#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside L1 (started by run-configs.sh through tests/nested/run-l1): runs
# every test program given, with PVPROF_KVM telling them which KVM is loaded,
# then checks L1's kernel log. Writes into OUT_DIR:
#   results.txt    one "PASS|FAIL|SKIP <config>/<program>/<case>[: why]" line per case
#   <program>.log  the program's full output (measurements, assertion details)
#   wall-seconds   the suite's wall time
#
# usage: run-suite.sh --config NAME --kvm stock|pvprof --out OUT_DIR -- PROGRAM...
set -u

config= kvm= out=
while [ $# -gt 0 ]; do
	case "$1" in
	--config) config=$2; shift 2 ;;
	--kvm) kvm=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "run-suite.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$config" ] && [ -n "$kvm" ] && [ -n "$out" ] && [ $# -gt 0 ] || {
	echo "usage: run-suite.sh --config NAME --kvm stock|pvprof --out DIR -- PROGRAM..." >&2
	exit 2
}

results=$out/results.txt
: > "$results"
start=$(date +%s)

result() {
	echo "$1 $config/$2" >> "$results"
}

if [ ! -c /dev/kvm ]; then
	result FAIL "l1/kvm_loaded: /dev/kvm is missing in L1 (KVM modules not loaded?)"
fi

export PVPROF_KVM=$kvm
for prog in "$@"; do
	name=$(basename "$prog")
	log=$out/$name.log
	"$prog" > "$log.stdout" 2> "$log.stderr"
	rc=$?
	cat "$log.stdout" "$log.stderr" > "$log"
	rm -f "$log.stdout" "$log.stderr"
	lines=$(grep -E '^(PASS|FAIL|SKIP) ' "$log" | sed -E 's/^(PASS|FAIL|SKIP) /\1 '"$config"'\//')
	if [ -n "$lines" ]; then
		echo "$lines" >> "$results"
	fi
	# A program that failed without reporting a failing case crashed.
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$log"; then
		result FAIL "$name: exited with status $rc without reporting a case"
	fi
done

# L1 must survive the suite without a kernel warning, oops or unknown NMI.
if dmesg > "$out/dmesg-after-suite.txt" 2>&1; then
	bad=$(grep -E 'WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking|Uhhuh|Dazed and confused|NMI: PCI system error' \
		"$out/dmesg-after-suite.txt" | head -n 3 | tr '\n' ' ')
	if [ -n "$bad" ]; then
		result FAIL "l1/dmesg_clean: $bad"
	else
		result PASS "l1/dmesg_clean"
	fi
else
	result FAIL "l1/dmesg_clean: cannot read L1's kernel log"
fi

echo $(( $(date +%s) - start )) > "$out/wall-seconds"
exit 0
