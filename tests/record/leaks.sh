#!/bin/sh
# leaks.sh - leak verdicts at exit (MEMTRACE_LEAKS=1; docs/leaks.md) on a
# program whose blocks have known fates (progs/leaky.c: sites named
# lost_* and held_*), every allocation sampled:
#  - the lost sites are exactly lost_dropped, lost_list_node (a dropped
#    list), lost_ring_node (a ring pointing at itself), lost_child (held by
#    a lost block), lost_big (a block malloc mapped by itself),
#    lost_before_free (the block before a free chunk that main_arena's bin
#    list points at); every held_*
#    site (globals, an interior pointer, a heap table, a block held only by
#    a mapped block, the exiting frame, TLS of the main thread and of
#    another, another thread's stack, another thread's register, another
#    thread's red zone below its stack pointer) is reachable;
#  - the same when a thread other than main calls exit, in a forked child,
#    and with glibc's heap walked or not (jemalloc: the conservative mode);
#  - sampling some blocks only: never a held_* block called lost;
#  - TRACE.leaks taken (a FIFO, another user's file writable by all): the
#    program exits, the thing is left as it was, one message says why;
#  - _exit: no scan, the trace intact; a thread that blocks every signal:
#    stopped with ptrace, the same verdicts; under a seccomp filter, and
#    where ptrace is not allowed (under strace), signals: the program
#    unharmed, the same verdicts, or, with such a thread, one
#    message saying why, no verdicts, the program's exit status kept;
#  - without verdicts: `top --by lost` says how to get them, and the reports
#    print what they printed before; several traces at once: `top --by
#    lost` and `check --max-lost` say verdicts are read one trace at a time,
#    blaming no trace for having none;
#  - no lost block sampled: a zero with its 95% bound, the same in stats,
#    its JSON, check and top --by lost;
#  - `memtrace ctl PID scan` on a running program with a thread that blocks
#    every signal: the same verdicts, the program running on, no sleep of
#    its ended early; where ptrace is not allowed, ctl prints why the scan
#    gave no verdicts.
. tests/record/progs/lib.sh
# Plain programs under the preloaded recorder (a sanitizer's runtime would
# have to come first in LD_PRELOAD, and then malloc is not the recorder's).
[ "${MT_STAGE:-plain}" = plain ] || { echo "preloads the recorder into plain programs: plain stage only"; exit 77; }
P=$PROGS/leaky
D=$T/leaks.$$
rm -rf "$D"; mkdir -p "$D"
LOST="lost_before_free lost_big lost_child lost_dropped lost_list_node lost_ring_node"
export MEMTRACE_LEAKS=1
HELD="held_big held_by_big held_global held_interior held_stack held_table held_table_entry held_thread_redzone held_thread_reg held_thread_stack held_thread_tls held_tls"

sites() { # sites TRACE lost|reachable: the leaky.c sites with that verdict
    "$MT_BIN" top --by "$2" -n 0 -c 0 "$1" 2>/dev/null | grep -o '\(lost\|held\)_[a-z_]*' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
expect_exact() { # expect_exact WHAT TRACE
    l=$(sites "$2" lost) r=$(sites "$2" reachable)
    check "$1: lost sites are exactly the lost_* ones (got: $l)" [ "$l" = "$LOST" ]
    check "$1: every held_* site is reachable (got: $r)" [ "$r" = "$HELD" ]
}

# Every allocation sampled.
preload "$D/a.ctf" 1 "$P" exit 2>"$D/a.err"
check "leaky exits 0 under the scan" [ $? = 0 ]
check "the scan walked glibc's heap" grep -q '^scan [0-9]* heap ' "$D/a.ctf.leaks"
check "the scan said nothing" [ ! -s "$D/a.err" ]
expect_exact "exit from main" "$D/a.ctf"

preload "$D/b.ctf" 1 "$P" thread-exit 2>/dev/null
expect_exact "exit from another thread" "$D/b.ctf"

preload "$D/c.ctf" 1 "$P" fork 2>/dev/null
child=$(ls "$D"/c.ctf.[0-9]* 2>/dev/null | grep -v '\.\(rss\|leaks\)$' | head -1)
expect_exact "fork: the parent" "$D/c.ctf"
if [ -n "$child" ]; then expect_exact "fork: the child" "$child"; else fail "fork: the child wrote a trace"; fi

# jemalloc under the recorder: only the sampled blocks are nodes.
JE=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
if [ -n "$JE" ]; then
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB:$JE" MEMTRACE="$D/j.ctf" MEMTRACE_RATE=1 "$P" exit 2>/dev/null
    "$MT_BIN" symbolize -q "$D/j.ctf" >/dev/null 2>&1
    check "jemalloc: the conservative mode" grep -q '^scan [0-9]* conservative ' "$D/j.ctf.leaks"
    l=$(sites "$D/j.ctf" lost)
    case " $l " in *" held_"*) fail "jemalloc: held sites called lost: $l" ;;
        *) pass "jemalloc: no held_* site called lost (lost found: $l)" ;; esac
    check "jemalloc: the dropped list is found lost" sh -c "echo '$l' | grep -q lost_list_node"
