#!/bin/sh
# closefds.sh - a daemon that closes every descriptor from 3 up, opens a
# socket pair and passes bytes through it while it allocates (stacks of
# 20-100 frames) keeps its bytes: the recorder's descriptors and
# libunwind's memory-validation pipe live at 200 and above, and libunwind
# never reads or writes a number that has become the program's (it used
# to block reading the program's socket, or write process memory into it).
# With both unwinders, preloaded and under `memtrace run`; the hang guard
# (600 s) is far above the run (seconds).
. tests/record/progs/lib.sh
skip_under_tsan
P=$PROGS/closefds
for mode in dwarf fp; do
    MEMTRACE_UNWIND=$mode timeout 600 env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/$mode.ctf" \
        MEMTRACE_RATE=0.001 "$P" 2000 >"$T/$mode.out" 2>"$T/$mode.err"
    st=$?
    check "$mode: the program's bytes arrive intact, nothing else on the pair (exit $st: $(tail -1 "$T/$mode.out"))" \
        sh -c "[ $st = 0 ] && tail -1 '$T/$mode.out' | grep -qx ok"
    low=$(awk '$1 == "pipe" && $2 < 200 { print $2 }' "$T/$mode.out" | tr '\n' ' ')
    check "$mode: no pipe of the recorder's or libunwind's below descriptor 200 ($low)" test -z "$low"
    MEMTRACE_UNWIND=$mode timeout 600 "$MT_BIN" run --rate 0.001 -o "$T/run-$mode.ctf" -- "$P" 2000 \
        >"$T/run-$mode.out" 2>"$T/run-$mode.err"
    st=$?
    check "$mode: under memtrace run too (exit $st: $(tail -1 "$T/run-$mode.out"))" \
        sh -c "[ $st = 0 ] && tail -1 '$T/run-$mode.out' | grep -qx ok"
done
pipes=$(grep -c '^pipe ' "$T/dwarf.out")
check "dwarf: libunwind's pipe was there to be kept away ($pipes pipe ends at 200 and above)" test "$pipes" -ge 2
finish
