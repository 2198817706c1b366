#!/bin/sh
# loading.sh - the viewer listens before the trace is loaded: while it reads
# (a trace fed slowly through a pipe) /api/status says how far it is, other
# requests wait for the model, and the page shows a progress bar, then the
# trace once loaded; a pipe is never folded (filters on a folded trace read
# the file again); a trace that fails to load ends the viewer with the
# reader's error and status 1, whole model or folded.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
gen=$MT_BUILD/bench/viewer-gen
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }
ctf=$MT_TMP/gen.ctf     # 2.7 MB: progress is reported about every 1 MB
"$gen" "$ctf" 300000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }
size=$(wc -c < "$ctf")
half=$((size / 2))

for mode in whole pipe-not-folded; do
    fifo=$MT_TMP/pipe-$mode.ctf
    go=$MT_TMP/go-$mode
    mkfifo "$fifo" || { echo "FAIL: mkfifo"; exit 1; }
    args=""
    [ $mode = whole ] || args="--fold-above 0"
    # shellcheck disable=SC2086
    start_viewer "$fifo" --port 0 -q $args || exit 1
    { head -c "$half" "$ctf"; while [ ! -f "$go" ]; do sleep 0.05; done; tail -c +"$((half + 1))" "$ctf"; } > "$fifo" &
    writer=$!
    i=0
    while [ $i -lt 6000 ]; do   # 300 s: a bound far above the wait
        curl -s -o "$MT_TMP/status" "${VIEW_URL}api/status"
        grep -q '"done":[1-9]' "$MT_TMP/status" && break
        sleep 0.05; i=$((i + 1))
    done
    check "$mode: status while loading says loading, with the bytes read" \
        grep -q '"state":"loading","done":[1-9]' "$MT_TMP/status"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "${VIEW_URL}api/info")
    check "$mode: other requests wait for the model (got '$code')" [ "$code" = 000 ]
    if [ $mode = whole ] && [ "${MT_STAGE:-plain}" = plain ] && [ -x /usr/bin/chromium ] &&
       [ -d "$here/node_modules/playwright-core" ]; then
        profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
        (cd "$here" && timeout 120 node loading_page.js "$VIEW_URL" "$go" "$profile")
    else
        touch "$go"
    fi
    wait $writer
    i=0
    while [ $i -lt 6000 ]; do   # 300 s: a bound far above the wait
        curl -s -o "$MT_TMP/status" "${VIEW_URL}api/status"
        grep -q '"state":"ready"' "$MT_TMP/status" && break
        sleep 0.05; i=$((i + 1))
    done
    check "$mode: status says ready once loaded" grep -q '"state":"ready"' "$MT_TMP/status"
    code=$(curl -s -o "$MT_TMP/info" -w '%{http_code}' "${VIEW_URL}api/info")
    check "$mode: then the trace is served" sh -c "[ $code = 200 ] && grep -q viewer-bench-workload '$MT_TMP/info'"
    [ $mode = whole ] || check "a pipe is served whole even with --fold-above 0" grep -q '"folded":false' "$MT_TMP/info"
    stop_viewer
done

# the page on a folded trace (a regular file)
if [ "${MT_STAGE:-plain}" = plain ] && [ -x /usr/bin/chromium ] && [ -d "$here/node_modules/playwright-core" ]; then
    start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
    profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
    (cd "$here" && timeout 120 node loading_page.js "$VIEW_URL" - "$profile" folded)
    stop_viewer
fi

# a damaged trace: the reader's error, status 1, whether folded or not
head -c $((size - 100)) "$ctf" > "$MT_TMP/cut.ctf"
printf 'garbage' | dd of="$MT_TMP/cut.ctf" bs=1 seek=300 conv=notrunc 2>/dev/null
for args in "" "--fold-above 0"; do
    # shellcheck disable=SC2086
    "$MT_BIN" view --port 0 -q $args "$MT_TMP/cut.ctf" > "$MT_TMP/cut.out" 2> "$MT_TMP/cut.err" &
    pid=$!
    i=0
    while kill -0 $pid 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    if kill -0 $pid 2>/dev/null; then
        kill $pid; fail "damaged trace ($args): the viewer keeps running"; continue
    fi
    wait $pid
    rc=$?
    check "damaged trace ${args:-whole}: exit 1 with the file and offset (rc $rc: $(head -c 200 "$MT_TMP/cut.err"))" \
        sh -c "[ $rc = 1 ] && grep -q 'cut.ctf: offset [0-9]*:' '$MT_TMP/cut.err'"
done
