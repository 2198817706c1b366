#!/bin/sh
# recorder.sh - the reports on a C trace made by our own recorder: a program
# that leaks 100000 x 1000 bytes from leaky() and churns 200000 short-lived
# blocks of 100..1099 bytes in churn(). The estimates must be within 5
# standard errors of the true figures, the engine's totals must equal an awk
# replay of 'memtrace dump', and pprof/folded must work on it.
set -u
. tests/lib.sh
: "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}" "${MT_STAGE:=plain}"
[ "$MT_STAGE" = plain ] || { echo "the recorder is preloaded: plain stage only"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
cat > "$MT_TMP/prog.c" <<'C'
#include <stdlib.h>
#include <string.h>
static void *keep[100000];
__attribute__((noinline)) void *leaky(size_t n) { return malloc(n); }
__attribute__((noinline)) void churn(void)
{
    for (int i = 0; i < 200000; i++) {
        char *volatile p = malloc(100 + i % 1000);
        p[0] = 1;
        free(p);
    }
}
int main(void)
{
    for (int i = 0; i < 100000; i++)
        keep[i] = leaky(1000);
    churn();
    return keep[5] == 0;
}
C
cc -O0 -g -fno-omit-frame-pointer -o "$MT_TMP/prog" "$MT_TMP/prog.c" || { fail "cannot compile the test program"; exit 1; }
if ! "$MT_BIN" run -i 16k -o "$MT_TMP/c.ctf" -- "$MT_TMP/prog" 2> "$MT_TMP/err"; then
    fail "memtrace run failed: $(tail -n 3 "$MT_TMP/err")"; exit 1
fi
"$MT_BIN" dump "$MT_TMP/c.ctf" > "$MT_TMP/c.txt"
awk -v what=totals -f "$here/../analyze/expect.awk" "$MT_TMP/c.txt" > "$MT_TMP/want"
want() { sed -n "s/^$1=//p" "$MT_TMP/want"; }
"$MT_BIN" stats --json "$MT_TMP/c.ctf" > "$MT_TMP/s.json"
got=$(grep -o '"total":{[^}]*}' "$MT_TMP/s.json")
case $got in *"\"alloc_bytes\":$(want alloc_bytes),"*"\"live_bytes\":$(want live_end_bytes),"*"\"samples\":$(want samples),"*)
    pass "C trace: totals equal the dump replay ($(want samples) samples)" ;;
    *) fail "C trace totals: $got vs $(tr '\n' ' ' < "$MT_TMP/want")" ;; esac
grep -q '"word_size":8,' "$MT_TMP/s.json" && grep -q '"minor":{"alloc_bytes":0,' "$MT_TMP/s.json" &&
    pass "C trace: 8-bit words, every allocation external" || fail "C trace: word size or sources"
# estimates against the truth, within 5 standard errors
"$MT_BIN" top --json -n 0 --callers 1 "$MT_TMP/c.ctf" > "$MT_TMP/top.json"
check_site() { # NAME TRUE_BYTES TRUE_LIVE
    line=$(grep "\"function\":\"$1\"" "$MT_TMP/top.json" | head -n 1)
    b=$(echo "$line" | sed -n 's/.*"cost":{"alloc_bytes":\([0-9]*\),.*/\1/p')
    l=$(echo "$line" | sed -n 's/.*"cost":{[^}]*"live_bytes":\([0-9]*\),.*/\1/p')
    k=$(echo "$line" | sed -n 's/.*"cost":{[^}]*"samples":\([0-9]*\),.*/\1/p')
    if awk -v b="$b" -v l="$l" -v k="$k" -v tb="$2" -v tl="$3" 'BEGIN {
        e = 5 / sqrt(k); exit !(k > 0 && (b - tb) / tb < e && (tb - b) / tb < e &&
        (tl == 0 ? l == 0 : ((l - tl) / tl < e && (tl - l) / tl < e))) }'
    then pass "$1: $b bytes allocated (true $2), $l live at end (true $3), $k samples"
    else fail "$1: $b bytes allocated / $l live, want $2 / $3 within 5/sqrt($k)"; fi
}
check_site leaky 100000000 100000000
check_site churn 119900000 0
grep -q '"function":"leaky".*"callers":\[{"caller":{"function":"main"' "$MT_TMP/top.json" &&
    pass "leaky is reached from main" || fail "leaky's caller"
"$MT_BIN" top -n 3 "$MT_TMP/c.ctf" | grep -q 'leaky (.*prog.c:4)' &&
    pass "top names the C function with file and line" || fail "top text on a C trace"
"$MT_BIN" folded "$MT_TMP/c.ctf" | grep -q '^.*main;leaky [0-9]*$' && pass "folded: main;leaky" || fail "folded on a C trace"
"$MT_BIN" lifetimes --filter 'inside:churn' "$MT_TMP/c.ctf" | awk '$2 > 0.5 { bad = 1 } END { exit bad }' &&
    pass "churn's blocks are short-lived" || fail "churn lifetimes"
if ! command -v go >/dev/null; then
    fail "go not installed (scripts/install-deps.sh test): pprof of a C trace not checked"
else
    HOME=$MT_TMP GOCACHE=$MT_TMP/gocache GOPATH=$MT_TMP/gopath
    export HOME GOCACHE GOPATH
    "$MT_BIN" pprof -o "$MT_TMP/c.pb.gz" "$MT_TMP/c.ctf" &&
        go tool pprof -symbolize=none -top -sample_index=inuse_space "$MT_TMP/c.pb.gz" 2>/dev/null | grep -q ' leaky$' &&
        pass "pprof of a C trace: go tool pprof shows leaky in use" || fail "pprof of a C trace"
fi
finish
