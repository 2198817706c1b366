#!/bin/sh
# units_cli.sh - every option and MEMTRACE_* variable that takes a size or
# a duration takes the same spellings (docs/units.md): 1g, 1G, 1GiB, 1gb,
# "1 GiB" and the bytes themselves for sizes; 90s, 1.5min, 90000ms and a
# bare number for durations. And each refuses the same malformed ones
# with status 2 and a message naming the option and the value.
set -u
M=${MT_BIN:-build/memtrace}
F=${MT_FIXTURES:-tests/fixtures/memtrace}/leak.ctf
T=${MT_TMP:-$(mktemp -d)}
LIB=${MT_BUILD:-build}/libmemtrace.so
. tests/viewer/lib.inc

GIB="1g 1G 1GiB 1gib 1gb 1Gi 1073741824 1.0g"
BAD_SIZES="-1 0x10000 1q inf 1e k"

# check: a budget of 1 GiB holds on the fixture, 1 byte does not
for s in $GIB "1 GiB"; do
    "$M" check --max-peak "$s" --max-live-end "$s" --max-alloc "$s" "$F" >/dev/null 2>"$T/err"
    check "check --max-peak '$s': the budget holds (0)" [ $? = 0 ]
done
"$M" check --max-peak 1 "$F" >/dev/null 2>&1
check "check --max-peak 1: exceeded (1)" [ $? = 1 ]
for s in $BAD_SIZES; do
    "$M" check --max-peak "$s" "$F" >/dev/null 2>"$T/err"
    st=$?
    check "check --max-peak '$s': refused (2), naming option and value" \
        sh -c "[ $st = 2 ] && grep -q -- '--max-peak $s' '$T/err'"
done

# view: --memory and --fold-above
for s in 1g 1GiB 1gib 512MiB 512m 1073741824; do
    if start_viewer "$F" --port 0 -q --memory "$s" --fold-above "$s"; then
        stop_viewer
        pass "view --memory $s --fold-above $s: serves"
    else
        fail "view --memory $s --fold-above $s: serves"
    fi
done
for s in $BAD_SIZES; do
    "$M" view --port 0 -q --memory "$s" "$F" >/dev/null 2>"$T/err"
    st=$?
    check "view --memory '$s': refused (2)" sh -c "[ $st = 2 ] && grep -q -- '--memory' '$T/err'"
done

# run: --interval and --rotate-size (sizes); --duration, --rotate-time
# (times). The recorder is only preloaded in the plain stage (as in
# tests/record): a sanitized libmemtrace.so cannot go into a plain program.
STAGE=${MT_STAGE:-plain}
if [ "$STAGE" = plain ]; then
for s in 1g 1GiB 1gib 1G; do
    "$M" run -i "$s" --rotate-size "$s" -o "$T/r.ctf" -- true >/dev/null 2>"$T/err"
    check "run --interval $s --rotate-size $s: 0" [ $? = 0 ]
    rm -f "$T"/r.ctf*
done
for s in 2h 120m 120min 7200s 7200 7200000ms 1.5h; do
    "$M" run --duration "$s" --rotate-time "$s" -o "$T/r.ctf" -- true >/dev/null 2>"$T/err"
    check "run --duration $s --rotate-time $s: 0" [ $? = 0 ]
    rm -f "$T"/r.ctf*
done
for s in $BAD_SIZES; do
    "$M" run --rotate-size "$s" -o "$T/r.ctf" -- true >/dev/null 2>"$T/err"
    st=$?
    check "run --rotate-size '$s': refused (2)" sh -c "[ $st = 2 ] && grep -q -- '--rotate-size' '$T/err'"
done
for s in -1s 1x 1sec inf; do
    "$M" run --duration "$s" -o "$T/r.ctf" -- true >/dev/null 2>"$T/err"
    st=$?
    check "run --duration '$s': refused (2)" sh -c "[ $st = 2 ] && grep -q -- '--duration' '$T/err'"
done
fi

# ctl --wait: a time (bare: seconds); the pid is not controllable (1), but
# the option is read (not 2)
for s in 2 2s 2000ms 0.5min 0; do
    "$M" ctl --wait "$s" 1 status >/dev/null 2>&1
    check "ctl --wait $s: read (status $?, not 2)" [ $? != 2 ]
done
"$M" ctl --wait 2q 1 status >/dev/null 2>"$T/err"
st=$?
check "ctl --wait 2q: refused (2)" sh -c "[ $st = 2 ] && grep -q -- '--wait 2q' '$T/err'"

# the recorder's variables
if [ "$STAGE" = plain ] && [ -f "$LIB" ]; then
    for v in "MEMTRACE_ROTATE_SIZE=1GiB" "MEMTRACE_ROTATE_SIZE=1g" "MEMTRACE_ROTATE_TIME=1.5h" \
             "MEMTRACE_DURATION=90s" "MEMTRACE_RSS_MS=1s" "MEMTRACE_RSS_MS=250" \
             "MEMTRACE_FLUSH_MS=0.5s"; do
        env "$v" MEMTRACE="$T/e.ctf" LD_PRELOAD="$LIB" true 2>"$T/err"
        check "$v: taken without a word" [ ! -s "$T/err" ]
        rm -f "$T"/e.ctf*
    done
    for v in "MEMTRACE_ROTATE_SIZE=0x10000" "MEMTRACE_ROTATE_TIME=1q" "MEMTRACE_RSS_MS=2h"; do
        env "$v" MEMTRACE="$T/e.ctf" LD_PRELOAD="$LIB" true 2>"$T/err"
        check "$v: refused, naming it" grep -q "${v%%=*}=" "$T/err"
        rm -f "$T"/e.ctf*
    done
fi
exit 0
