#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the VM supervisor (supervisor.py), without a VM.

- Every directory under deaths/ is what a boot left when it died, kept from
  a real run (its README says which), with the death it shows in "expect":
  the classifier must name it.
- The frozen-CPU rule, the retry policy and the QEMU command lines, on
  constructed inputs.

Prints one PASS/FAIL line per case, writes "<passed> <failed>" to
$O/results/supervisor and exits non-zero on a failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import supervisor as sv  # noqa: E402

passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {why}")


def kept_deaths():
    root = os.path.join(HERE, "deaths")
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if not os.path.isdir(d):
            continue
        with open(os.path.join(d, "expect")) as f:
            expect = f.read().strip()
        vm = "l2" if name.startswith("l2-") else "l1"
        death, detail = sv.classify(sv.Evidence.load(d), vm)
        got = death.name if death else "none"
        check(f"classify-{name}", got == expect, f"classified {got} ({detail}), expected {expect}")


def frozen_rule():
    def readings(pattern, period=1.5, cpu=0):
        return [(i * period, cpu, c == "P") for i, c in enumerate(pattern)]

    check("frozen-after-bound", sv.frozen_cpu(readings("P" * 11), 15) == (0, 15.0),
          sv.frozen_cpu(readings("P" * 11), 15))
    check("not-frozen-before-bound", sv.frozen_cpu(readings("P" * 10), 15) is None)
    check("a-taken-interrupt-restarts-the-bound",
          sv.frozen_cpu(readings("P" * 8 + "." + "P" * 8), 15) is None)
    mixed = readings("P" * 11, cpu=1)
    mixed = [r for pair in zip(readings("." * 11), mixed) for r in pair]
    check("the-frozen-cpu-is-named", sv.frozen_cpu(mixed, 15) == (1, 15.0), sv.frozen_cpu(mixed, 15))
    log = "".join(f"== t={t:.1f} CPU 0\n" + ("IRR\t 236 \n" if p else "(QMP: timed out)\n")
                  for t, _, p in readings("PPPPP.PPPPPPPPPPP"))
    got = sv.frozen_cpu(sv.lapic_readings(log), 15)
    check("an-unanswered-reading-is-not-pending", got == (0, 15.0), got)
    check("irr-of-other-vectors-is-not-the-timer",
          sv.lapic_readings("== t=1.0 CPU 0\nIRR\t 36(level) 2236 \n") == [(1.0, 0, False)])


def classify_rows():
    cases = [
        ("l1", sv.Evidence(status=0), "none"),
        ("l1", sv.Evidence(status=None, qemu_status=-9), "killed"),
        ("l1", sv.Evidence(qemu_status=1), "qemu-failed"),
        ("l1", sv.Evidence(qemu_status=0), "no-status"),
        ("l1", sv.Evidence(qemu_status=0, stopped="timeout", seconds=600), "timeout"),
        ("l1", sv.Evidence(qemu_status=0, stopped="boot-bound", console="SeaBIOS"), "boot-hung"),
        ("l1", sv.Evidence(qemu_status=0, console="BUG: soft lockup - CPU#0 stuck for 130s! [x:1]"),
         "lockup"),
        ("l1", sv.Evidence(qemu_status=0, console="BUG: soft lockup - CPU#0 stuck for 22s! [x:1]"),
         "no-status"),
        ("l2", sv.Evidence(qemu_status=0, console="L2-INIT 1\r\nL2-EXIT 5\r\n", status=5), "none"),
        ("l2", sv.Evidence(qemu_status=0, console=""), "l2-reset-before-init"),
        ("l2", sv.Evidence(qemu_status=0, console="L2-INIT 1\n"), "l2-vanished"),
        ("l2", sv.Evidence(qemu_status=0, console="L2-INIT 1\nKernel panic - not syncing"),
         "l2-no-status"),
        ("l2", sv.Evidence(qemu_status=0, stopped="boot-bound", console=""), "l2-hung-before-init"),
        ("l2", sv.Evidence(qemu_status=0, console="L2-INIT 1\nBUG: TASK stack guard page was hit"),
         "l2-double-interrupt"),
        ("l2", sv.Evidence(qemu_status=0, stopped="timeout", console="L2-INIT 1\n"), "l2-timeout"),
    ]
    for i, (vm, ev, expect) in enumerate(cases):
        death, detail = sv.classify(ev, vm)
        got = death.name if death else "none"
        check(f"row-{i}-{expect}", got == expect, f"classified {got} ({detail})")
    for name, death in sv.DEATHS.items():
        emulations = name in ("boot-hung", "triple-fault", "frozen", "l2-hung-before-init",
                              "l2-reset-before-init", "l2-vanished", "l2-double-interrupt")
        check(f"policy-{name}", death.emulations == emulations,
              f"booted again: {death.emulations}")


def retry_policy():
    def run(deaths, boots=3):
        kept, boots_run = [], []

        def run_boot(number):
            boots_run.append(number)
            return deaths[number - 1]

        def describe(ev):
            return (None, "") if ev is None else (sv.DEATHS[ev], "detail")

        ev, death, _, number = sv.supervise(boots, run_boot, lambda n, ev: kept.append(n) or f"k{n}",
                                            describe)
        return (death.name if death else None), number, kept

    check("retry-then-success", run(["frozen", None]) == (None, 2, [1]), run(["frozen", None]))
    check("other-death-fails-at-once", run(["lockup", None]) == ("lockup", 1, []),
          run(["lockup", None]))
    check("retries-are-bounded", run(["frozen", "triple-fault", "boot-hung", None]) ==
          ("boot-hung", 3, [1, 2]), run(["frozen", "triple-fault", "boot-hung", None]))
    check("a-late-other-death-is-not-retried", run(["frozen", "timeout", None]) ==
          ("timeout", 2, [1]), run(["frozen", "timeout", None]))


def command_lines():
    l1 = sv.VMSpec(kernel="K", initrd="I", append="A", console="C", smp=2,
                   shares=[("host", "/", True)], qmp=["Q"], debug_log="D").command()
    check("l1-command", l1[:3] == ["qemu-system-x86_64", "-accel", "tcg,thread=multi"]
          and "EPYC,+svm" in l1 and "-no-reboot" in l1 and "unix:Q,server=on,wait=off" in l1
          and "local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap" in l1,
          " ".join(l1))

    class Args:
        kernel, initrd, append, machine, smp, mem, qmp, pidfile = "K", "I", "x=1", "pc", 2, 512, None, "P"
    l2 = sv.l2_spec(Args, "S", console_pipe=True)
    cmd = l2.command()
    check("l2-command", cmd[1:3] == ["-accel", "kvm"] and "host" in cmd and "pc" in cmd
          and "pipe,id=console,path=S" in cmd and cmd[cmd.index("-append") + 1].endswith(" x=1")
          and "-no-reboot" in cmd, " ".join(cmd))
    l2.reboot = True
    check("l2-command-reboot", "-no-reboot" not in l2.command())


kept_deaths()
frozen_rule()
classify_rows()
retry_policy()
command_lines()
out = os.environ.get("O", os.path.join(HERE, "..", "..", "out"))
os.makedirs(os.path.join(out, "results"), exist_ok=True)
with open(os.path.join(out, "results", "supervisor"), "w") as f:
    f.write(f"{passed} {failed}\n")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
