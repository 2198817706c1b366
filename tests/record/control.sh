#!/bin/sh
# control.sh - tracing a long-running server on demand: 'memtrace run
# --paused' starts it dormant (no trace); 'memtrace ctl PID start|stop'
# switches recording on and off several times, each recording is a
# complete trace of its own (FILE-0001, FILE-0002, ...) holding only what
# was allocated while it was on; the program's own signal handlers keep
# working; the run's summary lists every recording; a signal the program
# takes over is reported, and ctl, which never signals (the recorder's
# control channel), still works without running the program's handler;
# ctl refuses processes without the recorder and does not kill them; MEMTRACE_DURATION ends a
# recording by itself; --pprof-every writes pprof snapshots that
# 'go tool pprof' reads; bad settings are refused with a message.
. tests/record/progs/lib.sh
skip_under_tsan
S=$PROGS/server
D=$T/control
rm -rf "$D"; mkdir -p "$D"
# phase P: tell the server to allocate in phase_P and wait until it does.
acked() { [ "$(cat "$D/phase.ack" 2>/dev/null)" = "$1" ]; }
phase() {
    echo "$1" > "$D/phase"
    wait_until 300 acked "$1" || fail "server switched to phase $1"
}
quit() { echo q > "$D/phase"; }
# served_more [FILE]: until the server (PHASEFILE FILE, default $D/phase)
# has served 640 more requests (10 of its rounds; at --interval 8k some 150
# samples): waits for requests, not for time, so a loaded machine only
# makes it slower.
served() { cat "${1:-$D/phase}.served" 2>/dev/null || echo 0; }
served_more() {
    s0=$(served "$1")
    wait_until 300 sh -c "[ \$(cat '${1:-$D/phase}.served' 2>/dev/null || echo 0) -ge $((s0 + 640)) ]" ||
        fail "the server served 640 more requests"
}
# wait_for CMD...: until CMD succeeds (a bound far above the wait).
wait_for() { wait_until 300 "$@"; }
sites() { "$MT_BIN" folded "$1" 2>/dev/null | grep -o 'phase_[abc]' | sort -u | tr '\n' ' '; }
ctl() { "$MT_BIN" ctl "$@"; }

"$MT_BIN" ctl --help > "$D/help" 2>&1; st=$?
check "ctl --help: exit 0, usage and an example" \
    sh -c "test $st = 0 && grep -q '^usage: memtrace ctl' '$D/help' && grep -q Example '$D/help'"
"$MT_BIN" ctl 1 restart > /dev/null 2>&1; st=$?
check "ctl with an unknown action: usage error (exit $st)" test "$st" = 2

echo a > "$D/phase"
"$MT_BIN" run --paused --interval 8k -o "$D/s.ctf" -- "$S" "$D/phase" > "$D/out" 2> "$D/err" &
RUN=$!
dormant() { P=$(sed -n 's/.*process \([0-9]*\) starts dormant.*/\1/p' "$D/err"); [ -n "$P" ]; }
wait_until 300 dormant
phase a
served_more
check "dormant: no trace while paused" test -z "$(ls "$D" | grep 's\.ctf')"
check "ctl status: dormant" sh -c "'$MT_BIN' ctl $P status | grep -q 'dormant'"

ctl "$P" start > "$D/ctl1" 2>&1
check "ctl start: recording into s.ctf-0001 ($(cat "$D/ctl1"))" grep -q 'recording into .*/s.ctf-0001$' "$D/ctl1"
served_more; phase b; served_more
ctl "$P" stop > "$D/ctl2" 2>&1
check "ctl stop: s.ctf-0001 complete" grep -q 'stopped; .*/s.ctf-0001 is complete' "$D/ctl2"
phase c; served_more; phase a          # c: while off
ctl "$P" start >/dev/null && served_more && ctl "$P" stop >/dev/null
check "ctl start again: already-dormant stop says so" sh -c "'$MT_BIN' ctl $P stop | grep -q 'already dormant'"
# Toggle by hand too: a plain kill flips the state.
kill -USR2 "$P"
check "kill -USR2 toggles: recording into s.ctf-0003" \
    wait_for sh -c "'$MT_BIN' ctl $P status | grep -q 's.ctf-0003'"
kill -USR1 "$P"                        # the program's own handler
served_more                            # (it ran since: the signal was delivered)
ctl "$P" stop >/dev/null
ctl "$P" start >/dev/null; served_more; ctl "$P" stop >/dev/null
quit
wait $RUN; st=$?
check "server ran to the end under control (exit $st)" test "$st" = 0
check "the program's own SIGUSR1 handler still ran" grep -q ', 1 SIGUSR1' "$D/out"
for k in 1 2 3 4; do
    f=$D/s.ctf-000$k
    summary "$f" > "$D/sum$k" 2>&1
    check "recording $k: a complete trace, end marked" grep -q 'marked=1' "$D/sum$k"
    "$MT_BIN" info "$f" > /dev/null 2> "$D/info$k"
    check "recording $k: read without warnings" test ! -s "$D/info$k"
