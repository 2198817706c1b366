#!/bin/sh
# attach_kill.sh - 'memtrace attach' killed with SIGKILL at several points
# (as soon as it starts, once the process shows a tracer, once it says it
# records, and its whole process group once it records), 5 times each, on
# a program that allocates in three threads
# (progs/attachee.c): the program lives on, prints what a plain run
# prints, and no recording is left running (the tracer, a child of
# 'memtrace attach', finishes the call under way and ends the recording
# itself).
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
A=$PWD/$PROGS/attachee
MT=$PWD/$MT_BIN
cd "$T" || exit 1

rm -f stop0; "$A" stop0 >plain.out 2>&1 &
p0=$!
for i in $(seq 200); do grep -q ready plain.out 2>/dev/null && break; sleep 0.1; done
"$MT" attach --duration 100ms -o probe.ctf $p0 >probe.log 2>&1
rc=$?
touch stop0; wait $p0
if [ $rc = 2 ]; then
    echo "ptrace is not permitted here: $(cat probe.log)"
    exit 77
fi

rm -f stop1; "$A" stop1 >run.out 2>&1 &
p=$!
for i in $(seq 200); do grep -q ready run.out 2>/dev/null && break; sleep 0.1; done

tracer_of() { sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$1/status 2>/dev/null; }
# settle: waits (60 s at most) until no memtrace attach of this round runs
# and the program has no tracer; 0 if so.
settle() {
    for i in $(seq 600); do
        if ! pgrep -f "memtrace attach .*-o k$1.ctf" >/dev/null && [ "$(tracer_of $p)" = 0 ]; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

n=0 alive=0 settled=0
for round in 1 2 3 4 5; do
    for point in start traced recording group; do
        n=$((n + 1))
        if [ $point = group ]; then   # its own process group, killed whole
            setsid "$MT" attach -i 16k -o k$n.ctf $p >k$n.log 2>&1 &
        else
            "$MT" attach -i 16k -o k$n.ctf $p >k$n.log 2>&1 &
        fi
        m=$!
        case $point in
        traced)
            for i in $(seq 400); do t=$(tracer_of $p); [ -n "$t" ] && [ "$t" != 0 ] && break; sleep 0.005; done ;;
        recording|group)
            for i in $(seq 400); do grep -q recording k$n.log 2>/dev/null && break; sleep 0.05; done ;;
        esac
        if [ $point = group ]; then kill -KILL -$m 2>/dev/null; else kill -KILL $m 2>/dev/null; fi
        wait $m 2>/dev/null
        settle $n && settled=$((settled + 1))
        kill -0 $p 2>/dev/null && alive=$((alive + 1))
    done
done
check "after each of $n SIGKILLs the tracer let go ($settled of $n)" test $settled = $n
check "the program lived through all $n ($alive of $n)" test $alive = $n
"$MT" attach --detach $p >detach.log 2>&1
check "no recording left running ($(cat detach.log))" test $? = 1
complete=0 started=0
for k in $(seq $n); do
    [ -f k$k.ctf ] || continue
    started=$((started + 1))
    "$MT" info k$k.ctf 2>/dev/null | grep -q '^end: *marked by the recorder' && complete=$((complete + 1))
done
check "each recording that started was completed ($complete of $started)" test $complete = $started
touch stop1; wait $p
check "the program ends cleanly" test $? = 0
check "its output is what a plain run prints" cmp -s plain.out run.out
finish
