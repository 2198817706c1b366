#!/bin/sh
# pprof_diff.sh - the documented pprof recipe for comparing two traces
# (docs/cli/diff.md): 'memtrace pprof' of each, then 'go tool pprof
# -diff_base'. Recorded at two different sampling rates, a program whose
# site_07 allocates twice as much: pprof's diff puts site_07 first, with
# the change 'memtrace diff' estimates (pprof values are estimates in
# bytes, so the rates need no care), and its changes add up to the
# change of the total.
. tests/record/progs/lib.sh
skip_under_tsan
# Under the sanitizer stage the CLI (MT_BIN) is sanitized, but a sanitized
# recorder cannot be preloaded into plain programs: record with the plain
# build's (the stage after it), or skip when there is none.
if [ "${MT_STAGE:-plain}" != plain ]; then
    [ -f build/libmemtrace.so ] && [ -d build/tests/record/progs ] || exit 77
    LIB=$PWD/build/libmemtrace.so PROGS=build/tests/record/progs
fi
command -v go >/dev/null 2>&1 || { fail "'go' not found: install golang-go (scripts/install-deps.sh test)"; finish; }
HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS= GO111MODULE=off
export HOME GOCACHE GOPATH GOFLAGS GO111MODULE
mkdir -p "$HOME" "$GOCACHE" "$GOPATH"
P=$PROGS/diffsites
preload "$T/base.ctf" "$(awk 'BEGIN { printf "%.17g", 1 / 16384 }')" "$P" >/dev/null || fail "base recorded"
preload "$T/new.ctf" "$(awk 'BEGIN { printf "%.17g", 1 / 8192 }')" "$P" 7 >/dev/null || fail "new recorded"
"$MT_BIN" pprof -o "$T/base.pb.gz" "$T/base.ctf" && "$MT_BIN" pprof -o "$T/new.pb.gz" "$T/new.ctf" || fail "profiles written"
go tool pprof -top -sample_index=alloc_space -unit=B -diff_base "$T/base.pb.gz" "$T/new.pb.gz" >"$T/top.txt" 2>"$T/err" ||
    fail "go tool pprof -diff_base: $(head -n 3 "$T/err")"
first=$(awk '/^ *flat/ { getline; print $NF, $1; exit }' "$T/top.txt")
"$MT_BIN" diff --json "$T/base.ctf" "$T/new.ctf" >"$T/d.json"
want=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["entries"][0]; t=d["total"]
print(e["function"], "%.0fB" % e["delta"], "%.0f" % t["delta"])' "$T/d.json")
set -- $want
check "pprof's diff shows site_07 first (got '$first')" [ "${first%% *}" = site_07 ]
check "memtrace diff shows site_07 first (got '$1')" [ "$1" = site_07 ]
check "the same change in both ($first vs $2)" [ "${first#* }" = "$2" ]
go tool pprof -top -sample_index=alloc_space -unit=B -nodefraction=0 -diff_base "$T/base.pb.gz" "$T/new.pb.gz" >"$T/all.txt" 2>/dev/null
total=$(awk '/^ *flat/ { on = 1; next } on { sub(/B$/, "", $1); s += $1 } END { printf "%.0f", s }' "$T/all.txt")
check "pprof's changes add up to the change of the total ($total vs $3)" awk -v a="$total" -v b="$3" 'BEGIN { d = a - b; t = 1 + (b < 0 ? -b : b) * 1e-6; exit !(d <= t && d >= -t) }'
finish
