#!/bin/sh
# top_nonzero.sh - the text report of `memtrace top` lists only sites that
# are worth something under the chosen measure: by live bytes, a site whose
# blocks were all freed is not a leak and is left out (--json keeps them),
# and a trace with nothing live says so.
check() { if eval "$2"; then echo "PASS: $1"; else echo "FAIL: $1"; fi; }
T=$MT_FIXTURES/major.ctf
rows=$("$MT_BIN" top --by live -n 100 "$T" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $5 ~ /%$/')
# Sites with some live bytes at the end, counted from the JSON (all sites).
want=$("$MT_BIN" top --by live -n 100 --json "$T" 2>/dev/null |
       grep -o '"value":[0-9.]*,"share"' | grep -vc '"value":0.0,')
check "one text row per site with live bytes ($want)" '[ "${want:-0}" -gt 0 ] && [ "$(echo "$rows" | grep -c .)" = "$want" ]'
check "some sites have nothing live (the case is exercised)" \
    '[ "$("$MT_BIN" top --by live -n 100 --json "$T" 2>/dev/null | grep -o "\"value\":0.0," | wc -l)" -gt 0 ]'
check "no text row of 0 B" '! echo "$rows" | awk "{print \$2, \$3}" | grep -qx "0 B"'
out=$("$MT_BIN" top --by live "$MT_FIXTURES/prodcons.ctf" 2>/dev/null)
check "nothing live at the end is said in words" 'echo "$out" | grep -q "nothing to show"'
