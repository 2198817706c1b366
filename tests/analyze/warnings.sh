#!/bin/sh
# warnings.sh - the analysis library's warnings reach the caller: a block
# freed twice (the builder), a damaged trace among several (the merger,
# which holds its traces' warnings until its thread is done) and a pprof
# profile without a sampling period (its builder) are handed to the CLI's
# callback, which prints each once as "memtrace CMD: warning: ..." on
# stderr, the same on every route (memtrace --route=...). lib/analyze's
# sources print nothing themselves: the one fallback for a caller without
# a callback is lib/common/warn.h's.
set -u
: "${MT_BUILD:?}" "${MT_BIN:?}" "${MT_TMP:?}" "${MT_FIXTURES:?}"
GEN=$MT_BUILD/tests/tools/gen_hostile
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (make tests-build)"; exit 1; }
T=$MT_TMP
if [ "${MT_STAGE:-plain}" = plain ]; then LIM=120; else LIM=300; fi   # hang guards, far above the work
. tests/lib.sh

# same WHAT FILE EXPECTED: FILE holds exactly the line EXPECTED
same() {
    printf '%s\n' "$3" >"$T/expected"
    if cmp -s "$2" "$T/expected"; then pass "$1"; else fail "$1: $(head -c 400 "$2")"; fi
}

"$GEN" carried-twice "$T/twice.ctf" || fail "gen_hostile carried-twice"
W="collection of unknown or already collected object 2 (ignored)"
for r in whole one-thread two-threads; do
    timeout -k 2 $LIM "$MT_BIN" --route=$r stats "$T/twice.ctf" >/dev/null 2>"$T/err"
    same "freed twice, route $r: the builder's warning once, printed by the command" \
        "$T/err" "memtrace stats: warning: $W"
done
timeout -k 2 $LIM "$MT_BIN" rss "$T/twice.ctf" >/dev/null 2>"$T/err"
grep ': warning: ' "$T/err" >"$T/warned"
same "rss (a whole model of its own): the builder's warning once, under the command's name" \
    "$T/warned" "memtrace rss: warning: $W"

head -c 3000 "$MT_FIXTURES/leak.ctf" >"$T/cut.ctf"
C="$T/cut.ctf: offset 621: skipping truncated packet at end of file (2379 of 28579 bytes)"
for r in whole one-thread two-threads; do
    timeout -k 2 $LIM "$MT_BIN" --route=$r top "$MT_FIXTURES/leak.ctf" "$T/cut.ctf" \
        >"$T/out" 2>"$T/err"
    same "two traces, one cut short, route $r: the merger's warning once, file and offset" \
        "$T/err" "memtrace top: warning: $C"
done
check "two traces, one cut short: the report still written" grep -q . "$T/out"

if command -v python3 >/dev/null 2>&1; then
    python3 tests/analyze/mkprofile.py noperiod "$T/noperiod" || fail "mkprofile.py noperiod"
    P="the profile states no sampling period: the error of its figures cannot be derived (none shown)"
    for cmd in info top; do
        timeout -k 2 $LIM "$MT_BIN" $cmd "$T/noperiod" >/dev/null 2>"$T/err"
        same "profile without a period, $cmd: the profile builder's warning once" \
            "$T/err" "memtrace $cmd: warning: $P"
    done
else
    fail "python3 missing (scripts/install-deps.sh test installs it)"
fi

# lib/analyze prints nothing itself (ARCHITECTURE.md): no stream named in
# its sources, its warnings go through lib/common/warn.h's mt_warn
if grep -n 'stderr\|stdout\|[^a-z_]printf *(\|[^a-z_]puts *(' lib/analyze/*.c >"$T/grep"; then
    fail "lib/analyze prints: $(head -n 3 "$T/grep")"
else
    pass "lib/analyze's sources print nothing (its warnings go to the caller, or warn.h's fallback)"
fi
finish
