#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-pvprof report --flamegraph, judged from outside (no VM needed): on
# the golden recording of report-test.sh, as a flame graph and as an icicle
# graph, and on a recording whose guest agent gave its functions and
# processes hostile names (hostile-names-gen), this writes the SVG and then
#
#  - without a browser, parses it: one <script>, flamegraph.js byte for
#    byte; no event attribute, no link; every frame's tooltip, samples,
#    geometry and label against 'report --folded' of the same recording
#    (python3 here is the oracle, not pvprof);
#  - in headless Chromium, loads it unchanged in an iframe of
#    flamegraph-driver.html, which searches (through the script's API and
#    through the Search button's prompt, case-sensitive and not), clicks
#    frames, clicks Reset Zoom and hovers, and prints what the document
#    showed; this checks the match percentages, computed here from the
#    folded stacks (a sample counts once however many of its frames
#    match), the highlighted frames, the zoomed layout (the clicked frame
#    at full width, its callees widened in proportion, its callers greyed,
#    all else hidden), that Reset Zoom restores every attribute, and that
#    the hostile names rendered as text, never as markup or code.
#
# Without Chromium the browser cases are SKIPPED, not passed
# (scripts/install-deps.sh installs it).  Nothing here waits on a clock:
# the driver writes its results when the SVG's load event has run.
#
# usage: flamegraph-browser-test.sh    writes "<passed> <failed>" to
#                                      $O/results/tool-flamegraph
#        PVPROF_CHROMIUM=PATH ...      another Chromium binary
set -u

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

report_test=$O/tool/tests/report-test
hostile_gen=$O/tool/tests/hostile-names-gen
script_js=$here/../flamegraph.js
driver=$here/flamegraph-driver.html
for f in "$report_test" "$hostile_gen"; do
	[ -x "$f" ] || { echo "${0##*/}: $f is missing: run 'make -C host-kvm/tool'" >&2; exit 2; }
