#!/bin/sh
# pieces.sh - the pieces of a rotated recording read together give the
# figures of the whole recording, in every command: resident memory of all
# pieces (stats, plot, view --merge: each piece's own TRACE.partNNNN.rss,
# not the first piece's alone); memtrace diff counts a block carried into a
# piece as live, never as allocated (as stats does, docs/recorder.md);
# `memtrace view A B` with two pieces of one recording views them as one
# and says so, and says "comparing" for two other traces.
set -u
. tests/record/progs/lib.sh
skip_under_tsan
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
M=$PWD/$MT_BIN
R=$PWD/$PROGS/rotator
# recorded with the plain build's recorder (see tests/present/cxx.sh)
case ${MT_STAGE:-plain} in
plain) REC=$M ;;
asan) REC=$PWD/build/memtrace; [ -x "$REC" ] || exit 77; R=$PWD/build/tests/record/progs/rotator ;;
esac
cd "$T" || exit 1
# 4000 blocks kept early, then churn: 2 to 4 pieces of 64 KiB at rate 1
"$REC" run -r 1 --rotate-size 64k -o p.ctf -- "$R" 4000 1000 50 100 6000 200 >/dev/null 2>&1
n=$(ls p.ctf.part[0-9][0-9][0-9][0-9] 2>/dev/null | wc -l)
[ "$n" -ge 2 ] || { echo "FAIL: the run made $n pieces, want at least 2"; exit 1; }
last=$(ls p.ctf.part[0-9][0-9][0-9][0-9] | tail -n 1)
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$2"; }

# stats: RSS of all pieces
lines=0
for p in p.ctf.part[0-9][0-9][0-9][0-9]; do lines=$((lines + $(grep -vc "^L " "$p.rss") - 1)); done
end_rss=$(grep -v '^L ' "$last.rss" | tail -n 1 | cut -d' ' -f2)
"$M" stats --json p.ctf.part* >stats.json 2>stats.err
check "stats of the pieces: every piece's RSS samples ($(json 'j["rss_samples"]' stats.json) of $lines)" \
    test "$(json 'j["rss_samples"]' stats.json)" = "$lines"
check "stats of the pieces: RSS at the end is the last piece's ($end_rss)" \
    test "$(json 'j["rss_at_end_bytes"]' stats.json)" = "$end_rss"
"$M" --route=whole stats --json p.ctf.part* >stats2.json 2>&1
check "stats of the pieces, whole model: the same RSS at the end" \
    test "$(json 'j["rss_at_end_bytes"]' stats2.json)" = "$end_rss"

# diff: carried blocks are live, not allocated
"$M" stats --json "$last" >last.json
want=$(json 'j["total"]["alloc_bytes"]' last.json)
first=$(ls p.ctf.part[0-9][0-9][0-9][0-9] | head -n 1)
"$M" diff --json "$first" "$last" >diff.json 2>diff.err
got=$(json 'j["total"]["new"]' diff.json)
check "diff of two pieces: the new side's allocated bytes are those stats gives ($got, $want)" \
    python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1)" "$got" "$want"
n_up=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(sum(1 for e in j['entries'] if e['significant'] and e['delta'] > 0 and 'leak_early' in e['function']))" diff.json)
check "diff of two pieces: the blocks carried over are no significant increase of allocations" \
    test "$n_up" = 0
"$M" diff --by live --json "$first" "$last" >live.json 2>&1
check "diff --by live of two pieces: carried blocks count as live" \
    test "$(json 'int(j["total"]["new"] > 0)' live.json)" = 1

# view: two pieces are one recording
MT_BIN=$M
. "$OLDPWD/tests/viewer/lib.inc"
command -v curl >/dev/null || { echo "curl missing: the viewer checks are skipped"; finish; }
get() { curl -s -o body -w '%{http_code}' "$VIEW_URL$1"; }
start_viewer "$first" "$last" --port 0 -q || exit 1
check "view A B with two pieces: says they are viewed as one" grep -q "pieces of one recording: viewed as one" "$VIEW_ERR"
check "view A B with two pieces: the viewer of one trace (no compare page)" \
    sh -c "! echo '$VIEW_URL' | grep -q compare"
check "view A B with two pieces: their RSS is drawn (curve: 200)" test "$(get 'api/curve')" = 200
check "view A B with two pieces: RSS samples of both" \
    test "$(json 'len(j["rss"]["t"]) if j["rss"] else 0' body)" -gt 0
stop_viewer
start_viewer --merge p.ctf.part* --port 0 -q || exit 1
get 'api/curve?n=4000' >/dev/null
check "view --merge: the RSS of every piece ($(json 'len(j["rss"]["t"]) if j["rss"] else 0' body) of $lines samples)" \
    test "$(json 'len(j["rss"]["t"]) if j["rss"] else 0' body)" = "$lines"
stop_viewer
"$REC" run -o other.ctf -- "$R" 10 100 5 100 10 0 >/dev/null 2>&1
start_viewer "$first" other.ctf --port 0 -q || exit 1
check "view A B of two other traces: says it compares them" \
    grep -q "comparing $first (base) with other.ctf (new)" "$VIEW_ERR"
stop_viewer
finish