done
check "recording 1 holds phases a and b only ($(sites "$D/s.ctf-0001"))" \
    test "$(sites "$D/s.ctf-0001")" = "phase_a phase_b "
check "recording 2 holds phase a only, nothing from while it was off ($(sites "$D/s.ctf-0002"))" \
    test "$(sites "$D/s.ctf-0002")" = "phase_a "
# Blocks of recording 1 freed during recording 2 are not collections there.
c2=$(sed -n 's/.* collects=\([0-9]*\).*/\1/p' "$D/sum2"); a2=$(sed -n 's/.* allocs=\([0-9]*\).*/\1/p' "$D/sum2")
check "recording 2 frees only its own blocks ($c2 collects <= $a2 allocs)" test "${c2:-1}" -le "${a2:-0}"
check "no fifth recording" test ! -e "$D/s.ctf-0005"
for k in 1 2 3 4; do
    check "run summary lists s.ctf-000$k" grep -q "s.ctf-000$k" "$D/err"
done

# A pre-forking server: the forked child is switched by its own pid.
echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.child" "$D/phase.served"
"$MT_BIN" run --paused --interval 8k -o "$D/f.ctf" -- "$S" "$D/phase" fork > /dev/null 2> "$D/ferr" &
RUN=$!
phase a
C=$(cat "$D/phase.child" 2>/dev/null)
ctl "$C" start > "$D/fctl" 2>&1
check "forked child: ctl start records into f.ctf-0001.$C" grep -q "recording into .*/f.ctf-0001\.$C\$" "$D/fctl"
served_more
ctl "$C" stop > /dev/null 2>&1
ctl "$C" start > /dev/null 2>&1; served_more; ctl "$C" stop > /dev/null 2>&1
quit; wait $RUN
for k in 1 2; do
    summary "$D/f.ctf-000$k.$C" > "$D/fsum" 2>&1
    check "forked child: recording $k complete, with phase_a" \
        sh -c "grep -q 'marked=1' '$D/fsum' && test '$(sites "$D/f.ctf-000$k.$C")' = 'phase_a '"
done
check "forked child: the dormant parent wrote nothing" test ! -e "$D/f.ctf-0001"

# MEMTRACE_SIGNAL without a pause: recording from the start, into FILE-0001;
# a real-time signal works as well.
echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.served"
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/r.ctf" MEMTRACE_RATE=0.0001 \
    MEMTRACE_SIGNAL=RTMIN+3 "$S" "$D/phase" > /dev/null 2> "$D/rerr" &
P=$!
phase a
check "MEMTRACE_SIGNAL alone: recording from the start into r.ctf-0001" \
    sh -c "'$MT_BIN' ctl $P status | grep -q 'recording into .*/r.ctf-0001\$'"
ctl "$P" stop > /dev/null 2>&1; ctl "$P" start > "$D/rctl" 2>&1
check "RTMIN+3: stop, then start into r.ctf-0002" grep -q 'r.ctf-0002$' "$D/rctl"
quit; wait "$P"
summary "$D/r.ctf-0001" > "$D/rsum" 2>&1
check "RTMIN+3: r.ctf-0001 complete" grep -q 'marked=1' "$D/rsum"

# A signal the program takes over after the recorder (nginx and gunicorn
# upgrade their binary on SIGUSR2): reported; ctl never signals, so the
# program's handler never runs because of it, and ctl still works through
# the recorder's control channel. The default signal (USR2) and another.
for sig in USR2 USR1; do
    echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.served" "$D/u.ctf-000"*
    if [ $sig = USR2 ]; then
        set -- MEMTRACE_PAUSED=1; num=12; arg=usr2
    else
        set -- MEMTRACE_SIGNAL=USR1 MEMTRACE_PAUSED=1; num=10; arg=
    fi
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/u.ctf" "$@" \
        "$S" "$D/phase" $arg > "$D/uout" 2> "$D/uerr" &
    P=$!
    phase a
    check "$sig: a replaced handler is reported" wait_for grep -q "replaced the handler of signal $num" "$D/uerr"
    ctl "$P" start > "$D/uctl" 2>&1; st=$?
    check "$sig: ctl start works although the program took the signal (exit $st: $(cat "$D/uctl"))" \
        grep -q 'recording into .*/u.ctf-0001$' "$D/uctl"
    served_more
    ctl "$P" stop > "$D/uctl" 2>&1; st=$?
    check "$sig: ctl stop too (exit $st)" grep -q 'stopped; .*/u.ctf-0001 is complete' "$D/uctl"
    quit; wait "$P"
    check "$sig: the program's own handler never ran because of ctl ($(cat "$D/uout"))" \
        grep -q ", 0 SIGUSR1, 0 SIGUSR2" "$D/uout"
    summary "$D/u.ctf-0001" > "$D/usum" 2>&1
    check "$sig: the recording is complete" grep -q 'marked=1' "$D/usum"