else
    echo "(no libjemalloc.so.2: the conservative mode is not tried)"
fi

# Some blocks sampled (1 in ~128 bytes): the invariant, a few runs.
bad=0
for i in 1 2 3 4 5; do
    preload "$D/s$i.ctf" 0.0078125 "$P" exit 2>/dev/null
    l=$(sites "$D/s$i.ctf" lost)
    case " $l " in *" held_"*) bad=1; echo "run $i: held sites called lost: $l" ;; esac
done
check "sampling one byte in 128: no held_* block is ever called lost" [ $bad = 0 ]

# _exit: no scan, the trace is whole.
preload "$D/x.ctf" 1 "$P" _exit 2>/dev/null
check "_exit: the program exits 0" [ $? = 0 ]
check "_exit: no verdicts" [ ! -e "$D/x.ctf.leaks" ]
check "_exit: the trace reads" "$MT_BIN" stats "$D/x.ctf" >/dev/null

# A thread blocking every signal (as jemalloc's background thread does):
# stopped with ptrace all the same, the same verdicts, nothing said.
preload "$D/k.ctf" 1 "$P" blocked 2>"$D/k.err"
check "a thread blocking signals: the program exits 0" [ $? = 0 ]
check "a thread blocking signals: the scan said nothing ($(head -c 300 "$D/k.err"))" [ ! -s "$D/k.err" ]
expect_exact "a thread blocking signals" "$D/k.ctf"
# Under a seccomp filter that kills the process on ptrace: signals, the
# same verdicts, the program alive.
preload "$D/sc.ctf" 1 "$P" seccomp 2>"$D/sc.err"
check "under a seccomp filter: the program exits 0 (got $?)" [ $? = 0 ]
expect_exact "under a seccomp filter" "$D/sc.ctf"
# Where ptrace is not allowed (the program traced already, here by strace):
# signals; a thread blocking them: one message saying why, no verdicts,
# status kept; with no such thread, the verdicts.
if command -v strace >/dev/null 2>&1; then
    strace -f -qq -e trace=none -o /dev/null env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/ks.ctf" \
        MEMTRACE_RATE=1 "$P" blocked 2>"$D/ks.err"
    check "traced, a thread blocking signals: the program exits 0" [ $? = 0 ]
    check "traced, a thread blocking signals: no verdicts" [ ! -e "$D/ks.ctf.leaks" ]
    check "traced, a thread blocking signals: one message says why ($(cat "$D/ks.err"))" \
        sh -c "[ \$(grep -c 'did not stop for the scan: ptrace is not allowed (PTRACE_SEIZE.*blocks signal' '$D/ks.err') = 1 ]"
    strace -f -qq -e trace=none -o /dev/null env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/kt.ctf" \
        MEMTRACE_RATE=1 "$P" exit 2>/dev/null
    "$MT_BIN" symbolize -q "$D/kt.ctf" >/dev/null 2>&1
    expect_exact "traced: the threads stopped with signals" "$D/kt.ctf"
else
    echo "SKIP: no strace: the fallback to signals is not tried"
fi

# TRACE.leaks taken by someone else: a FIFO (another user's when we may
# chown: it would have hung the program at exit), another user's file
# writable by all (it was truncated): the program exits on its own, the
# thing is left as it was, one message names the file and the reason.
mkfifo "$D/f.ctf.leaks"; chown 4321 "$D/f.ctf.leaks" 2>/dev/null
timeout 120 env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$D/f.ctf" MEMTRACE_RATE=1 "$P" exit 2>"$D/f.err"
check "a FIFO at TRACE.leaks: the program exits 0 (got $?)" [ $? = 0 ]
check "... the FIFO is left" [ -p "$D/f.ctf.leaks" ]
check "... one message says why ($(cat "$D/f.err"))" grep -q "f.ctf.leaks: is not a regular file: no leak verdicts" "$D/f.err"
if [ "$(id -u)" = 0 ]; then
    echo keep >"$D/o.ctf.leaks"; chmod 666 "$D/o.ctf.leaks"; chown 4321 "$D/o.ctf.leaks"
    preload_raw "$D/o.ctf" 1 "$P" exit 2>"$D/o.err"
    check "another user's file at TRACE.leaks: the program exits 0" [ $? = 0 ]
    check "... the file is left as it was" sh -c "[ \"\$(cat '$D/o.ctf.leaks')\" = keep ]"
    check "... one message says why ($(cat "$D/o.err"))" grep -q "o.ctf.leaks: belongs to another user: no leak verdicts" "$D/o.err"
