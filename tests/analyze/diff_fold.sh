#!/bin/sh
# diff_fold.sh - 'memtrace diff' and 'memtrace check' fold the traces while
# reading them (memory for the live blocks and the stacks, not for every
# allocation): their reports, text and JSON, messages and exit statuses
# must be byte-identical to the whole model's (memtrace --route=whole), on
# the fixtures and on generated traces, over the options: measures, times
# (peak, end, a time), keys, filters (live:peak too), --per-second,
# --windows (ranges and moments), several files, --by-process, a pipe, the
# budgets of check with and without a base.
set -u
T=${MT_TMP:-/tmp}
B=${MT_BUILD:-build}
M=${MT_BIN:-$B/memtrace}
F=${MT_FIXTURES:-tests/fixtures/memtrace}
fails=0
MT_BUILD=$B MT_TMP=$T
. tests/lib.sh
need_bench_tools gen_trace viewer-gen
"$B/bench/gen_trace" -n 60000 -s 1 "$T/g1.ctf" > /dev/null &&
"$B/bench/gen_trace" -n 50000 -s 2 -V 3 "$T/g2.ctf" > /dev/null &&
"$B/bench/viewer-gen" "$T/v1.ctf" 60000 > /dev/null &&
"$B/bench/viewer-gen" "$T/v2.ctf" 80000 900 > /dev/null ||
    { echo "FAIL: generating the traces"; exit 1; }

# same NAME ARGS...: one run folded, one whole; everything must match.
runs=0 differ=0 significant=0
same() {
    "$M" "$@" > "$T/fold.out" 2> "$T/fold.err"; rf=$?
    "$M" --route=whole "$@" > "$T/whole.out" 2> "$T/whole.err"; rw=$?
    runs=$((runs + 1))
    [ $rf = 1 ] && significant=$((significant + 1))
    if [ $rf != $rw ] || ! cmp -s "$T/fold.out" "$T/whole.out" || ! cmp -s "$T/fold.err" "$T/whole.err"; then
        differ=$((differ + 1))
        echo "  differs (exit $rf folded, $rw whole): memtrace $*"
        diff "$T/fold.out" "$T/whole.out" | head -n 6
        diff "$T/fold.err" "$T/whole.err" | head -n 4
    fi
}
group() {
    if [ $differ = 0 ] && [ $runs -gt 0 ]; then echo "PASS: $1 ($runs runs identical)"
    else echo "FAIL: $1 ($differ of $runs runs differ)"; fails=$((fails + 1)); fi
    runs=0 differ=0
}

for pair in "$T/g1.ctf $T/g2.ctf" "$T/v1.ctf $T/v2.ctf" "$F/prodcons.ctf $F/leak.ctf" \
            "$F/upstream_ocamlopt_v2.ctf $F/upstream_ocamlopt_v3.ctf"; do
    # shellcheck disable=SC2086
    set -- $pair
    for opt in "" "--by count" "--by live" "--by live_count" "--at peak" "--at 0.03s" \
               "--key function" "--key path --all" "-p" "--all -j" "--by live --at peak -j" \
               "--sort size -n 0" "--filter size:>1k" "--by live --filter live:peak" \
               "--alpha 0.2 --key path --by count -j" "--by live_count --at end --raw"; do
        # shellcheck disable=SC2086
        same diff $opt "$1" "$2"
    done
done
group "diff BASE NEW, folded = whole model"
[ $significant -gt 0 ] && echo "PASS: some comparisons find a significant difference ($significant)" ||
    { echo "FAIL: no comparison found a difference: the test compares nothing"; fails=$((fails + 1)); }

for t in "$T/g1.ctf" "$T/v2.ctf" "$F/prodcons.ctf" "$F/synth_edge.ctf"; do
    for w in "0-0.02s 0.02s-" "0-0.05s 0.02s-0.1s" "0.02s end" "peak end" "0.01s 0.04s"; do
        for opt in "" "-j --all" "-p" "--by count" "--key path --all" "--by live_count" \
                   "--key function -j --filter size:>100"; do
            # shellcheck disable=SC2086
            same diff $opt --windows $w "$t"
        done
    done
done
group "diff --windows, folded = whole model"

