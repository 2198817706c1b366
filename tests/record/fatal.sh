#!/bin/sh
# fatal.sh - a program that dies of a fatal signal right after allocating:
# what was sampled before the signal is in the trace (the recorder's
# handler has the writer flush it, then the program dies of the same
# signal, with the same status); a handler of the program's own is left to
# do its job; 'memtrace run' names the signal, and gives no advice about
# the sampling interval for a trace its process did not finish.
. tests/record/progs/lib.sh
skip_under_tsan
# A sanitizer runtime installs fatal-signal handlers of its own (which the
# recorder then leaves alone, as any program's).
[ "${MT_STAGE:-plain}" = plain ] || { echo "sanitizers handle fatal signals themselves: plain stage only"; exit 77; }
M=$PWD/$MT_BIN
C=$PWD/$PROGS/crash
alloc_bytes() { "$M" stats --json "$1" | sed -n 's/.*"total":{"alloc_bytes":\([0-9]*\).*/\1/p'; }

# run_crash NAME WANT_STATUS MODE...: memtrace run, stderr kept in NAME.err.
# One sample per 64 KiB: the 50 MiB read 50 MiB +- 3.5 % (one standard
# error), so 40 MB is 6 standard errors below; at the default 512 KiB it
# was 2.4, and one run in a hundred fell under it.
run_crash() {
    n=$1 want=$2; shift 2
    "$M" run --interval 64k -o "$T/$n.ctf" -- "$C" "$@" >"$T/$n.out" 2>"$T/$n.err"; st=$?
    check "$n: exit status $want ($st)" test "$st" = "$want"
}

run_crash segv 139 segv 50
b=$(alloc_bytes "$T/segv.ctf")
check "segv: the 50 MiB allocated before the crash are in the trace (${b:-none} bytes)" \
    test "${b:-0}" -ge 40000000
check "segv: memtrace run names the signal: $(head -c 300 "$T/segv.err")" \
    grep -q "^memtrace run: the program was killed by SIGSEGV (signal 11)" "$T/segv.err"
check "segv: no advice about the sampling interval" \
    sh -c "! grep -q 'interval' '$T/segv.err'"

run_crash abort 134 abort 50
b=$(alloc_bytes "$T/abort.ctf")
check "abort: the samples are in the trace (${b:-none} bytes)" test "${b:-0}" -ge 40000000
check "abort: memtrace run names SIGABRT" grep -q "killed by SIGABRT (signal 6)" "$T/abort.err"

run_crash fpe 136 fpe 50
b=$(alloc_bytes "$T/fpe.ctf")
check "fpe: the samples are in the trace (${b:-none} bytes)" test "${b:-0}" -ge 40000000

run_crash threads 139 threads 50
b=$(alloc_bytes "$T/threads.ctf")
check "a fault on another thread: the samples are in the trace (${b:-none} bytes)" \
    test "${b:-0}" -ge 40000000

# The program's own handler runs as without the recorder.
run_crash handled 3 handled 1
check "the program's own SIGSEGV handler runs" grep -qx handled "$T/handled.out"

# Nothing allocated before the crash: no samples, and still no advice
# about the interval (the trace was not finished, so it tells nothing).
run_crash empty 139 segv 0
check "no samples, killed: says the signal and not the interval: $(head -c 300 "$T/empty.err")" \
    sh -c "grep -q 'killed by SIGSEGV' '$T/empty.err' && ! grep -q 'interval' '$T/empty.err'"
# ... and memtrace stats says the same of that trace.
"$M" stats "$T/empty.ctf" >/dev/null 2>"$T/empty.stats"
check "no samples, not finished: stats gives no interval advice: $(head -c 300 "$T/empty.stats")" \
    sh -c "grep -q 'did not finish it' '$T/empty.stats' && ! grep -q 'interval' '$T/empty.stats'"

# Without the recorder, the same statuses (nothing changed by the handler).
"$C" segv 1 >/dev/null 2>&1; st=$?
check "segv without the recorder: 139 too ($st)" test "$st" = 139

finish
