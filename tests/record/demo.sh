#!/bin/sh
# demo.sh - `make demo` (scripts/demo.sh) profiles the bundled leaky example
# and its report puts the leaking line first among live bytes.
[ "$MT_STAGE" = plain ] || { echo "plain stage only"; exit 77; }
out=$(BUILD=$MT_BUILD DEMO_DIR=$MT_TMP sh scripts/demo.sh 2>&1)
rc=$?
check() { if eval "$2"; then echo "PASS: $1"; else echo "FAIL: $1"; echo "$out" | head -40; fi; }
check "demo exits 0" '[ $rc = 0 ]'
check "demo leaves the trace" '[ -s "$MT_TMP/leaky.ctf" ]'
first_live=$(echo "$out" | awk '/by live bytes/ { on = 1 } on && $1 == "1" { print $NF, $(NF-1); exit }')
check "the leak (parse_message, leaky.c:31) is the top live site" \
    'echo "$first_live" | grep -q "leaky.c:31) parse_message"'
