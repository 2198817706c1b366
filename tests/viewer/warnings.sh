#!/bin/sh
# warnings.sh - the viewer's warnings about the trace it loads (a block
# freed twice, a trace cut short), whole model or folded: each once on
# stderr as "memtrace view: warning: ..." (never the bare "memtrace:
# warning: ..."), and the same texts in /api/info's "warnings" array, the
# field after "folded"; a folded trace read again for a filter says nothing
# more; a sound trace has an empty array. The page (warnings_page.js, in
# the system Chromium) shows them beside the title and in its Trace panel.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
page=0
if [ "${MT_STAGE:-plain}" = plain ]; then
    need_browser
    page=1
fi
gen=$MT_BUILD/tests/tools/gen_hostile
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }
twice=$MT_TMP/twice.ctf
cut=$MT_TMP/cut.ctf
"$gen" carried-twice "$twice" || { echo "FAIL: gen_hostile carried-twice"; exit 1; }
head -c 3000 "$MT_FIXTURES/leak.ctf" >"$cut"
said_twice='collection of unknown or already collected object 2 (ignored)'
said_cut="$cut: offset 621: skipping truncated packet at end of file (2379 of 28579 bytes)"

info() { # info -> /api/info in $MT_TMP/info once loaded (it waits for the model)
    i=0
    while [ $i -lt 600 ]; do   # 300 s: a bound far above the load
        code=$(curl -s -o "$MT_TMP/info" -w '%{http_code}' --max-time 120 "${VIEW_URL}api/info")
        [ "$code" = 200 ] && return 0
        sleep 0.5; i=$((i + 1))
    done
    return 1
}

for mode in whole folded; do
    args=""
    [ $mode = whole ] || args="--fold-above 0 --no-index"   # (a filter reads the trace)
    for t in twice cut; do
        case $t in
            twice) file=$twice said=$said_twice ;;
            *) file=$cut said=$said_cut ;;
        esac
        # shellcheck disable=SC2086
        start_viewer "$file" --port 0 -q $args || exit 1
        check "$t, $mode: /api/info answers" info
        grep -q "\"folded\":$([ $mode = whole ] && echo false || echo true)," "$MT_TMP/info" ||
            fail "$t, $mode: not read $mode: $(head -c 300 "$MT_TMP/info")"
        want="\"warnings\":[\"$said\"]}"
        check "$t, $mode: /api/info's warnings are the reader's, last field: $(tail -c 200 "$MT_TMP/info")" \
            sh -c "tail -c ${#want} '$MT_TMP/info' | grep -qxF '$want'"
        if [ $mode = folded ]; then
            # a filter reads the trace again: its warnings are the load's
            code=$(curl -s -o "$MT_TMP/stats" -w '%{http_code}' --max-time 300 \
                "${VIEW_URL}api/stats?filter=size:%3E%3D1")
            check "$t, folded: a filter's answer (read again): $code" [ "$code" = 200 ]
        fi
        if [ $page = 1 ] && [ $t = cut ]; then
            profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
            (cd "$here" && timeout 120 node warnings_page.js "$VIEW_URL" "$profile" "$said")
        fi
        stop_viewer
        check "$t, $mode: stderr says it once as 'memtrace view: warning:': $(cat "$VIEW_ERR")" \
            sh -c "grep -c warning '$VIEW_ERR' | grep -qx 1 &&
                   grep -qxF 'memtrace view: warning: $said' '$VIEW_ERR'"
    done
done

start_viewer "$MT_FIXTURES/leak.ctf" --port 0 -q || exit 1
check "a sound trace: /api/info answers" info
check "a sound trace: no warning: $(tail -c 100 "$MT_TMP/info")" \
    sh -c "tail -c 30 '$MT_TMP/info' | grep -qF '\"folded\":false,\"warnings\":[]}'"
if [ $page = 1 ]; then
    profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
    (cd "$here" && timeout 120 node warnings_page.js "$VIEW_URL" "$profile" "")
fi
stop_viewer
check "a sound trace: no warning on stderr: $(cat "$VIEW_ERR")" sh -c "! grep -q warning '$VIEW_ERR'"
finish
