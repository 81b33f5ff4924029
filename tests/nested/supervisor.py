#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The nested test platform's VM supervisor.

One program builds the QEMU command line of every VM the tests, the demo and
the benchmarks boot (L1 under TCG with nested SVM, L2 under L1's KVM),
watches each VM while it runs, names how a VM died from one table of
deaths (DEATHS), and applies one retry policy: a death that QEMU's
emulation is known to cause (tests/nested/README.md, "Known failures of the
emulation") is booted again, at most --boots boots in all, each retry said
in one line with where the dead run's evidence was kept; any other death
fails at once.

    supervisor.py l1 ...        one L1 run (run-l1 prepares it; see run-l1 --help)
    supervisor.py l2 ...        one L2 run inside L1 (see run-l2 --help)
    supervisor.py l2-command .. the L2 QEMU command line, NUL-separated, for
                                a caller that runs the L2's QEMU itself
    supervisor.py l2-wait-init  the init of such an L2, reset when it hangs
    supervisor.py classify DIR  the death a kept run shows (died-N/ directories,
                                tests/nested/deaths/ samples)
    supervisor.py state SOCKET  a QEMU's run state and registers through QMP
    supervisor.py rips STATE MAP  the RIPs of such a state, named with a System.map
"""

import argparse
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

NESTED_DIR = os.path.dirname(os.path.realpath(__file__))

# LOCAL_TIMER_VECTOR: pending in a CPU's IRR only for microseconds on a CPU
# that takes interrupts.
TIMER_VECTOR = 236


@dataclasses.dataclass(frozen=True)
class Death:
    name: str
    emulations: bool  # QEMU's emulation is known to cause it: boot again
    status: int       # the exit status when it is not booted again
    meaning: str


DEATHS = {d.name: d for d in (
    Death("boot-hung", True, 125,
          "L1 did not reach init within the boot bound (TCG's microvm PIT "
          "calibration hang)"),
    Death("triple-fault", True, 125,
          "QEMU logged a triple fault: the emulation delivered an interrupt "
          "where no CPU can take one (between VMRUN and VMLOAD, or twice)"),
    Death("frozen", True, 124,
          "an L1 CPU kept its local timer interrupt pending, taking no "
          "interrupt, while the emulation ran its L2"),
    Death("lockup", False, 124,
          "L1's soft-lockup watchdog saw a CPU held with preemption off: "
          "L1's own code (pvprof's or the kernel's) spinning"),
    Death("timeout", False, 124,
          "COMMAND still running at --timeout, with no sign of a death the "
          "emulation causes"),
    Death("qemu-failed", False, 125, "QEMU exited with an error"),
    Death("killed", False, 125, "QEMU was killed by a signal from outside"),
    Death("no-status", False, 125,
          "the VM powered off without an exit status, no triple fault logged"),
    Death("l2-hung-before-init", True, 125,
          "the L2 did not reach init: its vCPUs halted with work pending, a "
          "wakeup the emulation lost"),
    Death("l2-reset-before-init", True, 125,
          "the L2 reset itself before init, nothing on its console says why"),
    Death("l2-vanished", True, 125,
          "the L2 reset itself after init without a panic, Oops or BUG on "
          "its console"),
    Death("l2-double-interrupt", True, 125,
          "the L2 overflowed a stack in page faults after an interrupt the "
          "emulation delivered twice ('stack guard page was hit')"),
    Death("l2-timeout", False, 124, "the L2 was still running at --timeout"),
    Death("l2-no-status", False, 125,
          "the L2 ended without an exit status (a panic, Oops or BUG, or "
          "its QEMU failed)"),
)}


# --- evidence and the classifier -------------------------------------------

@dataclasses.dataclass
class Evidence:
    """What one boot of a VM left: the classifier's only input."""
    console: str = ""
    qemu_debug: str = ""
    lapic_log: str = ""
    # What the supervisor saw: facts.json in a kept run.
    status: int | None = None       # the exit status the VM reported
    qemu_status: int | None = None  # negative: killed by that signal
    stopped: str | None = None      # why the supervisor ended it: "boot-bound", "timeout", "interrupted"
    frozen_bound: float = 15
    lockup_bound: float = 120
    seconds: float = 0

    @classmethod
    def load(cls, directory):
        """A kept boot (OUT/died-N) or the last boot of an out directory,
        whose QEMU logs and facts are in OUT/.run-l1."""
        def text(name):
            for d in (directory, os.path.join(directory, ".run-l1")):
                try:
                    with open(os.path.join(d, name), errors="replace") as f:
                        return f.read()
                except FileNotFoundError:
                    pass
            return ""
        facts = json.loads(text("facts.json") or "{}")
        return cls(console=text("console.log"), qemu_debug=text("qemu-debug.log"),
                   lapic_log=text("lapic.log"), **facts)

    def facts(self):
        return {k: getattr(self, k) for k in ("status", "qemu_status", "stopped",
                                              "frozen_bound", "lockup_bound", "seconds")}


def lapic_readings(log):
    """(seconds, cpu, timer pending) per reading of a lapic.log.

    A reading starts "== t=SECONDS CPU N" (seconds from the VM's launch) or,
    in logs older than this supervisor, "== HH:MM:SS CPU N"; its IRR line
    follows. A reading without an IRR line (QMP did not answer) counts as
    not pending: only readings can freeze a CPU, never their absence.
    """
    readings = []
    for block in re.split(r"^== ", log, flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        m = re.match(r"(?:t=([0-9.]+)|(\d+):(\d+):(\d+)) CPU (\d+)", head)
        if not m:
            continue
        if m.group(1):
            t = float(m.group(1))
        else:
            t = int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4))
        irr = re.search(r"^IRR\s.*$", body, flags=re.M)
        pending = bool(irr and re.search(rf"\b{TIMER_VECTOR}\b", irr.group(0)))
        readings.append((t, int(m.group(5)), pending))
    return readings


def frozen_cpu(readings, bound):
    """(cpu, seconds) of a CPU whose timer was pending in every reading over
    at least bound seconds, else None."""
    since = {}
    for t, cpu, pending in readings:
        if not pending:
            since.pop(cpu, None)
            continue
        start = since.setdefault(cpu, t)
        if t < start:  # a wall-clock log across midnight
            since[cpu] = start = t
        if t - start >= bound:
            return cpu, t - start
    return None


LOCKUP_RE = re.compile(r"BUG: soft lockup - CPU#\d+ stuck for (\d+)s!")


def longest_lockup(console):
    return max((int(s) for s in LOCKUP_RE.findall(console)), default=0)


def classify(ev, vm="l1"):
    """(Death, detail) for a boot that did not report an exit status, or
    (None, "") for one that did. The first matching row wins: what the
    watchers saw before QEMU's own end."""
    if ev.status is not None:
        return None, ""
    if vm == "l1":
        frozen = frozen_cpu(lapic_readings(ev.lapic_log), ev.frozen_bound)
        if frozen:
            return DEATHS["frozen"], (f"its CPU {frozen[0]} has had its timer interrupt "
                                      f"pending for {frozen[1]:.0f} s, taking no interrupt")
        lockup = longest_lockup(ev.console)
        if lockup >= ev.lockup_bound:
            first = re.search(r"CPU#\d+ stuck for \d+s! \[.*?\]", ev.console)
            return DEATHS["lockup"], (f"{first.group(0) if first else 'a CPU stuck'} "
                                      f"and a CPU stayed stuck for {lockup} s")
        if ev.stopped == "boot-bound" and "RUNL1-INIT" not in ev.console:
            return DEATHS["boot-hung"], f'at "{last_line(ev.console)}"'
        if "Triple fault" in ev.qemu_debug:
            return DEATHS["triple-fault"], "QEMU logged a triple fault of L1"
        if ev.stopped == "timeout":
            return DEATHS["timeout"], f"COMMAND still running after {ev.seconds:.0f} s"
        return _ended(ev, "no-status", "L1 powered off without COMMAND's exit status")
    inited = re.search(r"^L2-INIT", ev.console, flags=re.M)
    if "stack guard page was hit" in ev.console:
        return DEATHS["l2-double-interrupt"], f'"{grep_line(ev.console, "stack guard page was hit")}"'
    if ev.stopped == "boot-bound" and not inited:
        return DEATHS["l2-hung-before-init"], "no L2-INIT within the init bound"
    if ev.stopped == "timeout":
        return DEATHS["l2-timeout"], f"still running after {ev.seconds:.0f} s"
    if ev.qemu_status == 0:
        # With -no-reboot, a reset of the guest ends QEMU with status 0.
        if not inited:
            return DEATHS["l2-reset-before-init"], f"it reset itself after {ev.seconds:.0f} s"
        if not re.search(r"Kernel panic|BUG:|Oops", ev.console):
            return DEATHS["l2-vanished"], f"it reset itself {ev.seconds:.0f} s after its launch"
    return _ended(ev, "l2-no-status", "the L2 ended without an exit status")


def _ended(ev, fallback, detail):
    if ev.stopped == "interrupted" or (ev.qemu_status is not None and ev.qemu_status < 0):
        sig = -ev.qemu_status if ev.qemu_status and ev.qemu_status < 0 else signal.SIGTERM
        return DEATHS["killed"], f"QEMU ended by signal {signal.Signals(sig).name}"
    if ev.qemu_status:
        return DEATHS["qemu-failed"], f"QEMU exited with status {ev.qemu_status}"
    return DEATHS[fallback], f"{detail} (QEMU status {ev.qemu_status})"


def last_line(text):
    lines = [ln for ln in text.replace("\r", "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def grep_line(text, needle):
    for ln in text.replace("\r", "").splitlines():
        if needle in ln:
            return ln.strip()
    return ""


# --- QMP --------------------------------------------------------------------

class QMP:
    """A QMP client of one QEMU monitor socket."""

    def __init__(self, path, wait=0.0, timeout=10.0):
        deadline = time.monotonic() + wait
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)
        self.stream = self.sock.makefile("rw")
        json.loads(self.stream.readline())  # greeting
        self.execute("qmp_capabilities")

    def execute(self, command, arguments=None):
        req = {"execute": command}
        if arguments is not None:
            req["arguments"] = arguments
        self.stream.write(json.dumps(req) + "\n")
        self.stream.flush()
        while True:  # asynchronous events come before the answer
            line = self.stream.readline()
            if not line:
                raise OSError("QEMU closed the QMP connection")
            msg = json.loads(line)
            if "error" in msg:
                raise OSError(f"{command}: {msg['error'].get('desc', msg['error'])}")
            if "return" in msg:
                return msg["return"]

    def hmp(self, command_line):
        return self.execute("human-monitor-command", {"command-line": command_line})

    def close(self):
        self.sock.close()


def vm_state(monitor):
    """What a VM that stopped making progress is doing: its run state and
    every vCPU's registers, twice, 1 s apart (a vCPU in a loop shows a RIP
    in the same function both times), then IDT gate 0 as the first vCPU sees
    it, from which stuck-symbols learns a Linux guest's KASLR offset."""
    out = []
    try:
        qmp = QMP(monitor) if isinstance(monitor, str) else monitor
        regs = ""
        for i in (1, 2):
            out.append(f"== {time.strftime('%T')}")
            out.append(json.dumps(qmp.execute("query-status")))
            regs = qmp.hmp("info registers -a")
            out.append(regs)
            if i == 1:
                time.sleep(1)
        idt = re.search(r"^IDT= *([0-9a-f]+) ", regs, flags=re.M)
        if idt:
            gate = qmp.hmp(f"x /2gx 0x{idt.group(1)}")
            out.extend("IDT gate 0: " + ln for ln in gate.splitlines())
        if qmp is not monitor:
            qmp.close()
    except (OSError, ValueError) as e:
        out.append(f"(QMP: {e})")
    return "\n".join(out) + "\n"


def stuck_rips(state_file, system_map):
    try:
        if os.path.getsize(state_file) == 0:
            return "(no state saved)"
    except OSError:
        return "(no state saved)"
    if system_map and os.access(system_map, os.R_OK):
        r = subprocess.run([os.path.join(NESTED_DIR, "stuck-symbols"), state_file, system_map],
                           capture_output=True, text=True)
        return " ".join(r.stdout.split("\n")).strip()
    with open(state_file) as f:
        return f"(unnamed: no {system_map}) " + " ".join(re.findall(r"RIP=[0-9a-f]*", f.read()))


# --- QEMU command lines -----------------------------------------------------

@dataclasses.dataclass
class VMSpec:
    """One VM's QEMU command line."""
    kernel: str
    initrd: str
    append: str
    console: str                   # a file, or with console_pipe the fifo pair's path
    level: str = "l1"              # l1: TCG with nested SVM; l2: L1's KVM
    machine: str = "microvm"       # microvm or pc
    cpu: str = "epyc"              # L1: epyc (EPYC,+svm) or max; L2: always host
    smp: int = 1
    mem: int = 3072
    console_pipe: bool = False
    qmp: list = dataclasses.field(default_factory=list)
    shares: list = dataclasses.field(default_factory=list)  # (tag, path, readonly)
    debug_log: str | None = None
    pidfile: str | None = None
    reboot: bool = False           # a reset reboots instead of ending QEMU
    extra: list = dataclasses.field(default_factory=list)

    def command(self):
        machine = {"microvm": "microvm,x-option-roms=off,acpi=on", "pc": "pc"}[self.machine]
        if self.level == "l1":
            cpu = {"epyc": "EPYC,+svm", "max": "max"}[self.cpu]
            args = ["-accel", "tcg,thread=multi"]
        else:
            cpu = "host"
            args = ["-accel", "kvm", "-name", "l2,debug-threads=on"]
        chardev = ("pipe,id=console,path=" if self.console_pipe else
                   "file,id=console,path=") + self.console
        args += ["-M", machine, "-cpu", cpu, "-smp", str(self.smp), "-m", str(self.mem),
                 "-nodefaults", "-no-user-config", "-display", "none"]
        if not self.reboot:
            args += ["-no-reboot"]
        args += ["-kernel", self.kernel, "-initrd", self.initrd, "-append", self.append,
                 "-chardev", chardev, "-serial", "chardev:console"]
        for tag, path, readonly in self.shares:
            args += ["-fsdev", f"local,id={tag}fs,path={path},security_model=none,"
                     f"{'readonly=on,' if readonly else ''}multidevs=remap",
                     "-device", f"virtio-9p-device,fsdev={tag}fs,mount_tag={tag}"]
        for path in self.qmp:
            args += ["-qmp", f"unix:{path},server=on,wait=off"]
        if self.debug_log:
            # An L1 that triple-faults powers off (-no-reboot) without a
            # word on its console; QEMU's own log says so.
            args += ["-d", "cpu_reset,guest_errors", "-D", self.debug_log]
        if self.pidfile:
            args += ["-pidfile", self.pidfile]
        return ["qemu-system-x86_64"] + args + self.extra


def l2_spec(args, console, console_pipe=False):
    """The L2 command line shared by run-l2 and demo/l2lib.sh."""
    # cmos_init's RTC probe costs ~3 s of exits; microvm has no PCI
    # (pci_arch_init only logs an error).
    append = "console=ttyS0 quiet reboot=t panic=-1 initcall_blacklist=cmos_init,pci_arch_init"
    if args.append:
        append += " " + args.append
    return VMSpec(level="l2", kernel=args.kernel, initrd=args.initrd, append=append,
                  console=console, console_pipe=console_pipe, machine=args.machine,
                  smp=args.smp, mem=args.mem, qmp=[args.qmp] if args.qmp else [],
                  pidfile=args.pidfile)


# --- one boot ---------------------------------------------------------------

class Boot:
    """One VM boot: launch, watch, stop. Subclasses say what they watch."""

    def __init__(self, spec, console, timeout, boot_bound, qemu_log, qmp_path, number,
                 inject):
        self.spec = spec
        self.console_path = console
        self.timeout = timeout
        self.boot_bound = boot_bound
        self.qemu_log = qemu_log
        # The supervisor's own monitor, beside a caller's --qmp.
        self.qmp_path = qmp_path
        spec.qmp.append(qmp_path)
        self.qmp = None
        self.number = number
        self.injections = [(action, at) for action, boot, at in inject if boot == number]
        self.ev = Evidence()
        self.proc = None
        self.serial_fd = None

    def monitor(self):
        """One QMP connection for the whole boot: QEMU serves one client at
        a time and frees a closed one lazily."""
        if self.qmp is None:
            self.qmp = QMP(self.qmp_path, wait=5, timeout=10)
        return self.qmp

    def close_qmp(self):
        if self.qmp is not None:
            self.qmp.close()
            self.qmp = None

    def inject(self):
        """The self-test's deaths: stop the VM (it hangs), reset it, or
        kill its QEMU, at a chosen time of a chosen boot."""
        for action, at in list(self.injections):
            if self.ev.seconds < at:
                continue
            self.injections.remove((action, at))
            say(f"injecting '{action}' into boot {self.number} at {self.ev.seconds:.1f} s")
            if action == "kill":
                self.proc.kill()
                continue
            try:
                self.monitor().execute({"stop": "stop", "reset": "system_reset"}[action])
            except (OSError, ValueError) as e:
                say(f"cannot inject '{action}': {e}")

    def run(self):
        open(self.console_path, "w").close()
        self.launched = time.monotonic()
        if self.qemu_log:
            with open(self.qemu_log, "w") as log:
                self.proc = subprocess.Popen(self.spec.command(), stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT)
        else:  # QEMU's own errors go where the caller's do
            self.proc = subprocess.Popen(self.spec.command(), stdin=subprocess.DEVNULL)
        self.console_file = open(self.console_path, errors="replace")
        try:
            while self.proc.poll() is None:
                now = time.monotonic()
                self.ev.seconds = now - self.launched
                self.read_console()
                self.inject()
                if self.ev.seconds >= self.timeout:
                    self.stop("timeout")
                    break
                if not self.booted() and self.ev.seconds >= self.boot_bound:
                    self.stop("boot-bound")
                    break
                if self.watch(now):
                    break
                time.sleep(0.1)
        except KeyboardInterrupt:
            self.stop("interrupted")
            raise
        finally:
            self.proc.wait()
            self.close_qmp()
            self.ev.qemu_status = self.proc.returncode
            self.read_console()
            self.console_file.close()
        self.finish()
        return self.ev

    def read_console(self):
        if self.serial_fd is None:
            chunk = self.console_file.read()
        else:
            # A console fifo the caller also writes to: what QEMU wrote to
            # it goes to the console file, as a file chardev would have.
            data = b""
            while True:
                try:
                    more = os.read(self.serial_fd, 65536)
                except BlockingIOError:
                    break
                if not more:
                    break
                data += more
            chunk = data.decode(errors="replace").replace("\r", "")
            if chunk:
                with open(self.console_path, "a") as f:
                    f.write(chunk)
        if chunk:
            self.ev.console += chunk
            self.on_output(chunk)

    def stop(self, why):
        if why:
            self.ev.stopped = why
        if self.proc.poll() is None:
            if why != "interrupted":
                self.save_state()
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def booted(self):
        return True

    def watch(self, now):
        return False

    def on_output(self, chunk):
        pass

    def save_state(self):
        pass

    def finish(self):
        pass


# --- L1 ---------------------------------------------------------------------

class L1Boot(Boot):
    FROZEN_PERIOD = 1.5

    def __init__(self, args, number, qmp_path):
        out, ctl = args.out, os.path.join(args.out, ".run-l1")
        self.args, self.out, self.ctl = args, out, ctl
        append = (f"console=ttyS0 reboot=t panic=-1 tsc_early_khz={args.khz} "
                  f"softlockup_all_cpu_backtrace=1 RUNL1_OUT={out} RUNL1_BOOT={number}")
        if args.keep:
            append += f" RUNL1_KEEP={args.keep}"
        if args.append:
            append += " " + args.append
        spec = VMSpec(level="l1", kernel=args.vmlinux, initrd=args.initramfs, append=append,
                      console=os.path.join(out, "console.log"), cpu=args.cpu, smp=args.smp,
                      shares=[("host", "/", True), ("out", out, False)],
                      qmp=[args.qmp] if args.qmp else [],
                      debug_log=os.path.join(ctl, "qemu-debug.log"))
        super().__init__(spec, spec.console, args.timeout, args.boot_bound,
                         os.path.join(ctl, "qemu.log"), qmp_path, number, args.inject)
        self.ev.frozen_bound = args.frozen_bound
        self.ev.lockup_bound = args.lockup_bound
        self.init_at = self.first_output_at = None
        self.shown = False
        self.ended = False
        self.pending_line = ""
        self.next_reading = 0.0
        self.next_lockup_check = 0.0
        self.readings = []
        for name in ("status", "lapic.log", "qemu-debug.log"):
            remove(os.path.join(ctl, name))
        for name in ("dmesg.txt", "lockup.txt", "l1-stuck.txt"):
            remove(os.path.join(out, name))
        for name in os.listdir(out):
            if name.startswith("kmemleak") and name.endswith(".txt"):
                remove(os.path.join(out, name))

    def booted(self):
        return self.init_at is not None

    def on_output(self, chunk):
        now = time.monotonic()
        if self.first_output_at is None:
            self.first_output_at = now
        if self.init_at is None and re.search(r"^RUNL1-INIT", self.ev.console, flags=re.M):
            self.init_at = now
            uptime = re.search(r"^RUNL1-INIT (\S+)", self.ev.console, flags=re.M)
            say(f"L1 booted in {self.init_at - self.launched:.1f} s (first console output after "
                f"{self.first_output_at - self.launched:.1f} s, kernel uptime at init "
                f"{uptime.group(1).strip() if uptime else '?'} s)")
        self.stream(chunk)

    def stream(self, chunk):
        """COMMAND's output: everything between init's two markers, without
        the serial line's carriage returns, whole lines as they arrive."""
        if self.ended:
            return
        self.pending_line += chunk.replace("\r", "")
        *lines, self.pending_line = self.pending_line.split("\n")
        for line in lines:
            if self.shown:
                end = line.find("RUNL1-END")
                if end >= 0:
                    if end:
                        print(line[:end], flush=True)
                    self.ended = True
                    return
                print(line, flush=True)
            elif line.startswith("RUNL1-INIT"):
                self.shown = True

    def watch(self, now):
        if not self.booted():
            return False
        if now >= self.next_reading:
            self.next_reading = now + self.FROZEN_PERIOD
            self.read_lapics(now)
            if frozen_cpu(self.readings, self.ev.frozen_bound):
                self.stop(None)
                return True
        if now >= self.next_lockup_check:
            self.next_lockup_check = now + 5
            if longest_lockup(self.ev.console) >= self.ev.lockup_bound:
                self.stop(None)
                return True
        return False

    def read_lapics(self, now):
        t = now - self.launched
        with open(os.path.join(self.ctl, "lapic.log"), "a") as log:
            for cpu in range(self.spec.smp):
                asked = time.monotonic()
                try:
                    text = self.monitor().hmp(f"info lapic {cpu}")
                except (OSError, ValueError) as e:
                    text = f"(QMP: {e})"
                    self.close_qmp()
                lines = [ln for ln in text.splitlines()
                         if re.match(r"(IRR|ISR|PPR|Timer|\(QMP)", ln)]
                log.write(f"== t={t:.1f} CPU {cpu} ({time.monotonic() - asked:.2f} s)\n"
                          + "".join(ln + "\n" for ln in lines))
                irr = next((ln for ln in lines if ln.startswith("IRR")), "")
                self.readings.append((t, cpu, bool(re.search(rf"\b{TIMER_VECTOR}\b", irr))))
        with open(os.path.join(self.ctl, "lapic.log")) as log:
            self.ev.lapic_log = log.read()

    def save_state(self):
        frozen = frozen_cpu(self.readings, self.ev.frozen_bound)
        lapic = ""
        if frozen:
            try:
                lapic = self.monitor().hmp(f"info lapic {frozen[0]}")
            except (OSError, ValueError) as e:
                lapic = f"(QMP: {e})\n"
        try:
            state = vm_state(self.monitor()) + lapic
        except (OSError, ValueError) as e:
            state = f"(QMP: {e})\n"
        with open(os.path.join(self.out, "l1-stuck.txt"), "w") as f:
            f.write(state)

    def finish(self):
        if self.pending_line and self.shown and not self.ended:
            end = self.pending_line.find("RUNL1-END")
            print(self.pending_line[:end] if end >= 0 else self.pending_line, flush=True)
        try:
            with open(os.path.join(self.ctl, "status")) as f:
                self.ev.status = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            self.ev.status = None
        try:
            with open(self.spec.debug_log, errors="replace") as f:
                self.ev.qemu_debug = f.read()
        except OSError:
            pass


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


PROG = "supervisor"


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def console_tail(path, lines=40):
    say(f"last {lines} lines of {path}:")
    try:
        with open(path, errors="replace") as f:
            tail = f.read().replace("\r", "").splitlines()[-lines:]
    except OSError:
        tail = []
    for ln in tail:
        print(f"  | {ln}", file=sys.stderr)


def keep_dead_run(out, number, before, files):
    """Moves what boot NUMBER left in OUT (the supervisor's FILES, and the
    entries COMMAND created, i.e. those not in BEFORE) to OUT/died-NUMBER."""
    kept = os.path.join(out, f"died-{number}")
    shutil.rmtree(kept, ignore_errors=True)
    os.makedirs(kept)
    for path in files:
        if os.path.exists(path):
            shutil.move(path, os.path.join(kept, os.path.basename(path)))
    for name in sorted(set(os.listdir(out)) - before):
        if not re.match(r"died-\d+$", name):
            shutil.move(os.path.join(out, name), os.path.join(kept, name))
    return kept


def supervise(boots, run_boot, keep, describe):
    """The one retry policy: boot until a boot ends without a death, or with
    a death that is not the emulation's, at most BOOTS boots. Returns the
    last boot's (Evidence, Death, detail)."""
    for number in range(1, boots + 1):
        ev = run_boot(number)
        death, detail = describe(ev)
        if death is None or not death.emulations or number == boots:
            return ev, death, detail, number
        kept = keep(number, ev)
        say(f"boot {number} of at most {boots} died: {death.name}: {detail}; "
            f"the emulation's known failure (tests/nested/README.md), booting again; "
            f"the dead boot kept in {kept}")
    raise AssertionError("unreachable")


def cmd_l1(args):
    global PROG
    PROG = "run-l1"
    out = args.out
    ctl = os.path.join(out, ".run-l1")
    before = set(os.listdir(out))
    qmp_dir = tempfile.mkdtemp(prefix="supervisor.", dir="/tmp")
    qmp_path = os.path.join(qmp_dir, "l1.qmp")
    started = time.monotonic()
    boot = None

    def run_boot(number):
        nonlocal boot
        boot = L1Boot(args, number, qmp_path)
        return boot.run()

    def keep(number, ev):
        with open(os.path.join(ctl, "facts.json"), "w") as f:
            json.dump(ev.facts(), f)
        files = [os.path.join(out, n) for n in ("console.log", "dmesg.txt", "lockup.txt",
                                                 "l1-stuck.txt")]
        files += [os.path.join(ctl, n) for n in ("qemu.log", "qemu-debug.log", "lapic.log",
                                                 "status", "facts.json")]
        return keep_dead_run(out, number, before, files)

    try:
        ev, death, detail, number = supervise(args.boots, run_boot, keep,
                                              lambda ev: classify(ev, "l1"))
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    finally:
        shutil.rmtree(qmp_dir, ignore_errors=True)
    with open(os.path.join(ctl, "facts.json"), "w") as f:
        json.dump(ev.facts(), f)
    if death is None:
        say(f"exit status {ev.status}, total {time.monotonic() - started:.1f} s "
            f"(console.log and dmesg.txt in {out})")
        return ev.status
    stuck = os.path.join(out, "l1-stuck.txt")
    if death.name == "lockup":
        report_lockup(out, ev.console)
    if death.name == "frozen":
        detail += f"; L1's state in {stuck} (RIPs: {stuck_rips(stuck, args.system_map)})"
    if death.name == "timeout":
        detail = (f"timed out after {args.timeout} s; COMMAND was still running; L1's state "
                  f"in {stuck} (RIPs: {stuck_rips(stuck, args.system_map)})")
    if death.name == "triple-fault":
        say(f"QEMU logged a triple fault of L1 ({ctl}/qemu-debug.log):")
        for ln in [ln for ln in ev.qemu_debug.splitlines()
                   if not re.match(r"CPU Reset|[A-Z0-9]*[ =]", ln)][-10:]:
            print(f"  | {ln}", file=sys.stderr)
    if death.name in ("qemu-failed", "no-status"):
        with open(os.path.join(ctl, "qemu.log"), errors="replace") as f:
            for ln in f.read().splitlines():
                print(f"  | {ln}", file=sys.stderr)
    tail = {"boot-hung": "L1 boot hung", "frozen": "L1 is frozen", "lockup": "L1 locked up",
            "timeout": None}.get(death.name, f"L1 died: {death.name}")
    retried = f" ({number} boots)" if number > 1 else ""
    say(f"{tail}: {detail}{retried}" if tail else f"{detail}{retried}")
    if death.emulations:
        say(f"{death.meaning}; it is the emulation's known failure, and it killed every "
            f"one of the {number} boots")
    console_tail(os.path.join(out, "console.log"))
    return death.status


def report_lockup(out, console):
    """Keeps the watchdog's first report (up to the next one) in lockup.txt
    and summarises its stacks on stderr."""
    report, n = [], 0
    for ln in console.replace("\r", "").splitlines():
        if "BUG: soft lockup" in ln:
            n += 1
        if n == 1:
            report.append(ln)
        elif n == 2:
            break
    path = os.path.join(out, "lockup.txt")
    with open(path, "w") as f:
        f.write("\n".join(report) + "\n")
    say(f"L1's first soft-lockup report ({path}):")
    keep = re.compile(r"BUG: soft lockup|NMI backtrace|^CPU: |^RIP: |^ <[A-Z]+>|"
                      r"^ [A-Za-z_][A-Za-z0-9_.]*\+0x")
    shown = [re.sub(r"^\[ *[0-9.]*\] ", "", ln) for ln in report]
    for ln in [ln for ln in shown if keep.search(ln)][:80]:
        print(f"  lockup| {ln}", file=sys.stderr)


# --- L2 (inside L1) -----------------------------------------------------------

class L2Boot(Boot):
    def __init__(self, args, number, console, stream, qmp_path, serial_fd):
        spec = l2_spec(args, args.serial or console, console_pipe=bool(args.serial))
        spec.append += f" RUNL2_BOOT={number}"
        super().__init__(spec, console, args.timeout, args.init_timeout, None, qmp_path,
                         number, args.inject)
        self.args, self.stream_out = args, stream
        self.serial_fd = serial_fd
        self.init_reported = False

    def booted(self):
        return self.init_reported

    def on_output(self, chunk):
        if self.stream_out:
            sys.stdout.write(chunk.replace("\r", ""))
            sys.stdout.flush()
        if not self.init_reported and re.search(r"^L2-INIT", self.ev.console, flags=re.M):
            self.init_reported = True
            say(f"L2 reached init in {time.monotonic() - self.launched:.1f} s (launch to init)")

    def save_state(self):
        if self.args.console:
            try:
                state = vm_state(self.monitor())
            except (OSError, ValueError) as e:
                state = f"(QMP: {e})\n"
            with open(self.args.console + ".state", "w") as f:
                f.write(state)

    def finish(self):
        m = re.findall(r"^L2-EXIT (\d+)\r?$", self.ev.console, flags=re.M)
        self.ev.status = int(m[-1]) if m else None


def cmd_l2(args):
    global PROG
    PROG = "run-l2"
    if not os.path.exists("/dev/kvm"):
        say("/dev/kvm missing: run inside run-l1 with --kvm pvprof or stock")
        return 125
    for path, what in ((args.kernel, "--kernel"), (args.initrd, "--initrd")):
        if not os.path.isfile(path):
            say(f"{what} {path} missing")
            return 125
    if args.serial and not args.console:
        say("--serial needs --console")
        return 125
    stream = not args.console
    private = tempfile.mkdtemp(prefix="supervisor.", dir="/tmp")
    console = args.console or os.path.join(private, "console")
    qmp_path = os.path.join(private, "l2.qmp")
    serial_fd = None
    if args.serial:
        for end in (".in", ".out"):
            if not os.path.exists(args.serial + end):
                os.mkfifo(args.serial + end)
        # Read-write: the open never waits for QEMU, and a read never sees
        # the end of the file between two boots.
        serial_fd = os.open(args.serial + ".out", os.O_RDWR | os.O_NONBLOCK)

    def run_boot(number):
        return L2Boot(args, number, console, stream, qmp_path, serial_fd).run()

    def describe(ev):
        death, detail = classify(ev, "l2")
        if (death and death.emulations and args.serial
                and re.search(r"^L2-INIT", ev.console, flags=re.M)):
            # The caller talks to this L2 since its init: a new boot would
            # not know what it was told.
            death = dataclasses.replace(death, emulations=False)
            detail += " (after init, with --serial: not booted again)"
        return death, detail

    def keep(number, ev):
        if stream:
            return "(nothing kept: no --console)"
        kept = f"{console}.died-{number}"
        shutil.copy(console, kept)
        if os.path.exists(console + ".state"):
            shutil.move(console + ".state", kept + ".state")
        return kept

    try:
        ev, death, detail, number = supervise(args.boots, run_boot, keep, describe)
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    finally:
        shutil.rmtree(private, ignore_errors=True)
        if serial_fd is not None:
            os.close(serial_fd)
    if death is None:
        return ev.status
    say(f"{death.name}: {detail}" + (f" ({number} boots)" if number > 1 else "")
        + "; last console lines:")
    for ln in ev.console.replace("\r", "").splitlines()[-20:]:
        print(f"  | {ln}", file=sys.stderr)
    return death.status


def cmd_l2_wait_init(args):
    """An L2 that its caller runs under a QEMU of its own (--reboot: a
    reset reboots it): waits until its console has more than --inits
    L2-INIT lines. A boot without one within --init-timeout is the
    emulation's l2-hung-before-init: its registers are kept and the L2 is
    reset through QMP, under the policy of every other boot."""
    global PROG
    PROG = "run-l2"

    def inits(text):
        return len(re.findall(r"^L2-INIT", text, flags=re.M))

    def run_boot(number):
        if number > 1:
            try:
                qmp = QMP(args.qmp)
                qmp.execute("system_reset")
                qmp.close()
            except (OSError, ValueError) as e:
                say(f"cannot reset the L2 through {args.qmp}: {e}")
                return Evidence(qemu_status=1)
        start = time.monotonic()
        while True:
            with open(args.console, errors="replace") as f:
                text = f.read()
            if inits(text) > args.inits:
                return Evidence(status=0, console=text)
            if time.monotonic() - start >= args.init_timeout:
                return Evidence(console=text, stopped="boot-bound", qemu_status=0,
                                seconds=time.monotonic() - start)
            time.sleep(0.5)

    def keep(number, ev):
        kept = f"{args.state}.died-{number}"
        with open(kept, "w") as f:
            f.write(vm_state(args.qmp))
        return kept

    def describe(ev):
        if ev.status == 0:
            return None, ""
        # Only what came after the last boot's init counts.
        ev.console = ev.console.split("L2-INIT")[-1]
        return classify(ev, "l2")

    ev, death, detail, number = supervise(args.boots, run_boot, keep, describe)
    if death is None:
        return 0
    with open(args.state, "w") as f:
        f.write(vm_state(args.qmp))
    say(f"{death.name}: {detail} ({number} boots); its registers in {args.state}")
    return death.status


def cmd_l2_command(args):
    spec = l2_spec(args, args.console)
    spec.reboot = args.reboot
    spec.extra = args.qemu_args
    sys.stdout.write("\0".join(spec.command()) + "\0")
    return 0


def cmd_classify(args):
    ev = Evidence.load(args.dir)
    death, detail = classify(ev, args.vm)
    print(f"{death.name if death else 'none'}" + (f": {detail}" if detail else ""))
    if death and args.verbose:
        print(f"  {'booted again' if death.emulations else 'fails at once'}: {death.meaning}")
    return 0


def cmd_state(args):
    sys.stdout.write(vm_state(args.socket))
    return 0


def cmd_rips(args):
    print(stuck_rips(args.state, args.system_map))
    return 0


def positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text}")
        return value
    return parse


def injections(text):
    """ACTION@BOOT+SECONDS[,...]: stop, reset or kill the VM that many
    seconds after boot BOOT's launch (the supervisor's self-test)."""
    out = []
    for item in filter(None, text.split(",")):
        m = re.fullmatch(r"(stop|reset|kill)@(\d+)\+([0-9.]+)", item)
        if not m:
            raise argparse.ArgumentTypeError(f"not ACTION@BOOT+SECONDS: {item}")
        out.append((m.group(1), int(m.group(2)), float(m.group(3))))
    return out


def l2_options(p):
    p.add_argument("--kernel", required=True)
    p.add_argument("--initrd", required=True)
    p.add_argument("--smp", type=positive(int), default=1)
    p.add_argument("--mem", type=positive(int), default=256)
    p.add_argument("--machine", choices=("microvm", "pc"), default="microvm")
    p.add_argument("--qmp")
    p.add_argument("--pidfile")
    p.add_argument("--append", default="")


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("l1", help="one L1 run, prepared by run-l1 (its --help says more)")
    p.add_argument("--vmlinux", required=True)
    p.add_argument("--initramfs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--system-map", default="")
    p.add_argument("--cpu", choices=("epyc", "max"), default="epyc")
    p.add_argument("--smp", type=positive(int), default=1)
    p.add_argument("--qmp")
    p.add_argument("--khz", type=positive(int), required=True)
    p.add_argument("--keep", default="")
    p.add_argument("--append", default="")
    p.add_argument("--timeout", type=positive(int), default=600)
    p.add_argument("--boot-bound", type=positive(float), default=60)
    p.add_argument("--frozen-bound", type=positive(float), default=15)
    p.add_argument("--lockup-bound", type=positive(float), default=120)
    p.add_argument("--boots", type=positive(int), default=3)
    p.add_argument("--inject", type=injections, default=os.environ.get("RUNL1_INJECT", ""))
    p.set_defaults(func=cmd_l1)

    p = sub.add_parser("l2", help="one L2 run inside L1 (run-l2 --help says more)")
    l2_options(p)
    p.add_argument("--console")
    p.add_argument("--serial", help="the console is the fifo pair SERIAL.in and SERIAL.out "
                   "(created when missing), which the caller may write to; what L2 "
                   "writes is copied to --console; deaths after init are not retried")
    p.add_argument("--timeout", type=positive(int), default=300)
    p.add_argument("--init-timeout", type=positive(int), default=120)
    p.add_argument("--boots", type=positive(int), default=2)
    p.add_argument("--inject", type=injections, default=os.environ.get("RUNL2_INJECT", ""))
    p.set_defaults(func=cmd_l2)

    p = sub.add_parser("l2-command", help="the L2 QEMU command line, NUL-separated")
    l2_options(p)
    p.add_argument("--console", required=True)
    p.add_argument("--reboot", action="store_true",
                   help="a reset reboots the L2 (no -no-reboot)")
    p.add_argument("qemu_args", nargs="*", metavar="-- QEMU-ARG",
                   help="more QEMU arguments, after --")
    p.set_defaults(func=cmd_l2_command)

    p = sub.add_parser("l2-wait-init", help="wait for the init of an L2 under the caller's "
                       "own --reboot QEMU, resetting it through QMP when it hangs")
    p.add_argument("--console", required=True)
    p.add_argument("--qmp", required=True)
    p.add_argument("--inits", type=int, default=0,
                   help="L2-INIT lines the console had before this boot")
    p.add_argument("--init-timeout", type=positive(int), default=120)
    p.add_argument("--state", required=True, help="where a hung boot's registers go")
    p.add_argument("--boots", type=positive(int), default=2)
    p.set_defaults(func=cmd_l2_wait_init)

    p = sub.add_parser("classify", help="the death a kept boot shows")
    p.add_argument("dir")
    p.add_argument("--vm", choices=("l1", "l2"), default="l1")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_classify)

    p = sub.add_parser("state", help="a QEMU's run state and registers through QMP")
    p.add_argument("socket")
    p.set_defaults(func=cmd_state)

    p = sub.add_parser("rips", help="the RIPs of a state dump, named with a System.map")
    p.add_argument("state")
    p.add_argument("system_map")
    p.set_defaults(func=cmd_rips)

    args = ap.parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
