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


def main():
    hdr = header_text()
    rst = open(SPEC).read()
    check_structs(hdr, rst)
    check_numbers(constant_values(hdr), rst)
    check_rst()
    check_standalone()
    print('%d passed, %d failed' % (passed, failed))
    if len(sys.argv) == 3 and sys.argv[1] == '--results':
        with open(sys.argv[2], 'w') as f:
            f.write('%d %d\n' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
