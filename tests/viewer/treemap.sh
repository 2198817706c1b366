#!/bin/sh
# treemap.sh - the viewer's treemap in headless Chromium (treemap_page.js):
# drawn for a fixture, rectangle areas proportional to the API's tree
# values, zoom in and out by mouse and keyboard, the filter and the measure
# change the values, colours and shortened labels like the flame graph's,
# names that are HTML markup shown as text, and a tree of tens of thousands
# of nodes drawn at once (small ones pooled into "other").
set -u
. "$(dirname "$0")/lib.inc"
[ "${MT_STAGE:-plain}" = plain ] || { echo "plain stage only"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
need_browser
hostile=$MT_BUILD/tests/tools/gen_hostile
gen=$MT_BUILD/bench/viewer-gen
[ -x "$hostile" ] && [ -x "$gen" ] || { echo "FAIL: $hostile or $gen not built (make tests-build)"; exit 1; }
"$hostile" html "$MT_TMP/html.ctf" || { echo "FAIL: gen_hostile html"; exit 1; }
# 2,000 distinct call paths: about 43,000 nodes from main with min=0
"$gen" "$MT_TMP/big.ctf" 100000 2000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }

start_viewer "$MT_FIXTURES/leak.ctf" --port 0 -q || exit 1
leak=$VIEW_URL
start_viewer "$MT_TMP/html.ctf" --port 0 -q || exit 1
html=$VIEW_URL
start_viewer "$MT_TMP/big.ctf" --port 0 -q || exit 1
big=$VIEW_URL
profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
(cd "$here" && timeout 240 node treemap_page.js "$leak" "$html" "$big" "$profile")