done

# A daemon that closes every descriptor at start closes the channel's too:
# the recorder makes a new one (within a second) and ctl still works.
echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.served"
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/k.ctf" MEMTRACE_PAUSED=1 \
    "$S" "$D/phase" closefds > /dev/null 2> "$D/kerr" &
P=$!
phase a
wait_for sh -c "ls -l /proc/$P/fd | grep -q memtrace-ctl"
ctl "$P" start > "$D/kctl" 2>&1; st=$?
check "channel closed by the program: made again, ctl start works (exit $st: $(cat "$D/kctl"))" \
    grep -q 'recording into .*/k.ctf-0001$' "$D/kctl"
ctl "$P" stop > /dev/null 2>&1
quit; wait "$P"

# ctl on a process without the recorder: refused, not killed. (sleep 600:
# killed below; until sleep runs, /proc/PID/environ and comm are the shell's)
sleeping() { [ "$(cat /proc/$1/comm 2>/dev/null)" = sleep ]; }
sleep 600 & P=$!
wait_for sleeping "$P"
ctl "$P" start > "$D/nctl" 2>&1; st=$?
check "ctl refuses a process without the recorder (exit $st)" \
    sh -c "test $st = 1 && grep -q 'not started with the recorder' '$D/nctl'"
check "... and does not kill it" kill -0 "$P"
kill "$P"; wait "$P" 2>/dev/null
MEMTRACE=x sleep 600 & P=$!
wait_for sleeping "$P"
ctl "$P" start > "$D/nctl" 2>&1; st=$?
check "ctl refuses a process not started for control (exit $st)" \
    sh -c "test $st = 1 && grep -q 'not started for control' '$D/nctl'"
kill "$P"; wait "$P" 2>/dev/null

MEMTRACE=x MEMTRACE_PAUSED=1 sleep 600 & P=$!
wait_for sleeping "$P"
ctl "$P" start > "$D/nctl" 2>&1; st=$?
check "ctl sends nothing to a process without the recorder's channel (exit $st)" \
    sh -c "test $st = 1 && grep -q 'no control channel.*nothing sent' '$D/nctl'"
check "... so a process without the recorder survives it" kill -0 "$P"
kill "$P"; wait "$P" 2>/dev/null

# MEMTRACE_DURATION: the recording ends by itself, the program goes on.
echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.served"
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/d.ctf" MEMTRACE_RATE=0.0001 MEMTRACE_DURATION=1s \
    "$S" "$D/phase" > /dev/null 2>&1 &
P=$!
phase a
# the recording's end: FILE written and no longer open
wait_for sh -c "test -s '$D/d.ctf' && ! ls -l /proc/$P/fd | grep -q 'd.ctf'"
check "duration: the program still runs after the recording ended" kill -0 "$P"
quit; wait "$P"
summary "$D/d.ctf" > "$D/dsum" 2>&1
end=$(sed -n 's/.* end_us=\([0-9]*\).*/\1/p' "$D/dsum")
# (the end is the writer thread's, which a loaded machine may run late)
check "duration: FILE ends after about 1s (${end}us), marked" \
    sh -c "test ${end:-0} -ge 900000 -a ${end:-99999999} -le 9000000 && grep -q 'marked=1' '$D/dsum'"

# A run that stays dormant says so, and leaves no trace.
"$MT_BIN" run --paused -o "$D/z.ctf" -- true 2> "$D/zerr"; st=$?
check "run --paused never started: exit 0, says it ran dormant" \
    sh -c "test $st = 0 && grep -q 'no recording was made: the program ran dormant' '$D/zerr'"
check "run --paused never started: no trace" test -z "$(ls "$D" | grep '^z\.ctf')"

