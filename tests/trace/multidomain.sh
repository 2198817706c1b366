#!/bin/sh
# multidomain.sh - a v3 trace written by two domains: packets of domain 0
# (leak.ctf's events) and domain 1 (rate1.ctf's, ids moved to the next
# 10000-id chunk) interleaved in one file. Each domain keeps its own cache,
# name tables, previous backtrace and clock, so both event streams must come
# out exactly as in their own dumps, domain 1's with " dom=1".
set -u
: "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 missing (scripts/install-deps.sh test)"; exit 1; }
. tests/lib.sh
F=$MT_FIXTURES
"$MT_BIN" recode -V 3 "$F/leak.ctf" "$MT_TMP/a.ctf" &&
"$MT_BIN" recode -V 3 "$F/rate1.ctf" "$MT_TMP/b.ctf" || { echo "FAIL: recode to v3"; exit 1; }
python3 - "$MT_TMP/a.ctf" "$MT_TMP/b.ctf" "$MT_TMP/merged.ctf" <<'PY'
import struct, sys
def packets(path):
    d = open(path, 'rb').read(); off = 0; out = []
    while off < len(d):
        size = struct.unpack_from('<I', d, off + 4)[0] // 8
        out.append(bytearray(d[off:off + size])); off += size
    return out
a, b = packets(sys.argv[1]), packets(sys.argv[2])
pid = struct.unpack_from('<Q', a[0], 30)[0]
merged = [a[0]]
rest_b = []
for p in b[1:]:                       # domain 1: its own trace-info packet dropped
    struct.pack_into('<Q', p, 30, pid)
    struct.pack_into('<H', p, 38, 1)
    for off in (52, 60):              # ids into the chunk 10000..19999
        struct.pack_into('<Q', p, off, struct.unpack_from('<Q', p, off)[0] + 10000)
    rest_b.append(p)
rest_a = a[1:]
while rest_a or rest_b:               # alternate: domain 0, domain 1, ...
    if rest_a: merged.append(rest_a.pop(0))
    if rest_b: merged.append(rest_b.pop(0))
open(sys.argv[3], 'wb').write(b''.join(merged))
PY
"$MT_BIN" dump "$MT_TMP/merged.ctf" >"$MT_TMP/merged.txt" 2>"$MT_TMP/err" || { echo "FAIL: dump of the merged trace"; cat "$MT_TMP/err"; exit 1; }
# Split the dump by domain: ev lines ending in dom=1 and the bt lines after them.
# Domain 1's times count from the trace's (domain 0's) start: shift them back.
fixture_text leak >"$MT_TMP/leak.txt" && fixture_text rate1 >"$MT_TMP/rate1.txt" || exit 1
shift=$(( $(sed -n 's/^info start_time_us=//p' "$MT_TMP/rate1.txt") - $(sed -n 's/^info start_time_us=//p' "$MT_TMP/leak.txt") ))
awk -v a="$MT_TMP/dom0.txt" -v b="$MT_TMP/dom1.txt" -v shift="$shift" '
    /^ev / { out = a; if ($NF == "dom=1") { out = b; sub(/ dom=1$/, ""); $2 = $2 - shift;
             for (i = 1; i <= NF; i++) if ($i ~ /^id=/) $i = "id=" (substr($i, 4) - 10000) } }
    /^ev |^  bt / { if (/^  bt /) print > out; else print > out }' "$MT_TMP/merged.txt"
grep -E '^(ev |  bt )' "$MT_TMP/leak.txt" >"$MT_TMP/exp0.txt"
grep -E '^(ev |  bt )' "$MT_TMP/rate1.txt" >"$MT_TMP/exp1.txt"
if cmp -s "$MT_TMP/dom0.txt" "$MT_TMP/exp0.txt"; then
    echo "PASS: domain 0 events of a two-domain trace equal leak's"
else
    echo "FAIL: domain 0 events differ"; diff "$MT_TMP/exp0.txt" "$MT_TMP/dom0.txt" | head -5
fi
if cmp -s "$MT_TMP/dom1.txt" "$MT_TMP/exp1.txt"; then
    echo "PASS: domain 1 events (dom=1, own cache and tables) equal rate1's"
else
    echo "FAIL: domain 1 events differ"; diff "$MT_TMP/exp1.txt" "$MT_TMP/dom1.txt" | head -5
fi
tail -n 1 "$MT_TMP/merged.txt" | grep -q "^end events=$((12289 + 324)) " &&
    echo "PASS: merged trace holds both event counts" || echo "FAIL: merged end line: $(tail -n 1 "$MT_TMP/merged.txt")"
"$MT_BIN" info "$MT_TMP/merged.ctf" | grep -q '^domains: *2 (highest 1)$' &&
    echo "PASS: info counts two domains" || echo "FAIL: info domains"
# Re-encoding a multi-domain trace is refused with a clear message.
"$MT_BIN" recode "$MT_TMP/merged.ctf" "$MT_TMP/x.ctf" 2>"$MT_TMP/err"; rc=$?
[ $rc = 1 ] && grep -q 'multi-domain' "$MT_TMP/err" &&
    echo "PASS: recode refuses multi-domain traces" || echo "FAIL: recode of multi-domain (exit $rc)"
exit 0
