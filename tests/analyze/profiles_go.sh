#!/bin/sh
# profiles_go.sh - Go heap profiles as input, checked against Go's own
# tool. tests/analyze/goheap (built here with the Go toolchain; skipped
# without one) allocates from known functions and writes runtime/pprof's
# heap profile, with every allocation recorded (MemProfileRate 1) or
# sampled at Go's default (512 KiB):
#  - `memtrace top --by live` names the sites and bytes `go tool pprof -top
#    -sample_index=inuse_space` gives, and --by alloc those of alloc_space,
#    for both rates;
#  - the error at the default rate is Go's sampling error: a site of n
#    objects of s bytes shows sqrt((1-p)/(n p)), p = 1 - exp(-s/512KiB),
#    with a noise mark where it is above 20%; the exact profile shows 0%;
#  - `diff` of two default-rate profiles flags the site that grew eightfold
#    and none of the others (at --alpha 0.001);
#  - `memtrace pprof` of a Go profile is read by `go tool pprof` with the
#    same bytes per function, and by memtrace with the same values and
#    errors (it keeps Go's sampling period).
set -u
. tests/lib.sh
: "${MT_BIN:?}" "${MT_TMP:?}"
command -v go >/dev/null 2>&1 || { echo "go not installed (golang-go: scripts/install-deps.sh test)"; exit 77; }
M=$MT_BIN T=$MT_TMP
export GOCACHE="$T/gocache" GOPATH="$T/gopath" GO111MODULE=on GOPROXY=off GOFLAGS= GOTOOLCHAIN=local
if ! (cd tests/analyze/goheap && go build -trimpath -o "$T/goheap" .) >"$T/build.log" 2>&1; then
    echo "FAIL: go build tests/analyze/goheap"; sed 's/^/    /' "$T/build.log"; exit 1
fi
"$T/goheap" "$T/exact.pb.gz" 1 1 && "$T/goheap" "$T/default.pb.gz" 0 1 &&
    "$T/goheap" "$T/grown.pb.gz" 0 8 || { echo "FAIL: running goheap"; exit 1; }

# name bytes, per main.* function: Go's view and ours
go_top() {
    go tool pprof -top -unit=B -nodecount=1000 -nodefraction=0 -edgefraction=0 \
        -sample_index="$2" "$1" 2>/dev/null |
        awk '$6 ~ /^main\./ && $1 != "0" { v = $1; sub(/B$/, "", v); print $6, v }' | sort
}
our_top() {
    "$M" top --by "$2" --limit 0 --json "$1" 2>/dev/null |
        sed -n 's/.*"short":"\(main\.[^"]*\)","value":\([0-9]*\)\.[0-9]*,.*/\1 \2/p' |
        awk '$2 != "0"' | sort
}
for p in exact default; do
    for pair in live:inuse_space alloc:alloc_space; do
        by=${pair%%:*} idx=${pair#*:}
        go_top "$T/$p.pb.gz" "$idx" >"$T/go.txt"
        our_top "$T/$p.pb.gz" "$by" >"$T/ours.txt"
        if [ -s "$T/go.txt" ] && cmp -s "$T/go.txt" "$T/ours.txt"; then
            pass "$p rate: top --by $by gives go tool pprof's $idx ($(wc -l <"$T/go.txt") sites)"
        else
            fail "$p rate: top --by $by differs from go tool pprof -sample_index=$idx"
            diff "$T/go.txt" "$T/ours.txt" | sed 's/^/    /'
        fi
    done
done
our_top "$T/exact.pb.gz" live >"$T/ours.txt"
# (24 MiB of its own, and now and then a few bytes of the runtime's)
awk '$1 == "main.keepLarge" && $2 >= 25165824 && $2 < 25165824 + 4096 { ok = 1 } END { exit !ok }' "$T/ours.txt" &&
    pass "exact rate: keepLarge holds its 24 MiB" ||
    fail "exact rate: keepLarge does not hold 24 MiB: $(grep keepLarge "$T/ours.txt")"

# the error: Go's sampling, from each site's objects and bytes
"$M" top --by live --limit 0 --json "$T/default.pb.gz" >"$T/default.json"
awk -v R=524288 '/"short":"main\./ {
        match($0, /"short":"[^"]*"/); name = substr($0, RSTART + 9, RLENGTH - 10)
        match($0, /"rse":[0-9.]*/); rse = substr($0, RSTART + 6, RLENGTH - 6) + 0
        match($0, /"live_bytes":[0-9.]*/); b = substr($0, RSTART + 13, RLENGTH - 13) + 0
        match($0, /"live_objects":[0-9.]*/); o = substr($0, RSTART + 15, RLENGTH - 15) + 0
        if (b <= 0 || o <= 0) next
        p = 1 - exp(-(b / o) / R); want = sqrt((1 - p) / (o * p))
        # the samples behind it, k/(1-p), are whole: compare them
        d = 1 / (rse * rse) - 1 / (want * want); if (d < 0) d = -d
        if (d > 0.5 + 0.01 / (want * want)) { printf "%s: rse %.4f, Go sampling gives %.4f\n", name, rse, want; bad = 1 }
        n++
    } END { if (!n) print "no main. site"; exit bad || !n }' "$T/default.json" >"$T/rse.txt"
