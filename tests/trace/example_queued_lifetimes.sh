#!/bin/sh
# example_queued_lifetimes.sh - the worked custom analysis in examples/
# (lifetimes of queued objects) gives, on the producer/consumer fixture,
# exactly what an independent awk replay of the reference dump gives.
set -u
: "${MT_BUILD:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
. tests/lib.sh
ex=$MT_BUILD/examples/queued_lifetimes
[ -x "$ex" ] || { echo "FAIL: $ex not built"; exit 1; }
fixture_text prodcons >"$MT_TMP/prodcons.txt" || exit 1
awk -v pat="Queue.add" '
    function close_alloc() { if (cur != "" && hit) born[cur] = curt; cur = "" }
    /^ev / {
        close_alloc(); last = $2
        id = $4; sub(/^id=/, "", id)
        if ($3 == "alloc") { cur = id; curt = $2; hit = 0; order[++n] = id }
        else if ($3 == "collect" && (id in born)) {
            printf "%f %f\n", born[id] / 1e6, ($2 - born[id]) / 1e6; delete born[id]
        }
        next
    }
    /^  bt / { if (NF >= 5 && index($5, pat)) hit = 1 }
    END {
        close_alloc()
        for (i = 1; i <= n; i++) if (order[i] in born)
            printf "%f %f\n", born[order[i]] / 1e6, (last - born[order[i]]) / 1e6
    }' "$MT_TMP/prodcons.txt" >"$MT_TMP/expected"
"$ex" "$MT_FIXTURES/prodcons.ctf" >"$MT_TMP/got" || { echo "FAIL: example exits non-zero"; exit 1; }
n=$(wc -l <"$MT_TMP/got")
if [ "$n" -gt 100 ] && cmp -s "$MT_TMP/expected" "$MT_TMP/got"; then
    echo "PASS: queued_lifetimes matches the awk replay of the dump ($n objects)"
else
    echo "FAIL: queued_lifetimes differs ($n lines)"; diff "$MT_TMP/expected" "$MT_TMP/got" | head
fi
# Pattern argument and error path.
if [ "$("$ex" "$MT_FIXTURES/prodcons.ctf" no_such_function_anywhere | wc -l)" = 0 ]; then
    echo "PASS: a pattern matching nothing prints nothing"
else
    echo "FAIL: pattern matching nothing"
fi
"$ex" "$MT_TMP/missing.ctf" 2>/dev/null; rc=$?
[ $rc = 1 ] && echo "PASS: missing trace exits 1" || echo "FAIL: missing trace exits $rc"
