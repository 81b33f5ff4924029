#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-reports.sh [--no-kmemleak] [--known REGEX] NAME RUN_DIR: checks what one debug-kernel
# run left in RUN_DIR (run-l1's out directory for an L1; for an L2 of the
# e2e suite the dmesg.txt and kmemleak.txt that e2e.sh saved from its
# console) and prints three cases:
#   checkers_active the dmesg shows KASAN, lockdep, RCU lockdep and kmemleak
#                   starting (a kernel without them, or a log that wrapped
#                   and lost its start, proves nothing) and kmemleak not
#                   disabling itself
#   kernel_reports  L1's dmesg.txt has no lockdep, RCU, KASAN, UBSAN,
#                   might-sleep, debug-objects, WARNING, BUG or Oops report
#   kmemleak        kmemleak.txt (scanned by L1's init before power-off, after
#                   the boot's own suspects were cleared) has no leak; not
#                   with --no-kmemleak (a kernel killed rather than powered
#                   off, such as the e2e suite's migration L2s)
# --known REGEX: a report whose first line matches the extended REGEX is a
# known one of the platform, not counted (but noted), such as the xstate
# warning every '-M pc' L2 boot under nested SVM on TCG logs.
# Each report found is printed with its stack. Exits 1 when a case failed.
set -u

kmemleak_case=1
known=
while [ $# -gt 2 ]; do
	case "$1" in
	--no-kmemleak) kmemleak_case=; shift ;;
	--known) known=$2; shift 2 ;;
	*) break ;;
	esac
done
name=$1
dir=$2
failed=0

# Messages that open a report (at the start of the message, so that e.g.
# "Speculative Return Stack Overflow: WARNING: ..." at boot is no report):
# the checkers' own headers first, then the generic WARNING/BUG/Oops forms
# that every other report uses.
starts='^(\[[ 0-9.]*\] )?(WARNING: possible|WARNING: inconsistent lock state|WARNING: suspicious RCU usage|BUG: KASAN|UBSAN:|BUG: sleeping function called from invalid context|BUG: scheduling while atomic|ODEBUG:|WARNING:|BUG:|kernel BUG at|Oops|general protection fault|Uhhuh|Dazed and confused)'

# Prints every report: its first line and what follows, up to the end of its
# trace (end-trace marker, KASAN's closing rule, end of the stack), at most 80
# lines; a known one (--known) only as a KNOWN line; "REPORTS <n>" last.
extract_reports() {
	awk -v starts="$starts" -v known="$known" '
		function close_report() { if (!skip) print ""; inside = 0 }
		inside {
			if (!skip) print "  | " $0
			lines++
			if ($0 ~ /---\[ end trace/ || $0 ~ /={20,}/ ||
			    (!kasan && $0 ~ /<\/TASK>/) || lines >= 80)
				close_report()
			next
		}
		$0 ~ starts {
			inside = 1; lines = 0; kasan = ($0 ~ /KASAN/)
			skip = (known != "" && $0 ~ known)
			if (skip) {
				print "KNOWN " $0
				next
			}
			n++
			print "  | " $0
		}
		END { if (inside) print ""; print "REPORTS " n + 0 }
	' "$1"
}

if [ ! -s "$dir/dmesg.txt" ]; then
	echo "FAIL $name/kernel_reports: no dmesg.txt in $dir (L1 did not finish)"
	failed=1
else
	missing=
	for line in 'kasan: KernelAddressSanitizer initialized' \
		    'Lock dependency validator' \
		    'RCU lockdep checking is enabled' \
		    'kmemleak: Kernel memory leak detector initialized'; do
		grep -q "$line" "$dir/dmesg.txt" || missing="$missing '$line'"
	done
	if [ -n "$missing" ]; then
		echo "FAIL $name/checkers_active: not in $dir/dmesg.txt:$missing"
		failed=1
	elif grep -q 'kmemleak: Kernel memory leak detector disabled' "$dir/dmesg.txt"; then
		echo "FAIL $name/checkers_active: kmemleak disabled itself (see $dir/dmesg.txt)"
		failed=1
	else
		echo "PASS $name/checkers_active"
	fi
	out=$(extract_reports "$dir/dmesg.txt")
	count=$(tail -n 1 <<< "$out" | cut -d' ' -f2)
	grep '^KNOWN ' <<< "$out" | sed 's/^KNOWN \(\[[ 0-9.]*\] \)\{0,1\}//' |
		while IFS= read -r line; do echo "  note [$name]: known report, not counted: $line"; done
	out=$(grep -v '^KNOWN ' <<< "$out")
	if [ "$count" -eq 0 ]; then
		echo "PASS $name/kernel_reports"
	else
		first=$(grep -E "$starts" "$dir/dmesg.txt" | { if [ -n "$known" ]; then grep -v -E "$known"; else cat; fi; } |
			head -n 1 | sed 's/^\[[ 0-9.]*\] //')
		echo "FAIL $name/kernel_reports: $count report(s) in $dir/dmesg.txt, first: $first"
		sed '$d' <<< "$out"
		failed=1
	fi
fi

if [ -z "$kmemleak_case" ]; then
	:
elif [ ! -f "$dir/kmemleak.txt" ]; then
	echo "FAIL $name/kmemleak: no kmemleak.txt in $dir (L1 did not finish, or its kernel has no kmemleak)"
	failed=1
else
	leaks=$(grep -c '^unreferenced object' "$dir/kmemleak.txt")
	if [ "$leaks" -eq 0 ]; then
		echo "PASS $name/kmemleak"
	else
		echo "FAIL $name/kmemleak: $leaks unreferenced object(s) in $dir/kmemleak.txt"
		head -n 120 "$dir/kmemleak.txt" | sed 's/^/  | /'
		failed=1
	fi
fi
if [ -f "$dir/kmemleak-boot.txt" ]; then
	boot_leaks=$(grep -c '^unreferenced object' "$dir/kmemleak-boot.txt")
	[ "$boot_leaks" -eq 0 ] ||
		echo "  note [$name]: $boot_leaks kmemleak suspect(s) from L1's own boot, cleared before the job (kmemleak-boot.txt)"
fi
exit $failed
