#!/bin/sh
# compare.sh - the viewer's compare mode in headless Chromium
# (compare_e2e.js): `memtrace view BASE NEW` with a program whose site_07
# allocates twice as much: both curves drawn, the grown path red in the
# differential flame graph and the rest grey, site_07 first and significant
# in the table, the state kept in the URL across a reload; two runs of the
# same program leave the flame graph grey; two windows of one trace.
# SHOTS=dir keeps screenshots (docs/images/compare-*.png come from here).
set -u
. "$(dirname "$0")/lib.inc"
[ "${MT_STAGE:-plain}" = plain ] || exit 77
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
    echo "chromium or node missing (scripts/install-deps.sh test installs them)"; exit 77
fi
need_playwright
P=$MT_BUILD/tests/record/progs/diffsites
[ -x "$P" ] || { echo "FAIL: $P not built"; exit 1; }
lib=$PWD/$MT_BUILD/libmemtrace.so P=$PWD/$P MT_BIN=$(cd "$(dirname "$MT_BIN")" && pwd)/$(basename "$MT_BIN")
case $MT_TMP in /*) ;; *) MT_TMP=$PWD/$MT_TMP ;; esac
cd "$MT_TMP" || exit 1   # the traces are named as a user would name them
# One sample per 2 KiB: site_07's extra live bytes (about 460 KiB with the
# size filter) are then about 8 standard errors of their difference and 10
# of another site's, whose noise never comes first (at one per 8 KiB, half
# those: another site came first about one run in a hundred).
rec() {
    env -u MEMTRACE_ROOT LD_PRELOAD="$lib" MEMTRACE="$1" MEMTRACE_RATE=$(awk 'BEGIN { printf "%.17g", 1 / 2048 }') "$P" $2 >/dev/null &&
        "$MT_BIN" symbolize -q "$1"   # names for the raw frames, as memtrace run gives them
}
rec base.ctf ""; rec again.ctf ""; rec new.ctf 7
rc=0
profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
start_viewer base.ctf new.ctf --port 0 -q || exit 1
(cd "$here" && timeout 180 node compare_e2e.js grew "$VIEW_URL" "$profile" ${SHOTS:+"$SHOTS"}) || rc=1
stop_viewer
start_viewer base.ctf again.ctf --port 0 -q || exit 1
(cd "$here" && timeout 180 node compare_e2e.js same "$VIEW_URL" "$profile") || rc=1
stop_viewer
start_viewer --windows 0-15ms 15ms-end new.ctf --port 0 -q || exit 1
(cd "$here" && timeout 180 node compare_e2e.js windows "$VIEW_URL" "$profile" ${SHOTS:+"$SHOTS"}) || rc=1
stop_viewer
exit $rc
