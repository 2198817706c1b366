#!/bin/sh
# golden.sh - the exact output of every report command, byte for byte, on
# the fixtures and on small generated traces, read by every route the
# analysis layer has (the default, and those 'memtrace --route=...' forces:
# the whole model, one and two reading threads, the sort fallback of the
# fold; pipes), and a few answers of the viewer's JSON API (whole, folded,
# folded on one thread, read again):
# whatever changes inside lib/analyze, what a user sees stays the same.
#
# It is also the table-driven test of the routes: the same cases through
# every route must give the same outputs (the table "routes" below says
# where they may differ), besides matching the goldens.
#
# The expected outputs are tests/golden/*.txt.xz, one per group. Each holds
# "### CASE" headers, the case's stdout and "### exit N". pprof profiles are
# kept as the SHA-256 of the uncompressed protobuf; SVGs and JSON as text.
#
# To regenerate them deliberately (after a change meant to alter output),
# with the build to take as the reference:
#     MT_GOLDEN_WRITE=1 sh tests/run.sh tests/present/golden.sh
# then review `git diff --stat tests/golden` and decompress to compare.
set -u
# the shared checks, before the test leaves the top of the checkout
. tests/lib.sh
: "${MT_BIN:=build/memtrace}" "${MT_BUILD:=build}" "${MT_FIXTURES:=tests/fixtures/memtrace}" \
  "${MT_TMP:=/tmp}"
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/../golden
F=$MT_FIXTURES
gen=$MT_BUILD/bench/gen_trace
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }
command -v xz >/dev/null || { echo "FAIL: xz missing (scripts/install-deps.sh test)"; exit 1; }
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
fail=0
# Paths show in the outputs: every command runs in a scratch directory
# where the fixtures are fx/NAME.ctf and the generated traces gN.ctf.
case $MT_BIN in /*) ;; *) MT_BIN=$(pwd)/$MT_BIN ;; esac
case $gen in /*) ;; *) gen=$(pwd)/$gen ;; esac
case $F in /*) ;; *) F=$(pwd)/$F ;; esac
case $MT_TMP in /*) ;; *) MT_TMP=$(pwd)/$MT_TMP ;; esac
mkdir -p "$MT_TMP/w" && ln -sfn "$F" "$MT_TMP/w/fx" && cd "$MT_TMP/w" || exit 1
F=fx

# deterministic generated traces: two seeds (for diff), a small one
"$gen" -n 12000 -s 1 g1.ctf >/dev/null || { echo "FAIL: gen_trace"; exit 1; }
"$gen" -n 12000 -s 2 g2.ctf >/dev/null || { echo "FAIL: gen_trace"; exit 1; }
"$gen" -n 4000 -s 3 -V 2 g3.ctf >/dev/null || { echo "FAIL: gen_trace"; exit 1; }
G=.

# case NAME CMD...: runs CMD (a shell string, with $M the CLI), records its
# stdout and exit status
case_() {
    name=$1; shift
    printf '### %s\n' "$name"
    sh -c "$*" > "$MT_TMP/case.out" 2>/dev/null
    rc=$?
    size=$(wc -c < "$MT_TMP/case.out")
    if [ "$size" -le 12000 ]; then
        cat "$MT_TMP/case.out"
    else # a long output: its head, and the whole as a hash
        head -c 3000 "$MT_TMP/case.out"
        printf '\n### ... %s bytes, sha256 %s\n' "$size" "$(sha256sum < "$MT_TMP/case.out" | cut -d' ' -f1)"
    fi
    printf '\n### exit %s\n' "$rc"
}
pp() { # the pprof profile's protobuf, as a hash
    echo "\$M pprof -o - $* | gzip -dc | sha256sum | cut -d' ' -f1"
}

# Every report command on one trace (read by file name, or from a pipe
# when $pipe is set: "cat FILE | memtrace CMD /dev/stdin").
reports() { # reports TAG FILE
    tag=$1 t=$2
    if [ -n "${pipe:-}" ]; then src="/dev/stdin"; pre="cat $t |"; else src=$t; pre=""; fi
    case_ "$tag stats" "$pre \$M stats $src"
    case_ "$tag stats --json" "$pre \$M stats --json $src"
    case_ "$tag stats --at peak" "$pre \$M stats --at peak $src"
    case_ "$tag stats -f size:>=1k" "$pre \$M stats -f size:\\>=1k $src"
    case_ "$tag stats -f live:peak --json" "$pre \$M stats -f live:peak --json $src"
    case_ "$tag top" "$pre \$M top -n 10 $src"
    case_ "$tag top --by live --at peak" "$pre \$M top -n 10 --by live --at peak $src"
    case_ "$tag top --by count -f collect:never" "$pre \$M top -n 10 --by count -f collect:never $src"
    case_ "$tag top --by temporary --json" "$pre \$M top -n 5 --by temporary --json $src"
    case_ "$tag top --by live_count --at 0.1s" "$pre \$M top -n 10 --by live_count --at 0.1s $src"
    case_ "$tag top --raw" "$pre \$M top -n 10 --raw $src"
    case_ "$tag lifetimes" "$pre \$M lifetimes $src"
    case_ "$tag lifetimes --json -f size:<=64" "$pre \$M lifetimes --json -f size:\\<=64 $src"
    case_ "$tag folded" "$pre \$M folded $src"
    case_ "$tag folded --at peak" "$pre \$M folded --at peak $src"
    case_ "$tag folded -w count -f lifetime:<1ms" "$pre \$M folded -w count -f lifetime:\\<1ms $src"
    case_ "$tag plot memory" "$pre \$M plot -o - $src"
    case_ "$tag plot memory -f collect:never" "$pre \$M plot -o - -f collect:never $src"
    case_ "$tag plot sizes" "$pre \$M plot -k sizes -o - $src"
    case_ "$tag plot lifetimes" "$pre \$M plot -k lifetimes -o - $src"
    case_ "$tag pprof" "$pre $(pp "$src")"
    case_ "$tag pprof --at peak" "$pre $(pp --at peak "$src")"
    case_ "$tag check" "$pre \$M check --max-peak 1MiB --max-alloc 100MiB $src"
    case_ "$tag check -s" "$pre \$M check --max-live-end 64KiB -f size:\\>=256 $src"
    case_ "$tag leaks" "$pre \$M leaks $src"
    case_ "$tag leaks --all --json" "$pre \$M leaks --all -n 0 --json $src"
    case_ "$tag leaks --all -f size:>=64 --from 0.01s" "$pre \$M leaks --all -n 0 -f size:\\>=64 --from 0.01s $src"
}

# The commands that do not go through the analysis routes, once each.
plain() { # plain TAG FILE
    case_ "$1 info" "\$M info $2"
    case_ "$1 dump" "\$M dump $2 | head -n 300"
}

diffs() { # diffs TAG BASE NEW
    case_ "$1 diff" "\$M diff $2 $3"
    case_ "$1 diff --by live --at peak --json" "\$M diff --by live --at peak --json $2 $3"
    case_ "$1 diff --key function --all" "\$M diff --key function --all -n 0 $2 $3"
    case_ "$1 diff --windows" "\$M diff --windows 0-0.1s 0.1s-0.3s $2"
    case_ "$1 check --base" "\$M check --base $2 --max-increase 10 $3"
}

fixtures="leak major prodcons prodcons_v3 rate1 rate1_skips synth_edge upstream_lists_and_sets_v1 upstream_ocamlopt_v3 wrap"
routed="$F/leak.ctf $F/synth_edge.ctf $G/g1.ctf"

group_default() {
    for n in $fixtures; do reports "$n" "$F/$n.ctf"; plain "$n" "$F/$n.ctf"; done
    for g in g1 g2 g3; do reports "$g" "$G/$g.ctf"; plain "$g" "$G/$g.ctf"; done
    diffs "g1-g2" "$G/g1.ctf" "$G/g2.ctf"
    diffs "prodcons-v3" "$F/prodcons.ctf" "$F/prodcons_v3.ctf"
    diffs "major-leak" "$F/major.ctf" "$F/leak.ctf"
    case_ "by-process stats" "\$M stats --by-process $F/leak.ctf $F/major.ctf"
    case_ "by-process top" "\$M top -n 10 --by-process $F/leak.ctf $F/major.ctf"
    case_ "aggregated top" "\$M top -n 10 $G/g1.ctf $G/g2.ctf"
    case_ "aggregated stats" "\$M stats $G/g1.ctf $G/g2.ctf"
    case_ "aggregated plot" "\$M plot -o - $G/g1.ctf $G/g3.ctf"
}

group_route() { # the routed reports on a few traces, with $M and $pipe
    for t in $routed; do reports "$(basename "$t" .ctf)" "$t"; done
    diffs "g1-g2" "$G/g1.ctf" "$G/g2.ctf"
    case_ "aggregated top" "\$M top -n 10 $G/g1.ctf $G/g2.ctf"
    case_ "aggregated stats" "\$M stats $G/g1.ctf $G/g2.ctf"
}

# The viewer's answers: ENDPOINTS on TRACE for each way it can load it.
viewer_group() {
    . "$here/../viewer/lib.inc" >/dev/null
    for v in "whole:" "folded:--fold-above 0" "onethread:--fold-above 0" "reread:--fold-above 0 --no-index"; do
        vname=${v%%:*} vargs=${v#*:}
        # (a copy: a folded viewer writes its index beside the trace)
        mkdir -p v && cp "$F/leak.ctf" v/leak.ctf
        for t in v/leak.ctf "$G/g1.ctf"; do
            if [ "$vname" = onethread ]; then
                printf '#!/bin/sh\nexec "%s" --route=one-thread "$@"\n' "$MT_BIN" > "$MT_TMP/one-thread"
                chmod +x "$MT_TMP/one-thread"
                real_bin=$MT_BIN; MT_BIN=$MT_TMP/one-thread
                start_viewer "$t" --port 0 -q $vargs >/dev/null || return 1
                MT_BIN=$real_bin
            else
                start_viewer "$t" --port 0 -q $vargs >/dev/null || return 1
            fi
            i=0
            while [ $i -lt 6000 ] && ! curl -s "${VIEW_URL}api/status" | grep -q '"state":"ready"'; do
                sleep 0.05; i=$((i + 1))
            done
            for q in "stats" "curve?n=200" "hist" "tree?dir=sites" "hotspots" "graph" \
                     "stats?filter=size:%3E%3D1k" "tree?dir=main&metric=live&filter=live:peak" \
                     "hotspots?metric=live&only=sites&filter=collect:never"; do
                case_ "view $vname $(basename "$t") $q" "curl -s '${VIEW_URL}api/$q'"
            done
            stop_viewer
        done
    done
}

M=$MT_BIN
export M
out() { echo "$MT_TMP/$1.txt"; }
t0=$(date +%s)
group_default > "$(out default)"
# The routes: group name, --route, and the cases whose output may differ
# from the default route's (an awk pattern over the case names): the whole
# model prints lifetimes in allocation order, a pipe is named /dev/stdin.
routes='auto:auto:^$ whole:whole:lifetimes($|.--json) threads1:one-thread:^$
threads2:two-threads:^$ qsort:qsort:^$ pipe:auto:check' 
for r in $routes; do
    g=${r%%:*} rest=${r#*:}
    M="$MT_BIN --route=${rest%%:*}"
    [ "$g" = pipe ] && pipe=1
    group_route > "$(out "$g")"
    pipe=
done
M=$MT_BIN
t1=$(date +%s)
viewer_group > "$(out viewer)" || { echo "FAIL: viewer did not start"; fail=1; }
echo "reports $((t1 - t0))s, viewer $(($(date +%s) - t1))s"

# The same cases through every route give the same figures (but where the
# table above says they may not).
cases_but() { # cases_but FILE PATTERN: the cases whose name does not match
    awk -v pat="$2" '/^### / && !/^### (\.\.\. |exit )/ { skip = (pat != "^$" && $0 ~ pat) } !skip' "$1"
}
for r in $routes; do
    g=${r%%:*} pat=${r##*:}
    [ "$g" = auto ] && continue
    cases_but "$(out auto)" "$pat" > "$MT_TMP/a.cmp"
    cases_but "$(out "$g")" "$pat" > "$MT_TMP/b.cmp"
    if cmp -s "$MT_TMP/a.cmp" "$MT_TMP/b.cmp"; then
        echo "PASS: route $g: the same outputs as the default route"
    else
        echo "FAIL: route $g: outputs differ from the default route's:"
        diff "$MT_TMP/a.cmp" "$MT_TMP/b.cmp" | head -n 10
        fail=1
    fi
done

for g in default auto whole threads1 threads2 qsort pipe viewer; do
    if [ "${MT_GOLDEN_WRITE:-}" = 1 ]; then
        mkdir -p "$golden"
        xz -9e -c "$(out $g)" > "$golden/$g.txt.xz"
        echo "PASS: wrote tests/golden/$g.txt.xz"
        continue
    fi
    if [ ! -f "$golden/$g.txt.xz" ]; then
        echo "FAIL: $g: no tests/golden/$g.txt.xz (MT_GOLDEN_WRITE=1 to make it)"; fail=1; continue
    fi
    xz -dc "$golden/$g.txt.xz" > "$MT_TMP/want-$g.txt"
    if cmp -s "$MT_TMP/want-$g.txt" "$(out $g)"; then
        echo "PASS: $g: every output byte-identical to tests/golden/$g.txt.xz"
    else
        echo "FAIL: $g: outputs differ from tests/golden/$g.txt.xz:"
        diff "$MT_TMP/want-$g.txt" "$(out $g)" | head -n 20
        fail=1
    fi
done
exit $fail
