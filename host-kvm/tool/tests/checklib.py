# SPDX-License-Identifier: GPL-2.0
"""Shared by the Python checks that describe a recording and judge
kvm-pvprof on it (ownnmi-check.py, perfopts-check.py, skew-check.py): the
PASS/FAIL lines and their counts, running kvm-pvprof, writing a described
recording with perfopts-gen, a header line read back whole.

Each check calls setup() with its command line's KVM_PVPROF, PERFOPTS_GEN
and TMPDIR first, and ends in run_checks().
"""
import subprocess
import sys

BIN = GEN = TMP = None
passed = failed = 0


def setup(bin_, gen, tmp):
    global BIN, GEN, TMP
    BIN, GEN, TMP = bin_, gen, tmp


def check(name, ok, why=""):
    """One PASS or FAIL line, counted."""
    global passed, failed
    if ok:
        print("PASS " + name)
        passed += 1
    else:
        print("FAIL %s: %s" % (name, str(why)[:700]))
        failed += 1


def run(*args, ok_rc=0):
    """kvm-pvprof ARGS: (stdout, stderr); an exit status other than ok_rc raises."""
    p = subprocess.run([BIN] + list(args), capture_output=True)
    out, err = p.stdout.decode("ascii", "replace"), p.stderr.decode("ascii", "replace")
    if p.returncode != ok_rc:
        raise RuntimeError("kvm-pvprof %s: exit status %d: %s" %
                           (" ".join(args), p.returncode, err[:300]))
    return out, err


def write(name, desc):
    """perfopts-gen's recording of the description desc, as TMP/name.data."""
    path = "%s/%s.data" % (TMP, name)
    with open(path + ".txt", "w") as f:
        f.write(desc)
    with open(path + ".txt") as f:
        subprocess.run([GEN, path], stdin=f, check=True)
    return path


def header_line(out, prefix):
    """A header line and its continuation lines, joined."""
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("# " + prefix):
            text = l[2:]
            for c in lines[i + 1:]:
                if not c.startswith("#   "):
                    break
                text += " " + c[4:]
            return text
    return None


def run_checks(calls):
    """Each (function, args) of calls in turn, a crash one more FAIL; then
    the totals, and the exit status."""
    for fn, args in calls:
        try:
            fn(*args)
        except Exception as e:      # noqa: BLE001 - a crash is one more FAIL
            check(fn.__name__, False, "%s: %s" % (type(e).__name__, e))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