done
chromium=${PVPROF_CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
[ -x "$chromium" ] || chromium=

cat >"$tmp/judge.py" <<'PY'
import json, math, re, sys, urllib.parse
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
PAD = 10
# flamegraph.pl: a label gets int(width / (fontsize * fontwidth)) characters,
# 12 px * 0.59; when the name is longer its last two are "..".
CHAR_WIDTH = 12 * 0.59
SEARCH_FILL = "rgb(230,0,230)"
ELEMENTS = {"svg", "style", "script", "rect", "text", "g", "title"}
TITLE = re.compile(r"^([\s\S]*) \((\d+) samples, ([0-9.]+)%\)$")
MATCHED = re.compile(r"^Matched: ([0-9.]+)% \((\d+) of (\d+) samples\)$")

results = []

def check(name, ok, why=""):
    results.append((name, ok, why))

def report():
    for name, ok, why in results:
        print(("PASS %s" % name) if ok else ("FAIL %s\t%s" % (name, why[:600])))

def folded_stacks(path):
    """(frames, count) per line; frames as the SVG shows them: report
    escapes ';' as \\x3b in folded stacks only."""
    out = []
    for line in open(path, encoding="ascii"):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        frames = [re.sub(r"\\x([0-9a-f]{2})",
                         lambda m: ";" if m.group(1) == "3b" else m.group(0), f)
                  for f in stack.split(";")]
        out.append((frames, int(count)))
    return out

def totals(stacks):
    t = {(): 0}
    for frames, count in stacks:
        t[()] += count
        for i in range(1, len(frames) + 1):
            t[tuple(frames[:i])] = t.get(tuple(frames[:i]), 0) + count
    return t

def matcher(term, ignore_case=False):
    try:
        rx = re.compile(term, re.I if ignore_case else 0)
        return lambda s: rx.search(s) is not None
    except re.error:
        needle = term.lower() if ignore_case else term
        return lambda s: needle in (s.lower() if ignore_case else s)

def expected_matches(stacks, term, ignore_case=False):
    m = matcher(term, ignore_case)
    return sum(c for frames, c in stacks if any(m(f) for f in frames))

def fit(name, width):
    chars = int(width / CHAR_WIDTH)
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[:chars - 2] + ".."

def near(a, b, tol=0.051):
    return abs(float(a) - float(b)) <= tol

def svg_frames(root):
    """Each frame: path of names below the root, and its elements."""
    out = []
    def walk(g, path):
        title, rect, text = g.find(NS + "title"), g.find(NS + "rect"), g.find(NS + "text")
        m = TITLE.match(title.text or "")
        name = m.group(1) if m else None
        here = path + [name] if path is not None else []
        out.append({"path": here, "name": name, "samples": int(m.group(2)) if m else -1,
                    "pct": m.group(3) if m else "", "start": g.get("data-start"),
                    "x": rect.get("x"), "y": rect.get("y"), "width": rect.get("width"),
                    "label": text.text or "", "parent": path})
        for child in g.findall(NS + "g"):
            walk(child, here)
    frames_g = [g for g in root.iter(NS + "g") if g.get("id") == "frames"]
    if frames_g:
        for g in frames_g[0].findall(NS + "g"):
            walk(g, None)
    return out

def static(svg_path, folded_path, js_path, title, width, inverted):
    raw = open(svg_path, "rb").read()
    js = open(js_path, "rb").read()
    stacks = folded_stacks(folded_path)
    tot = totals(stacks)
    full = width - 2 * PAD
    check("one <script> and one </script> in the bytes",
          raw.count(b"<script") == 1 and raw.count(b"</script>") == 1,
          "%d and %d" % (raw.count(b"<script"), raw.count(b"</script>")))
    m = re.search(rb"<script[^>]*><!\[CDATA\[\n(.*?)\]\]></script>", raw, re.S)
    check("the script is flamegraph.js byte for byte (no guest text in it)",
          m is not None and m.group(1) == js, "script differs from flamegraph.js")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        check("well-formed XML", False, str(e))
        return
    check("well-formed XML, root <svg>, width %d" % width,
          root.tag == NS + "svg" and root.get("width") == str(width),
          "%s width %s" % (root.tag, root.get("width")))
    tags = {e.tag.replace(NS, "") for e in root.iter()}
    bad = [a for e in root.iter() for a in e.attrib
           if a.lower().startswith("on") or "href" in a.lower()]
    check("only svg/style/script/rect/text/g/title, no event or link attribute",
          tags <= ELEMENTS and not bad, "elements %s attributes %s" % (sorted(tags - ELEMENTS), bad))
    t = [e.text for e in root.iter(NS + "text") if e.get("id") == "title"]
    check("title %r" % title, t == [title], repr(t))

    frames = svg_frames(root)
    want = {p for p, n in tot.items() if n * full / tot[()] >= 0.1}
    got = [tuple(f["path"]) for f in frames]
    check("one frame per stack prefix of the folded stacks (%d)" % len(want),
          len(got) == len(set(got)) and set(got) == want,
          "missing %s extra %s" % (list(want - set(got))[:3], list(set(got) - want)[:3]))
    bad = []
    for f in frames:
        p = tuple(f["path"])
        n = tot.get(p, -1)
        if f["samples"] != n or f["pct"] != "%.2f" % (100.0 * n / tot[()]):
            bad.append("%r: %d samples %s%%, folded %d" % (p, f["samples"], f["pct"], n))
    check("tooltips: name, samples and share as in the folded stacks", not bad, "; ".join(bad[:3]))
    bad = []
    by_path = {tuple(f["path"]): f for f in frames}
    for f in frames:
        n, start = f["samples"], int(f["start"] or -1)
        exact = n * full / tot[()]
        if not near(f["x"], PAD + start * full / tot[()]) or not near(f["width"], exact):
            bad.append("%r: x %s width %s start %d" % (f["path"], f["x"], f["width"], start))
        if f["label"] != fit(f["name"] or "", exact):
            bad.append("%r: label %r, flamegraph.pl's %r" % (f["path"], f["label"], fit(f["name"], exact)))
        if f["parent"] is not None:
            parent = by_path[tuple(f["parent"])]
            step = float(f["y"]) - float(parent["y"])
            if step != (16 if inverted else -16):
                bad.append("%r: %s px from its caller's row" % (f["path"], step))
            if start < int(parent["start"]) or start + n > int(parent["start"]) + parent["samples"]:
                bad.append("%r: outside its caller" % (f["path"],))
    check("geometry: x and width from samples, label cut as flamegraph.pl, rows %s"
          % ("downwards (icicle)" if inverted else "upwards"), not bad, "; ".join(bad[:3]))

def driver_url(driver, svg, config_path):
    config = json.load(open(config_path))
    config["svg"] = "file://" + urllib.parse.quote(svg)
    return "file://" + urllib.parse.quote(driver) + "?config=" + urllib.parse.quote(json.dumps(config))

def browser(dom_path, folded_path, config_path, width):
    import html
    config = json.load(open(config_path))
    stacks = folded_stacks(folded_path)
    tot = totals(stacks)
    total, full = tot[()], width - 2 * PAD
    dom = open(dom_path, encoding="utf-8", errors="replace").read()
    m = re.search(r'<pre id="results">(.*?)</pre>', dom, re.S)
    text = html.unescape(m.group(1)) if m else ""
    if not m or text == "pending":
        check("the driver ran", False, "no results in the dumped DOM: %r" % dom[:300])
        return
    r = json.loads(text)
    if "error" in r:
        check("the driver ran", False, r["error"])
        return
    check("the driver ran: the script's API is there, one script element",
          r["api"] == "object" and r["scripts"] == 1, "api %s, %d scripts" % (r["api"], r["scripts"]))
    check("the rendered document holds only the tool's elements (no guest markup)",
          set(r["elements"]) <= ELEMENTS, "elements %s" % r["elements"])
    init = r["initial"]
    names = [f["path"][-1] if f["path"] else None for f in init]
    check("every frame rendered and visible, tooltips are the folded names",
          all(f["visible"] for f in init) and
          {tuple(f["path"]) for f in init} == {p for p in tot if tot[p] * full / total >= 0.1},
          "%d frames" % len(init))

    def matched_ok(shown, term, ignore_case=False):
        n = expected_matches(stacks, term, ignore_case)
        m = MATCHED.match(shown or "")
        if not m:
            return "shows %r" % shown
        if int(m.group(2)) != n or int(m.group(3)) != total or \
           abs(float(m.group(1)) - 100.0 * n / total) > 0.005:
            return "shows %r, the folded stacks give %d of %d (%.2f%%)" % (shown, n, total, 100.0 * n / total)
        return ""

    for s in r["searches"]:
        why = matched_ok(s["matched"], s["term"])
        mt = matcher(s["term"])
        lit = [f["path"] for f, fill in zip(init, s["fills"]) if fill == SEARCH_FILL]
        want = [f["path"] for f, name in zip(init, names) if name is not None and mt(name)]
        if not why and lit != want:
            why = "highlighted %s, matching %s" % (lit[:3], want[:3])
        if not why and (not s["matchedVisible"] or s["button"] != "Reset Search"):
            why = "matched text visible %s, button %r" % (s["matchedVisible"], s["button"])
        n = expected_matches(stacks, s["term"])
        check("search %r: %d of %d samples, nested matches once, the matching frames highlighted"
              % (s["term"], n, total), not why, why)
    check("reset search: every fill back, no match shown",
          [f["fill"] for f in r["afterSearches"]] == [f["fill"] for f in init] and
          not r["matchedAfterReset"], "fills or matched text left")
    why = matched_ok(r["prompted"], config["prompt"]) or \
          matched_ok(r["promptedIgnoringCase"], config["prompt"], True)
    check("Search button: the prompted term %r, then ignoring case (ic): %d and %d samples"
          % (config["prompt"], expected_matches(stacks, config["prompt"]),
             expected_matches(stacks, config["prompt"], True)),
          not why and not r["promptReset"], why or "the match stayed after Reset Search")

    for z in r["zooms"]:
        zp = z["path"]
        zs = tot[tuple(zp)]
        zf = next(f for f in z["frames"] if f["path"] == zp)
        zstart = int(zf["start"])
        bad = []
        if not (near(zf["x"], PAD) and near(zf["width"], full)):
            bad.append("clicked frame at x %s width %s, not %d..%d" % (zf["x"], zf["width"], PAD, full))
        seen = {"callee": 0, "caller": 0, "hidden": 0}
        for f in z["frames"]:
            p = f["path"]
            if p[:len(zp)] == zp:
                seen["callee"] += 1
                w = tot[tuple(p)] * full / zs
                if not f["visible"] or not near(f["width"], w) or \
                   not near(f["x"], PAD + (int(f["start"]) - zstart) * full / zs) or \
                   f["label"] != fit(p[-1], w) or f["opacity"] != "1":
                    bad.append("callee %r: visible %s x %s width %s label %r" %
                               (p, f["visible"], f["x"], f["width"], f["label"]))
            elif zp[:len(p)] == p:
                seen["caller"] += 1
                if not f["visible"] or f["opacity"] != "0.5" or not near(f["x"], PAD) or \
                   not near(f["width"], full):
                    bad.append("caller %r: visible %s opacity %s x %s width %s" %
                               (p, f["visible"], f["opacity"], f["x"], f["width"]))
            else:
                seen["hidden"] += 1
                if f["visible"]:
                    bad.append("%r outside the zoom is visible" % (p,))
        if not z["unzoomVisible"]:
            bad.append("no Reset Zoom")
        if not seen["hidden"]:
            bad.append("no frame outside the zoom to look at")
        check("click %s: it spans the full width, %d frames of its subtree widened %.2fx, %d callers greyed, %d others hidden"
              % (";".join(zp), seen["callee"], total / zs, seen["caller"], seen["hidden"]),
              not bad, "; ".join(bad[:3]))
    diff = [(a["path"], k) for a, b in zip(init, r["reset"]) for k in a if a[k] != b[k]]
    check("Reset Zoom: every frame's x, width, label, fill and visibility as before",
          not diff and len(r["reset"]) == len(init) and not r["unzoomVisibleAfterReset"],
          "changed: %s" % diff[:4])
    check("hover: the frame's tooltip text in the details line",
          r["hover"]["details"] == r["hover"]["title"], repr(r["hover"]))

mode = sys.argv[1]
if mode == "static":
    static(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), sys.argv[7] == "1")
