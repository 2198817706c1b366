#!/bin/sh
# dump_fixtures.sh - `memtrace dump` prints, byte for byte, the text that
# memtrace's own reader printed for every fixture trace; skipped packets are
# reported on stderr without failing; a trace read from a pipe dumps the same.
set -u
: "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
. tests/lib.sh
status=0
for ctf in "$MT_FIXTURES"/*.ctf; do
    base=${ctf%.ctf}
    name=$(basename "$base")
    fixture_text "$name" >"$MT_TMP/expected" || { status=1; continue; }
    if "$MT_BIN" dump "$ctf" >"$MT_TMP/got" 2>"$MT_TMP/err" &&
        cmp -s "$MT_TMP/got" "$MT_TMP/expected"; then
        echo "PASS: dump $name"
    else
        echo "FAIL: dump $name"
        diff "$MT_TMP/expected" "$MT_TMP/got" | head -n 10
        head -n 5 "$MT_TMP/err"
        status=1
    fi
done

# rate1_skips: a foreign-pid packet and a truncated last packet, both skipped
# with a warning naming the file and offset; the dump equals rate1's.
"$MT_BIN" dump "$MT_FIXTURES/rate1_skips.ctf" >"$MT_TMP/got" 2>"$MT_TMP/err"
rc=$?
if [ $rc = 0 ] && [ "$(grep -c 'warning: .*rate1_skips.ctf: offset [0-9]*: skipping' "$MT_TMP/err")" = 2 ] &&
    grep -q 'pid 999999' "$MT_TMP/err" && grep -q 'truncated' "$MT_TMP/err"; then
    echo "PASS: rate1_skips warns about the foreign-pid and the truncated packet"
else
    echo "FAIL: rate1_skips warnings (exit $rc)"
    cat "$MT_TMP/err"
fi

# Reading from a pipe (no seeking, no known size) gives the same text.
fixture_text leak >"$MT_TMP/expected"
if cat "$MT_FIXTURES/leak.ctf" | "$MT_BIN" dump - >"$MT_TMP/got" 2>"$MT_TMP/err" &&
    cmp -s "$MT_TMP/got" "$MT_TMP/expected"; then
    echo "PASS: dump from a pipe"
else
    echo "FAIL: dump from a pipe"
fi

# Usage errors: exit 2; --help: exit 0 on stdout.
"$MT_BIN" dump >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && echo "PASS: dump without a file exits 2" || echo "FAIL: dump without a file exits $rc"
if "$MT_BIN" dump --help | grep -q '^usage: memtrace dump'; then
    echo "PASS: dump --help"
else
    echo "FAIL: dump --help"
fi
"$MT_BIN" dump "$MT_TMP/does-not-exist.ctf" 2>"$MT_TMP/err"; rc=$?
if [ $rc = 1 ] && grep -q "^memtrace dump: .*does-not-exist.ctf: No such file" "$MT_TMP/err"; then
    echo "PASS: missing file exits 1 with a message"
else
    echo "FAIL: missing file (exit $rc)"; cat "$MT_TMP/err"
fi
exit 0
