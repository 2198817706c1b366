#!/bin/sh
# stream.sh - stats, lifetimes and plot read traces as folded models
# (memory for the live blocks and the stacks), one file, several
# aggregated, by process, or a pipe: their output must be the
# one of the whole model (memtrace --route=whole) byte for byte, on the
# fixtures and on generated traces, for many filters and options; lifetimes
# prints the same lines in the order blocks end (compared sorted). Also:
# errors (bad filter, regex over its limits) are the same, the peak pass is
# taken for --at peak and live:peak, and a pipe still works (whole model).
set -u
. tests/lib.sh
: "${MT_BIN:=build/memtrace}" "${MT_FIXTURES:=tests/fixtures/memtrace}" "${MT_TMP:=/tmp}"
: "${MT_BUILD:=build}"
T=$MT_TMP
GEN=$MT_BUILD/tests/tools/gen_churn
[ -x "$GEN" ] || make -s --no-print-directory BUILD="$MT_BUILD" "$GEN" > /dev/null 2>&1
[ -x "$GEN" ] || { echo "FAIL: cannot build $GEN"; exit 1; }
"$GEN" "$T/churn1.ctf" 60000 1 || fail "gen_churn 1"
"$GEN" "$T/churn2.ctf" 150000 7 || fail "gen_churn 7"
"$GEN" "$T/empty.ctf" 0 1 || fail "gen_churn empty"

# same ARGS: the streaming and whole-model runs give the same stdout,
# stderr and exit status (lifetimes: the same lines, sorted)
same() {
    what=$1; shift
    n_runs=$((n_runs + 1))
    "$MT_BIN" "$@" > "$T/s.out" 2> "$T/s.err"; rs=$?
    "$MT_BIN" --route=whole "$@" > "$T/w.out" 2> "$T/w.err"; rw=$?
    if [ "$what" = sorted ]; then
        sed 's/,$//' "$T/s.out" | sort > "$T/s.sorted"; sed 's/,$//' "$T/w.out" | sort > "$T/w.sorted"
        mv "$T/s.sorted" "$T/s.out"; mv "$T/w.sorted" "$T/w.out"
    fi
    if [ $rs != $rw ] || ! cmp -s "$T/s.out" "$T/w.out" || ! cmp -s "$T/s.err" "$T/w.err"; then
        fail "$*: streaming differs from the whole model (exit $rs vs $rw)"
        diff "$T/s.out" "$T/w.out" | head -n 4
        diff "$T/s.err" "$T/w.err" | head -n 4
        return
    fi
    n_same=$((n_same + 1))
}

# the SVG written to -o: compared as files
same_svg() {
    n_runs=$((n_runs + 1))
    "$MT_BIN" plot "$@" -o "$T/s.svg" > /dev/null 2> "$T/s.err"; rs=$?
    "$MT_BIN" --route=whole plot "$@" -o "$T/w.svg" > /dev/null 2> "$T/w.err"; rw=$?
    if [ $rs != $rw ] || ! cmp -s "$T/s.svg" "$T/w.svg" || ! cmp -s "$T/s.err" "$T/w.err"; then
        fail "plot $*: streaming differs from the whole model (exit $rs vs $rw)"
        return
    fi
    n_same=$((n_same + 1))
}

F=$MT_FIXTURES
traces="$F/leak.ctf $F/major.ctf $F/prodcons.ctf $F/rate1.ctf $F/rate1_skips.ctf $F/synth_edge.ctf
        $F/upstream_ocamlopt_v3.ctf $F/wrap.ctf $T/churn1.ctf $T/churn2.ctf $T/empty.ctf"
for tr in $traces; do
    n_same=0 n_runs=0
    name=$(basename "$tr")
    for flt in "" "size:>=1k" "kind:mmap" "source:minor,major" "inside:a" "!inside:/^(main|caml)/" \
               "hide:main" "alloc:100ms-1s" "lifetime:>1ms" "lifetime:<50us inside:e" \
               "collect:never" "collect:-200ms" "live:peak" "live:500ms" "live:100ms-300ms size:<4k"; do
        for at in end peak; do
            same plain stats --at $at -f "$flt" "$tr"
            same plain stats --json --at $at -f "$flt" "$tr"
        done
        same sorted lifetimes -f "$flt" "$tr"
        same sorted lifetimes --json -f "$flt" "$tr"
        for kind in memory sizes lifetimes; do
            same_svg -k $kind -f "$flt" "$tr"
        done
    done
    same plain stats --at 300ms -f "size:<4k" "$tr"
    same plain stats --json --at 300ms "$tr"
    same_svg -k memory --width 333 --height 250 -f "lifetime:>1ms" "$tr"
    same_svg -k memory --width 201 "$tr"
    [ $n_same -eq $n_runs ] && pass "$name: stats, lifetimes, plot: streaming = whole model ($n_same runs)"
done