# Bad settings: a message, no tracing, the program runs.
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/b.ctf" MEMTRACE_SIGNAL=KILL true 2> "$D/berr"
check "MEMTRACE_SIGNAL=KILL refused" grep -q 'MEMTRACE_SIGNAL=KILL: expected' "$D/berr"
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/b.ctf" MEMTRACE_PAUSED=yes true 2> "$D/berr"
check "MEMTRACE_PAUSED=yes refused" grep -q 'MEMTRACE_PAUSED=yes: expected' "$D/berr"
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/b.ctf" MEMTRACE_DURATION=10x true 2> "$D/berr"
check "MEMTRACE_DURATION=10x refused" grep -q 'MEMTRACE_DURATION=10x: expected' "$D/berr"
"$MT_BIN" run --signal TERM -o "$D/b.ctf" -- true 2> "$D/berr"; st=$?
check "run --signal TERM: usage error (exit $st)" test "$st" = 2

# Continuous profiling: snapshots every second, read by go tool pprof.
if command -v go > /dev/null 2>&1; then
    echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.served"; mkdir -p "$D/snap"
    "$MT_BIN" run --interval 8k --pprof-every 1s --pprof-dir "$D/snap" -o "$D/p.ctf" -- \
        "$S" "$D/phase" > /dev/null 2> "$D/perr" &
    RUN=$!
    phase a
    # four snapshots taken while it runs (a bound far above the 4 s that takes)
    wait_until 300 sh -c "[ \$(ls '$D/snap' | grep -c '^server\\.[0-9]*\\.[0-9]*\\.pb\\.gz\$') -ge 4 ]"
    quit; wait $RUN
    n=$(ls "$D/snap" | grep -c '^server\.[0-9]*\.[0-9]*\.pb\.gz$')
    check "snapshots: $n files NAME.PID.UNIXTIME.pb.gz (>= 3)" test "$n" -ge 3
    ok=0 inuse=0 k=0
    for f in "$D"/snap/*.pb.gz; do
        k=$((k + 1))
        go tool pprof -symbolize=none -top -sample_index=inuse_space "$f" > "$D/top" 2>&1 &&
            ok=$((ok + 1))
        # The last one is the end, after the server freed everything.
        [ "$k" -lt "$n" ] && grep -q '[0-9]kB.*phase_a$' "$D/top" && inuse=$((inuse + 1))
    done
    check "snapshots: go tool pprof reads each ($ok of $n)" test "$ok" = "$n"
    check "snapshots: phase_a in use while the server runs ($inuse of $((n - 1)))" \
        test "$inuse" = $((n - 1))
    go tool pprof -symbolize=none -raw "$(ls "$D"/snap/*.pb.gz | head -n 1)" > "$D/raw" 2>&1
    check "snapshots: Go's heap sample types" \
        grep -q 'alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes' "$D/raw"
    set -- "$D"/snap/*.pb.gz
    go tool pprof -symbolize=none -top -sample_index=alloc_space -base "$1" "$2" > "$D/delta" 2>&1
    # (how much depends on how far apart a loaded machine took them)
    check "snapshots: go tool pprof -base gives the allocations between two" \
        grep -Eq '[1-9][0-9.]*(B|kB|MB|GB) .*phase_a$' "$D/delta"
    # Paused: snapshots only while recording.
    echo a > "$D/phase"; rm -f "$D/phase.ack" "$D/phase.served"; rm -rf "$D/snap2"; mkdir -p "$D/snap2"
    "$MT_BIN" run --paused --interval 8k --pprof-every 1s --pprof-dir "$D/snap2" -o "$D/q.ctf" -- \
        "$S" "$D/phase" > /dev/null 2> "$D/qerr" &
    RUN=$!
    phase a; sleep 1.6   # (time for a snapshot to be due: a negative check, never a race)
    check "snapshots: none while dormant" test -z "$(ls "$D/snap2")"
    P=$(sed -n 's/.*process \([0-9]*\) starts dormant.*/\1/p' "$D/qerr")
    # recording until two snapshots are there (a bound far above the 2 s
    # that takes), then stopped: at most one a second while it ran, and one
    # at the stop
    t0=$(date +%s.%N)
    ctl "$P" start > /dev/null 2>&1
    wait_until 120 sh -c "[ \$(ls '$D/snap2' | wc -l) -ge 2 ]"
    ctl "$P" stop > /dev/null 2>&1
    t1=$(date +%s.%N)
    most=$(awk -v a="$t0" -v b="$t1" 'BEGIN { d = b - a; printf "%d", (d == int(d) ? d : int(d) + 1) + 2 }')
    n=$(ls "$D/snap2" | wc -l)
    check "snapshots: $n taken while recording (at least 2, at most $most: one a second and one at the stop)" \
        test "$n" -ge 2 -a "$n" -le "$most"
    quit; wait $RUN
else
    echo "SKIP: snapshots (no go tool)"
fi
finish
