#!/bin/sh
# diff_threads.sh - 'memtrace diff' and 'memtrace check' read their two
# sides at once, one thread each: on a small pair of traces, folded and
# whole, with the peak's first pass, several files per side (each merged
# by a thread of its own) and a damaged side, the output, messages and exit
# status must be those of reading one side after the other
# (memtrace --route=one-thread). Run in the TSan stage too, where a data race
# fails it.
set -u
T=${MT_TMP:-/tmp}
B=${MT_BUILD:-build}
M=${MT_BIN:-$B/memtrace}
F=${MT_FIXTURES:-tests/fixtures/memtrace}
fails=0
MT_BUILD=$B MT_TMP=$T
. tests/lib.sh
need_bench_tools gen_trace viewer-gen
"$B/bench/gen_trace" -n 20000 -s 1 "$T/g.ctf" > /dev/null &&
"$B/bench/viewer-gen" "$T/a.ctf" 20000 > /dev/null &&
"$B/bench/viewer-gen" "$T/b.ctf" 30000 900 > /dev/null ||
    { echo "FAIL: generating the traces"; exit 1; }
size=$(wc -c < "$T/b.ctf")
head -c $((size * 2 / 3)) "$T/b.ctf" > "$T/cut.ctf"

runs=0 differ=0 races=0
both() {
    "$M" --route=$route "$@" > "$T/at_once.out" 2> "$T/at_once.err"; r1=$?
    "$M" --route=$route${route:+,}one-thread "$@" > "$T/apart.out" 2> "$T/apart.err"; r2=$?
    runs=$((runs + 1))
    if grep -q ThreadSanitizer "$T/at_once.err"; then
        races=$((races + 1))
        echo "  data race: memtrace $*"
        grep -A 12 'WARNING: ThreadSanitizer' "$T/at_once.err" | head -n 30
    fi
    if [ $r1 != $r2 ] || ! cmp -s "$T/at_once.out" "$T/apart.out" ||
       ! cmp -s "$T/at_once.err" "$T/apart.err"; then
        differ=$((differ + 1))
        echo "  differs (exit $r1 at once, $r2 apart): memtrace $*"
        diff "$T/at_once.out" "$T/apart.out" | head -n 4
        diff "$T/at_once.err" "$T/apart.err" | head -n 4
    fi
}
for route in auto whole; do
    both diff "$T/a.ctf" "$T/b.ctf"
    both diff --by live --at peak --key path -j "$T/a.ctf" "$T/g.ctf"
    both diff --by-process --base "$T/a.ctf" --base "$T/g.ctf" "$T/b.ctf" "$F/leak.ctf"
    both diff "$T/a.ctf" "$T/cut.ctf"
    both diff "$T/cut.ctf" "$T/none.ctf"
    both check --max-peak 10MiB --base "$T/a.ctf" --max-increase 5% "$T/b.ctf"
    both diff "$T/a.ctf" /dev/stdin < "$T/b.ctf"
done
# one pipe named twice: read in turn, the first side takes it all
cat "$T/a.ctf" | "$M" diff /dev/stdin /dev/stdin > "$T/at_once.out" 2> "$T/at_once.err"; r1=$?
cat "$T/a.ctf" | "$M" --route=one-thread diff /dev/stdin /dev/stdin > "$T/apart.out" 2> "$T/apart.err"; r2=$?
runs=$((runs + 1))
if [ $r1 != $r2 ] || ! cmp -s "$T/at_once.err" "$T/apart.err" || ! cmp -s "$T/at_once.out" "$T/apart.out"; then
    differ=$((differ + 1)); echo "  differs: one pipe named twice"
fi
[ $races = 0 ] && echo "PASS: no data race reported ($runs runs)" ||
    { echo "FAIL: $races of $runs runs reported a data race"; fails=$((fails + 1)); }
[ $differ = 0 ] && echo "PASS: at once = one after the other ($runs runs)" ||
    { echo "FAIL: $differ of $runs runs differ"; fails=$((fails + 1)); }
exit $((fails > 0))
