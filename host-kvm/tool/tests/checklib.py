# SPDX-License-Identifier: GPL-2.0
"""PASS and FAIL lines for the tool's Python checks (perfopts-check.py,
ownnmi-check.py, skew-check.py, perf-compare.py), as lib.sh prints them
for the scripts: "PASS NAME" or "FAIL NAME: WHY" per case, then finish()'s
"N passed, N failed", the line the calling suite's collect (lib.sh) counts
after.
"""
import subprocess
import sys


class Checks:
    """One script's cases: each name under PREFIX, each reason cut to
    WHY_LEN characters."""

    def __init__(self, prefix="", why_len=600):
        self.prefix, self.why_len = prefix, why_len
        self.passed = self.failed = 0

    def check(self, name, ok, why=""):
        if ok:
            print("PASS " + self.prefix + name)
            self.passed += 1
        else:
            print("FAIL %s%s: %s" % (self.prefix, name, str(why)[:self.why_len]))
            self.failed += 1

    def run_each(self, calls):
        """Calls each (fn, args) of CALLS; one that raises is one more FAIL,
        named after fn."""
        for fn, args in calls:
            try:
                fn(*args)
            except Exception as e:      # noqa: BLE001 - a crash is one more FAIL
                self.check(fn.__name__, False, "%s: %s" % (type(e).__name__, e))

    def finish(self):
        """The closing line; exits 0 only when nothing failed."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def run(binary, *args, ok_rc=0):
    """kvm-pvprof (BINARY) ARGS: (stdout, stderr); an exit status other
    than OK_RC raises."""
    p = subprocess.run([binary] + list(args), capture_output=True)
    out, err = p.stdout.decode("ascii", "replace"), p.stderr.decode("ascii", "replace")
    if p.returncode != ok_rc:
        raise RuntimeError("kvm-pvprof %s: exit status %d: %s" %
                           (" ".join(args), p.returncode, err[:300]))
    return out, err


def header_line(out, prefix):
    """The header line "# PREFIX..." of OUT with the "#   " lines it wraps
    onto joined, without the "# "; None when OUT has none."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# " + prefix):
            text = line[2:]
            for cont in lines[i + 1:]:
                if not cont.startswith("#   "):
                    break
                text += " " + cont[4:]
            return text
    return None


def write_recording(gen, path, desc):
    """Has perfopts-gen (GEN) write the recording DESC describes to PATH,
    the description kept beside it as PATH.txt."""
    with open(path + ".txt", "w") as f:
        f.write(desc)
    with open(path + ".txt") as f:
        subprocess.run([gen, path], stdin=f, check=True)


def write_in(gen, tmp, name, desc):
    """write_recording() to TMP/NAME.data; returns that path."""
    path = "%s/%s.data" % (tmp, name)
    write_recording(gen, path, desc)
    return path
