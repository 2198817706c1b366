#!/bin/sh
# function_length.sh - no function in programs/ is longer than 80 lines
# (from its opening brace to its closing one, both in column 0, the
# sources' style): a command's options, its checks and its report stay
# apart. The measure is checked first on functions of known length.
set -u
: "${MT_TMP:?}"
. tests/lib.sh
LIMIT=80

# longest FILE...: "FILE:LINE: N lines" for every function over $LIMIT
longest() {
    awk -v limit=$LIMIT '
        FNR == 1 { open = 0 }
        /^\{/ { open = FNR }
        /^\}/ && open { n = FNR - open + 1; if (n > limit) printf "%s:%d: %d lines\n", FILENAME, open, n; open = 0 }
    ' "$@"
}

# a function of N lines, brace to brace
fn() {
    printf 'static int f%s(void)\n{\n' "$1"
    i=2; while [ $i -lt "$1" ]; do echo "    x++;"; i=$((i + 1)); done
    printf '}\n\n'
}
{ fn 80; fn 81; fn 3; } >"$MT_TMP/known.c"
longest "$MT_TMP/known.c" >"$MT_TMP/known.out"
check "the measure: of functions of 80, 81 and 3 lines only the one of 81 is over" \
    test "$(cat "$MT_TMP/known.out")" = "$MT_TMP/known.c:84: 81 lines"

longest programs/*.c >"$MT_TMP/over"
if [ -s "$MT_TMP/over" ]; then
    fail "functions in programs/ over $LIMIT lines: $(tr '\n' ' ' <"$MT_TMP/over")"
else
    pass "no function in programs/ over $LIMIT lines ($(ls programs/*.c | wc -l) files)"
fi
finish
