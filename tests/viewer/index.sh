#!/bin/sh
# index.sh - the allocation index of big traces (viewer/allocidx.c,
# lib/analyze/allocindex.c): written beside the trace on the first folded
# load, reused on the next one, and answers byte-identical to reading the
# trace again (--no-index). An index that is stale (the trace changed),
# cut short, damaged in its header or its records, or not an index at all
# is never trusted: one line on stderr, the answers stay right, and a new
# index is written (at once, or on the next start when the damage only
# shows while folding). No index can be written beside the trace: the
# cache directory ($XDG_CACHE_HOME/memtrace).
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
gen=$MT_BUILD/bench/viewer-gen
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }

ctf=$MT_TMP/t.ctf
idx=$ctf.mtidx
"$gen" "$ctf" 200000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }
export XDG_CACHE_HOME=$MT_TMP/cache

enc() { printf %s "$1" | sed 's/%/%25/g; s/ /%20/g; s/+/%20/g; s/</%3C/g; s/>/%3E/g; s/=/%3D/g; s/!/%21/g'; }
FILTERS="size:>=4k alloc:0.05s-0.15s lifetime:<1ms collect:never live:peak inside:fn0003 !inside:fn0003+size:<=256 hide:mod00"
QUERIES="stats curve?n=300 hist tree?dir=sites hotspots?metric=live&only=sites"
# answers DIR: every query for every filter of the viewer at VIEW_URL into DIR
answers() {
    mkdir -p "$1"
    k=0
    for f in $FILTERS; do
        for q in $QUERIES; do
            k=$((k + 1))
            case $q in *\?*) sep='&' ;; *) sep='?' ;; esac
            curl -s -o "$1/$k.json" -w '%{http_code}\n' "${VIEW_URL}api/$q${sep}filter=$(enc "$f")" \
                >> "$1/codes"
        done
    done
}
loaded() { # until the viewer at VIEW_URL has loaded the trace
    i=0
    while [ $i -lt 6000 ] && ! curl -s "${VIEW_URL}api/status" | grep -q '"state":"ready"'; do
        sleep 0.05; i=$((i + 1))
    done
}
same() { # same DIR DIR: the same answers, all 200
    ! grep -qv '^200$' "$1/codes" && diff -r "$1" "$2" >/dev/null
}

# the reference: the trace read again for each filter
start_viewer "$ctf" --port 0 -q --fold-above 0 --no-index || exit 1
answers "$MT_TMP/ref"
stop_viewer
check "--no-index writes no index" [ ! -e "$idx" ]

# a temporary file left by a viewer that died while writing
dead=$(sh -c 'echo $$')
: > "$idx.tmp.$dead"
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
answers "$MT_TMP/first"
stop_viewer
check "a dead viewer's temporary file removed" [ ! -e "$idx.tmp.$dead" ]
check "the first folded load writes the index beside the trace" \
    sh -c "[ -s '$idx' ] && grep -q 'index .*t.ctf.mtidx: written' '$VIEW_ERR'"
check "no temporary file left beside it" sh -c "! ls '$MT_TMP' | grep -q 'mtidx.tmp'"
check "filters folded from the index: the same answers as reading the trace" \
    same "$MT_TMP/ref" "$MT_TMP/first"

cp "$idx" "$MT_TMP/good.mtidx"

# a viewer stopped while it loads (and writes an index) leaves no file
"$gen" "$MT_TMP/slow.ctf" 3000000 >/dev/null
start_viewer "$MT_TMP/slow.ctf" --port 0 -q --fold-above 0 || exit 1
stop_viewer
check "stopped while loading: no temporary index left" \
    sh -c "! ls '$MT_TMP' | grep -q 'slow.ctf.mtidx.tmp'"
# stopped while loading, again and again: the loading thread, still
# reading while the process ends, touches nothing of the caller's (it read
# the caller's progress callback from a frame gone by then; under ASan the
# report of it deadlocked with the exit's leak check)
bad=0
# (threads left running are this path's design: ThreadSanitizer's thread
# leak reports are off for it, its data race reports are not)
tsan_was=${TSAN_OPTIONS-unset}
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_thread_leaks=0"; export TSAN_OPTIONS
for k in 1 2 3 4; do
    rm -f "$MT_TMP/slow.ctf.mtidx"
    start_viewer "$MT_TMP/slow.ctf" --port 0 -q --fold-above 0 || exit 1
    stop_viewer
    if [ "$VIEW_RC" != 0 ] || grep -q 'Sanitizer\|runtime error' "$VIEW_ERR"; then
        bad=$((bad + 1)); head -n 5 "$VIEW_ERR"
    fi
done
if [ "$tsan_was" = unset ]; then unset TSAN_OPTIONS; else TSAN_OPTIONS=$tsan_was; fi
check "stopped while loading 4 more times: each ends cleanly ($bad did not)" test "$bad" = 0
touch -r "$idx" "$MT_TMP/stamp"
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
answers "$MT_TMP/again"
stop_viewer
check "the next load reuses it (nothing said, nothing written)" \
    sh -c "! grep -q 'allocation index' '$VIEW_ERR' && cmp -s '$idx' '$MT_TMP/good.mtidx' && [ ! '$idx' -nt '$MT_TMP/stamp' ]"
