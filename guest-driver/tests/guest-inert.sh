#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-inert: pvprof_guest.ko in a Linux L2 on hosts that cannot sample it.
#
# Three hosts, each an L1 of the nested test host running a 2-vCPU L2:
#   stock    the distro KVM: PROBE fails with -KVM_ENOSYS
#   exposed  the pvprof KVM: PROBE succeeds; while the host offers no
#            sampling feature the driver must stay inert (once the host
#            data path offers one, the driver must register every CPU)
#   hidden   the pvprof KVM with pvprof_expose=0: PROBE fails as on stock
# In each, the driver prints exactly one line per load, loads, unloads and
# reloads cleanly, and perf stat, perf record and an NMI backtrace of all
# CPUs keep working with it loaded, with no unknown-NMI report and no
# kernel warning in L2 or L1.
#
# usage: guest-inert.sh            (on the build machine)
#        guest-inert.sh --in-l1 OUT IMAGE KERNEL CASE...   (inside L1, called
#        by the above; KERNEL is run-l2's --kernel IMAGE, or - for L1's own)
# Writes "<passed> <failed>" to $O/results/guest-inert.  L2_KVER=R boots the
# L2s with kernel R instead (tests/l2-kernel.sh; L1 keeps its kernel), the
# outputs and results then named for R's series (guest-inert-6.12).

# The conditions handed to eval are single-quoted on purpose.
# shellcheck disable=SC2016
PROG=guest-inert
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tests/nested/common.sh
source "$TESTS_DIR/../../tests/nested/common.sh"
# shellcheck source=l2-kernel.sh
source "$TESTS_DIR/l2-kernel.sh"
set -uo pipefail

EXPOSE_PARAM=/sys/module/kvm/parameters/pvprof_expose

# Inside L1: boot one L2 per case, its console in OUT/CASE.console. run-l2
# boots an L2 again when the emulation killed it (tests/nested/README.md).
in_l1() {
	local out=$1 image=$2 kernel=() case
	[ "$3" = - ] || kernel=(--kernel "$3")
	shift 3
	for case in "$@"; do
		if [ "$case" = hidden ]; then
			echo 0 > "$EXPOSE_PARAM" || { echo 125 > "$out/$case.status"; continue; }
		fi
		"$NESTED_DIR/run-l2" --initrd "$image" "${kernel[@]}" --machine pc --smp 2 --mem 512 \
			--timeout 300 --append "pvprof_case=$case" --console "$out/$case.console" \
			2> "$out/$case.stderr"
		echo $? > "$out/$case.status"
		[ "$case" = hidden ] && echo 1 > "$EXPOSE_PARAM"
	done
	exit 0
}

if [ "${1:-}" = --in-l1 ]; then
	shift
	in_l1 "$@"
fi

finish() {
	results_write "guest-inert$L2_SUFFIX"
	exit
}

# fact CONSOLE NAME: the value of the first "FACT NAME value" line.
fact() {
	sed -n "s/^FACT $2 //p" "$1" | head -n 1 | tr -d '\r'
}

# facts CONSOLE NAME: the values of every "FACT NAME value" line.
facts() {
	sed -n "s/^FACT $2 //p" "$1" | tr -d '\r'
}

