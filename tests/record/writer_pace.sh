#!/bin/sh
# writer_pace.sh - the writer thread's pace: in an idle process it wakes
# about ten times a second (it backs off to 100 ms when the queue stays
# nearly empty; a hundred times a second before), counted by the kernel's
# voluntary context switches of the recorder's threads over a measured
# stretch of time (a loaded machine only makes them fewer); and a burst
# after the idle stretch, every allocation sampled, loses no event.
. tests/record/progs/lib.sh
skip_under_tsan

# switches PID: voluntary context switches of PID's threads but the first.
switches() {
    n=0
    for s in /proc/"$1"/task/*/status; do
        case $s in /proc/"$1"/task/"$1"/status) continue ;; esac
        v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$s" 2>/dev/null)
        n=$((n + ${v:-0}))
    done
    echo "$n"
}
ms() { echo $(($(date +%s%N) / 1000000)); }

# (not through preload_raw: a function in the background is a subshell)
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/idle.ctf" MEMTRACE_RATE=1 sleep 600 &
pid=$!
threads() { [ "$(ls /proc/$pid/task 2>/dev/null | wc -l)" -ge 2 ]; }
check "the recorder's writer thread starts in an idle process" wait_until 120 threads
a=$(switches "$pid") ta=$(ms)
# a stretch of at least 3 s, measured (however long the machine makes it)
while [ $(($(ms) - ta)) -lt 3000 ]; do sleep 0.2; done
b=$(switches "$pid") tb=$(ms)
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rate=$(( (b - a) * 1000 / (tb - ta) ))
check "idle: the recorder's threads wake at most 25 times a second ($((b - a)) in $((tb - ta)) ms)" \
    test "$rate" -le 25

out=$(preload "$T/burst.ctf" 1 "$PROGS/idleburst")
check "idleburst ran" test "$out" = ok
info=$(summary "$T/burst.ctf" | sed -n 's/^INFO //p')
allocs=$(echo "$info" | sed -n 's/.*allocs=\([0-9]*\).*/\1/p')
collects=$(echo "$info" | sed -n 's/.*collects=\([0-9]*\).*/\1/p')
check "a burst after idling: all 200,000 allocations in the trace ($allocs)" test "${allocs:-0}" -ge 200000
check "... and all 200,000 frees ($collects)" test "${collects:-0}" -ge 200000
finish