elif mode == "url":
    print(driver_url(sys.argv[2], sys.argv[3], sys.argv[4]))
    sys.exit(0)
elif mode == "browser":
    browser(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
report()
PY

# judge LABEL ARGS...: runs judge.py ARGS and counts its PASS and FAIL lines.
judge() {
	local label=$1 line
	shift
	while IFS= read -r line; do
		case "$line" in
		"PASS "*) pass "$label: ${line#PASS }" ;;
		"FAIL "*) line=${line#FAIL }; fail "$label: ${line%%$'\t'*}" "${line#*$'\t'}" ;;
		*) fail "$label: judge.py" "$line" ;;
		esac
	done < <("$python" "$tmp/judge.py" "$@" 2>&1)
}

cd "$tmp" || exit 2
echo "== recordings"
if "$report_test" gen golden.data && "$hostile_gen" hostile.data; then
	pass "recordings: report-test's golden one, hostile-names-gen's"
else
	fail "recordings" "a generator failed"
	finish tool-flamegraph
	exit
fi

cat >golden.json <<'EOF'
{"terms": ["write", "_write", "^main$", "etext", "write_loop|default_idle", "x1b", "no such frame"],
 "prompt": "MAIN",
 "zooms": [["writer", "main"], ["writer", "main", "write_loop"], ["writer"]]}
