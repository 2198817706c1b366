#!/bin/sh
# attach_hostile.sh - 'memtrace attach' and 'memtrace ctl' run as root
# against a process of another user (uid 4321) that tries to make them its
# tool (progs/hostile_attachee.c): a memfd_create patched to hand back an
# O_PATH descriptor of a root-only file (root must not write it); a
# recorder "already loaded" whose name, on the host, is a link to a
# root-only file, from its own user and mount namespace (root must not
# read it for the process); the trace in its root swapped for a FIFO or a
# link (attach must neither hang nor follow it); its PID taken over by
# another process while attach waits (the newcomer must be left alone); a
# name with terminal escapes (printed escaped); a user that cannot create
# the trace (said, with its uid); a non-dumpable process (said); ctl
# against a process that keeps swapping its channel's descriptor for an
# O_PATH one of a root-only file. Each case says what it protects; the
# victim files' bytes are compared exactly.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root (another user plays the attacker)"; exit 77; }
command -v setpriv >/dev/null || { echo "needs setpriv (util-linux)"; exit 77; }
A=$PWD/$PROGS/attachee
MT=$PWD/$MT_BIN
LIBDIR=$(dirname "$(realpath "$LIB")")
cd "$T" || exit 1
chmod o+x "$T" "$(dirname "$T")"   # the other user reaches its files in here
# a copy outside the build directory, which a namespaced case hides
mkdir -p hbin && cp "$OLDPWD/$PROGS/hostile_attachee" hbin/ && chmod 755 hbin hbin/hostile_attachee
H=$PWD/hbin/hostile_attachee
AS="setpriv --reuid=4321 --regid=4321 --clear-groups"

D=$PWD/hostile
mkdir -p "$D" && chmod 755 "$D"
W=$D/w
mkdir -p "$W" && chown 4321:4321 "$W" && chmod 755 "$W"
printf 'SECRET-ROOT-ONLY-%s\n' "$$" >"$D/victim"
chmod 600 "$D/victim"
cp "$D/victim" victim.orig

# Can this machine ptrace at all? (a container without CAP_SYS_PTRACE cannot)
rm -f stop0; "$A" stop0 >plain.out 2>&1 &
p0=$!
for i in $(seq 100); do grep -q ready plain.out 2>/dev/null && break; sleep 0.1; done
"$MT" attach --duration 100ms -o probe.ctf $p0 >probe.log 2>&1
rc=$?
touch stop0; wait $p0
if [ $rc = 2 ]; then
    echo "ptrace is not permitted here: $(cat probe.log)"
    exit 77
fi

