#!/bin/sh
# lifecycle.sh - the recorder's trace from start to end of a process:
# the end of the recording is the end of the process (exit, exec, fatal
# signal), not its last sample, and an idle trace does not grow; MEMTRACE*
# values out of range are refused with a message, never replaced by a
# default; MEMTRACE_DEPTH limits stacks, which then end with "[truncated]";
# the default interval is 512 KiB; a relative FILE is resolved once, so
# processes that change directory write beside it; processes that sample
# nothing leave no file; the trace path is never followed through a
# symbolic link nor someone else's file, and is created with mode 0600; a
# set-user-ID program ignores MEMTRACE.
. tests/record/progs/lib.sh
skip_under_tsan
F=$PROGS/faults
field() { # field NAME SUMMARY-FILE: value of NAME=... on its line
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2" | head -n 1
}

# End of the recording: exit after holding 64 MiB for 1.5 s.
preload "$T/hold.ctf" 0.0001 "$F" hold 1500; st=$?
check "hold: exit status 0 ($st)" test "$st" = 0
summary "$T/hold.ctf" >"$T/hold.sum" || fail "hold: trace readable"
end=$(field end_us "$T/hold.sum") last=$(field last_event_us "$T/hold.sum")
check "exit: the trace ends when the process does (${end}us), not at its last event (${last}us)" \
    test "${end:-0}" -ge 1400000 -a "${last:-9999999}" -lt 1000000
check "exit: the end is marked" test "$(field marked "$T/hold.sum")" = 1
# ... and the reports use it: duration, and the memory curve up to the end.
dur=$("$MT_BIN" stats --json "$T/hold.ctf" | sed -n 's/.*"duration_us":\([0-9]*\).*/\1/p')
check "exit: memtrace stats says the run lasted ${dur}us" test "${dur:-0}" -ge 1400000

# memtrace recode keeps the end of the recording.
"$MT_BIN" recode "$T/hold.ctf" "$T/hold2.ctf" || fail "recode: runs"
summary "$T/hold2.ctf" >"$T/hold2.sum" || fail "recode: readable"
check "recode keeps the end ($(grep END "$T/hold2.sum"))" \
    test "$(field end_us "$T/hold2.sum")" = "$(field end_us "$T/hold.sum")" \
         -a "$(field marked "$T/hold2.sum")" = 1

# A fatal signal: the trace ends within MEMTRACE_FLUSH_MS of the death.
MEMTRACE_FLUSH_MS=100 preload "$T/segv.ctf" 0.0001 "$F" hold 1500 11 2>/dev/null; st=$?
check "fatal signal: status 139 ($st)" test "$st" = 139
summary "$T/segv.ctf" >"$T/segv.sum" || fail "fatal signal: trace readable"
end=$(field end_us "$T/segv.sum")
check "fatal signal: the trace covers the held time (${end}us)" test "${end:-0}" -ge 1300000
check "fatal signal: the end is not marked (the process did not finish it)" \
    test "$(field marked "$T/segv.sum")" = 0

# exec: this recording ends at the exec.
preload "$T/exec.ctf" 0.0001 "$F" hold 800 exec; st=$?
check "exec: status 0 ($st)" test "$st" = 0
summary "$T/exec.ctf" >"$T/exec.sum" || fail "exec: trace readable"
end=$(field end_us "$T/exec.sum")
check "exec: the trace ends at the exec (${end}us), marked" \
    test "${end:-0}" -ge 750000 -a "$(field marked "$T/exec.sum")" = 1

# An idle process: the end time moves on, the file does not grow (its
# time-only packet is rewritten in place: 100 flushes here).
MEMTRACE_FLUSH_MS=10 preload "$T/idle.ctf" 1e-15 "$F" hold 1000; st=$?
size=$(wc -c <"$T/idle.ctf")
summary "$T/idle.ctf" >"$T/idle.sum" || fail "idle: trace readable"
end=$(field end_us "$T/idle.sum")
check "idle: end time follows the process (${end}us), file stays small ($size bytes)" \
    test "${end:-0}" -ge 900000 -a "$size" -lt 1000

# Values out of range: a message naming the variable, no trace, the
# program unchanged (as for MEMTRACE_RATE).
"$F" _exit; plain=$?
for v in MEMTRACE_DEPTH=abc MEMTRACE_DEPTH=0 MEMTRACE_DEPTH=99999 MEMTRACE_FLUSH_MS=abc \
         MEMTRACE_FLUSH_MS=-5 MEMTRACE_FOLLOW=yes; do
    rm -f "$T/bad.ctf"
    env "$v" sh -c '. tests/record/progs/lib.sh; preload "$1" 0.0001 "$2" _exit' - \
        "$T/bad.ctf" "$F" 2>"$T/err"; st=$?
    check "$v: status unchanged ($st)" test "$st" = "$plain"
    check "$v: one message naming it: $(head -c 200 "$T/err")" \
        test "$(grep -c "^memtrace: ${v}: expected " "$T/err")" = 1 -a "$(wc -l <"$T/err")" = 1
    check "$v: no trace" test ! -e "$T/bad.ctf"
