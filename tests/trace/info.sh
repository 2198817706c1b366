#!/bin/sh
# info.sh - `memtrace info` shows the header fields and event counts; the
# counts agree with the reference dumps' closing lines.
set -u
: "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
. tests/lib.sh
F=$MT_FIXTURES
for name in leak major prodcons_v3 wrap; do
    "$MT_BIN" info "$F/$name.ctf" >"$MT_TMP/info" 2>"$MT_TMP/err" || { echo "FAIL: info $name"; continue; }
    fixture_text "${name%_v3}" >"$MT_TMP/dump" || continue
    endline=$(tail -n 1 "$MT_TMP/dump")
    exp_events=$(echo "$endline" | sed 's/.*events=\([0-9]*\).*/\1/')
    exp_allocs=$(echo "$endline" | sed 's/.*allocs=\([0-9]*\).*/\1/')
    exp_prom=$(echo "$endline" | sed 's/.*promotes=\([0-9]*\).*/\1/')
    exp_coll=$(echo "$endline" | sed 's/.*collects=\([0-9]*\).*/\1/')
    pid=$(sed -n 's/^info pid=//p' "$MT_TMP/dump")
    ver=$(sed -n 's/^info version=//p' "$MT_TMP/dump"); [ "$name" = prodcons_v3 ] && ver=3
    if grep -q "^events: *$exp_events\$" "$MT_TMP/info" &&
        grep -q "^allocations: *$exp_allocs " "$MT_TMP/info" &&
        grep -q "^promotions: *$exp_prom\$" "$MT_TMP/info" &&
        grep -q "^collections: *$exp_coll\$" "$MT_TMP/info" &&
        grep -q "^pid: *$pid\$" "$MT_TMP/info" &&
        grep -q "^format version: *$ver\$" "$MT_TMP/info"; then
        echo "PASS: info $name counts and header"
    else
        echo "FAIL: info $name"; cat "$MT_TMP/info"
    fi
done
# Sampled words = sum of len= over the dump; duration = last event time.
fixture_text major >"$MT_TMP/dump"
words=$(awk '/^ev .* alloc /{for(i=1;i<=NF;i++) if ($i ~ /^len=/) s+=substr($i,5)} END{print s}' "$MT_TMP/dump")
last=$(grep '^ev ' "$MT_TMP/dump" | tail -n 1 | awk '{printf "%.6f", $2/1e6}')
"$MT_BIN" info "$F/major.ctf" >"$MT_TMP/info"
if grep -q "^sampled blocks: *$words words" "$MT_TMP/info" && grep -q "^duration: *$last s" "$MT_TMP/info"; then
    echo "PASS: info major sampled words and duration"
else
    echo "FAIL: info major words=$words last=$last"; cat "$MT_TMP/info"
fi
# The estimate of what was allocated is the one stats prints: bytes and blocks.
for name in major leak; do
    "$MT_BIN" info "$F/$name.ctf" >"$MT_TMP/info"
    got=$(sed -n 's/^allocated: *[0-9]* words (\([0-9]*\) bytes) in \([0-9]*\) blocks (estimated.*/\1 \2/p' "$MT_TMP/info")
    bytes=$("$MT_BIN" stats --json "$F/$name.ctf" | sed -n 's/.*"total":{"alloc_bytes":\([0-9]*\).*/\1/p')
    blocks=$("$MT_BIN" stats "$F/$name.ctf" | sed -n 's/^allocated .* in \([0-9]*\) blocks .*/\1/p')
    if [ -n "$got" ] && [ "$got" = "$bytes $blocks" ]; then
        echo "PASS: info $name allocated bytes and blocks as stats estimates them ($got)"
    else
        echo "FAIL: info $name allocated '$got', stats '$bytes $blocks'"; cat "$MT_TMP/info"
    fi
    # and the blocks' own error, as stats gives it (not the bytes')
    ie=$(sed -n 's/^allocated: .* blocks ±\([0-9.]*\)%.*/\1/p' "$MT_TMP/info")
    se=$("$MT_BIN" stats "$F/$name.ctf" | sed -n 's/^allocated .*; blocks ±\([0-9.]*\)%.*/\1/p')
    if [ -n "$ie" ] && [ "$ie" = "$se" ]; then
        echo "PASS: info $name: the blocks' error as stats gives it (±$ie%)"
    else
        echo "FAIL: info $name: blocks' error '$ie', stats '$se'"; cat "$MT_TMP/info"
    fi
done
"$MT_BIN" info "$F/leak.ctf" | grep -q "^context: *fixture:leak$" &&
    echo "PASS: info shows the context" || echo "FAIL: info context"
"$MT_BIN" info --help | grep -q '^usage: memtrace info' && echo "PASS: info --help" || echo "FAIL: info --help"
printf 'garbage that is not a trace at all, long enough for a header.......\n' >"$MT_TMP/bad.ctf"
"$MT_BIN" info "$MT_TMP/bad.ctf" 2>"$MT_TMP/err"; rc=$?
if [ $rc = 1 ] && grep -q '^memtrace info: .*bad.ctf: offset 0: bad magic' "$MT_TMP/err"; then
    echo "PASS: info on a non-trace fails with file and offset"
else
    echo "FAIL: info on garbage (exit $rc)"; cat "$MT_TMP/err"
fi
exit 0