# start NAME CMD...: runs CMD (output NAME.out) in the background, waits
# for its "ready" (20 s at most); $bg is its PID.
start() {
    n=$1; shift
    "$@" >"$n.out" 2>&1 &
    bg=$!
    for i in $(seq 200); do grep -q ready "$n.out" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
# finish_target DIR PID: lets the process end; its exit status.
finish_target() {
    touch "$1/stop"
    wait "$2"
}
# hang guard: cmd killed after 120 s (far above what it needs)
bounded() { timeout -s KILL 120 "$@"; }

# 1. An O_PATH descriptor of a root-only file instead of a memfd: root must
# not write through it.
C=$W/c1; mkdir -p "$C"; chown 4321 "$C"
start c1 $AS "$H" "$C" opath "$D/victim" || fail "the opath process did not start: $(cat c1.out)"
p=$bg
bounded "$MT" attach --duration 300ms -o "$C/c1.ctf" $p >c1.log 2>&1
rc=$?
check "a descriptor that is not the memfd asked for is refused: exit 1 ($(tr '\n' ' ' <c1.log))" \
    sh -c "[ $rc = 1 ] && grep -q 'not the empty memfd' c1.log"
check "the root-only file it pointed at is unchanged, byte for byte" cmp -s "$D/victim" victim.orig
finish_target "$C" $p
check "the process ran on and ended cleanly" test $? = 0

# 2. From its own user and mount namespace: a fake recorder whose name,
# on the host, is a link to the root-only file; our library hidden from
# it (memfd route). Root must copy only its own library into the memfd.
if $AS unshare -Urm true 2>/dev/null; then
    C=$W/c2; mkdir -p "$C/plant"; chown -R 4321 "$C"
    cp -p victim.orig "$D/victim2"   # its own, whatever case 1 did
    ln -s "$D/victim2" "$C/plant/libmemtrace.so"
    start c2 $AS unshare -Urm sh -c "mount -t tmpfs none '$C/plant' && mount -t tmpfs none '$LIBDIR' &&
        printf 'decoy\n' >'$C/plant/libmemtrace.so' && exec '$H' '$C' keep '$C/plant/libmemtrace.so'" ||
        fail "the namespaced process did not start: $(cat c2.out)"
    p=$(pgrep -n -f "^$H $C keep")
    bounded "$MT" attach --duration 300ms -o "$C/c2.ctf" $p >c2.log 2>&1
    finish_target "$C" $bg
    check "the process ran on and ended cleanly" test $? = 0
    check "its memfd got our library, not the root-only file ($(cat "$C/report" 2>/dev/null | cut -c1-40))" \
        sh -c "grep -q '^memfd .ELF' '$C/report' && ! grep -q SECRET '$C/report'"
    check "the root-only file is unchanged" cmp -s "$D/victim2" victim.orig
else
    echo "no unprivileged user namespaces here: the namespaced cases are not tested"
fi

# 3. The trace in its root swapped for a FIFO, then for a link to the
# root-only file: attach neither hangs nor copies through it.
if $AS unshare -Urm true 2>/dev/null; then
    for kind in fifo link; do
        C=$W/c3$kind; mkdir -p "$C"; chown 4321 "$C"
        mkdir -p "$D/o/$kind"
        arg=fifo; [ $kind = link ] && arg="link:$D/victim"
        # its view of $D/o is an empty tmpfs: the trace goes into its /tmp
        start c3$kind $AS unshare -Urm sh -c "mount -t tmpfs none '$D/o' && exec '$H' '$C' swap '$arg'" ||
            fail "the $kind process did not start: $(cat c3$kind.out)"
        p=$(pgrep -n -f "^$H $C swap")
        "$MT" attach -i 4k -o "$D/o/$kind/t.ctf" $p >c3$kind.log 2>&1 &
        m=$!
        # the swap is made once the trace exists: wait for attach to have
        # started, then for the process to have swapped it
        for i in $(seq 400); do grep -q 'recording' c3$kind.log && break; sleep 0.05; done
        f=
        for i in $(seq 400); do
            for x in /tmp/memtrace-attach.$p.*.ctf; do { [ -p "$x" ] || [ -L "$x" ]; } && f=$x; done
            [ -n "$f" ] && break; sleep 0.05
        done
        kill -INT $m
        w=0
        for i in $(seq 600); do kill -0 $m 2>/dev/null || { w=1; break; }; sleep 0.1; done
        [ $w = 1 ] || kill -KILL $m
        wait $m
        check "$kind: attach ends on Ctrl-C, not stuck on the swapped file ($(tr '\n' ' ' <c3$kind.log))" test $w = 1
        check "$kind: it says it did not copy it" grep -q 'cannot copy the process' c3$kind.log
        check "$kind: nothing of the root-only file copied out" sh -c "! grep -rqs SECRET '$D/o/$kind'"
        finish_target "$C" $bg
        check "$kind: the process ran on and ended cleanly" test $? = 0
        rm -f /tmp/memtrace-attach.$p.*
    done
fi

# 4. The PID taken over while attach waits: the new process is left alone.
if unshare -pf --mount-proc true 2>/dev/null; then
    C=$D/c4; mkdir -p "$C" "$C.new"
    cat >c4.sh <<EOF
"$H" "$C" idle >c4.target.out 2>&1 &
p=\$!
for i in \$(seq 200); do grep -q ready c4.target.out && break; sleep 0.1; done
"$MT" attach -i 64k -o "$C/c4.ctf" \$p >c4.log 2>&1 &
m=\$!
for i in \$(seq 400); do grep -q recording c4.log && break; sleep 0.05; done
kill -STOP \$m
kill -KILL \$p; wait \$p
echo \$((p - 1)) >/proc/sys/kernel/ns_last_pid
"$H" "$C.new" idle >c4.new.out 2>&1 &
q=\$!
for i in \$(seq 200); do grep -q ready c4.new.out && break; sleep 0.1; done
echo "old \$p new \$q" >c4.pids
kill -CONT \$m
kill -INT \$m
wait \$m
echo "attach \$?" >>c4.pids
grep TracerPid /proc/\$q/status >>c4.pids
touch "$C.new/stop"; wait \$q
echo "new \$?" >>c4.pids
EOF
    bounded unshare -pf --mount-proc sh c4.sh
    if grep -q "old \([0-9]*\) new \1$" c4.pids; then
        check "the process that took the PID is not left traced and ended cleanly ($(tr '\n' ' ' <c4.pids))" \
            sh -c "grep -q 'TracerPid:.0' c4.pids && grep -q '^new 0' c4.pids"
        check "attach says the process exited, and detached from nothing ($(tr '\n' ' ' <c4.log))" \
            sh -c "grep -q 'exited' c4.log && ! grep -q 'detached from' c4.log && grep -q '^attach 0' c4.pids"
    else
        echo "the PID could not be handed over ($(cat c4.pids)): not tested"
    fi
fi

# 5. A name with terminal escapes: printed escaped, the default file name
# plain.
C=$W/c5; mkdir -p "$C"; chown 4321 "$C"
start c5 $AS "$H" "$C" name || fail "c5 did not start"
p=$bg
(cd "$C" && bounded "$MT" attach --duration 200ms $p) >c5.log 2>&1
check "attach to a process named with escapes records it ($(cat -v c5.log | tr '\n' ' '))" grep -q 'recording' c5.log
check "no raw escape byte printed" sh -c "! grep -q \"\$(printf '\\033')\" c5.log"
check "the default trace name holds no escape byte ($(ls "$C" | cat -v | tr '\n' ' '))" \
    sh -c "ls '$C' | grep -q '\\.ctf\$' && ! ls '$C' | grep -q \"\$(printf '\\033')\""
finish_target "$C" $p

# 6. A trace directory the process's user cannot write: said with the uid,
# before touching the process.
mkdir -p "$D/rootonly"; chmod 700 "$D/rootonly"
C=$W/c6; mkdir -p "$C"; chown 4321 "$C"
start c6 $AS "$H" "$C" idle || fail "c6 did not start"
p=$bg
bounded "$MT" attach --duration 200ms -o "$D/rootonly/t.ctf" $p >c6.log 2>&1
rc=$?
check "a directory its user cannot write: exit 1, the uid named ($(cat c6.log))" \
    sh -c "[ $rc = 1 ] && grep -q 'uid 4321' c6.log && grep -q 'rootonly' c6.log"
check "the recorder was not loaded" sh -c "! grep -q libmemtrace /proc/$p/maps"
finish_target "$C" $p

# 7. Not dumpable, attached by its own user: said as such.
C=$W/c7; mkdir -p "$C"; chown 4321 "$C"
start c7 $AS "$H" "$C" nodump || fail "c7 did not start"
p=$bg
$AS "$MT" attach --duration 200ms -o "$C/t.ctf" $p >c7.log 2>&1
rc=$?
check "a non-dumpable process: exit 2, said so ($(cat c7.log))" \
    sh -c "[ $rc = 2 ] && grep -q 'not dumpable' c7.log"
finish_target "$C" $p

# 8. ctl prints a trace name with escapes escaped.
E=$(printf 'x\033]0;owned\007y')
rm -f c8stop
start c8 env MEMTRACE_PAUSED=1 MEMTRACE="$PWD/$E.ctf" LD_PRELOAD="$LIB" "$A" c8stop ||
    fail "c8 did not start"
p=$bg
"$MT" ctl $p start >c8.log 2>&1
"$MT" ctl $p status >>c8.log 2>&1
"$MT" ctl $p stop >>c8.log 2>&1
check "ctl says where it records ($(cat -v c8.log | tr '\n' ' '))" grep -q 'recording into' c8.log
check "ctl prints no raw escape byte" sh -c "! grep -q \"\$(printf '\\033')\" c8.log"
touch c8stop; wait $p

# 9. ctl against a process that keeps swapping an O_PATH descriptor of a
# root-only file (holding the channel's magic) with its channel: root
# must never open that file by the descriptor's name.
{ printf 'METMCTL1'; head -c 4088 /dev/zero; } >"$D/victim3"
chmod 600 "$D/victim3"
cp "$D/victim3" victim3.orig
C=$W/c9; mkdir -p "$C"; chown 4321 "$C"
start c9 $AS env MEMTRACE="$C/x.ctf" MEMTRACE_PAUSED=1 "$H" "$C" ctlrace "$D/victim3" ||
    fail "c9 did not start"
p=$bg
# (a reopen by name lands on the file about 1 time in 50)
for i in $(seq 400); do
    bounded "$MT" ctl --wait 0 $p start >>c9.log 2>&1
    cmp -s "$D/victim3" victim3.orig || break
done
check "ctl never wrote into the file the process swapped in (400 tries)" cmp -s "$D/victim3" victim3.orig
finish_target "$C" $p

check "the root-only file is unchanged at the end" cmp -s "$D/victim" victim.orig
finish