check "default rate: each site's error is Go's sampling error" [ $? = 0 ]
[ -s "$T/rse.txt" ] && sed 's/^/    /' "$T/rse.txt"
"$M" top --by live "$T/default.pb.gz" >"$T/out" 2>"$T/err"
check "default rate: top shows keepLarge's error, a few percent" \
    grep -Eq '^ +[0-9]+ .* ([3-9]|1[0-9])%  main\.keepLarge' "$T/out"
check "default rate: top's header says Go's sampling" grep -q "sampled every 524288 bytes" "$T/out"
check "default rate: no warning" [ ! -s "$T/err" ]
"$M" top --by live "$T/exact.pb.gz" >"$T/out" 2>&1
check "exact rate: no error" grep -Eq '^ +[0-9]+ .*  0%  main\.keepLarge' "$T/out"
"$M" info "$T/default.pb.gz" >"$T/out" 2>&1
check "info: a Go heap profile, its error derived" grep -q "^kind: .*Go's sampling: error derived" "$T/out"

# diff with significance
"$M" diff --alpha 0.001 --json "$T/default.pb.gz" "$T/grown.pb.gz" >"$T/diff.json"
check "diff: the grown site is significant" grep -q '"function":"main.growSite".*"significant":true' "$T/diff.json"
others=$(grep '"function":"main\.' "$T/diff.json" | grep -v growSite | grep -c '"significant":true')
check "diff: no other site is ($others flagged)" [ "$others" = 0 ]
"$M" diff --alpha 0.001 "$T/default.pb.gz" "$T/grown.pb.gz" >"$T/out"
check "diff: the report marks it" grep -Eq '\* main\.growSite' "$T/out"

# Go -> memtrace pprof -> go tool pprof
"$M" pprof -o "$T/again.pb.gz" "$T/exact.pb.gz" || fail "memtrace pprof of a Go profile"
go_top "$T/exact.pb.gz" inuse_space >"$T/a.txt"
go_top "$T/again.pb.gz" inuse_space >"$T/b.txt"
check "memtrace pprof of a Go profile: go tool pprof reads the same bytes" cmp -s "$T/a.txt" "$T/b.txt"
"$M" pprof -o "$T/again-default.pb.gz" "$T/default.pb.gz" || fail "memtrace pprof of a sampled Go profile"
"$M" top --by live "$T/default.pb.gz" >"$T/a.txt" 2>&1
"$M" top --by live "$T/again-default.pb.gz" >"$T/b.txt" 2>&1
check "memtrace pprof of a sampled Go profile reads back with the same values and errors" cmp -s "$T/a.txt" "$T/b.txt"
finish
