#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that spec/pvprof.rst agrees with the ABI headers.

1. Every struct the spec quotes is byte-for-byte the header's definition.
2. Every "``PVPROF_X`` (value)", "``PVPROF_X`` = value", "``PVPROF_X`` is
   value" and every table row "``PVPROF_X``  value" names the header's value
   (for flag bits, the value or its bit number).
3. Every struct of the headers is quoted somewhere.
4. The document parses as reStructuredText without warnings (docutils is
   required: Debian's python3-docutils).
5. Each header of abi/ compiles on its own, strictly: gcc -std=c11 and
   g++ -std=c++11 and -std=c++17, each with -Wall -Wextra -Werror
   -pedantic, so user space in either language can include it without GNU
   extensions (a flexible array member is one in C++, and in C when its
   struct is nested in another).
6. Sections are named by label, never by number.  Every section of the
   spec has a label (".. _pvprof-<name>:" right above its title), labels
   are unique, every reference in the spec (`label`_, or Sphinx's
   :ref:`label`) names one of them, and the spec cites no "section N".
7. Every citation of the spec elsewhere in the tree, in its one form
   "spec <label>" (for example "(spec pvprof-host-sequence, step 4)"; in
   a man page the label's hyphens are written \\-), names a label of the
   spec.
8. No numeric citation of the spec is left in the tree: "spec section N",
   "spec N.N", "the specification's section N", "pvprof.rst, section N",
   or a "section N.N" that is not "of" another document.

Rules 6 to 8 read every file git tracks (every file under the tree when
git is not available).

Constant values come from compiling the headers, so derived constants
(PVPROF_BUF_MIN_SIZE, ioctl numbers) are checked too.  Prints one line per
check and "N passed, N failed"; with --results FILE also writes
"<passed> <failed>" into FILE.  Exits 1 on any failure.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..'))
ABI = os.path.normpath(os.path.join(HERE, '..', 'abi'))
HEADERS = ['pvprof.h', 'pvprof_ctl.h']
# Strict builds of every header (rule 5), not only the two the spec covers.
STANDALONE = sorted(f for f in os.listdir(ABI) if f.endswith('.h'))
STRICT = ['-Wall', '-Wextra', '-Werror', '-pedantic', '-fsyntax-only']
SPEC = os.path.join(HERE, 'pvprof.rst')

passed = 0
failed = 0


def report(ok, name, why=''):
    global passed, failed
    if ok:
        passed += 1
        print('PASS %s' % name)
    else:
        failed += 1
        print('FAIL %s: %s' % (name, why))


def header_text():
    return ''.join(open(os.path.join(ABI, h)).read() for h in HEADERS)


def constant_values(text):
    """Evaluate every object-like PVPROF_* macro by compiling the headers."""
    names = sorted(set(re.findall(r'^#define\s+(PVPROF_\w+)\s+\S', text, re.M)))
    names = [n for n in names if not re.search(r'^#define\s+%s\(' % n, text, re.M)]
    skip = {'PVPROF_CHECK_SIZE', 'PVPROF_CHECK_OFFSET'}
    names = [n for n in names if n not in skip]
    src = ['#include <stdio.h>', '#include "pvprof_ctl.h"', 'int main(void) {']
    for n in names:
        src.append('printf("%%s %%llu\\n", "%s", (unsigned long long)(%s));' % (n, n))
    src.append('return 0; }')
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, 'v.c')
        exe = os.path.join(d, 'v')
        open(c, 'w').write('\n'.join(src) + '\n')
        subprocess.run(['cc', '-std=c11', '-I', ABI, '-o', exe, c], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (l.split() for l in out.splitlines())}


def quoted_blocks(rst):
    """Literal blocks that start with 'struct name {', de-indented."""
    blocks = {}
    lines = rst.splitlines(True)
    for i, line in enumerate(lines):
        m = re.match(r'^    struct (\w+) \{\n$', line)
        if not m or not lines[i - 2].rstrip().endswith('::'):
            continue
        body = []
        for l in lines[i:]:
            body.append(l[4:] if l.startswith('    ') else l)
            if l.startswith('    };'):
                break
        blocks[m.group(1)] = ''.join(body)
    return blocks


def check_structs(hdr, rst):
    quoted = quoted_blocks(rst)
    for name in sorted(set(re.findall(r'^struct (\w+) \{$', hdr, re.M))):
        m = re.search(r'^struct %s \{\n.*?^\};\n' % name, hdr, re.S | re.M)
        if name not in quoted:
            report(False, 'struct %s quoted' % name, 'not quoted in the spec')
            continue
        report(quoted[name] == m.group(0), 'struct %s verbatim' % name,
               'differs from the header')


def parse_number(s):
    s = s.strip()
    return int(s, 16) if s.lower().startswith(('0x', '-0x')) else int(s)


def check_numbers(vals, rst):
    flat = re.sub(r'\s+', ' ', rst)
    mentions = []
    for pat in (r'``(PVPROF_\w+)`` \((-?(?:0x[0-9a-fA-F]+|\d+))\)',
                r'(?<![*+] )``(PVPROF_\w+)`` = (-?(?:0x[0-9a-fA-F]+|\d+))\b',
                r'``(PVPROF_\w+)`` is ``?(0x[0-9a-fA-F]+|\d+)\b',
                r'\(``(PVPROF_E\w+)``, (-\d+)\)'):
        mentions += re.findall(pat, flat)
    mentions += re.findall(r'^``(PVPROF_\w+)``\s+(0x[0-9a-fA-F]+|\d+)\s', rst, re.M)
    mentions += re.findall(r'^``(PVPROF_\w+)``\s.*\s(0x[0-9a-fA-F]{8})$', rst, re.M)
    seen = set()
    for name, num in mentions:
        if (name, num) in seen:
            continue
        seen.add((name, num))
        what = 'value of %s = %s' % (name, num)
        if name not in vals:
            report(False, what, 'no such constant in the headers')
            continue
        v = vals[name]
        n = parse_number(num)
        ok = n == v or (n < 0 and -n == v) or (v and v & (v - 1) == 0 and 1 << n == v)
        report(ok, what, 'the header says %d (%#x)' % (v, v))


def check_rst():
    try:
        import docutils.core
        import docutils.utils
    except ImportError:
        report(False, 'pvprof.rst parses', 'docutils missing (apt-get install python3-docutils)')
        return
    from io import StringIO
    err = StringIO()
    docutils.core.publish_doctree(open(SPEC).read(), source_path=SPEC,
                                  settings_overrides={'report_level': 2,
                                                      'warning_stream': err,
                                                      'halt_level': 5})
    report(not err.getvalue(), 'pvprof.rst parses', err.getvalue().strip())


def check_standalone():
    for h in STANDALONE:
        for lang, cmd in (('C11', ['gcc', '-std=c11', '-x', 'c']),
                          ('C++11', ['g++', '-std=c++11', '-x', 'c++']),
                          ('C++17', ['g++', '-std=c++17', '-x', 'c++'])):
            r = subprocess.run(cmd + STRICT + ['-I', ABI, '-'],
                               input='#include "%s"\n' % h, text=True,
                               capture_output=True)
            errors = [l.split(ABI + '/', 1)[-1] for l in r.stderr.splitlines()
                      if 'error:' in l]
            report(r.returncode == 0,
                   '%s compiles alone as %s (-Wall -Wextra -Werror -pedantic)' % (h, lang),
                   '; '.join(errors or [r.stderr.strip()])[:600])


# A label: what rule 6 accepts after ".. _" and what rules 6 and 7 look up.
LABEL = r'pvprof-[a-z0-9]+(?:-[a-z0-9]+)*'
# Between two words of a citation: blanks, or a line break and the next
# line's comment leader (" * ", "# ", "// ").
GAP = r'(?:[ \t]+|[ \t]*\n[ \t]*(?:\*|#+|//|--)?[ \t]*)'
NUM = r'\d+(?:\.\d+)*'


def line_of(text, pos):
    return text.count('\n', 0, pos) + 1


def spec_labels(rst):
    """The labels the spec defines, each with its line (rule 6)."""
    return [(m.group(1), line_of(rst, m.start()))
            for m in re.finditer(r'^\.\. _([^:\n]+):\s*$', rst, re.M)]


def check_spec_labels(rst):
    labels = spec_labels(rst)
    names = [n for n, _ in labels]
    bad = ['%s (line %d)' % (n, l) for n, l in labels if not re.fullmatch(LABEL, n)]
    report(not bad, 'spec labels are pvprof-<name>', ', '.join(bad))
    dups = sorted(set(n for n in names if names.count(n) > 1))
    report(not dups, 'spec labels are unique', ', '.join(dups))

    # Every title (a line, then an adornment as long) has a label above it.
    lines = rst.splitlines()
    missing = []
    for i in range(1, len(lines) - 1):
        title, under = lines[i], lines[i + 1]
        if not re.fullmatch(r'([=\-~^])\1+', under) or len(under) < len(title.rstrip()) \
           or not title.strip() or re.fullmatch(r'([=\-~^])\1+', title) \
           or lines[i - 1] == under:		# the document title, overlined
            continue
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j < 0 or not re.fullmatch(r'\.\. _%s:' % LABEL, lines[j]):
            missing.append('"%s" (line %d)' % (title, i + 1))
    report(not missing, 'every spec section has a label',
           'no ".. _pvprof-<name>:" above ' + ', '.join(missing))

    known = set(names)
    refs = [(m.group(1), line_of(rst, m.start()))
            for m in re.finditer(r'(?<![`\w])`([^`<>\n]+)`_(?!_)', rst)]
    refs += [(m.group(1), line_of(rst, m.start()))
             for m in re.finditer(r':ref:`(?:[^`<]*<)?([^`<>]+?)>?`', rst)]
    unknown = ['%s (line %d)' % (n, l) for n, l in refs if n not in known]
    report(not unknown, 'every reference in the spec names a label (%d references)' % len(refs),
           'no such label: ' + ', '.join(unknown))

    numeric = ['line %d: "%s"' % (line_of(rst, m.start()), ' '.join(m.group(0).split()))
               for m in re.finditer(r'(?i)\bsections?' + GAP + NUM + r'\b', rst)]
    report(not numeric, 'the spec cites no section by number',
           'cite the label instead: ' + '; '.join(numeric))
    return known


def tree_files():
    """Text files of the tree, relative to ROOT."""
    try:
        out = subprocess.run(['git', '-C', ROOT, 'ls-files', '-z'], check=True,
                             capture_output=True).stdout.decode()
        files = [f for f in out.split('\0') if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in ('.git', 'out', '__pycache__')]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
    for f in sorted(files):
        path = os.path.join(ROOT, f)
        if os.path.basename(f).startswith('LICENSE') or not os.path.isfile(path):
            continue
        try:
            text = open(path, encoding='utf-8').read()
        except (UnicodeDecodeError, OSError):
            continue		# binary
        if '\0' not in text:
            yield f, text


# Rule 8: numeric citations of the spec.
NUMERIC = [
    r'\bspec(?:ification)?(?:\'s)?,?' + GAP + r'(?:sections?|§)' + GAP + '?' + NUM,
    r'\bspec' + GAP + NUM + r'\b',
    r'pvprof\.rst\S*,?' + GAP + r'(?:sections?|§)' + GAP + NUM,
    r'\bsections?' + GAP + r'\d+\.\d+(?:\.\d+)*\b(?!' + GAP + r'of\b)',
]


def check_tree_citations(known):
    cited = 0
    unknown = []
    numeric = []
    for f, text in tree_files():
        if f == 'spec/pvprof.rst':
            continue		# rule 6
        flat = text.replace('\\-', '-')		# man pages write a hyphen \-
        for m in re.finditer(r'\bspec' + GAP + r'(pvprof-[a-z0-9-]*[a-z0-9])', flat):
            cited += 1
            if m.group(1) not in known:
                unknown.append('%s:%d: spec %s' % (f, line_of(flat, m.start()), m.group(1)))
        spans = sorted(((m.start(), -m.end(), m.group(0)) for pat in NUMERIC
                        for m in re.finditer('(?i)' + pat, flat)))
        end = -1
        for start, neg_end, what in spans:
            if start >= end:		# not inside a longer match
                numeric.append('%s:%d: "%s"' % (f, line_of(flat, start), ' '.join(what.split())))
                end = -neg_end
    report(not unknown, 'every "spec <label>" in the tree names a label of the spec '
           '(%d citations)' % cited,
           'no such label in spec/pvprof.rst: ' + '; '.join(unknown))
    report(not numeric, 'no citation of the spec by section number in the tree',
           'cite "spec <label>" instead: ' + '; '.join(numeric))


def main():
    hdr = header_text()
    rst = open(SPEC).read()
    check_structs(hdr, rst)
    check_numbers(constant_values(hdr), rst)
    check_rst()
    known = check_spec_labels(rst)
    check_tree_citations(known)
    check_standalone()
    print('%d passed, %d failed' % (passed, failed))
    if len(sys.argv) == 3 and sys.argv[1] == '--results':
        with open(sys.argv[2], 'w') as f:
            f.write('%d %d\n' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