done

# MEMTRACE_DEPTH limits stacks; a cut stack ends with "[truncated]".
MEMTRACE_DEPTH=1 preload "$T/d1.ctf" 0.0001 "$F" _exit
summary "$T/d1.ctf" >"$T/d1.sum" || fail "depth 1: trace readable"
allocs=$(field allocs "$T/d1.sum")
check "MEMTRACE_DEPTH=1: one frame and [truncated] ($(grep STACKS "$T/d1.sum"), $allocs allocations)" \
    test "$(field max "$T/d1.sum")" = 2 -a "$(field truncated "$T/d1.sum")" = "$allocs" \
         -a "${allocs:-0}" -gt 0
preload "$T/d0.ctf" 0.0001 "$F" _exit
summary "$T/d0.ctf" >"$T/d0.sum" || fail "default depth: trace readable"
check "default depth: whole stacks, no [truncated] ($(grep STACKS "$T/d0.sum"))" \
    test "$(field truncated "$T/d0.sum")" = 0 -a "$(field max "$T/d0.sum")" -ge 2

# The default interval: 512 KiB (the trace header's rate is 1/524288).
env -u MEMTRACE_ROOT -u MEMTRACE_RATE LD_PRELOAD="$LIB" MEMTRACE="$T/default.ctf" "$F" _exit
summary "$T/default.ctf" >"$T/default.sum" || fail "default rate: trace readable"
check "default interval 512 KiB: rate=$(field rate "$T/default.sum")" \
    test "$(field rate "$T/default.sum")" = 1.9073486328125e-06

# A relative FILE: processes that change directory still write beside it;
# processes that sample nothing leave no file.
mkdir -p "$T/rel/sub"
(cd "$T/rel" && env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE=r.ctf MEMTRACE_RATE=0.0001 \
    sh -c 'cd sub && /bin/true && "$1" _exit' - "$OLDPWD/$F")
check "relative FILE: nothing written in the directory the child moved to" \
    test -z "$(ls "$T/rel/sub")"
n=$(ls "$T/rel" | grep -c '^r\.ctf\.[0-9]*$')
check "relative FILE: the child's trace is beside FILE ($(ls "$T/rel" | tr '\n' ' '))" \
    test "$n" = 1 -a -e "$T/rel/r.ctf"
check "a process that sampled nothing (/bin/true) left no file" \
    test "$(ls "$T/rel" | grep -vc '\.rss$')" = 3   # r.ctf, r.ctf.PID of _exit, sub (and their .rss)

# The trace path: no symbolic link followed, no one else's file, mode 0600.
echo precious >"$T/target"
ln -s "$T/target" "$T/link.ctf"
preload "$T/link.ctf" 0.0001 "$F" _exit 2>"$T/err"; st=$?
check "symlink: status unchanged ($st)" test "$st" = "$plain"
check "symlink: the file it points to is untouched" grep -qx precious "$T/target"
check "symlink: one message: $(head -c 200 "$T/err")" grep -q 'symbolic link' "$T/err"
(umask 022; preload "$T/mode.ctf" 0.0001 "$F" _exit)
check "new trace has mode 600 ($(stat -c %a "$T/mode.ctf"))" test "$(stat -c %a "$T/mode.ctf")" = 600
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    echo theirs >"$T/theirs.ctf"
    chown nobody "$T/theirs.ctf"
    preload "$T/theirs.ctf" 0.0001 "$F" _exit 2>"$T/err"
    check "another user's file is not overwritten: $(head -c 200 "$T/err")" \
        grep -qx theirs "$T/theirs.ctf"

    # A set-user-ID program (AT_SECURE) ignores MEMTRACE: whoever runs it
    # cannot make it write a file as its owner. Run as root, the program
    # runs as nobody, in a scratch directory anyone may write to.
    S=$(mktemp -d /tmp/memtrace-suid.XXXXXX)
    chmod 1777 "$S"
    cp "$MT_BUILD/tests/record/linked-app" "$S/app"
    chown nobody "$S/app"
    chmod 0755 "$S/app"
    out=$(env -u MEMTRACE_ROOT MEMTRACE="$S/plain.ctf" "$S/app" 2>&1)
    check "not set-user-ID: MEMTRACE is honoured ($out)" test -s "$S/plain.ctf"
    chmod 4755 "$S/app"
    out=$(env -u MEMTRACE_ROOT MEMTRACE="$S/secure.ctf" "$S/app" 2>&1); st=$?
    check "set-user-ID: runs unchanged ($st: $out)" test "$st" = 0 -a "$out" = "requested=0 stop=-1"
    check "set-user-ID: MEMTRACE ignored, no file" test ! -e "$S/secure.ctf"
    rm -rf "$S"
fi
finish