else
    echo "(not root: another user's file at TRACE.leaks is not tried)"
fi
check "no temporary file is left beside the traces" sh -c "! ls -a '$D' | grep -q '\.tmp\.'"

# Without MEMTRACE_LEAKS: no verdicts, and top --by lost says how to get them.
(unset MEMTRACE_LEAKS; preload "$D/n.ctf" 1 "$P" exit 2>/dev/null)
check "without MEMTRACE_LEAKS: no verdict file" [ ! -e "$D/n.ctf.leaks" ]
"$MT_BIN" top --by lost "$D/n.ctf" >"$D/n.out" 2>"$D/n.msg"
check "top --by lost on a trace without verdicts fails" [ $? = 1 ]
check "... and says how to get them" grep -q "memtrace run --leaks" "$D/n.msg"

# Several traces (read as one, without verdicts): no trace is blamed for
# having none.
"$MT_BIN" top --by lost "$D/a.ctf" "$D/b.ctf" >"$D/m.out" 2>"$D/m.msg"
check "top --by lost on two traces with verdicts fails" [ $? = 1 ]
check "... saying verdicts are read one trace at a time ($(cat "$D/m.msg"))" grep -q "one trace at a time, and 2 were given" "$D/m.msg"
check "... blaming neither trace for having none" sh -c "! grep -q 'has no leak verdicts' '$D/m.msg'"
"$MT_BIN" check --max-lost 1k "$D/a.ctf" "$D/b.ctf" >"$D/m2.out" 2>&1
check "check --max-lost on two traces: trouble (2), blaming neither ($(cat "$D/m2.out"))" \
    sh -c "[ $? = 2 ] && grep -q 'one trace at a time' '$D/m2.out' && ! grep -q 'has no leak verdicts' '$D/m2.out'"

# memtrace run --leaks sets the variable.
"$MT_BIN" run --leaks -o "$D/r.ctf" --rate 1 -- "$P" exit >/dev/null 2>&1
expect_exact "memtrace run --leaks" "$D/r.ctf"