EOF
cat >hostile.json <<'EOF'
{"terms": ["</script>", "]]>", "array[", "\"quoted\" & 'single'", "<!--", "&lt;", "\\\\x1b\\[31m", "\\.\\.\\.$"],
 "prompt": "QUOTED",
 "zooms": [["\"</script>&'<x>", "main", "\"quoted\" & 'single' <b>bold</b>"],
           ["]]>\\x01<!--&amp;", "main"]]}
EOF

# graph NAME DATA WIDTH TITLE INVERTED [OPTIONS...]: NAME.svg and NAME.folded.
graph() {
	local name=$1 data=$2
	shift 5
	if "$bin" report -i "$data" --flamegraph "$name.svg" "$@" >/dev/null 2>"$name.err" &&
	   "$bin" report -i "$data" --folded >"$name.folded" 2>/dev/null; then
		pass "$name: report --flamegraph $*"
		return 0
	fi
	fail "$name: report --flamegraph $*" "$(head -c 300 "$name.err")"
	return 1
}

# name data width title inverted options
cases=(
	"golden|golden.data|1000|golden \"flame\" <graph> & co|0|--title|golden \"flame\" <graph> & co|--width|1000"
	"icicle|golden.data|1600|pvprof icicle graph: golden.data|1|--inverted|--width|1600"
	"hostile|hostile.data|1200|pvprof flame graph: hostile.data|0"
)

