# SPDX-License-Identifier: GPL-2.0
#
# pvprof: one build entry point for the kernel modules and user space.
#
#   make            build user space (shared core, tools, unit tests)
#   make check      install missing Debian packages, build, run every suite
#                   (30-35 min once installed, 35-45 on a fresh 2-core machine)
#   make check-unit fast suites only, no VM: the VM supervisor's classifier,
#                   make bench's summary, spec, unit, model, fuzz smoke, tool,
#                   bench-core smoke, guest driver build
#   make check-host host suites in the nested test host (QEMU TCG + nested SVM),
#                   the host suite also with L1 on Linux 6.12; host-install
#                   and DKMS staged in a scratch root, for 6.1 and 6.12
#   make check-6.12 every VM suite on Linux 6.12 alone: L1 boots Debian's 6.12
#                   image with pvprof's KVM built from linux-source-6.12, the
#                   guests boot 6.12 (host, install, tool-nested, guest,
#                   agent, e2e, demo, unwind; results <suite>-6.12; ~50 min)
#   make check-guest the guest driver in Linux L2 guests inside the nested host
#   make check-e2e  end to end: known stacks, reloads, hotplug, snapshot,
#                   migration and reset (guest-driver/tests/e2e; ~15 min)
#   make check-debug the host and e2e suites on a debug kernel (lockdep, KASAN,
#                   ...); its first run builds that kernel (30-40 min, cached)
#   make modules    the pvprof-enabled replacement KVM modules
#   make guest-driver  the guest kernel module pvprof_guest.ko
#   make agent      the guest agent pvprofd (static binary)
#   make check-agent pvprofd in an L2 guest with the symbolizer on its sideband
#                   (guest-agent/tests/agent-nested.sh; 5-10 min)
#   make deps       install the Debian packages the build and tests need
#   make demo       profile a demo workload in a guest, end to end (demo/README.md;
#                   WORKLOAD=program ARGS="..." DURATION=s HZ=hz
#                   CALL_GRAPH=dwarf|fp GUEST_PERF=s: the guest's perf first;
#                   HOST_KERNEL=6.12: the nested host and the guest on 6.12)
#   make check-demo the demo as a smoke test (about 2 min once built)
#   make check-unwind user stacks of gcc -O2 -fomit-frame-pointer code in a
#                   guest, unwound with DWARF CFI, and the guest's perf (tests/unwind; ~6 min)
#   make bench      pvprof against host perf's IP-only sampling (tests/bench)
#   make bench-core native, no VM: the host's callchain path and kvm-pvprof report/script
#                   per sample against perf on the same samples (tests/bench-core; REPS=n)
#   make freeze-study does pvprof make its nested host freeze (tests/nested/freeze;
#                   about an hour; FREEZE_ARGS="--rates 1000 --rounds 5")
#
# Every suite ends with a line "N passed, N failed" and leaves its counts in
# $(O)/results/<suite>; "make check" ends with the totals.

O		?= $(CURDIR)/out
export O

CC		?= gcc
CFLAGS_USER	:= -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(CURDIR)
export CFLAGS_USER

.PHONY: all deps user tool modules guest-driver check check-unit check-host \
	check-nested check-host-suite check-tool-nested check-guest check-e2e check-debug check-debug-if-cached \
	demo check-demo check-unwind bench bench-core freeze-study clean help agent check-agent \
	check-6.12 check-host-6.12 check-demo-6.12 check-install-6.12 deps-6.12 modules-6.12 \
	check-tool-nested-6.12 check-guest-6.12 check-agent-6.12 check-e2e-6.12 check-unwind-6.12

all: user

help:
	@sed -n '3,40p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@scripts/install-deps.sh

user: tool agent
	$(MAKE) -C tests/unit build

tool:
	$(MAKE) -C host-kvm/tool

modules:
	$(MAKE) -C host-kvm

guest-driver:
	$(MAKE) -C guest-driver

agent:
	$(MAKE) -C guest-agent

check-agent: modules guest-driver tool agent
	$(MAKE) -C guest-agent check-nested

# Every suite runs even when an earlier one failed; the totals come last and
# any failure (including a suite that died before writing its counts) fails.
check: deps
	@rm -rf $(O)/results
	@$(MAKE) -k check-unit check-host check-guest check-agent check-demo check-demo-6.12 \
		check-unwind check-debug-if-cached; status=$$?; \
	scripts/summarize-results.sh $(O)/results && exit $$status

check-unit:
	O=$(O) tests/nested/supervisor-test.py
	O=$(O) tests/bench/summarize-test.py
	$(MAKE) -C spec run
	$(MAKE) -C tests/unit run
	$(MAKE) -C tests/fuzz smoke
	$(MAKE) -C host-kvm/tool check
	$(MAKE) -C tests/bench-core smoke
	$(MAKE) -C guest-agent check-native
	$(MAKE) -C guest-driver

check-host: check-nested check-host-suite check-host-6.12 check-tool-nested check-install \
	check-install-6.12

check-nested: modules
	O=$(O) tests/nested/selftest.sh

check-host-suite: modules
	$(MAKE) -C tests/host run

# Linux 6.12 (Debian 12's security suite; the series of Debian 13 and RHEL 10):
# the host suite with L1 on Debian's 6.12 image and pvprof's KVM modules built
# from linux-source-6.12 against the headers the guest driver unpacks.
include scripts/kernels.mk
PKGS_6.12	:= linux-source-6.12 linux-image-$(KVER_6.12) zstd

