#!/bin/sh
# recode_fixtures.sh - decoding and re-encoding a trace written by memtrace
# gives back the same bytes (the writer makes memtrace's choices: cache,
# predictions, name tables, packet cuts, verifier), in v2 and v3; v2 <-> v3
# conversion keeps every event; a lossy input (truncated backtraces) still
# re-encodes to a trace with the same events.
set -u
: "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
. tests/lib.sh
F=$MT_FIXTURES
for name in leak prodcons rate1 major wrap upstream_ocamlopt_v2 prodcons_v3 upstream_ocamlopt_v3; do
    if "$MT_BIN" recode "$F/$name.ctf" "$MT_TMP/out.ctf" 2>"$MT_TMP/err" &&
        cmp -s "$F/$name.ctf" "$MT_TMP/out.ctf"; then
        echo "PASS: recode $name is byte-identical"
    else
        echo "FAIL: recode $name"; cat "$MT_TMP/err"
        cmp "$F/$name.ctf" "$MT_TMP/out.ctf"
    fi
done

# Damage in the middle (the third packet's magic): recode stops with the
# file, the offset and the reason, and exit 1.
cp "$F/leak.ctf" "$MT_TMP/damaged.ctf"
size1=$(od -A n -t u4 -j 4 -N 4 "$F/leak.ctf" | tr -d ' ')
off2=$((size1 / 8))
size2=$(od -A n -t u4 -j $((off2 + 4)) -N 4 "$F/leak.ctf" | tr -d ' ')
off3=$((off2 + size2 / 8))
printf 'XXXX' | dd of="$MT_TMP/damaged.ctf" bs=1 seek=$off3 conv=notrunc 2>/dev/null
"$MT_BIN" recode "$MT_TMP/damaged.ctf" "$MT_TMP/out.ctf" 2>"$MT_TMP/err"; rc=$?
if [ $rc = 1 ] && grep -q "^memtrace recode: .*damaged.ctf: offset $off3: bad magic" "$MT_TMP/err"; then
    echo "PASS: recode reports damage at offset $off3"
else
    echo "FAIL: recode on damage (exit $rc)"; cat "$MT_TMP/err"
fi

# The two-thread pipeline is gone: --threads is an unknown option (exit 2).
"$MT_BIN" recode --threads 2 "$F/leak.ctf" "$MT_TMP/out.ctf" 2>"$MT_TMP/err"; rc=$?
if [ $rc = 2 ] && grep -qx "memtrace recode: unknown option '--threads'" "$MT_TMP/err" &&
    grep -qx "memtrace recode: see 'memtrace recode --help'" "$MT_TMP/err"; then
    echo "PASS: recode --threads is refused, pointing at --help"
else
    echo "FAIL: recode --threads (exit $rc)"; cat "$MT_TMP/err"
fi

# v2 -> v3 -> v2 gives the original bytes; the v3 dump differs only in the version line.
"$MT_BIN" recode --format-version 3 "$F/upstream_ocamlopt_v2.ctf" "$MT_TMP/v3.ctf" &&
"$MT_BIN" recode --format-version 2 "$MT_TMP/v3.ctf" "$MT_TMP/v2.ctf"
if cmp -s "$MT_TMP/v3.ctf" "$F/upstream_ocamlopt_v3.ctf" && cmp -s "$MT_TMP/v2.ctf" "$F/upstream_ocamlopt_v2.ctf"; then
    echo "PASS: v2 -> v3 -> v2 conversion matches memtrace's v3 writer and round-trips"
else
    echo "FAIL: v2 <-> v3 conversion"
fi

# rate1_skips: skipped packets are left out: the result is rate1.ctf itself.
if "$MT_BIN" recode "$F/rate1_skips.ctf" "$MT_TMP/out.ctf" 2>/dev/null && cmp -s "$MT_TMP/out.ctf" "$F/rate1.ctf"; then
    echo "PASS: recode drops skipped packets"
else
    echo "FAIL: recode rate1_skips"
fi

# synth_edge (truncated backtraces, every edge case): the re-encoded trace
# holds the same events; only the common prefix of a truncated stack differs.
fixture_text synth_edge >"$MT_TMP/expected"
"$MT_BIN" recode "$F/synth_edge.ctf" "$MT_TMP/se.ctf" && "$MT_BIN" dump "$MT_TMP/se.ctf" >"$MT_TMP/got"
ndiff=$(diff "$MT_TMP/expected" "$MT_TMP/got" | grep -c '^>')
if [ "$ndiff" -le 2 ] && [ "$(wc -l <"$MT_TMP/got")" = "$(wc -l <"$MT_TMP/expected")" ] &&
    ! diff "$MT_TMP/expected" "$MT_TMP/got" | grep '^>' | grep -v ' cp=' >/dev/null; then
    echo "PASS: recode synth_edge keeps every event (differences only in cp of truncated stacks)"
else
    echo "FAIL: recode synth_edge ($ndiff lines differ)"
    diff "$MT_TMP/expected" "$MT_TMP/got" | head
fi

# v1 input is written as v2 and dumps the same apart from version and context.
fixture_text upstream_lists_and_sets_v1 | sed 1,2d >"$MT_TMP/expected"
"$MT_BIN" recode "$F/upstream_lists_and_sets_v1.ctf" "$MT_TMP/v1.ctf" &&
    "$MT_BIN" dump "$MT_TMP/v1.ctf" | sed 1,2d >"$MT_TMP/got"
if cmp -s "$MT_TMP/expected" "$MT_TMP/got" && "$MT_BIN" dump "$MT_TMP/v1.ctf" | grep -q '^info version=2$'; then
    echo "PASS: v1 trace recoded as v2 keeps every event"
else
    echo "FAIL: v1 recode"; diff "$MT_TMP/expected" "$MT_TMP/got" | head -5
fi

"$MT_BIN" recode --format-version 4 "$F/leak.ctf" "$MT_TMP/x.ctf" 2>/dev/null; rc=$?
[ $rc = 2 ] && echo "PASS: bad --format-version exits 2" || echo "FAIL: bad --format-version exits $rc"
"$MT_BIN" recode --help | grep -q '^usage: memtrace recode' && echo "PASS: recode --help" || echo "FAIL: recode --help"
exit 0