check "reused: the same answers" same "$MT_TMP/ref" "$MT_TMP/again"

# several new filters folded from the index at once (one request thread
# each): each answer as the re-read's
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
loaded
i=0
pids=""
for f in $FILTERS; do
    i=$((i + 1))
    [ $i -le 4 ] || break
    curl -s -o "$MT_TMP/par$i.json" "${VIEW_URL}api/tree?dir=sites&filter=$(enc "$f")" &
    pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
stop_viewer
ok=0
for i in 1 2 3 4; do
    cmp -s "$MT_TMP/par$i.json" "$MT_TMP/ref/$(( (i - 1) * 5 + 4 )).json" && ok=$((ok + 1))
done
check "four filters folded at once: the re-read's answers ($ok of 4)" [ $ok = 4 ]

size=$(wc -c < "$MT_TMP/good.mtidx")
# damaged DESCRIPTION WHAT-IT-SAYS: damage $idx (a copy of the good one)
# with the commands on stdin, then load, answer, compare
damaged() {
    dwhat=$1 says=$2
    cp "$MT_TMP/good.mtidx" "$idx"
    sh -e || { fail "$dwhat: damaging the index"; return; }
    dk=$((dk + 1))
    start_viewer "$ctf" --port 0 -q --fold-above 0 || return
    answers "$MT_TMP/d$dk"
    kill -0 "$VIEW_PID" 2>/dev/null
    check "$dwhat: the viewer still runs" [ $? = 0 ]
    stop_viewer
    check "$dwhat: said once on stderr ($says)" \
        sh -c "[ \$(grep -c 'allocation index' '$VIEW_ERR') -ge 1 ] && grep -q '$says' '$VIEW_ERR'"
    check "$dwhat: the answers stay right" same "$MT_TMP/ref" "$MT_TMP/d$dk"
    # the next start has a good index again
    start_viewer "$ctf" --port 0 -q --fold-above 0 || return
    loaded
    stop_viewer
    start_viewer "$ctf" --port 0 -q --fold-above 0 || return
    answers "$MT_TMP/r$dk"
    stop_viewer
    # (the records after the header of 128 bytes: the header names the trace)
    tail -c +129 "$idx" > "$MT_TMP/new.rec"
    tail -c +129 "$MT_TMP/good.mtidx" > "$MT_TMP/good.rec"
    check "$dwhat: a new index afterwards, used silently" \
        sh -c "cmp -s '$MT_TMP/new.rec' '$MT_TMP/good.rec' && ! grep -q 'allocation index' '$VIEW_ERR'"
}
dk=0
damaged "cut short" "truncated" <<EOF
truncate -s $((size / 2)) "$idx"
EOF
damaged "empty" "not an allocation index" <<EOF
: > "$idx"
EOF
damaged "not an index" "not an allocation index" <<EOF
head -c $size "$ctf" > "$idx"
EOF
damaged "a byte of its header changed" "damaged header" <<EOF
printf '\377' | dd of="$idx" bs=1 seek=40 conv=notrunc 2>/dev/null
EOF
damaged "another version" "another version" <<EOF
printf '\377' | dd of="$idx" bs=1 seek=8 conv=notrunc 2>/dev/null
EOF
damaged "a byte of its records changed" "damaged\|out of range\|unknown kind\|past the end" <<EOF
printf '\125' | dd of="$idx" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
EOF
damaged "its last record cut" "truncated" <<EOF
truncate -s $((size - 1)) "$idx"
EOF
damaged "the trace touched since" "another version of the trace" <<EOF
touch "$ctf"
EOF

# no index can be made beside the trace (a name so long that the index's
# would be too long: this holds for root too): the cache directory
rm -f "$idx"
long=$MT_TMP/$(printf 'x%.0s' $(seq 1 245)).ctf
cp "$ctf" "$long"
start_viewer "$long" --port 0 -q --fold-above 0 || exit 1
answers "$MT_TMP/cache1"
stop_viewer
check "nowhere beside the trace: the index in the cache directory" \
    sh -c "ls '$XDG_CACHE_HOME/memtrace/' | grep -q '^xxxx*-[0-9a-f]*\.mtidx\$'"
check "from the cache: the same answers" same "$MT_TMP/ref" "$MT_TMP/cache1"
start_viewer "$long" --port 0 -q --fold-above 0 || exit 1
loaded
stop_viewer
check "the cache's index reused" sh -c "! grep -q 'allocation index' '$VIEW_ERR'"

# nor in the cache (a path through a regular file): a temporary file,
# removed at once
rm -rf "$XDG_CACHE_HOME"
: > "$MT_TMP/notadir"
mkdir -p "$MT_TMP/tmpdir"
XDG_CACHE_HOME=$MT_TMP/notadir/x TMPDIR=$MT_TMP/tmpdir start_viewer "$long" --port 0 -q --fold-above 0 ||
    exit 1
answers "$MT_TMP/tmp1"
check "in a temporary file: the same answers" same "$MT_TMP/ref" "$MT_TMP/tmp1"
check "the temporary file is not left in the directory" sh -c "[ -z \"\$(ls '$MT_TMP/tmpdir')\" ]"
stop_viewer
