#!/bin/sh
# hostile-index.sh - another user against `memtrace view` run as root on a
# trace in a directory both may write to (1777): the allocation index
# (TRACE.mtidx) and the resident-memory samples (TRACE.rss) beside the
# trace are trusted only as far as the trace is. An index planted by
# another user (who can read the trace and write beside it, not write the
# trace) is refused, so it cannot make a filter's answer lie; a FIFO at
# either name no longer leaves the viewer "loading" forever; a new index
# takes the trace's read permissions (0600 beside a 0600 trace), and one
# that others may write is refused. Issue 20, items 6 and 8.
set -u
. "$(dirname "$0")/lib.inc"
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
    echo "needs root, a user nobody and setpriv (to act as another user)"
    exit 77
fi
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
gen=$MT_BUILD/bench/viewer-gen
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
S=$MT_TMP/shared
mkdir -p "$S" && chmod 1777 "$S" && chmod o+x "$MT_TMP" "$(dirname "$MT_TMP")"
export XDG_CACHE_HOME=$MT_TMP/cache

ctf=$S/t.ctf
idx=$ctf.mtidx
"$gen" "$ctf" 100000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }
chmod 600 "$ctf"
Q='api/stats?filter=size%3A%3E%3D4k'
ready() { # until the viewer at VIEW_URL has loaded the trace (a bound of 300 s)
    i=0
    while [ $i -lt 6000 ]; do
        curl -s "${VIEW_URL}api/status" | grep -q '"state":"ready"' && return 0
        sleep 0.05; i=$((i + 1))
    done
    return 1
}
ask() { curl -s "${VIEW_URL}$Q" > "$1"; }

# the reference answer: no index, the trace read again
start_viewer "$ctf" --port 0 -q --fold-above 0 --no-index || exit 1
ready; ask "$MT_TMP/ref.json"
stop_viewer
check "reference answer" grep -q '"alloc_bytes"' "$MT_TMP/ref.json"

# a new index has the trace's read permissions
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
ready; stop_viewer
check "index beside a 0600 trace: mode 600 ($(stat -c %a "$idx" 2>/dev/null))" \
    test "$(stat -c %a "$idx" 2>/dev/null)" = 600
rm -f "$idx"; chmod 644 "$ctf"
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
ready; stop_viewer
check "index beside a 0644 trace: mode 644 ($(stat -c %a "$idx" 2>/dev/null))" \
    test "$(stat -c %a "$idx" 2>/dev/null)" = 644
cp -p "$idx" "$MT_TMP/good.mtidx"

# planted by another user: a valid index of this trace as far as its
# header says (it could hold any records) is refused, and the answers stay
# the trace's
cp "$MT_TMP/good.mtidx" "$idx"; chown nobody "$idx"
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
ready; ask "$MT_TMP/planted.json"; stop_viewer
check "another user's index: refused, said once: $(grep -a 'allocation index' "$VIEW_ERR" | head -n 1 | head -c 200)" \
    grep -q 'allocation index .*t.ctf.mtidx: ignored (belongs to another user' "$VIEW_ERR"
check "another user's index: the answer is the trace's" cmp -s "$MT_TMP/ref.json" "$MT_TMP/planted.json"
check "another user's index: left alone, a new one written in the cache directory" \
    sh -c "[ \$(stat -c %U '$idx') = nobody ] && ls '$XDG_CACHE_HOME/memtrace' | grep -q '^t.ctf-.*\.mtidx\$'"
rm -rf "$XDG_CACHE_HOME"

# ours, but others may write it
rm -f "$idx"; cp "$MT_TMP/good.mtidx" "$idx"; chmod 666 "$idx"
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
ready; ask "$MT_TMP/writable.json"; stop_viewer
check "an index others may write: refused ($(grep -a 'allocation index' "$VIEW_ERR" | head -n 1 | head -c 160))" \
    grep -q 'ignored (may be written by other users)' "$VIEW_ERR"
check "an index others may write: the answer is the trace's" cmp -s "$MT_TMP/ref.json" "$MT_TMP/writable.json"

# a link to a good index of ours: not followed
rm -f "$idx"; nobody ln -s "$MT_TMP/good.mtidx" "$idx"
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
ready; stop_viewer
check "a link as the index: not followed" grep -q 'ignored (is a symbolic link (not followed))' "$VIEW_ERR"

# FIFOs: the viewer opened them blocking and stayed "loading"
for side in mtidx rss; do
    rm -f "$idx" "$ctf.rss"
    nobody mkfifo "$ctf.$side"
    start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
    ready; st=$?
    ask "$MT_TMP/fifo.json"
    stop_viewer
    check "a FIFO as TRACE.$side: the viewer loads the trace" test "$st" = 0
    check "a FIFO as TRACE.$side: the answer is the trace's" cmp -s "$MT_TMP/ref.json" "$MT_TMP/fifo.json"
    rm -f "$ctf.$side"
done