S=$T/v1.ctf
for t in "$T/g1.ctf" "$T/v1.ctf" "$T/v2.ctf" "$F/leak.ctf"; do
    for opt in "--max-peak 1MiB" "--max-peak 1GiB --max-live-end 1k --max-alloc 10MiB" \
               "--max-alloc 10MiB --site main" "--max-peak 1MiB --site phase" \
               "--max-peak 1MiB --filter size:>1k" "--max-live-end 1MiB --filter size:>1k -a end" \
               "--base $T/g2.ctf --max-increase 5%" "--base $T/g2.ctf --max-increase 5% --by alloc" \
               "--base $S --max-increase 1% --by live_count --at end" \
               "--base $S --max-increase 1% --at 0.02s --max-peak 2MiB" \
               "--base $S --max-increase 10% --by count --filter live:peak"; do
        # shellcheck disable=SC2086
        same check $opt "$t"
    done
done
group "check, folded = whole model"

# several files (aggregated while read: folded too), a pipe (folded unless
# at the peak, which needs a first read)
same diff --base "$T/g1.ctf" --base "$T/g2.ctf" "$T/v1.ctf"
same diff "$T/g1.ctf" "$T/v1.ctf" "$T/g2.ctf" 2>/dev/null
same check --max-alloc 1MiB "$T/g1.ctf" "$T/g2.ctf"
same check --max-peak 1MiB --base "$T/g1.ctf" --base "$T/g2.ctf" --max-increase 5% "$T/v1.ctf" "$T/v2.ctf"
same diff --by-process --key path --by live --at peak --base "$T/g1.ctf" --base "$T/g2.ctf" "$T/v1.ctf" "$T/v2.ctf"
same diff --windows 0-0.02s 0.02s- "$T/g1.ctf" "$T/g2.ctf"
same diff --windows 0.01s end --key path "$T/v1.ctf" "$T/v2.ctf"
same top --by live --at peak "$T/g1.ctf" "$T/g2.ctf"
same diff --by live "$T/g1.ctf" /dev/stdin < "$T/g2.ctf"
same diff --at peak "$T/g1.ctf" /dev/stdin < "$T/g2.ctf"
same check --max-peak 1MiB /dev/stdin < "$T/g2.ctf"
group "several files and pipes, folded = whole model"

# Both sides are read at once, one thread each; their messages must be
# those of reading them one after the other (memtrace --route=one-thread), in
# the same order, up to the first side that fails: warnings of a truncated
# trace on either side, a damaged or missing trace on either side, a bad
# filter.
size=$(wc -c < "$T/v2.ctf")
head -c $((size * 2 / 3)) "$T/v2.ctf" > "$T/cut.ctf"
cp "$T/v1.ctf" "$T/bad.ctf"
printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
    dd of="$T/bad.ctf" bs=1 seek=$(( $(wc -c < "$T/v1.ctf") / 2 )) conv=notrunc 2>/dev/null
apart() {
    "$M" "$@" > "$T/fold.out" 2> "$T/fold.err"; rf=$?
    "$M" --route=one-thread "$@" > "$T/whole.out" 2> "$T/whole.err"; rw=$?
    runs=$((runs + 1))
    if [ $rf != $rw ] || ! cmp -s "$T/fold.out" "$T/whole.out" || ! cmp -s "$T/fold.err" "$T/whole.err"; then
        differ=$((differ + 1))
        echo "  differs (exit $rf at once, $rw one after the other): memtrace $*"
        diff "$T/fold.err" "$T/whole.err" | head -n 4
    fi
}
msgs=0
for a in "$T/cut.ctf" "$T/bad.ctf" "$T/none.ctf" "$T/g1.ctf"; do
    for b in "$T/cut.ctf" "$T/bad.ctf" "$T/none.ctf" "$F/leak.ctf"; do
        apart diff "$a" "$b"
        [ -s "$T/fold.err" ] && msgs=$((msgs + 1))
        apart diff --by live --at peak --key path "$a" "$b"
        apart check --max-alloc 1GiB --base "$a" --max-increase 5% "$b"
    done
done
apart diff --filter 'size:>' "$T/g1.ctf" "$T/g2.ctf"
apart check --max-peak 1MiB --filter 'size:>' --base "$T/g1.ctf" --max-increase 5% "$T/g2.ctf"
group "diff and check: two traces read at once say what one after the other says"
[ $msgs -ge 12 ] && echo "PASS: the damaged pairs gave messages to compare ($msgs of 16)" ||
    { echo "FAIL: only $msgs of 16 damaged pairs gave a message: the test compares nothing"; fails=$((fails + 1)); }
"$M" diff "$T/bad.ctf" "$T/cut.ctf" > /dev/null 2> "$T/err"
if grep -q "bad.ctf" "$T/err" && ! grep -q "cut.ctf" "$T/err"; then
    echo "PASS: a damaged first trace: its error alone, not the second trace's warning"
else
    echo "FAIL: a damaged first trace, messages:"; cat "$T/err"; fails=$((fails + 1))
fi

exit $((fails > 0))
