#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof's JSON output (-j) and the escaping of guest strings, judged by
# Python's json module and by stackcollapse-perf.pl's rules, never by
# kvm-pvprof itself (no VM needed):
#   - the JSON string writer on every byte, every ill-formed UTF-8 shape and
#     random bytes: valid UTF-8 out, json.loads() gives what Python's own
#     decoder makes of the bytes, no raw control character;
#
# usage: json-test.sh      writes "<passed> <failed>" to $O/results/tool-json
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

json_test=$O/tool/tests/json-test
[ -x "$json_test" ] || { echo "${0##*/}: $json_test is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }

# check NAME PYTHON [ARGS...]: PYTHON exits 0 (pass) or with a reason.
check() {
	local name=$1 code=$2 why
	shift 2
	if why=$("$python" -c "$code" "$@" 2>&1); then
		pass "$name${why:+ ($why)}"
	else
		fail "$name" "${why:0:600}"
	fi
}

echo "== the JSON string writer"
"$python" - >"$tmp/strings.hex" <<'EOF'
import random
cases = [bytes([b]) for b in range(1, 256)]
cases += [bytes([a, b]) for a in range(0x80, 0x100) for b in range(1, 256)]
# Three- and four-byte shapes around every boundary of Unicode's table 3-7.
edges = [0x01, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff]
for lead in (0xe0, 0xe1, 0xe2, 0xec, 0xed, 0xee, 0xef):
    cases += [bytes([lead, b, c]) for b in edges for c in edges]
for lead in (0xf0, 0xf1, 0xf3, 0xf4, 0xf5):
    cases += [bytes([lead, b, c, d]) for b in edges for c in edges[:6] for d in edges[:6]]
cases += ["\u2028\u2029\u0085\u009b\u00a0\u00e9\u20ac\U0001f600".encode(),
          b'"\\/\x08\x0c\n\r\t', b'fn"quote\\back', b'']
rng = random.Random(24)
cases += [bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 40)))
          for _ in range(3000)]
for c in cases:
    print(c.hex())
EOF
if "$json_test" strings <"$tmp/strings.hex" >"$tmp/strings.json" 2>"$tmp/strings.err"; then
	check "strings: valid UTF-8, json.loads() equals Python's decode(errors='replace'), no raw control character" '
import json, sys
inputs = [bytes.fromhex(l) for l in open(sys.argv[1]).read().split("\n")[:-1]]
outputs = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
if len(inputs) != len(outputs):
    sys.exit("%d inputs, %d outputs" % (len(inputs), len(outputs)))
banned = {chr(c) for c in list(range(0x20)) + list(range(0x7f, 0xa0)) + [0x2028, 0x2029]}
for raw, out in zip(inputs, outputs):
    text = out.decode("utf-8")          # strict: raises on invalid UTF-8
    if banned & set(text):
        sys.exit("raw control character in %r for %r" % (out, raw))
    got = json.loads(text)
    want = raw.decode("utf-8", "replace")
    if got != want:
        sys.exit("%r: got %r, want %r" % (raw, got, want))
print("%d strings" % len(inputs))
' "$tmp/strings.hex" "$tmp/strings.json"
else
	fail "strings: json-test strings" "$(head -c 300 "$tmp/strings.err")"
fi

finish tool-json
