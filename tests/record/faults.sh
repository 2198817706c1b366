#!/bin/sh
# faults.sh - the recorder never harms the program: an unwritable trace
# path, a bad MEMTRACE_RATE, a full disk or a file size limit reached
# while tracing give one
# message and the program goes on unchanged;
# SIGKILL and abort leave a readable trace of what was flushed, _exit a
# complete one;
# signals interrupting allocations, dlopen'ed libraries and a program that
# closed stderr and reused fd 2 work as without the recorder.
. tests/record/progs/lib.sh
skip_under_tsan
rate=0.00001
F=$PROGS/faults
export MEMTRACE_FLUSH_MS=100

# Unwritable path and full disk: one message, same output and status.
"$F" signals >"$T/plain.out" 2>&1
for target in /nonexistent-dir/x.ctf /dev/full; do
    preload "$target" $rate "$F" signals >"$T/out" 2>"$T/err"; st=$?
    check "$target: program exit status unchanged ($st)" test "$st" = 0
    check "$target: program output unchanged" cmp -s "$T/out" "$T/plain.out"
    n=$(grep -c '^memtrace: ' "$T/err")
    check "$target: exactly one message ($n): $(head -c 200 "$T/err")" test "$n" = 1
done

# A bad MEMTRACE_RATE: one message naming it, no trace, the program unchanged.
preload "$T/badrate.ctf" abc "$F" signals >"$T/out" 2>"$T/err"; st=$?
check "bad MEMTRACE_RATE: status unchanged ($st)" test "$st" = 0
check "bad MEMTRACE_RATE: output unchanged" cmp -s "$T/out" "$T/plain.out"
check "bad MEMTRACE_RATE: one message naming it: $(head -c 200 "$T/err")" \
    sh -c "[ \"\$(grep -c '^memtrace: MEMTRACE_RATE=abc' '$T/err')\" = 1 ]"
check "bad MEMTRACE_RATE: no trace written" test ! -e "$T/badrate.ctf"

# The disk fills up while tracing (a file size limit): one message, the
# program goes on unchanged (no SIGXFSZ).
(ulimit -f 64; preload "$T/limit.ctf" 0.0001 "$F" signals >"$T/out" 2>"$T/err"); st=$?
check "file size limit: status unchanged ($st)" test "$st" = 0
check "file size limit: output unchanged" cmp -s "$T/out" "$T/plain.out"
n=$(grep -c '^memtrace: ' "$T/err")
check "file size limit: exactly one message ($n): $(head -c 200 "$T/err")" test "$n" = 1
summary "$T/limit.ctf" >/dev/null 2>&1 || fail "file size limit: what was written is readable"

# Signals interrupting allocations; process-directed signals.
check "signals: output identical" sh -c ". tests/record/progs/lib.sh; preload '$T/sig.ctf' $rate '$F' signals | cmp -s - '$T/plain.out'"
summary "$T/sig.ctf" >/dev/null 2>&1 || fail "signals: trace readable"

# SIGKILL: what was flushed stays readable.
rm -f "$T/kill.ctf"
# (not through the preload function: $! must be the program itself)
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/kill.ctf" MEMTRACE_RATE=$rate \
    "$F" sleep >"$T/kill.out" &
pid=$!
# SIGKILL once the program has allocated ("ready") and a periodic flush
# has put allocations in the file: waited for, not slept on
flushed() {
    n=$(summary "$T/kill.ctf" 2>/dev/null | sed -n 's/^INFO .* allocs=\([0-9]*\) .*/\1/p')
    [ "${n:-0}" -gt 0 ]
}
wait_until 300 grep -q ready "$T/kill.out"
wait_until 300 flushed
kill -9 $pid
wait $pid 2>/dev/null
check "SIGKILL: the program is gone" sh -c "! kill -0 $pid 2>/dev/null"
if summary "$T/kill.ctf" >"$T/kill.sum"; then
    n=$(sed -n 's/^INFO .* allocs=\([0-9]*\) .*/\1/p' "$T/kill.sum")
    check "SIGKILL: trace readable with $n allocations" test "${n:-0}" -gt 0
else
    fail "SIGKILL: trace readable"
fi

# _exit and abort.
# _exit finishes the trace itself (no periodic flush needed).
MEMTRACE_FLUSH_MS=600000 preload "$T/exit.ctf" $rate "$F" _exit; st=$?
check "_exit: status 7 ($st)" test "$st" = 7
n=$(summary "$T/exit.ctf" | sed -n 's/^INFO .* allocs=\([0-9]*\) .*/\1/p')
check "_exit: trace readable with $n allocations" test "${n:-0}" -gt 0
(preload "$T/abort.ctf" $rate "$F" abort) 2>/dev/null; st=$?
check "abort: status 134 ($st)" test "$st" = 134
n=$(summary "$T/abort.ctf" | sed -n 's/^INFO .* allocs=\([0-9]*\) .*/\1/p')
check "abort: trace readable with $n allocations" test "${n:-0}" -gt 0

# A program that closed stderr and reopened fd 2 as its own file: nothing of
# ours lands in it, even when we have something to complain about.
preload /nonexistent-dir/x.ctf $rate "$F" stderr "$T/own.txt" 2>/dev/null; st=$?
check "closed stderr: status 0 ($st)" test "$st" = 0
check "closed stderr: the program's file holds only its data" test "$(cat "$T/own.txt")" = data
preload "$T/stderr.ctf" $rate "$F" stderr "$T/own2.txt" 2>&-; st=$?
check "stderr closed at start: status 0 ($st), data intact" test "$st" = 0 -a "$(cat "$T/own2.txt")" = data
summary "$T/stderr.ctf" >/dev/null || fail "closed stderr: trace readable"

# dlopen'ed library.
"$F" dlopen >"$T/dl.plain"
preload "$T/dl.ctf" $rate "$F" dlopen >"$T/dl.out"; st=$?
check "dlopen: status 0, identical output" test "$st" = 0 -a "$(cat "$T/dl.out")" = "$(cat "$T/dl.plain")"
summary "$T/dl.ctf" >/dev/null || fail "dlopen: trace readable"
# dlclose'd before the end: its frames were symbolized while it was mapped.
MEMTRACE_FLUSH_MS=600000 preload "$T/dl2.ctf" 0.0001 "$F" dlopen >/dev/null
check "dlclose'd library's frames are named" sh -c "'$MT_BIN' dump '$T/dl2.ctf' | grep -Eq 'libz\.so[^ ]* deflateInit2?_\$'"
finish