# user_symbols: stack_user's symbol for each hex address on stdin, one line.
user_symbols() {
	local addr sym best x
	while read -r x; do
		best='?'
		while read -r addr _ sym; do
			(( 16#$addr <= x )) || break
			best=$sym
		done < "$outdir/stack_user.nm"
		printf '%s ' "$best"
	done
}

# check_selftest CASE CONSOLE: the NMI-path self-test's report.
check_selftest() {
	local case=$1 con=$2 out1 out3 pid chain kframes uframes usyms
	out1=$(facts "$con" selftest_1_line)
	out3=$(facts "$con" selftest_3_line)
	local statuses
	statuses=$(for n in insmod 1 3 0 garbage rmmod; do printf '%s' "$(fact "$con" "selftest_${n}_status")"; done)
	check "$case-selftest-runs" "insmod, stack_user 1 3 0 garbage, rmmod exited '$statuses': $(head -n 2 <<< "$out1")" \
		[ "$statuses" = 000000 ]
	check "$case-selftest-one-notice-claimed" "$(grep '^cpu' <<< "$out1")" \
		grep -q '^cpu [0-9]* verdict claimed consumed 1 callchains 1 stale 0 dropped 0 notice_tail 1 guest_errors 0$' <<< "$out1"
	pid=$(sed -n 's/^pid //p' <<< "$out1")
	chain=$(grep '^callchain seq 1 ' <<< "$out1")
	check "$case-selftest-callchain-accepted" "'$chain'" grep -q ' verdict accepted$' <<< "$chain"
	check "$case-selftest-callchain-ids" "'$chain', writer pid '$pid'" \
		grep -q "^callchain seq 1 pid $pid tid $pid " <<< "$chain"
	# Kernel context, not a kernel thread, skewed (the fake notice has ip 0).
	check "$case-selftest-callchain-flags" "'$chain'" \
		eval '[ -n "$chain" ] && (( ($(sed "s/.* flags \([0-9a-fx]*\) .*/\1/" <<< "$chain") & 0x1d) == 0x4 ))'
	kframes=$(sed -n 's/^kernel //p' <<< "$out1")
	check "$case-selftest-kernel-path" "kernel frames: $(tr '\n' ' ' <<< "$kframes")" \
		eval 'grep -q "^st_write+" <<< "$kframes" && grep -q "^ksys_write+" <<< "$kframes" && grep -q "^do_syscall_64+" <<< "$kframes"'
	check "$case-selftest-no-nmi-frames" "kernel frames: $(tr '\n' ' ' <<< "$kframes")" \
		eval '! grep -qE "^(st_nmi|nmi_handle|default_do_nmi|exc_nmi|asm_exc_nmi|pvprof_capture|pvprof_guest_nmi)\+" <<< "$kframes"'
	uframes=$(sed -n 's/^user //p' <<< "$out1")
	usyms=$(user_symbols <<< "$uframes")
	check "$case-selftest-user-chain" "user frames resolve to: $usyms" \
		grep -qE '^(write|__libc_write) level2 level1 main ' <<< "$usyms"
	check "$case-selftest-no-notice-not-claimed" "'$(fact "$con" selftest_0_line)'" \
		grep -q '^cpu [0-9]* verdict not_ours consumed 0 .* notice_tail 0 guest_errors 0$' <<< "$(fact "$con" selftest_0_line)"
	check "$case-selftest-garbage-not-claimed" "'$(fact "$con" selftest_garbage_line)'" \
		grep -q '^cpu [0-9]* verdict garbage consumed 0 .* notice_tail 33 guest_errors 1$' <<< "$(fact "$con" selftest_garbage_line)"
	check "$case-selftest-unclaimed-reported-unknown" "'$(fact "$con" selftest_unclaimed_unknown)' unknown-NMI reports for 2 unclaimed NMIs" \
		[ "$(fact "$con" selftest_unclaimed_unknown)" = 2 ]
	check "$case-selftest-three-notices" "$(grep '^cpu' <<< "$out3")" \
		grep -q '^cpu [0-9]* verdict claimed consumed 3 callchains 1 stale 2 dropped 0 notice_tail 3 guest_errors 0$' <<< "$out3"
	check "$case-selftest-stale-then-callchain" "$(grep '^callchain' <<< "$out3" | tr '\n' ';')" \
		eval '[ "$(grep -c "^callchain seq [12] .* flags 0x[0-9a-f]*[89a-f] nr_kernel 0 nr_user 0 verdict accepted$" <<< "$out3")" = 2 ] &&
		      grep -q "^callchain seq 3 .* nr_kernel [1-9][0-9]* .* verdict accepted$" <<< "$out3"'
}

l2_kernel_select
L2_IMAGE=$NESTED_OUT/guest-inert-l2$L2_SUFFIX.cpio
l2_kernel_arg=${L2_IMAGE_ARGS[1]:--}
outdir=$NESTED_OUT/guest-inert$L2_SUFFIX
rm -rf "$outdir"
mkdir -p "$outdir/stock" "$outdir/pvprof" || die "cannot create $outdir"

# The module, and the L2 image with it, perf and perf's libraries.
[ -n "$L2_REL" ] && echo "NOTE the L2 guests boot $L2_REL (${L2_IMAGE_ARGS[1]})"
if ! l2_make modules selftest > "$outdir/build.log" 2>&1; then
	cat "$outdir/build.log"
	check module-builds "make -C guest-driver failed (log above)" false
	finish
fi
check module-builds "" true
ko=$L2_MODULE
perf_bin=$(readlink -f "$(command -v perf)") || die "perf not found; install linux-perf"
st_dir=$L2_SELFTEST_DIR
files=(--file "$ko:/pvprof_guest.ko" --file "$perf_bin:/usr/bin/perf"
       --file "$st_dir/pvprof_selftest.ko:/pvprof_selftest.ko"
       --file "$st_dir/stack_user:/stack_user")
nm -n "$st_dir/stack_user" | awk '$2 ~ /^[tTwW]$/' > "$outdir/stack_user.nm"
while read -r lib; do
	files+=(--file "$lib:$lib")
done < <(ldd "$perf_bin" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
"$NESTED_DIR/l2-initramfs" --run "$TESTS_DIR/guest-inert-l2.sh" "${files[@]}" \
	-o "$L2_IMAGE" > /dev/null || die "l2-initramfs failed"

make -s -C "$REPO_DIR/host-kvm" modules > "$outdir/host-kvm-build.log" 2>&1 ||
	die "'make -C host-kvm modules' failed (see $outdir/host-kvm-build.log)"

# run_l1_cases KVM CASE...: boot an L1 with the KVM (stock or pvprof) that
# runs the CASEs, results in OUT/KVM, and check that it ran them all. run-l1
# boots L1 again when the emulation killed it, and says so
# (tests/nested/README.md).
run_l1_cases() {
	local kvm=$1 status case missing dir=$outdir/$1
	shift
	"$NESTED_DIR/run-l1" --kvm "$kvm" --smp 2 --timeout 600 --out "$dir" -- \
		"$TESTS_DIR/guest-inert.sh" --in-l1 "$dir" "$L2_IMAGE" "$l2_kernel_arg" "$@" \
		> "$dir.stdout" 2> "$dir.stderr"
	status=$?
	grep '^run-l1: boot [0-9]* of' "$dir.stderr" | sed "s/^/NOTE l1-$kvm: /"
	missing=$(for case; do [ -f "$dir/$case.status" ] || echo "$case"; done)
	check "l1-$kvm-runs" "run-l1 exited $status, cases not run: ${missing:-none}: $(run_l1_said "$dir.stderr")" \
		[ "$status/$missing" = 0/ ]
}

run_l1_cases stock stock
run_l1_cases pvprof exposed registered hidden

not_supported='^host does not support pvprof (PROBE returned -1000)$'
no_feature='^host offers no usable sampling (ABI 1, features 0x0; needs CPU_CLOCK or HW_EVENTS, and NMI_DELIVERED)$'
sampling='^ABI 1, features 0x[0-9a-f]*, 65536-byte buffers on 2 CPUs$'

for spec in stock:stock exposed:pvprof registered:pvprof hidden:pvprof; do
	case=${spec%%:*}
	dir=$outdir/${spec#*:}
	con=$dir/$case.console
	status=$(cat "$dir/$case.status" 2>/dev/null)
	grep '^run-l2: boot [0-9]* of' "$dir/$case.stderr" 2>/dev/null | sed "s/^/NOTE $case: /"
	check "$case-l2-ran" "run-l2 exited '$status' (see $con)" [ "$status" = 0 ]
	[ "$status" = 0 ] || continue

	declare -A f=()
	for name in insmod_status driver_line driver_line_count module_listed debugfs_mode \
		debugfs_registrations dev_pvprof perf_stat_status perf_stat_task_clock \
		perf_record_status perf_record_samples nmi_backtraces nmis_during_sysrq \
		rmmod_status debugfs_gone_after_rmmod reload_failures driver_line_count_total \
		unknown_nmi_lines kernel_warning_lines kernel_bad_line cpu1_offline_status \
		cpu1_state_offline cpu1_online_status cpu1_state_online registrations_after_hotplug; do
		f[$name]=$(fact "$con" "$name")
	done
	expect=$not_supported
	case $case in
	exposed)
		expect=$no_feature
		grep -q "$sampling" <<< "${f[driver_line]}" && expect=$sampling
		;;
	registered)
		expect=$sampling
		;;
	esac
	check "$case-insmod" "insmod exited '${f[insmod_status]}'" [ "${f[insmod_status]}" = 0 ]
	check "$case-one-line" "the driver printed '${f[driver_line_count]}' lines" [ "${f[driver_line_count]}" = 1 ]
	check "$case-line-says-why" "line '${f[driver_line]}' does not match /$expect/" \
		grep -q "$expect" <<< "${f[driver_line]}"
	check "$case-stays-loaded" "not in /proc/modules" [ "${f[module_listed]}" = 1 ]
	if [ "$expect" = "$sampling" ]; then
		check "$case-registers-every-cpu" "debugfs mode '${f[debugfs_mode]}', registrations '${f[debugfs_registrations]}'" \
			eval '[ "${f[debugfs_mode]}" = sampling ] && [ "${f[debugfs_registrations]}" = 2 ]'
		check "$case-cpu-offline-unregisters" "offline exited '${f[cpu1_offline_status]}', CPU 1 state '${f[cpu1_state_offline]}'" \
			eval '[ "${f[cpu1_offline_status]}" = 0 ] && [ "${f[cpu1_state_offline]}" = off ]'
		check "$case-cpu-online-registers" "online exited '${f[cpu1_online_status]}', CPU 1 state '${f[cpu1_state_online]}', registrations '${f[registrations_after_hotplug]}'" \
			eval '[ "${f[cpu1_online_status]}" = 0 ] && [ "${f[cpu1_state_online]}" = active ] && [ "${f[registrations_after_hotplug]}" = 3 ]'
	else
		check "$case-inert" "debugfs mode '${f[debugfs_mode]}', registrations '${f[debugfs_registrations]}'" \
			eval '[ "${f[debugfs_mode]}" = inert ] && [ "${f[debugfs_registrations]}" = 0 ]'
		check "$case-no-device" "/dev/pvprof ${f[dev_pvprof]} without the sideband feature" \
			[ "${f[dev_pvprof]}" = absent ]
	fi
	check "$case-perf-stat" "perf stat exited '${f[perf_stat_status]}', task-clock lines '${f[perf_stat_task_clock]}'" \
		eval '[ "${f[perf_stat_status]}" = 0 ] && [ "${f[perf_stat_task_clock]:-0}" -ge 1 ]'
	check "$case-perf-record" "perf record exited '${f[perf_record_status]}', '${f[perf_record_samples]}' samples" \
		eval '[ "${f[perf_record_status]}" = 0 ] && [ "${f[perf_record_samples]:-0}" -ge 1 ]'
	check "$case-nmi-backtrace" "'${f[nmi_backtraces]}' of 2 CPUs printed a backtrace, '${f[nmis_during_sysrq]}' NMIs" \
		eval '[ "${f[nmi_backtraces]}" = 2 ] && [ "${f[nmis_during_sysrq]:-0}" -ge 1 ]'
	check "$case-rmmod" "rmmod exited '${f[rmmod_status]}', debugfs gone: '${f[debugfs_gone_after_rmmod]}'" \
		eval '[ "${f[rmmod_status]}" = 0 ] && [ "${f[debugfs_gone_after_rmmod]}" = yes ]'
	check "$case-reload" "'${f[reload_failures]}' failed insmod/rmmod in 3 rounds, '${f[driver_line_count_total]}' lines for 4 loads" \
		eval '[ "${f[reload_failures]}" = 0 ] && [ "${f[driver_line_count_total]}" = 4 ]'
	check_selftest "$case" "$con"
	check "$case-no-unknown-nmi" "'${f[unknown_nmi_lines]}' unknown-NMI lines before the self-test's unclaimed NMIs" \
		[ "${f[unknown_nmi_lines]}" = 0 ]
	check "$case-no-l2-warning" "'${f[kernel_warning_lines]}' lines: ${f[kernel_bad_line]}" \
		[ "${f[kernel_warning_lines]}" = 0 ]
done

for l1 in stock pvprof; do
	bad=$(grep -E 'WARNING: CPU|BUG:|Oops|general protection fault|possible .*locking|Uhhuh|Dazed and confused' \
		"$outdir/$l1/dmesg.txt" 2>/dev/null | head -n 1)
	check "l1-$l1-no-warning" "L1 logged: ${bad:-no dmesg.txt}" \
		eval '[ -f "$outdir/$l1/dmesg.txt" ] && [ -z "$bad" ]'
done
finish
