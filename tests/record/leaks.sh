#!/bin/sh
# leaks.sh - leak verdicts at exit (MEMTRACE_LEAKS=1; docs/leaks.md) on a
# program whose blocks have known fates (progs/leaky.c: sites named
# lost_* and held_*), every allocation sampled:
#  - the lost sites are exactly lost_dropped, lost_list_node (a dropped
#    list), lost_ring_node (a ring pointing at itself), lost_child (held by
#    a lost block), lost_big (a block malloc mapped by itself); every held_*
#    site (globals, an interior pointer, a heap table, a block held only by
#    a mapped block, the exiting frame, TLS of the main thread and of
#    another, another thread's stack, another thread's register, another
#    thread's red zone below its stack pointer) is reachable;
#  - the same when a thread other than main calls exit, in a forked child,
#    and with glibc's heap walked or not (jemalloc: the conservative mode);
#  - sampling some blocks only: never a held_* block called lost;
#  - _exit: no scan, the trace intact; a thread that blocks every signal:
#    one message, no verdicts, the program's exit status kept;
#  - without verdicts: `top --by lost` says how to get them, and the reports
#    print what they printed before;
#  - `memtrace ctl PID scan` on a running program: the same verdicts, the
#    program running on.
. tests/record/progs/lib.sh
# Plain programs under the preloaded recorder (a sanitizer's runtime would
# have to come first in LD_PRELOAD, and then malloc is not the recorder's).
[ "${MT_STAGE:-plain}" = plain ] || { echo "preloads the recorder into plain programs: plain stage only"; exit 77; }
P=$PROGS/leaky
D=$T/leaks.$$
rm -rf "$D"; mkdir -p "$D"
LOST="lost_big lost_child lost_dropped lost_list_node lost_ring_node"
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

# A thread blocking every signal: one message, no verdicts, status kept.
preload "$D/k.ctf" 1 "$P" blocked 2>"$D/k.err"
check "a thread blocking signals: the program exits 0" [ $? = 0 ]
check "a thread blocking signals: no verdicts" [ ! -e "$D/k.ctf.leaks" ]
check "a thread blocking signals: one message says why" \
    sh -c "[ \$(grep -c 'did not stop for the scan' '$D/k.err') = 1 ]"

# Without MEMTRACE_LEAKS: no verdicts, and top --by lost says how to get them.
(unset MEMTRACE_LEAKS; preload "$D/n.ctf" 1 "$P" exit 2>/dev/null)
check "without MEMTRACE_LEAKS: no verdict file" [ ! -e "$D/n.ctf.leaks" ]
"$MT_BIN" top --by lost "$D/n.ctf" >"$D/n.out" 2>"$D/n.msg"
check "top --by lost on a trace without verdicts fails" [ $? = 1 ]
check "... and says how to get them" grep -q "memtrace run --leaks" "$D/n.msg"

# memtrace run --leaks sets the variable.
"$MT_BIN" run --leaks -o "$D/r.ctf" --rate 1 -- "$P" exit >/dev/null 2>&1
expect_exact "memtrace run --leaks" "$D/r.ctf"

# The filter term.
a=$("$MT_BIN" top --by live -f verdict:lost -n 0 -c 0 "$D/a.ctf" | grep -o 'lost_[a-z_]*\|held_[a-z_]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
check "filter verdict:lost selects the lost sites (got: $a)" [ "$a" = "$LOST" ]

# stats and check: 54 lost blocks of known sizes (3x100, 41x48, 8x48, 72, 256 KiB).
j=$("$MT_BIN" stats --json "$D/a.ctf")
lb=$(echo "$j" | grep -o '"lost_bytes":[0-9]*' | cut -d: -f2)
lnb=$(echo "$j" | grep -o '"lost_sampled_blocks":[0-9]*' | cut -d: -f2)
check "stats --json: lost_bytes is the lost blocks' bytes (got $lb, $lnb blocks)" [ "$lb" = 264868 ] && [ "$lnb" = 54 ]
check "stats: a lost line" sh -c "'$MT_BIN' stats '$D/a.ctf' | grep -q '^lost  *259 KiB'"
check "stats on a trace without verdicts: no lost line, no lost_bytes field" \
    sh -c "! '$MT_BIN' stats '$D/n.ctf' | grep -q '^lost' && ! '$MT_BIN' stats --json '$D/n.ctf' | grep -q lost_bytes"
"$MT_BIN" check --max-lost 2k "$D/a.ctf" >"$D/ck1" 2>&1
check "check --max-lost 2k fails on 259 KiB lost" [ $? = 1 ]
"$MT_BIN" check --max-lost 260k "$D/a.ctf" >"$D/ck2" 2>&1
check "check --max-lost 260k holds" [ $? = 0 ]
"$MT_BIN" check --max-lost 1k "$D/n.ctf" >"$D/ck3" 2>&1
check "check --max-lost on a trace without verdicts: trouble (2), says why" [ $? = 2 ] && grep -q "no leak verdicts" "$D/ck3"
# 100 bytes over the budget: within check's sampling noise (±515 bytes).
"$MT_BIN" check --max-lost 264768 "$D/a.ctf" >"$D/ck4" 2>&1
check "check --max-lost: an excess within the sampling noise passes" [ $? = 0 ]

# memtrace ctl PID scan: verdicts for the blocks live now, the program
# running on (--signal: control without a pause, recording from the start).
"$MT_BIN" run --signal USR2 --rate 1 -o "$D/w.ctf" -- "$P" sleep >"$D/c.out" 2>"$D/c.err" &
RUN=$!
wait_until 300 grep -q ready "$D/c.out"
CP=$(pgrep -P $RUN | head -1)
"$MT_BIN" ctl "$CP" scan >"$D/cs.out" 2>&1
check "ctl scan: done ($(cat "$D/cs.out"))" grep -q "scanned; verdicts in .*w.ctf-0001.leaks" "$D/cs.out"
check "ctl scan: the program runs on" kill -0 "$CP"
kill "$CP" 2>/dev/null; wait $RUN 2>/dev/null   # (killed: no scan at exit; memtrace run symbolizes)
l=$(sites "$D/w.ctf-0001" lost) r=$(sites "$D/w.ctf-0001" reachable)
check "ctl scan: lost sites are exactly the lost_* ones (got: $l)" [ "$l" = "$LOST" ]
check "ctl scan: every held_* site is reachable (got: $r)" [ "$r" = "$HELD" ]

[ "$fails" = 0 ] && rm -rf "$D"
finish
