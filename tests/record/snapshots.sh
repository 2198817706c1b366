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
# faults hold-until: 64 MiB allocated and held, "held" printed, then held
# until $T/done exists. The test waits for events, not for time: for
# "held", then for two snapshots more (snapshots are written one after the
# other, so the second of them was begun after the memory was held), then
# lets the program exit.
snaps() { ls "$D" | grep -c '^faults\.[0-9]*\.[0-9]*\.pb\.gz$'; }
rm -f "$T/done"
"$M" run --interval 8k --pprof-every 1s --pprof-dir "$D" -o "$T/e.ctf" -- env "$F" hold-until "$T/done" \
    >"$T/out" 2>"$T/err" &
RUN=$!
check "the wrapped program holds its 64 MiB" wait_until 300 grep -q held "$T/out"
k=$(snaps)
two_more() { [ "$(snaps)" -ge $((k + 2)) ] || [ ! -d /proc/$RUN ]; }
wait_until 300 two_more
after=$(ls -t "$D" | grep '^faults\.[0-9]*\.[0-9]*\.pb\.gz$' | head -n 1)
touch "$T/done"
wait $RUN; st=$?
check "the wrapped program ran (status $st)" test "$st" = 0
n=$(snaps)
check "snapshots of the exec'd program, named after it: $n (>= 2 after it held its memory: $k before; $(ls "$D" | tr '\n' ' '))" \
    test "$n" -ge $((k + 2))
check "no snapshot of the wrapper's own trace" sh -c "! ls '$D' | grep -q '^env\.'"
big=0
for f in $(ls -t "$D" | grep '^faults\.[0-9]*\.[0-9]*\.pb\.gz$' | head -n 2); do
    [ "$(gzip -dc "$D/$f" | wc -c)" -gt 300 ] && big=$((big + 1))
done
check "the snapshots taken while it held its memory hold samples ($big of 2)" test "$big" = 2
if command -v go >/dev/null 2>&1; then
    go tool pprof -symbolize=none -top -sample_index=inuse_space "$D/$after" >"$T/top" 2>&1
    check "go tool pprof: the 64 MiB held are in use in a snapshot taken while held ($after)" \
        grep -Eq '^ *6[0-9]\.[0-9]+MB' "$T/top"
fi
finish