# The filter term.
a=$("$MT_BIN" top --by live -f verdict:lost -n 0 -c 0 "$D/a.ctf" | grep -o 'lost_[a-z_]*\|held_[a-z_]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
check "filter verdict:lost selects the lost sites (got: $a)" [ "$a" = "$LOST" ]

# stats and check: 55 lost blocks of known sizes (3x100, 41x48, 8x48, 72, 256 KiB, 5000).
j=$("$MT_BIN" stats --json "$D/a.ctf")
lb=$(echo "$j" | grep -o '"lost_bytes":[0-9]*' | cut -d: -f2)
lnb=$(echo "$j" | grep -o '"lost_sampled_blocks":[0-9]*' | cut -d: -f2)
check "stats --json: lost_bytes is the lost blocks' bytes (got $lb, $lnb blocks)" [ "$lb" = 269868 ] && [ "$lnb" = 55 ]
check "stats: a lost line" sh -c "'$MT_BIN' stats '$D/a.ctf' | grep -q '^lost  *264 KiB'"
check "stats on a trace without verdicts: no lost line, no lost_bytes field" \
    sh -c "! '$MT_BIN' stats '$D/n.ctf' | grep -q '^lost' && ! '$MT_BIN' stats --json '$D/n.ctf' | grep -q lost_bytes"
"$MT_BIN" check --max-lost 2k "$D/a.ctf" >"$D/ck1" 2>&1
check "check --max-lost 2k fails on 264 KiB lost" [ $? = 1 ]
"$MT_BIN" check --max-lost 270k "$D/a.ctf" >"$D/ck2" 2>&1
check "check --max-lost 270k holds" [ $? = 0 ]
"$MT_BIN" check --max-lost 1k "$D/n.ctf" >"$D/ck3" 2>&1
check "check --max-lost on a trace without verdicts: trouble (2), says why" [ $? = 2 ] && grep -q "no leak verdicts" "$D/ck3"
# 100 bytes over the budget: within check's sampling noise (±515 bytes).
"$MT_BIN" check --max-lost 269768 "$D/a.ctf" >"$D/ck4" 2>&1
check "check --max-lost: an excess within the sampling noise passes" [ $? = 0 ]

# No lost block sampled (one sample per 1 GB: nothing is): a zero with its
# 95% bound, -ln(0.05) x 1e9 bytes = 2.996e9, the same in stats, its JSON,
# check and top --by lost (not "0 B ±0 B" in one and "± 512 KiB" in another).
preload "$D/z.ctf" 1e-9 "$P" exit 2>/dev/null
"$MT_BIN" stats "$D/z.ctf" >"$D/z.stats" 2>&1
check "no lost block sampled: stats gives the bound ($(grep '^lost' "$D/z.stats"))" \
    grep -q '^lost        0 B, at most 2.79 GiB at exit (95%: no lost block sampled)' "$D/z.stats"
up=$("$MT_BIN" stats --json "$D/z.ctf" | grep -o '"lost_bytes_upper95":[0-9]*' | cut -d: -f2)
check "... stats --json: lost_bytes_upper95 is -ln(0.05) x 1e9 (got ${up:-none})" \
    awk -v u="${up:-0}" 'BEGIN { e = -log(0.05) * 1e9; exit !(u > e * 0.999 && u < e * 1.001) }'
"$MT_BIN" check --max-lost 1k "$D/z.ctf" >"$D/z.check" 2>&1
check "... check: the same bound, the budget held ($(grep lost "$D/z.check"))" \
    sh -c "[ $? = 0 ] && grep -q 'lost bytes at exit: 0 B, at most 2.79 GiB (95%: no lost block sampled)' '$D/z.check'"
"$MT_BIN" top --by lost "$D/z.ctf" >"$D/z.top" 2>&1
check "... top --by lost: the same bound" grep -q 'no lost block sampled: the lost bytes are 0 B, at most 2.79 GiB (95%)' "$D/z.top"
"$MT_BIN" stats --json "$D/a.ctf" | grep -q lost_bytes_upper95 && fail "rate 1: no bound (a zero is exact)" || pass "rate 1: no bound (a zero would be exact)"

# memtrace ctl PID scan: verdicts for the blocks live now, the program
# running on (--signal: control without a pause, recording from the start).
"$MT_BIN" run --signal USR2 --rate 1 -o "$D/w.ctf" -- "$P" sleep >"$D/c.out" 2>"$D/c.err" &
RUN=$!
wait_until 300 grep -q ready "$D/c.out"
CP=$(pgrep -P $RUN | head -1)
"$MT_BIN" ctl "$CP" scan >"$D/cs.out" 2>&1
check "ctl scan (a thread blocks every signal): done ($(cat "$D/cs.out"))" grep -q "scanned; verdicts in .*w.ctf-0001.leaks" "$D/cs.out"
check "ctl scan: the program runs on" kill -0 "$CP"
check "ctl scan: no sleep of the program ended early (EINTR)" sh -c "! grep -q EINTR '$D/c.out'"
kill "$CP" 2>/dev/null; wait $RUN 2>/dev/null   # (killed: no scan at exit; memtrace run symbolizes)
l=$(sites "$D/w.ctf-0001" lost) r=$(sites "$D/w.ctf-0001" reachable)
check "ctl scan: lost sites are exactly the lost_* ones (got: $l)" [ "$l" = "$LOST" ]
check "ctl scan: every held_* site is reachable (got: $r)" [ "$r" = "$HELD" ]

# ctl scan where ptrace is not allowed (strace traces the program) and a
# thread blocks every signal: no verdicts, and ctl says why, in the
# recorder's words.
if command -v strace >/dev/null 2>&1; then
    strace -f -qq -e trace=none -o /dev/null env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" \
        MEMTRACE="$D/v.ctf" MEMTRACE_SIGNAL=USR2 MEMTRACE_RATE=1 "$P" sleep >"$D/v.out" 2>"$D/v.err" &
    ST=$!
    for i in $(seq 600); do grep -q ready "$D/v.out" 2>/dev/null && break; sleep 0.1; done
    VP=$(pgrep -P $ST | head -1)
    "$MT_BIN" ctl "$VP" scan >"$D/vs.out" 2>&1
    check "ctl scan refused: exit 1" [ $? = 1 ]
    check "ctl scan refused: ctl says why ($(cat "$D/vs.out"))" \
        grep -q "the scan gave no verdicts: thread [0-9]* did not stop for the scan: ptrace is not allowed (PTRACE_SEIZE" "$D/vs.out"
    kill "$VP" 2>/dev/null; wait $ST 2>/dev/null
else
    echo "SKIP: no strace: ctl's reason for a refused scan is not tried"
fi

[ "$fails" = 0 ] && rm -rf "$D"
finish
