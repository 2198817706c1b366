#!/bin/sh
# read_threads.sh - the reports that fold a trace while reading it give the
# same output, messages and exit status read on two threads
# (--route=two-threads: a reading thread decodes and finds the stacks)
# as on one (--route=one-thread): top, folded, pprof, stats,
# lifetimes, plot, diff and check, on the fixtures, on generated traces, on
# a damaged trace and on a trace read from a pipe.
set -u
T=${MT_TMP:-/tmp}
B=${MT_BUILD:-build}
M=${MT_BIN:-$B/memtrace}
F=${MT_FIXTURES:-tests/fixtures/memtrace}
[ -x "$B/bench/viewer-gen" ] || make -s --no-print-directory BUILD="$B" "$B/bench/viewer-gen" > /dev/null 2>&1
[ -x "$B/bench/viewer-gen" ] || { echo "FAIL: cannot build $B/bench/viewer-gen"; exit 1; }
"$B/bench/viewer-gen" "$T/v.ctf" 400000 > /dev/null || { echo "FAIL: generating the trace"; exit 1; }
# a damaged copy: bytes in the middle overwritten
size=$(wc -c < "$T/v.ctf")
cp "$T/v.ctf" "$T/bad.ctf"
head -c 200 /dev/zero | tr '\0' '\377' |
    dd of="$T/bad.ctf" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null

fails=0 runs=0
same() { # same ARGS...: the report read on one thread and on two
    "$M" --route=one-thread "$@" > "$T/one.out" 2> "$T/one.err"; r1=$?
    "$M" --route=two-threads "$@" > "$T/two.out" 2> "$T/two.err"; r2=$?
    runs=$((runs + 1))
    if [ $r1 != $r2 ] || ! cmp -s "$T/one.out" "$T/two.out" || ! cmp -s "$T/one.err" "$T/two.err"; then
        echo "FAIL: memtrace $*: exit $r1 on one thread, $r2 on two"
        diff "$T/one.out" "$T/two.out" | head -5
        diff "$T/one.err" "$T/two.err" | head -5
        fails=$((fails + 1))
    fi
}
for t in "$F"/*.ctf "$T/v.ctf"; do
    same top "$t"
    same top --at peak -f 'size:>=1k' "$t"
    same folded "$t"
    same pprof -o - "$t"
    same stats "$t"
    same lifetimes --json "$t"
    same plot -o - "$t"
    same plot -k lifetimes -f "size:>=1k" -o - "$t"
    same stats -f 'lifetime:>1ms' "$t"
done
same diff "$F/leak.ctf" "$T/v.ctf"
same check --max-peak 1MiB "$T/v.ctf"
same top -n 3 --by live "$T/v.ctf"
echo "PASS: $runs reports the same on two threads as on one"

# the damaged trace: the reader's message after what came before it
same top --at peak "$T/bad.ctf"   # the first pass, with the codec alone, meets the damage
same stats "$T/bad.ctf"
if grep -q "offset" "$T/two.err" && [ $r2 != 0 ]; then
    echo "PASS: a damaged trace read on two threads: $(head -n 1 "$T/two.err")"
else
    echo "FAIL: a damaged trace read on two threads: exit $r2, $(head -c 300 "$T/two.err")"
    fails=$((fails + 1))
fi
# a pipe (read once, the whole model at the peak; folded otherwise)
for n in 1 2; do
    [ $n = 1 ] && r=one-thread || r=two-threads
    cat "$T/v.ctf" | "$M" --route=$r folded /dev/stdin > "$T/pipe$n.out" 2>&1
done
"$M" --route=one-thread folded "$T/v.ctf" > "$T/file.out" 2>&1
if cmp -s "$T/pipe1.out" "$T/pipe2.out" && cmp -s "$T/pipe2.out" "$T/file.out"; then
    echo "PASS: folded from a pipe, the same on two threads"
else
    echo "FAIL: folded from a pipe differs on two threads: $(head -c 300 "$T/pipe2.out")"
    fails=$((fails + 1))
fi
[ $fails = 0 ]
