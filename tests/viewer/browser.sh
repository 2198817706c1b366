#!/bin/sh
# browser.sh - the viewer in a real headless Chromium: flame graph and memory
# curve drawn, top allocation site in the table, a time filter applied by
# dragging on the chart changes the table, reloading the URL gives the same
# view. Uses Debian's chromium and the playwright-core npm package (installed
# into tests/viewer/node_modules from package-lock.json when missing).
# SHOTS=dir keeps screenshots of the main views there.
set -u
. "$(dirname "$0")/lib.inc"
[ "${MT_STAGE:-plain}" = plain ] || { echo "plain stage only"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
need_browser

# the top allocation site, from the reference dump (innermost frame, by samples)
. tests/lib.sh
fixture_text leak > "$MT_TMP/leak.txt" || exit 1
top=$(awk '/^ev / && $3 == "alloc" { if (fn != "") by[fn] += n; n = $6; sub(/nsamples=/, "", n); fn = "" }
           /^  bt / { fn = $NF }
           END { if (fn != "") by[fn] += n; for (f in by) if (best == "" || by[f] > by[best]) best = f; print best }' \
      "$MT_TMP/leak.txt")

start_viewer "$MT_FIXTURES/leak.ctf" --port 0 -q || exit 1
profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
(cd "$here" && timeout 180 node e2e.js "$VIEW_URL" "$top" "$profile" ${SHOTS:+"$SHOTS"})
rc=$?
stop_viewer
exit $rc