# errors: the same message and status
n_same=0 n_runs=0
same plain stats -f 'size:>>1' "$F/leak.ctf"
same plain stats -f 'inside:/(a|aa)*$(?{/' "$F/leak.ctf"
same plain lifetimes -f 'live:nope' "$F/leak.ctf"
same_svg -k memory -f 'bogus:1' "$F/leak.ctf"
HOSTILE=$MT_BUILD/tests/tools/gen_hostile
if [ -x "$HOSTILE" ] && "$HOSTILE" names "$T/names.ctf"; then
    # a regex over its backtracking limit: exit 2, and nothing on stdout
    for clause in inside hide; do
        same plain stats -f "$clause:/(a|a)*[^a]\$/" "$T/names.ctf"
        same plain lifetimes --json -f "$clause:/(a|a)*[^a]\$/" "$T/names.ctf"
        same_svg -k memory -f "$clause:/(a|a)*[^a]\$/" "$T/names.ctf"
    done
fi
same plain stats "$T/missing.ctf"
head -c 3000 "$F/leak.ctf" > "$T/cut.ctf"
same plain stats "$T/cut.ctf"
[ $n_same -eq $n_runs ] && pass "errors: same messages and exit status both ways"

# several files aggregated (one merged stream), --by-process, and pipes
# (streamed when one pass does; what needs a second pass takes the whole
# model): the same output
same_pipe() { # same_pipe plain|sorted TRACE ARGS...: ARGS /dev/stdin, fed TRACE by a pipe
    what=$1 tr=$2; shift 2
    n_runs=$((n_runs + 1))
    cat "$tr" | "$MT_BIN" "$@" /dev/stdin > "$T/s.out" 2> "$T/s.err"; rs=$?
    cat "$tr" | "$MT_BIN" --route=whole "$@" /dev/stdin > "$T/w.out" 2> "$T/w.err"; rw=$?
    if [ "$what" = sorted ]; then
        sort "$T/s.out" > "$T/s.sorted"; sort "$T/w.out" > "$T/w.sorted"
        mv "$T/s.sorted" "$T/s.out"; mv "$T/w.sorted" "$T/w.out"
    fi
    if [ $rs != $rw ] || ! cmp -s "$T/s.out" "$T/w.out" || ! cmp -s "$T/s.err" "$T/w.err"; then
        fail "$* /dev/stdin (a pipe of $tr): streaming differs from the whole model (exit $rs vs $rw)"
        diff "$T/s.out" "$T/w.out" | head -n 4
        diff "$T/s.err" "$T/w.err" | head -n 4
        return
    fi
    n_same=$((n_same + 1))
}
n_same=0 n_runs=0
for files in "$T/churn1.ctf $T/churn2.ctf" "$F/leak.ctf $T/churn1.ctf $F/prodcons.ctf" \
             "$T/empty.ctf $F/wrap.ctf"; do
    for bp in "" --by-process; do
        flts='"" "size:>=1k" "lifetime:>1ms" "live:peak" "inside:a" "collect:never"'
        [ -n "$bp" ] && flts='"" "lifetime:>1ms" "inside:a"'
        eval "set -- $flts"
        for flt in "$@"; do
            # shellcheck disable=SC2086
            same plain stats $bp -f "$flt" $files
            # shellcheck disable=SC2086
            same plain stats $bp --json --at peak -f "$flt" $files
            # shellcheck disable=SC2086
            same sorted lifetimes $bp -f "$flt" $files
            for kind in memory sizes lifetimes; do
                # shellcheck disable=SC2086
                same_svg $bp -k $kind -f "$flt" $files
            done
        done
    done
done
for tr in "$T/churn2.ctf" "$F/leak.ctf" "$T/empty.ctf"; do
    for flt in "" "size:>=1k" "lifetime:>1ms" "live:peak"; do
        same_pipe plain "$tr" stats -f "$flt"
        same_pipe plain "$tr" stats --at peak -f "$flt"
        same_pipe sorted "$tr" lifetimes -f "$flt"
        for kind in memory sizes lifetimes; do
            same_pipe plain "$tr" plot -k $kind -f "$flt" -o -
        done
    done
done
[ $n_same -eq $n_runs ] && pass "several files, --by-process, pipes: streaming = whole model ($n_same runs)"

# a pipe cannot be read twice: the whole model, same output
"$MT_BIN" stats --at peak -f 'live:peak' /dev/stdin < "$T/churn1.ctf" > "$T/pipe.out" 2>&1
"$MT_BIN" stats --at peak -f 'live:peak' "$T/churn1.ctf" > "$T/file.out" 2>&1
cmp -s "$T/pipe.out" "$T/file.out" && pass "stats from a pipe = from the file" ||
    fail "stats from a pipe differs from the file"

# lifetimes: blocks in the order they end (freed first, then the live ones,
# which end with the trace)
"$MT_BIN" lifetimes "$T/churn1.ctf" > "$T/l.out" 2>/dev/null
if [ -s "$T/l.out" ] &&
   awk '{ e = $1 + $2; if (NR > 1 && e + 2e-6 < last) bad = 1; last = e } END { exit bad }' "$T/l.out"
then pass "lifetimes: blocks in the order they end"
else fail "lifetimes: not in the order blocks end"; fi

finish
