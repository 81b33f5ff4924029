#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host suite's entry point (make -C tests/host run): boots L1 once per
# configuration with tests/nested/run-l1, runs every test program there
# through run-suite.sh, prints every case and the measurements, and ends with
# "N passed, N failed". SKIPs are listed and counted apart, never as passed.
# An L1 the emulation killed is booted again once (README.md). Writes
# "<passed> <failed>" to $O/results/host (host-6.12 for KVER=6.12.*).
#
# usage: run-configs.sh PROGRAM...
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
O=${O:-$repo/out}
run_l1=$repo/tests/nested/run-l1
# shellcheck source=../nested/common.sh
source "$repo/tests/nested/common.sh"
modules_dir=$(pvprof_modules_dir "${KVER:-$(default_kver)}")
runs=$O/tests/host/runs
# Seconds for one configuration: boot plus every program.
l1_timeout=${HOST_SUITE_TIMEOUT:-900}

[ $# -gt 0 ] || { echo "usage: run-configs.sh PROGRAM..." >&2; exit 2; }

# name  KVM in L1  L1 CPU model  L1 CPUs
configs=(
	"pvprof-epyc pvprof epyc 1"
	"stock-epyc stock epyc 1"
	"pvprof-max pvprof max 1"
	"pvprof-epyc-smp2 pvprof epyc 2"
)

# Programs that need pvprof's data path: nothing of theirs applies to stock
# KVM (its refusals are ctl_test's and sample_test's), so stock runs without them.
pvprof_only=" hostile_test lifecycle_test smp_test nmi_context_test vcpu_create_test nmi_reset_test rt_vcpu_test static_key_test silent_guest_test register_rate_test ustack_test single_step_test "
# Programs that need 2 L1 CPUs: they run only where L1 has 2, and a 2-CPU
# configuration runs nothing else (the rest is covered by the 1-CPU boots;
# this keeps the extra boot short).
smp2_only=" smp_test "
# Programs that need NMIs injected into L1 from outside: their configurations
# boot L1 with a QMP socket, and qmp-nmis.sh runs beside run-l1, injecting
# what the programs ask for through $out/qmp-nmis (PVPROF_QMP_NMI_DIR in L1).
qmp_nmis=" nmi_context_test "

passed=0 failed=0 skipped=0 booted=0
suite_start=$(date +%s)

count_line() {
	echo "$1"
	case "$1" in
	PASS\ *) passed=$((passed + 1)) ;;
	FAIL\ *) failed=$((failed + 1)) ;;
	SKIP\ *) skipped=$((skipped + 1)) ;;
	esac
}

run_config() {
	local name=$1 kvm=$2 cpu=$3 smp=$4 out=$runs/$1 rc line boot total
	local args=(--kvm "$kvm" --cpu "$cpu" --smp "$smp" --out "$out"
		    --timeout "$l1_timeout")
	local progs=() env=() p b qmp_dir='' injector=

	shift 4
	for p in "$@"; do
		b=$(basename "$p")
		if [ "$kvm" = stock ] && [[ "$pvprof_only" == *" $b "* ]]; then
			echo "  [$name] not run on stock KVM: $b"
			continue
		fi
		if [ "$smp" -ge 2 ] && [[ "$smp2_only" != *" $b "* ]]; then
			continue
		fi
		if [ "$smp" -lt 2 ] && [[ "$smp2_only" == *" $b "* ]]; then
			echo "  [$name] not run with $smp L1 CPU: $b"
			continue
		fi
		progs+=("$p")
		[[ "$qmp_nmis" == *" $b "* ]] && env=(PVPROF_QMP_NMI_DIR="$out/qmp-nmis")
	done
	# Nothing to run here: no L1 boot, nothing counted.
	if [ ${#progs[@]} -eq 0 ]; then
		echo "  [$name] skipped: no program given applies to this configuration"
		return
	fi

	booted=$((booted + 1))
	launch_config || return
	report_config
}

# launch_config: one L1 boot of run_config's configuration; sets rc.
launch_config() {
	local launch=("${args[@]}")

	rm -rf "$out"
	mkdir -p "$out" || { count_line "FAIL $name/l1: cannot create $out"; return 1; }
	if [ "$kvm" = pvprof ]; then
		if [ ! -r "$modules_dir/kvm.ko" ] || [ ! -r "$modules_dir/kvm-amd.ko" ]; then
			count_line "FAIL $name/l1: no pvprof KVM modules in $modules_dir (run make modules)"
			return 1
		fi
		launch+=(--modules-dir "$modules_dir")
	fi
	# The socket lives outside the out share (L1 never uses it), in a
	# short path (unix socket paths are limited to 107 bytes).
	if [ ${#env[@]} -gt 0 ]; then
		if ! qmp_dir=$(mktemp -d /tmp/pvprof-qmp.XXXXXX) || ! mkdir -p "$out/qmp-nmis"; then
			count_line "FAIL $name/l1: cannot set up the QMP NMI injector"
			return 1
		fi
		launch+=(--qmp "$qmp_dir/l1.qmp")
		"$here/qmp-nmis.sh" "$qmp_dir/l1.qmp" "$out/qmp-nmis" > "$out/qmp-nmis.log" 2>&1 < /dev/null &
		injector=$!
	fi

	env "${env[@]}" "$run_l1" "${launch[@]}" -- "$here/run-suite.sh" --config "$name" \
		--kvm "$kvm" --out "$out" -- "${progs[@]}" > "$out/run-l1.log" 2>&1 < /dev/null
	rc=$?
	if [ -n "$injector" ]; then
		kill "$injector" 2>/dev/null
		wait "$injector" 2>/dev/null
		rm -rf "$qmp_dir"
		injector=''
	fi
}

# report_config: the cases and measurements of run_config's last L1.
report_config() {
	if [ -s "$out/results.txt" ]; then
		while IFS= read -r line; do
			count_line "$line"
		done < "$out/results.txt"
		grep -h '^# measured' "$out"/*.log 2>/dev/null | sed "s|^# measured:|  measured [$name]:|"
	fi
	if [ $rc -ne 0 ] || [ ! -s "$out/wall-seconds" ]; then
		count_line "FAIL $name/l1: run-l1 exited with status $rc before the suite finished (log: $out/run-l1.log)"
		tail -n 20 "$out/run-l1.log" | sed 's/^/  | /'
		return
	fi
	boot=$(sed -n 's/^run-l1: L1 booted in \([0-9.]*\) s.*/\1/p' "$out/run-l1.log")
	total=$(sed -n 's/^run-l1: exit status .*, total \([0-9.]*\) s.*/\1/p' "$out/run-l1.log")
	echo "  timing [$name]: L1 boot ${boot:-?} s, suite $(cat "$out/wall-seconds") s in L1, ${total:-?} s with boot"
	grep -h '^run-l1: boot [0-9]* of' "$out/run-l1.log" | sed "s|^|  [$name] |"
}

for c in "${configs[@]}"; do
	# shellcheck disable=SC2086 # fields of the table above
	run_config $c "$@"
done

echo "host suite wall time: $(( $(date +%s) - suite_start )) s for $booted of ${#configs[@]} configurations"
[ $skipped -eq 0 ] || echo "$skipped skipped"
echo "$passed passed, $failed failed"
# Another kernel's run counts apart: host-6.12 beside host.
results=host
kver=${KVER:-$(default_kver)}
if [ "$kver" != "$(default_kver)" ]; then
	results=host-$(kernel_series "$kver")
fi
mkdir -p "$O/results"
echo "$passed $failed" > "$O/results/$results"
[ $failed -eq 0 ]
