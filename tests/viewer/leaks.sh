#!/bin/sh
# leaks.sh - the viewer's Leaks tab in headless Chromium (leaks_page.js):
# key 6 opens it; it lists the suspects `memtrace leaks --json` finds, each
# with a sparkline of its live bytes; "all sites" lists every site; a
# site's name leads to its callers and callees; the filter applies; names
# that are HTML markup are shown as text; for a trace with leak verdicts
# the Measure menu offers bytes lost and reachable at exit, and the flame
# graph then weighs what stats counts.
set -u
. "$(dirname "$0")/lib.inc"
[ "${MT_STAGE:-plain}" = plain ] || { echo "plain stage only"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
need_browser
hostile=$MT_BUILD/tests/tools/gen_hostile
[ -x "$hostile" ] || { echo "FAIL: $hostile not built (make tests-build)"; exit 1; }
"$hostile" html "$MT_TMP/html.ctf" || { echo "FAIL: gen_hostile html"; exit 1; }
"$MT_BIN" leaks --json "$MT_FIXTURES/leak.ctf" >"$MT_TMP/leaks.json" || { echo "FAIL: memtrace leaks"; exit 1; }
"$MT_BIN" leaks --json --all -n 0 "$MT_FIXTURES/leak.ctf" >"$MT_TMP/all.json" || { echo "FAIL: memtrace leaks --all"; exit 1; }
# a trace with leak verdicts: every block of progs/leaky.c sampled
"$MT_BIN" run --leaks --interval 1 -o "$MT_TMP/v.ctf" -- "$MT_BUILD/tests/record/progs/leaky" exit >/dev/null 2>&1 &&
    "$MT_BIN" stats --json "$MT_TMP/v.ctf" >"$MT_TMP/v.json" || { echo "FAIL: a trace with verdicts"; exit 1; }
start_viewer "$MT_TMP/v.ctf" --port 0 -q || exit 1
verdicts=$VIEW_URL
start_viewer "$MT_FIXTURES/leak.ctf" --port 0 -q || exit 1
leak=$VIEW_URL
start_viewer "$MT_TMP/html.ctf" --port 0 -q || exit 1
html=$VIEW_URL
profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
(cd "$here" && timeout 120 node leaks_page.js "$leak" "$html" "$profile" "$MT_TMP/leaks.json" "$MT_TMP/all.json" \
    "$verdicts" "$MT_TMP/v.json")
