#!/bin/sh
# snapshots.sh - 'memtrace run --pprof-every' through a wrapper that execs
# the real program (env here; a pyenv shim alike): the snapshots are of the
# program's trace (FILE.PID, written after the exec), named after the
# program, not an empty profile of the wrapper's trace or nothing at all.
. tests/record/progs/lib.sh
skip_under_tsan
# the ASan build's recorder preloaded into programs built without ASan
# crashes at start (as in tests/record/cli_run.sh, before this test): plain stage
[ "${MT_STAGE:-plain}" = plain ] || { echo "runs programs under the plain recorder: plain stage only"; exit 77; }
M=$PWD/$MT_BIN
F=$PWD/$PROGS/faults
D=$T/snap
rm -rf "$D"; mkdir -p "$D"
# faults hold 2600: 64 MiB allocated and held for 2.6 s
"$M" run --interval 8k --pprof-every 1s --pprof-dir "$D" -o "$T/e.ctf" -- env "$F" hold 2600 \
    >/dev/null 2>"$T/err"; st=$?
check "the wrapped program ran (status $st)" test "$st" = 0
n=$(ls "$D" | grep -c '^faults\.[0-9]*\.[0-9]*\.pb\.gz$')
check "snapshots of the exec'd program, named after it: $n (>= 2; $(ls "$D" | tr '\n' ' '))" \
    test "$n" -ge 2
check "no snapshot of the wrapper's own trace" sh -c "! ls '$D' | grep -q '^env\.'"
big=0
for f in "$D"/faults.*.pb.gz; do
    [ -f "$f" ] && [ "$(gzip -dc "$f" | wc -c)" -gt 300 ] && big=$((big + 1))
done
check "the snapshots hold samples ($big of $n)" test "$big" = "$n" -a "$n" -gt 0
if command -v go >/dev/null 2>&1; then
    f=$(ls "$D"/faults.*.pb.gz | head -n 1)
    go tool pprof -symbolize=none -top -sample_index=inuse_space "$f" >"$T/top" 2>&1
    check "go tool pprof: the 64 MiB held are in use in the first snapshot" \
        grep -Eq '^ *6[0-9]\.[0-9]+MB' "$T/top"
fi
finish
