#!/bin/sh
# rss.sh - the viewer's curve answer carries the resident memory written
# beside a trace (FILE.rss) and the bytes per kind: a copy of a fixture with
# a hand-written FILE.rss matching its pid and start shows those samples in
# range and their peak; without FILE.rss, rss is null; a FILE.rss of another
# process is ignored; a version 2 FILE.rss adds its ledger readings' rows
# beyond the heap (docs/rss.md).
set -u
. tests/viewer/lib.inc
command -v curl >/dev/null && command -v python3 >/dev/null || { echo "curl or python3 missing"; exit 77; }
fx=$MT_FIXTURES/leak.ctf
cp "$fx" "$MT_TMP/r.ctf"
pid=$("$MT_BIN" info "$fx" | sed -n 's/^pid: *\([0-9]*\)$/\1/p')
start=$("$MT_BIN" stats --json "$fx" | python3 -c 'import json, sys; print(json.load(sys.stdin)["start_time_us"])')
{
    echo "memtrace-rss 1 $pid $start"
    echo "$((start + 1000)) 1000000 - - -"
    echo "$((start + 2000)) 7000000 500 100 7340032"
    echo "$((start + 3000)) 3000000 - - -"
} >"$MT_TMP/r.ctf.rss"

curve() { # curve FILE: /api/curve of a viewer started on FILE
    start_viewer "$1" --port 0 -q || { fail "viewer on $1 started"; return 1; }
    curl -s "${VIEW_URL}api/curve?n=10"
    stop_viewer
}
curve "$MT_TMP/r.ctf" >"$MT_TMP/with.json"
check "curve has the 3 RSS samples and the high-water mark as peak" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["rss"]
assert r["bytes"] == [1000000, 7000000, 3000000], r
assert r["t"] == [0.001, 0.002, 0.003], r
assert r["peak"] == 7340032, r
assert set(d["selected_by_kind"]) <= {"minor", "major", "external"}, d["selected_by_kind"]
' "$MT_TMP/with.json"

check "a version 1 FILE.rss has no ledger readings" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["rss"]["ledger"]["t"] == []' "$MT_TMP/with.json"

# version 2: the ledger's readings, the rows beyond the heap per reading
cp "$fx" "$MT_TMP/l.ctf"
{
    echo "memtrace-rss 2 $pid $start"
    echo "$((start + 1000)) 1000000 - - -"
    echo "L $((start + 1000)) rss=1000000 anon=600000 stack=100000 mod=200000 file=50000 shm=10000 own=40000 a_inuse=500000 a_free=70000 a_meta=30000 alloc=jemalloc"
    echo "$((start + 2000)) 2000000 - - -"
} >"$MT_TMP/l.ctf.rss"
curve "$MT_TMP/l.ctf" >"$MT_TMP/ledger.json"
check "curve has the ledger reading's rows beyond the heap" python3 -c '
import json, sys
l = json.load(open(sys.argv[1]))["rss"]["ledger"]
assert l == {"t": [0.001], "alloc": [100000], "stack": [100000], "mod": [200000],
             "file": [60000], "own": [40000]}, l
' "$MT_TMP/ledger.json"

curve "$fx" >"$MT_TMP/without.json"
check "without FILE.rss, rss is null" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["rss"] is None' "$MT_TMP/without.json"

cp "$fx" "$MT_TMP/s.ctf"
sed "1s/.*/memtrace-rss 1 $((pid + 1)) $start/" "$MT_TMP/r.ctf.rss" >"$MT_TMP/s.ctf.rss"
curve "$MT_TMP/s.ctf" >"$MT_TMP/stale.json"
check "FILE.rss of another process: ignored" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["rss"] is None' "$MT_TMP/stale.json"
