#!/bin/sh
# attach.sh - 'memtrace attach PID' on a running program (progs/attachee.c:
# three threads allocating, one of them constantly in malloc), that was not
# started under the recorder: the trace has its allocations at the right
# sites and says it started mid-run; the program runs on and prints what a
# plain run prints (checksums of its blocks' contents); after detach it has
# no more threads, no other descriptors (but libunwind's close-on-exec pipe
# the first time) and the same signal handlers as before; attaching a second
# time works; the refusals (no such process, a traced process, a static
# one, one running the recorder already, ptrace not permitted) say why and
# leave the process alone; 'memtrace attach' killed leaves its tracer to
# end the recording; both killed, --detach ends it.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
A=$PWD/$PROGS/attachee
MT=$PWD/$MT_BIN
cd "$T" || exit 1

# wait_for FILE PATTERN: until a line of FILE matches (a bound far above
# the wait: 300 s); tasks_back PID N: until PID has N threads again.
wait_for() {
    for i in $(seq 3000); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
tasks_back() {
    for i in $(seq 3000); do [ "$(ls /proc/$1/task | wc -l)" = "$2" ] && return 0; sleep 0.1; done
    return 1
}
# recorded TRACE PATTERN...: until the trace being written shows every
# PATTERN in its top 10 sites or its folded stacks (read while it grows; a
# bound far above the wait: 300 s). The recordings whose content is checked
# run until this event, then Ctrl-C ends them: a loaded machine makes them
# longer, never emptier.
recorded() {
    _t=$1; shift
    for i in $(seq 600); do
        { "$MT" top -n 10 "$_t"; "$MT" folded "$_t"; } >"$_t.poll" 2>/dev/null
        _ok=1
        for _n in "$@"; do grep -q "$_n" "$_t.poll" || { _ok=0; break; }; done
        [ $_ok = 1 ] && return 0
        sleep 0.5
    done
    return 1
}
# stop_when_recorded APID LOG TRACE PATTERN...: once the memtrace attach
# APID (started in the background, writing LOG) records and TRACE shows
# every PATTERN, Ctrl-C; the attach's exit status.
stop_when_recorded() {
    _a=$1 _log=$2; shift 2
    wait_for "$_log" recording && recorded "$@" ||
        fail "$1: the attach recorded what is looked for within 300 s ($(tr '\n' ' ' <"$_log"))"
    kill -INT $_a
    wait $_a
}

# Can this machine ptrace at all? (a container without CAP_SYS_PTRACE cannot)
rm -f stop0; "$A" stop0 >plain.out 2>&1 &
p0=$!
wait_for plain.out ready
# (with --unwind fp, which reaches the recorder: libunwind is never loaded)
"$MT" attach --duration 100ms --unwind fp -o probe.ctf $p0 >probe.log 2>&1
rc=$?
unw=$(grep -c libunwind /proc/$p0/maps)
touch stop0; wait $p0
if [ $rc = 2 ]; then
    echo "ptrace is not permitted here: $(cat probe.log)"
    exit 77
fi
check "a plain run of the program finishes cleanly (bad 0)" grep -q '^bad 0$' plain.out
check "attach --unwind fp: no libunwind mapped in the process ($unw mappings)" test "$unw" = 0

snap() { # snap PID NAME: threads, descriptors, signal handlers
    ls /proc/$1/task | wc -l >"$2.tasks"
    ls -l /proc/$1/fd | sed -n 's/.* \([0-9]*\) -> \(.*\)/\1 \2/p' | sed 's/pipe:\[[0-9]*\]/pipe/' | sort >"$2.fds"
    grep -E '^Sig(Cgt|Ign)' /proc/$1/status >"$2.sig"
}

rm -f stop1; "$A" stop1 >run.out 2>&1 &
p=$!
wait_for run.out ready
snap $p before
# The busy thread calls malloc, calloc, realloc, free all the time: each is
# recorded with the program's own frames.
cl=$(grep -n 'calloc(1, 64' "$OLDPWD/tests/record/progs/attachee.c" | cut -d: -f1)
"$MT" attach -i 16k -o one.ctf $p >attach1.log 2>&1 &
stop_when_recorded $! attach1.log one.ctf attachee_fill attachee_busy attachee_grow sleeper \
    "attachee_busy (.*attachee.c:$cl)"
rc=$?
check "attach records and detaches: exit 0 ($(tr '\n' ' ' <attach1.log))" test $rc = 0
check "it says what it did" grep -q 'recording .* into .*one.ctf' attach1.log
check "and that it detached" grep -q 'detached from' attach1.log
tasks_back $p "$(cat before.tasks)"   # the writer thread ends by itself after the recording
snap $p after1
check "no thread left after detach" cmp -s before.tasks after1.tasks
check "same signal handlers after detach" cmp -s before.sig after1.sig
comm -13 before.fds after1.fds >added1
check "descriptors: only libunwind's pipe added ($(tr '\n' ' ' <added1))" \
    sh -c "! grep -qv ' pipe\$' added1 && [ \$(wc -l <added1) -le 2 ]"
check "no descriptor of the program closed" sh -c "comm -23 before.fds after1.fds | grep -q . && exit 1 || exit 0"
grep -c memtrace /proc/$p/maps >/dev/null && pass "the recorder stays loaded, dormant"

"$MT" info one.ctf >one.info 2>&1
check "the trace is complete" grep -q '^end: *marked by the recorder' one.info
check "info says it started mid-run" grep -q '^attached: *mid-run' one.info
"$MT" stats one.ctf >one.stats 2>&1
check "stats says it started mid-run" grep -q '^attached    mid-run' one.stats
"$MT" top -n 10 one.ctf >one.top 2>&1
for f in attachee_fill attachee_busy attachee_grow sleeper; do
    check "the trace has $f's allocations, named" grep -q "$f" one.top
done
check "calloc from attachee_busy recorded (attachee.c:$cl)" grep -q "attachee_busy (.*attachee.c:$cl)" one.top

# A second attach reuses the loaded recorder; --depth reaches it (the
# recorder's configuration in its text form): no stack of two.ctf has more
# than 2 frames besides the [truncated] marker, which the cut ones end with
# (btlen counts a frame once, however many inlined functions it holds).
"$MT" attach -i 16k --depth 2 --unwind dwarf -o two.ctf $p >attach2.log 2>&1 &
stop_when_recorded $! attach2.log two.ctf attachee_fill
check "a second attach works ($(tr '\n' ' ' <attach2.log))" test $? = 0
check "its trace has allocations" sh -c "'$MT' top two.ctf 2>/dev/null | grep -q attachee_fill"
d=$("$MT" dump two.ctf 2>/dev/null | awk '$1 == "ev" && $3 == "alloc" {
    for (i = 4; i <= NF; i++) if ($i ~ /^btlen=/ && substr($i, 7) + 0 > m) m = substr($i, 7) + 0 }
    END { print m + 0 }')
check "attach --depth 2: at most 2 frames and the marker per stack (longest $d)" \
    test "$d" -ge 1 -a "$d" -le 3
check "attach --depth 2: cut stacks end with [truncated]" \
    sh -c "'$MT' dump two.ctf 2>/dev/null | grep -q '^ *bt .*\[truncated\]'"
check "attach --depth 0 is refused with a usage error" \
    sh -c "'$MT' attach --depth 0 $p 2>&1 | grep -qx \"memtrace attach: --depth 0: expected a number of frames 1..1024\""
tasks_back $p "$(cat before.tasks)"
snap $p after2
check "second detach: threads as before" cmp -s before.tasks after2.tasks
check "second detach: descriptors as after the first" cmp -s after1.fds after2.fds
check "second detach: signal handlers as before" cmp -s before.sig after2.sig
check "the recorder is loaded once" test "$(grep 'libmemtrace.so' /proc/$p/maps | awk '{print $6}' | sort -u | wc -l)" = 1

# Refused while recording: a concurrent attach.
# (recording until Ctrl-C below, however long the machine takes)
"$MT" attach -i 16k -o three.ctf $p >attach3.log 2>&1 &
a3=$!
wait_for attach3.log recording
"$MT" attach --duration 100ms -o four.ctf $p >attach4.log 2>&1
rc=$?
check "an attach while another records is refused (exit $rc: $(tr '\n' ' ' <attach4.log))" \
    sh -c "[ $rc = 1 ] && grep -q 'recording already' attach4.log"
kill -INT $a3; wait $a3
check "Ctrl-C ends an attached recording cleanly" sh -c "grep -q 'detached from' attach3.log && '$MT' info three.ctf | grep -q 'marked by the recorder'"

# memtrace attach killed while recording: its tracer (a child) ends the
# recording by itself and leaves.
"$MT" attach -i 16k -o killed0.ctf $p >killed0.log 2>&1 &
ak=$!
wait_for killed0.log recording
tr=$(pgrep -P $ak)
kill -KILL $ak; wait $ak 2>/dev/null
for i in $(seq 3000); do kill -0 $tr 2>/dev/null || break; sleep 0.1; done
check "attach killed: its tracer ends the recording by itself ($(tr '\n' ' ' <killed0.log))" \
    sh -c "! kill -0 $tr 2>/dev/null && grep -q 'detached from' killed0.log && '$MT' info killed0.ctf | grep -q '^end: *marked by the recorder'"
# the tracer killed too: --detach ends that recording.
"$MT" attach -i 16k -o killed.ctf $p >killed.log 2>&1 &
ak=$!
wait_for killed.log recording
kill -KILL $(pgrep -P $ak) $ak; wait $ak 2>/dev/null
"$MT" attach --detach $p >detach.log 2>&1
check "--detach ends a recording whose attach was killed ($(cat detach.log))" test $? = 0
check "that trace is complete" sh -c "'$MT' info killed.ctf | grep -q '^end: *marked by the recorder'"
"$MT" attach --detach $p >detach2.log 2>&1
check "--detach with nothing recording: exit 1 ($(cat detach2.log))" test $? = 1
tasks_back $p "$(cat before.tasks)"
snap $p after3
check "after --detach: threads as before" cmp -s before.tasks after3.tasks
check "after --detach: descriptors as after the first detach" cmp -s after1.fds after3.fds

touch stop1; wait $p
check "the program ends cleanly after the attaches" test $? = 0
check "its output is what a plain run prints" cmp -s plain.out run.out
check "its errno never changed under it" grep -q '^errno changed 0$' run.out

# A module the program loads while attached is redirected too.
cat >plugin.c <<'EOF2'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void attachee_plugin(size_t n)
{
    char *p = malloc(n);
    if (p) { memset(p, 1, n); free(p); }
}
EOF2
if cc -shared -fPIC -g -O1 -o libplugin.so plugin.c 2>/dev/null; then
    rm -f stop6 stop6.plugin; "$A" stop6 >plug.out 2>&1 &
    pp=$!
    wait_for plug.out ready
    "$MT" attach -i 4k -o plug.ctf $pp >plug.log 2>&1 &
    ap=$!
    wait_for plug.log recording
    echo "$PWD/libplugin.so" >stop6.plugin
    recorded plug.ctf attachee_plugin || fail "plug.ctf: attachee_plugin recorded within 300 s"
    kill -INT $ap
    wait $ap
    check "attach around a dlopen: exit 0 ($(tr '\n' ' ' <plug.log))" test $? = 0
    "$MT" top -n 20 plug.ctf >plug.top 2>&1
    check "the library loaded while attached is recorded (attachee_plugin)" grep -q attachee_plugin plug.top
    touch stop6; wait $pp
    check "the program loaded it and ended cleanly" sh -c "grep -q 'plugin loaded' plug.out && grep -q '^bad 0' plug.out"
fi

# A process that forks all the time: its children run and end as usual;
# they are not followed (no FILE.PID traces).
rm -f stop8; "$A" stop8 forks >fork.out 2>&1 &
pf=$!
wait_for fork.out ready
"$MT" attach --duration 1s -i 4k -o fork.ctf $pf >fork.log 2>&1
check "attach to a forking process: exit 0 ($(tr '\n' ' ' <fork.log))" test $? = 0
touch stop8; wait $pf
check "its children all exited 0 ($(grep children fork.out))" grep -q '^children failed 0$' fork.out
check "and the parent ended cleanly" grep -q '^bad 0$' fork.out
check "children are not followed (no fork.ctf.PID)" sh -c "! ls fork.ctf.* 2>/dev/null | grep -v '\.rss\$' | grep -q ."

# Threads coming and going, and signals arriving, during the attach and
# the detach: the handler runs (a signal that comes during a call into the
# process is held back and sent again), nothing breaks.
rm -f stop9; "$A" stop9 churn >churn.out 2>&1 &
pc=$!
wait_for churn.out ready
rm -f churn.done
( while [ ! -e churn.done ]; do kill -USR1 $pc 2>/dev/null; sleep 0.01; done ) &
ks=$!
"$MT" attach -i 4k -o churn.ctf $pc >churn.log 2>&1 &
stop_when_recorded $! churn.log churn.ctf short_thread
check "attach amid thread churn and signals: exit 0 ($(tr '\n' ' ' <churn.log))" test $? = 0
touch churn.done; wait $ks
touch stop9; wait $pc
check "the program ended cleanly, its handler ran ($(grep threads churn.out))" \
    sh -c "grep -q '^threads ran usr1 seen$' churn.out && grep -q '^bad 0$' churn.out"
check "the short threads' allocations are recorded" sh -c "'$MT' folded churn.ctf 2>/dev/null | grep -q short_thread"

# The process ends while attached: the trace is complete, attach says so.
rm -f stop7; "$A" stop7 >exit.out 2>&1 &
pe=$!
wait_for exit.out ready
"$MT" attach -i 16k -o exit.ctf $pe >exit.log 2>&1 &
ae=$!
wait_for exit.log recording
touch stop7; wait $pe
wait $ae
check "a process that exits while attached: exit 0, says so ($(tr '\n' ' ' <exit.log))" \
    sh -c "[ $? = 0 ] && grep -q 'exited after' exit.log"
check "its trace is complete (end marked at exit)" sh -c "'$MT' info exit.ctf | grep -q '^end: *marked by the recorder'"

# A process in another mount namespace with a root of its own (a container
# that sees neither libmemtrace.so nor this directory): the library goes in
# through a memfd, the trace is written inside its root and moved here.
R=$PWD/nsroot
mkdir -p "$R/lib/x86_64-linux-gnu" "$R/lib64" "$R/tmp" "$R/proc" "$R/bin"
if [ -f /lib/x86_64-linux-gnu/libc.so.6 ] && [ -f /lib64/ld-linux-x86-64.so.2 ] &&
    cp /lib/x86_64-linux-gnu/libc.so.6 "$R/lib/x86_64-linux-gnu/" &&
    cp /lib64/ld-linux-x86-64.so.2 "$R/lib64/" && cp "$A" "$R/bin/attachee" &&
    unshare -m sh -c "mount -t proc proc '$R/proc' && umount '$R/proc'" 2>/dev/null; then
    unshare -m sh -c "mount -t proc proc '$R/proc' && exec chroot '$R' /bin/attachee /tmp/stop" \
        >ns.out 2>&1 &
    wait_for ns.out ready
    pn=$(pgrep -n -f '^/bin/attachee /tmp/stop')
    ls /proc/$pn/fd >ns.fds.before
    "$MT" attach --duration 800ms -i 16k -o "$PWD/ns.ctf" $pn >ns.log 2>&1
    check "attach to a process in its own root and mount namespace ($(tr '\n' ' ' <ns.log))" test $? = 0
    check "the library went in through a memfd" grep -q 'memfd:libmemtrace.so' /proc/$pn/maps
    check "the trace was moved here, none left inside" sh -c "[ -s ns.ctf ] && ! ls '$R/tmp' | grep -q ctf"
    check "its trace has the program's allocations" sh -c "'$MT' info ns.ctf | grep -q '^allocations: *[1-9]'"
    ls /proc/$pn/fd >ns.fds.after
    check "no descriptor left in it (the memfd is closed)" cmp -s ns.fds.before ns.fds.after
    "$MT" attach -i 16k -o "$PWD/ns2.ctf" $pn >ns2.log 2>&1 &
    an=$!
    wait_for ns2.log recording
    kill -KILL $(pgrep -P $an) $an; wait $an 2>/dev/null
    "$MT" attach --detach $pn >ns3.log 2>&1
    check "attach again, killed, then --detach, in the container ($(tr '\n' ' ' <ns3.log))" test $? = 0
    touch "$R/tmp/stop"
    wait_for ns.out '^bad'
    check "it ends cleanly" grep -q '^bad 0$' ns.out
else
    echo "no private mount namespace here: the container case is not tested"
fi

# Refusals.
"$MT" attach -o x.ctf 999999999 >nopid.log 2>&1
check "no such process: exit 1 and says so" sh -c "[ $? = 1 ] && grep -q 'no such process' nopid.log"
"$MT" attach -o x.ctf 4194000 >nopid2.log 2>&1
check "a free pid: exit 1" test $? = 1

rm -f stop2; "$A" stop2 traceme >traced.out 2>&1 &
pt=$!
wait_for traced.out ready
"$MT" attach -o x.ctf $pt >traced.log 2>&1
check "a traced process is refused: exit 1 ($(cat traced.log))" sh -c "[ $? = 1 ] && grep -q 'traced by process' traced.log"
touch stop2; wait $pt

rm -f stop3; "$MT" run -o under.ctf -- "$A" stop3 >under.out 2>&1 &
pr=$!
wait_for under.out ready
pu=$(pgrep -P $pr -f attachee || echo $pr)
"$MT" attach -o x.ctf $pu >under.log 2>&1
check "a process under memtrace run is refused, pointing at ctl ($(cat under.log))" \
    sh -c "[ $? = 1 ] && grep -q 'memtrace ctl' under.log"
touch stop3; wait $pr
check "a trace recorded under memtrace run does not say attached" \
    sh -c "'$MT' info under.ctf | grep -q '^pid:' && ! '$MT' info under.ctf | grep -q '^attached:' && ! '$MT' stats under.ctf | grep -q '^attached'"

if cc -static -O1 -o attachee-static "$OLDPWD/tests/record/progs/attachee.c" -lpthread 2>/dev/null; then
    rm -f stop4; ./attachee-static stop4 >static.out 2>&1 &
    ps=$!
    wait_for static.out ready
    "$MT" attach -o x.ctf $ps >static.log 2>&1
    check "a static process is refused: exit 1 ($(cat static.log))" sh -c "[ $? = 1 ] && grep -q 'statically linked' static.log"
    touch stop4; wait $ps
    check "the static process ran on untouched" grep -q '^bad 0$' static.out
else
    echo "no static libc: the static refusal is not tested"
fi

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    rm -f stop5; "$A" stop5 >denied.out 2>&1 &
    pd=$!
    wait_for denied.out ready
    setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" attach -o /tmp/x.ctf $pd >denied.log 2>&1
    rc=$?
    check "ptrace not permitted: exit 2, one line saying why ($(cat denied.log))" \
        sh -c "[ $rc = 2 ] && [ \$(wc -l <denied.log) = 1 ] && grep -q 'uid 0' denied.log"
    touch stop5; wait $pd
    check "the process ran on untouched" grep -q '^bad 0$' denied.out
else
    echo "not root or no setpriv: the permission refusal is not tested"
fi
finish
