#!/bin/sh
# process.sh - process trees: forked and exec'd children that allocate get
# their own trace FILE.<pid> (with their own pid inside, their own
# allocations only), the parent's trace never holds a child's events,
# children that never allocate leave no file, forking while other threads
# allocate does not deadlock, posix_spawn and vfork are safe, MEMTRACE_FOLLOW=0 traces the first process only.
. tests/record/progs/lib.sh
skip_under_tsan
rate=0.001
F=$PROGS/forker

children() { ls "$1".* 2>/dev/null | grep -E "\\.[0-9]+(\\.[0-9]+)?\$"; }

run_mode() { # run_mode MODE EXPECTED_CHILD_FILES
    mode=$1 want=$2 f=$T/$1.ctf
    out=$(preload "$f" $rate "$F" "$mode"); st=$?
    check "$mode: program ran normally (status $st, output '$out')" test "$st" = 0 -a "$out" = ok
    summary "$f" >"$T/$mode.sum" || fail "$mode: parent trace readable"
    check "$mode: parent trace has the parent's allocations" grep -q '^SITE parent_work ' "$T/$mode.sum"
    check "$mode: parent trace has no child allocations" sh -c "! grep -q '^SITE child_work ' '$T/$mode.sum'"
    n=$(children "$f" | wc -l)
    check "$mode: $want child trace(s) (found $n)" test "$n" = "$want"
    for c in $(children "$f"); do
        pid=${c##*.ctf.}; pid=${pid%%.*}
        if summary "$c" >"$T/child.sum"; then
            check "$mode: $(basename "$c") holds pid $pid" grep -q "^INFO pid=$pid " "$T/child.sum"
            check "$mode: $(basename "$c") has the child's allocations" grep -q '^SITE child_work ' "$T/child.sum"
        else
            fail "$mode: $c readable"
        fi
    done
}

run_mode fork 3
run_mode exec 1
run_mode spawn 2
run_mode quiet 0
run_mode busy 20

# A process that execs: what it did before is written out first (even with
# no periodic flush due); the new program writes FILE.<pid>.
f=$T/selfexec.ctf
MEMTRACE_FLUSH_MS=600000 preload "$f" $rate "$F" selfexec; st=$?
check "selfexec: status 0 ($st)" test "$st" = 0
summary "$f" >"$T/selfexec.sum" 2>&1
check "selfexec: the first image's allocations are in FILE" grep -q '^SITE parent_work ' "$T/selfexec.sum"
c=$(children "$f")
check "selfexec: the exec'd program has its own file ($c)" test -n "$c"
summary "$c" 2>/dev/null | grep -q '^SITE child_work ' || fail "selfexec: the exec'd program's allocations"

# A forked child that allocates, then execs: the child writes FILE.<pid>,
# the program it execs (same pid) the next free name, FILE.<pid>.1.
f=$T/forkexec.ctf
out=$(preload "$f" $rate "$F" forkexec)
check "forkexec: program ran normally ($out)" test "$out" = ok
c=$(children "$f" | sort)
pid=$(echo "$c" | head -n 1 | sed 's/.*\.ctf\.\([0-9]*\).*/\1/')
check "forkexec: FILE.<pid> and FILE.<pid>.1 ($(echo $c))" \
    test "$(echo $c)" = "$f.$pid $f.$pid.1"
for g in "$f.$pid" "$f.$pid.1"; do
    if summary "$g" >"$T/fe.sum" 2>&1; then
        check "forkexec: $(basename "$g") holds pid $pid and the child's allocations" \
            sh -c "grep -q '^INFO pid=$pid ' '$T/fe.sum' && grep -q '^SITE child_work ' '$T/fe.sum'"
    else
        fail "forkexec: $(basename "$g") readable"
    fi
done

# Trace only the first process.
f=$T/nofollow.ctf
out=$(env MEMTRACE_FOLLOW=0 sh -c ". tests/record/progs/lib.sh; preload '$f' $rate '$F' fork")
check "MEMTRACE_FOLLOW=0: program ran normally" test "$out" = ok
check "MEMTRACE_FOLLOW=0: parent traced" test -s "$f"
check "MEMTRACE_FOLLOW=0: no child traces" test -z "$(children "$f")"
f=$T/nofollow2.ctf
"$MT_BIN" run --no-follow -o "$f" -r $rate "$F" exec >/dev/null 2>&1
check "memtrace run --no-follow: no trace for the exec'd child" test -z "$(children "$f")"
finish