check-6.12: check-host-6.12 check-install-6.12 check-tool-nested-6.12 check-guest-6.12 \
	check-agent-6.12 check-e2e-6.12 check-demo-6.12 check-unwind-6.12

deps-6.12: deps
	@scripts/install-deps.sh $(PKGS_6.12)

# Its headers and image's KVM modules unpacked under $(O)/kernels, and
# pvprof's KVM for it in $(O)/host-kvm-<release>.
modules-6.12: deps-6.12
	$(MAKE) -C guest-driver kernel KVER=6.12
	$(MAKE) -C host-kvm KVER=6.12

check-host-6.12: modules-6.12
	KVER=$(KVER_6.12) $(MAKE) -C tests/host run

# The suites with L2 guests, L1 and the guests on 6.12: KVER names L1's
# kernel (run-l1), L2_KVER the guests' (guest-driver/tests/l2-kernel.sh);
# results named <suite>-6.12.
check-tool-nested-6.12 check-guest-6.12 check-agent-6.12 check-e2e-6.12: modules-6.12
	KVER=$(KVER_6.12) L2_KVER=6.12 $(MAKE) $(@:-6.12=)

# kvm-pvprof enable/status/disable/expose against the pvprof KVM in L1, then
# record/report/script on a minimal guest that answers with callchains, and
# enable/status/disable and their errors on a booted Linux L2 with the
# guest driver (all in one L1 boot).
check-tool-nested: modules tool
	$(MAKE) -C host-kvm/tool check-nested

# Installing the pvprof KVM on this host (as root; see host-kvm/README.md),
# and its test staged into a scratch root; for 6.12 against the headers
# unpacked above and its image's compressed modules (results/host-install-6.12).
.PHONY: host-install host-uninstall host-reload check-install
host-install host-uninstall host-reload check-install:
	$(MAKE) -C host-kvm $@

check-install-6.12: modules-6.12
	$(MAKE) -C host-kvm check-install KVER=6.12

# The driver inert on hosts without pvprof. Its scenario against a sampling
# host (make -C guest-driver check-sampling: NMI backtraces under
# unknown_nmi_panic=1, QMP NMIs accounted for) is not in make check: Linux's
# NMI backtrace serves a CPU's request in whichever NMI reaches that CPU
# first, so a pvprof NMI that lands between the request and the IPI serves
# it, and the IPI, arriving later and not back to back, is an unknown NMI
# (the limitation arch/x86/kernel/nmi.c describes in default_do_nmi). Under
# nested TCG the IPI takes long enough that this panics the L2 in most runs
# under load (guest-driver/README.rst).
check-guest: modules guest-driver
	$(MAKE) -C guest-driver check-nested

check-e2e: modules guest-driver tool
	$(MAKE) -C guest-driver check-e2e

# The debug kernel's build needs these beyond make deps.
DEBUG_KERNEL_PKGS := flex bison bc libssl-dev

check-debug: deps
	@scripts/install-deps.sh $(DEBUG_KERNEL_PKGS)
	O=$(O) tests/debug/run.sh

# For make check: check-debug only when the debug kernel is already cached
# (building it takes 30-40 min on 2 cores); otherwise it says so and counts
# nothing.
check-debug-if-cached:
	O=$(O) tests/debug/run.sh --if-cached

# The main job, its smoke test (in make check) and the benchmark.
DEMO_OPTS	= $(if $(WORKLOAD),--workload "$(WORKLOAD)") $(if $(ARGS),--args "$$DEMO_ARGS") \
		  $(if $(DURATION),--seconds $(DURATION)) $(if $(HZ),--hz $(HZ)) \
		  $(if $(CALL_GRAPH),--call-graph $(CALL_GRAPH)) \
		  $(if $(GUEST_PERF),--guest-perf $(GUEST_PERF)) \
		  $(if $(HOST_KERNEL),--host-kernel $(HOST_KERNEL))
demo: export DEMO_ARGS = $(ARGS)
demo: deps $(if $(filter 6.12,$(HOST_KERNEL)),deps-6.12)
	demo/run.sh $(strip $(DEMO_OPTS))

check-demo: deps
	demo/check.sh

# The demo's smoke test with the nested host and the guest on Linux 6.12.
check-demo-6.12: deps-6.12
	DEMO_CHECK_HOST_KERNEL=6.12 demo/check.sh

# User stacks of -O2 code without frame pointers, unwound with DWARF CFI.
check-unwind: deps
	tests/unwind/check.sh

check-unwind-6.12: deps-6.12
	UNWIND_HOST_KERNEL=6.12 tests/unwind/check.sh

bench: deps
	tests/bench/run.sh $(if $(HZ),--hz $(HZ)) $(if $(REPS),--reps $(REPS))

# Issue #29's freeze study (tests/nested/freeze/README.md): about an hour
# with the defaults; not in make check.
freeze-study: deps modules guest-driver tool
	O=$(O) tests/nested/freeze/run $(FREEZE_ARGS)

# Native: perf records a workload here, kvm-pvprof and perf read the same samples.
bench-core: deps
	$(MAKE) -C tests/bench-core run

clean:
	rm -rf $(O)
