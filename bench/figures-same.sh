#!/bin/sh
# figures-same.sh - the streaming reports of two builds side by side: stdout,
# stderr and exit code of stats (text, JSON, --at peak), lifetimes (text,
# JSON) and plot (memory, sizes, lifetimes: the SVG on stdout) for 13
# filters (times, sizes, sources, function terms, hide:, live:peak) on the
# fixtures, two generated traces, two files merged, --by-process and pipes
# (1872 cases). For a change to the planner (lib/analyze/figures.c,
# figpass.c) that must not change any output: build the commit before it
# in another checkout and give its binary.
#
#   OLD=../before/build/memtrace sh bench/figures-same.sh   # NEW=build/memtrace
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
NEW=${NEW:-$BUILD/memtrace}
: "${OLD:?OLD=the other build's memtrace}"
bench_need "$BUILD" "cli bench-tools" "$NEW" "$BUILD/bench/gen_trace" "$BUILD/bench/viewer-gen"
bench_scratch memtrace-figures-same
F=tests/fixtures/memtrace
"$BUILD/bench/gen_trace" -n 200000 "$tmp/g.ctf"
"$BUILD/bench/viewer-gen" "$tmp/p.ctf" 200000 >/dev/null
sets="$F/leak.ctf|$F/major.ctf|$F/prodcons.ctf|$F/prodcons_v3.ctf|$F/rate1.ctf|$F/rate1_skips.ctf"
sets="$sets|$F/synth_edge.ctf|$F/upstream_lists_and_sets_v1.ctf|$F/upstream_ocamlopt_v2.ctf"
sets="$sets|$F/upstream_ocamlopt_v3.ctf|$F/wrap.ctf|$tmp/g.ctf|$tmp/p.ctf|$F/prodcons.ctf $F/major.ctf"
sets="$sets|--by-process $F/upstream_ocamlopt_v2.ctf $F/upstream_ocamlopt_v3.ctf"
sets="$sets|PIPE $F/leak.ctf|PIPE $F/synth_edge.ctf|PIPE $tmp/p.ctf"
filters="|lifetime:>1ms|lifetime:<1ms|collect:never|live:peak|live:end|size:>=1k|inside:/a/"
filters="$filters|lifetime:>1ms !inside:/e/|source:minor lifetime:>100us|collect:-500ms"
filters="$filters|hide:/a/ lifetime:>1ms|alloc:-10ms live:peak"
cmds="stats|stats --json|stats --at peak|lifetimes|lifetimes --json|plot -o -"
cmds="$cmds|plot -k sizes -o -|plot -k lifetimes -o -"

# one BIN SET CMD FILTER TAG: $tmp/TAG.out, .err, .rc
one() {
    bin=$1 set=$2 cmd=$3 filt=$4 tag=$5
    if [ -n "$filt" ]; then set -- -f "$filt"; else set --; fi
    case $set in
    PIPE*) cat ${set#PIPE } | $bin $cmd "$@" /dev/stdin >"$tmp/$tag.out" 2>"$tmp/$tag.err" &&
               echo 0 >"$tmp/$tag.rc" || echo $? >"$tmp/$tag.rc" ;;
    *) $bin $cmd "$@" $set >"$tmp/$tag.out" 2>"$tmp/$tag.err" && echo 0 >"$tmp/$tag.rc" ||
           echo $? >"$tmp/$tag.rc" ;;
    esac
}

n=0 differ=0
IFS='|'
for set in $sets; do
    for filt in $filters; do
        for cmd in $cmds; do
            IFS=' '
            one "$OLD" "$set" "$cmd" "$filt" old
            one "$NEW" "$set" "$cmd" "$filt" new
            n=$((n + 1))
            for k in out err rc; do
                if ! cmp -s "$tmp/old.$k" "$tmp/new.$k"; then
                    differ=$((differ + 1))
                    echo "differ ($k): $cmd -f '$filt' $set"
                    break
                fi
            done
            IFS='|'
        done
    done
done
echo "$n cases, $differ differ"
[ "$differ" = 0 ]