echo "== the SVG, parsed (no browser)"
ready=()
for c in "${cases[@]}"; do
	IFS='|' read -r -a f <<<"$c"
	if graph "${f[@]}"; then
		judge "${f[0]}" static "$tmp/${f[0]}.svg" "${f[0]}.folded" "$script_js" "${f[3]}" "${f[2]}" "${f[4]}"
		ready+=("$c")
	fi
done

echo "== the SVG in headless Chromium"
if [ -z "$chromium" ]; then
	skip "browser" "no chromium (scripts/install-deps.sh installs it; PVPROF_CHROMIUM names another): the script was not run"
else
	for c in "${ready[@]}"; do
		IFS='|' read -r -a f <<<"$c"
		config=golden.json
		[ "${f[0]}" = hostile ] && config=hostile.json
		url=$("$python" "$tmp/judge.py" url "$driver" "$tmp/${f[0]}.svg" "$config")
		# The budget is virtual time for the page's own timers, of which it
		# has none; the results are written on the SVG's load event.  The
		# timeout only ends a browser stuck on a dialog the script opened.
		timeout 300 "$chromium" --headless --no-sandbox --disable-gpu \
			--allow-file-access-from-files --user-data-dir="$tmp/chromium" \
			--virtual-time-budget=60000 --dump-dom "$url" \
			>"${f[0]}.dom" 2>"${f[0]}.chromium.err"
		rc=$?
		if [ "$rc" = 124 ]; then
			fail "${f[0]}: chromium" "still running after 300 s (stuck on an alert or prompt?)"
			continue
		elif [ "$rc" != 0 ]; then
			fail "${f[0]}: chromium" "exit status $rc: $(grep -v -e dbus -e '^$' "${f[0]}.chromium.err" | head -c 300)"
			continue
		fi
		judge "${f[0]} in chromium" browser "${f[0]}.dom" "${f[0]}.folded" "$config" "${f[2]}"
	done
fi

echo "== options"
expect_err "--width below the minimum" 2 "--width: expected a number from 300 to 100000, got: '299'" -- report -i golden.data --flamegraph w.svg --width 299
expect_err "--width above the maximum" 2 "--width: expected a number from 300 to 100000, got: '100001'" -- report -i golden.data --flamegraph w.svg --width 100001
expect_err "--width not a number" 2 "--width: expected a number from 300 to 100000, got: '12px'" -- report -i golden.data --flamegraph w.svg --width 12px
expect_err "--width empty" 2 "--width: expected a number from 300 to 100000, got: ''" -- report -i golden.data --flamegraph w.svg --width ''
expect_err "--title without --flamegraph" 2 "report: --title, --width and --inverted need --flamegraph OUT.svg" -- report -i golden.data --title x
expect_err "--inverted without --flamegraph" 2 "report: --title, --width and --inverted need --flamegraph OUT.svg" -- report -i golden.data --inverted
if [ -e w.svg ]; then
	fail "no SVG written after a usage error" "w.svg exists"
else
	pass "no SVG written after a usage error"
fi
expect_help "help: --title, --width, --inverted" "--width PIXELS" report --help

finish tool-flamegraph
