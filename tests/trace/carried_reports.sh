#!/bin/sh
# carried_reports.sh - hostile "carried over" packets (the mark of a rotated
# piece's first packets, docs/format.md), made by tests/tools/gen_hostile.c:
# carried blocks in the middle of a trace, carried and new blocks freed
# twice, carried sample counts past 2^62, and a v3 packet repeating the ids
# of the carried ones. Every report gives the same answer read folded and
# as a whole model (memtrace --route=whole), frees of freed blocks are
# warned about, counts past the limit and ids that go back are clear
# errors with a non-zero exit; nothing hangs (timeout).
set -u
: "${MT_BUILD:?}" "${MT_BIN:?}" "${MT_TMP:?}"
GEN=$MT_BUILD/tests/tools/gen_hostile
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (make tests-build)"; exit 1; }
T=$MT_TMP
if [ "${MT_STAGE:-plain}" = plain ]; then LIM=120; else LIM=300; fi   # hang guards, far above the work
. tests/lib.sh

# each TRACE: every report, folded and whole; "$T/rc.CMD" gets the exit
# status, $T/err.CMD the messages. Lifetimes are compared sorted (their
# order is the order blocks end).
each() {
    f=$1
    for kc in info:info top:top "peak:top --at peak" stats:stats lifetimes:lifetimes \
        folded:folded "pprof:pprof -o /dev/null" "plot:plot -o /dev/null" \
        "plotlife:plot --kind lifetimes -o /dev/null" "check:check --max-peak 1G" "diff:diff $f"; do
        k=${kc%%:*} c=${kc#*:}
        # shellcheck disable=SC2086
        timeout -k 2 $LIM "$MT_BIN" $c "$f" >"$T/s.out" 2>"$T/err.$k"; rs=$?
        # shellcheck disable=SC2086
        timeout -k 2 $LIM "$MT_BIN" --route=whole $c "$f" >"$T/w.out" 2>"$T/w.err"; rw=$?
        echo $rs >"$T/rc.$k"
        sort "$T/s.out" >"$T/s.sorted"; sort "$T/w.out" >"$T/w.sorted"
        if [ $rs != $rw ] || ! cmp -s "$T/s.sorted" "$T/w.sorted" || ! cmp -s "$T/err.$k" "$T/w.err"; then
            fail "$(basename "$f") $c: folded and whole model differ (exit $rs, $rw)"
        elif [ $rs -ge 124 ]; then
            fail "$(basename "$f") $c: exit $rs (a crash or a timeout)"
        fi
    done
}

"$GEN" carried-mid "$T/mid.ctf" || fail "gen_hostile carried-mid"
each "$T/mid.ctf"
[ "$(cat "$T/rc.stats")" = 0 ] && [ "$(cat "$T/rc.top")" = 0 ] &&
    pass "carried blocks mid-trace: reports run, folded = whole" ||
    fail "carried blocks mid-trace: stats exit $(cat "$T/rc.stats"), top $(cat "$T/rc.top")"
# 100 carried blocks (200 samples): live, not allocated; the 100 new ones
# before them and the 100 after (1 sample each) are allocated.
if "$MT_BIN" stats --json "$T/mid.ctf" | grep -q '"total":{"alloc_bytes":[0-9]*,[^}]*"samples":200,'; then
    pass "carried blocks mid-trace count as live, not allocated (200 samples allocated)"
else
    fail "carried blocks mid-trace: $("$MT_BIN" stats --json "$T/mid.ctf" | head -c 300)"
fi

"$GEN" carried-twice "$T/twice.ctf" || fail "gen_hostile carried-twice"
each "$T/twice.ctf"
if [ "$(cat "$T/rc.stats")" = 0 ] && grep -q "warning: collection of unknown or already collected object" "$T/err.stats"; then
    pass "blocks freed twice (carried and new): a warning, the second free ignored"
else
    fail "freed twice: stats exit $(cat "$T/rc.stats"): $(head -n 2 "$T/err.stats")"
fi
# Of 200 blocks (100 carried), 66 freed (33 carried): 134 live at the end.
live=$("$MT_BIN" lifetimes "$T/twice.ctf" 2>/dev/null | awk '$2 + $1 >= 0.005 - 1e-9' | wc -l)
[ "$live" = 134 ] && pass "freed twice: 134 blocks live at the end, as if freed once" ||
    fail "freed twice: $live blocks live at the end, expected 134"

"$GEN" carried-huge "$T/huge.ctf" || fail "gen_hostile carried-huge"
each "$T/huge.ctf"
for k in info top peak stats folded lifetimes pprof plot plotlife check diff; do
    rc=$(cat "$T/rc.$k" 2>/dev/null || echo none)
    if [ "$rc" != 0 ] && [ "$rc" -lt 124 ] 2>/dev/null &&
        grep -q "huge.ctf: sample counts add up to more than 2^62 (a damaged or forged trace)" "$T/err.$k"; then
        pass "carried sample counts past 2^62: $k refuses the trace (exit $rc)"
    else
        fail "carried sample counts past 2^62: $k exit $rc: $(head -n 1 "$T/err.$k" 2>/dev/null)"
    fi
done

"$GEN" ids-back "$T/back.ctf" || fail "gen_hostile ids-back"
for c in info dump top stats folded; do
    timeout -k 2 $LIM "$MT_BIN" $c "$T/back.ctf" >/dev/null 2>"$T/back.err"; rc=$?
    if [ $rc = 1 ] && grep -q "back.ctf: offset [0-9]*: domain 0's allocation ids go back: the packet's first id is 0, its previous packet ended at 3" "$T/back.err"; then
        pass "v3 ids that go back (a carried block's id again): $c fails with file, offset, reason"
    else
        fail "v3 ids that go back: $c exit $rc: $(head -n 1 "$T/back.err")"
    fi
done
finish
