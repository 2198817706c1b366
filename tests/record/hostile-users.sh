#!/bin/sh
# hostile-users.sh - another user of the same machine against memtrace run
# as root, in a directory both may write to (1777, as /tmp and /var/tmp):
# links and FIFOs planted where memtrace writes its outputs or reads a
# trace's companion files, trace files dropped beside a run's, earlier
# pieces and recordings under the names a new one takes. Families follow
# issue 20's items: (1) outputs never written through another user's link,
# snapshots 0600; (3) a run lists, symbolizes and rewrites only its own
# files, command lines escaped; (6) a FIFO or link as TRACE.rss neither
# hangs nor is read; (10) snapshots never ask debuginfod; (11) rotation and
# recordings on request never overwrite earlier pieces; (12) symbolize as
# root keeps a trace's owner and mode, never special bits. The viewer's
# side (TRACE.mtidx): tests/viewer/hostile-index.sh.
# Every command runs under timeout(1): a hang fails instead of stalling.
. tests/record/progs/lib.sh
skip_under_tsan
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
    echo "needs root, a user nobody and setpriv (to act as another user)"
    exit 77
fi
if [ "${MT_STAGE:-plain}" = plain ]; then LIM=120; else LIM=300; fi   # hang guards, far above the work
M=$MT_BIN
F=$MT_FIXTURES/leak.ctf
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
S=$T/shared
rm -rf "$S"; mkdir -p "$S"; chmod 1777 "$S"
chmod o+x "$T" "$(dirname "$T")"   # (nobody may reach $S)
secret=$T/root-only
printf 'root only\n' > "$secret"; chmod 600 "$secret"
intact() { [ "$(cat "$secret")" = "root only" ]; }

# ------------------------------------------- 1. outputs through planted links
# The snapshots' temporary file had a predictable name (.NAME.PID.UNIXTIME
# .pb.gz.tmp) and was opened with O_TRUNC: a link planted there made root's
# snapshot overwrite the file it pointed to. The run's program writes its
# pid first, so that the links can be planted for the coming seconds.
rm -f "$T/pid"
# The program runs until two snapshots are written (waited for), blocked
# on reading a FIFO the test then writes a line to.
rm -f "$T/pid.go"; mkfifo "$T/pid.go"
timeout -k 2 "$LIM" "$M" run -i 64 --pprof-every 1s --pprof-dir "$S" -o "$T/snap.ctf" -- \
    sh -c 'echo $$ > "$0"; read -r x < "$0.go"' "$T/pid" >/dev/null 2>"$T/snap.err" &
RUN=$!
wait_until 300 test -s "$T/pid"
p=$(cat "$T/pid"); now=$(date +%s)
for t in $(seq "$now" $((now + 4))); do
    nobody ln -s "$secret" "$S/.sh.$p.$t.pb.gz.tmp" 2>/dev/null
done
two_snaps() { [ "$(ls "$S" | grep -c "^sh\.$p\.[0-9]*\.pb\.gz\$")" -ge 2 ]; }
wait_until 300 two_snaps
exec 3<>"$T/pid.go"; echo go >&3; exec 3>&-   # (read-write: never blocks)
wait $RUN; st=$?
check "snapshots with links planted at the temporary names: run ends ($st)" test "$st" = 0
check "snapshots: the root-only file the links point to is untouched" intact
n=$(ls "$S" | grep -c "^sh\.$p\.[0-9]*\.pb\.gz\$")
check "snapshots: still written ($n)" test "$n" -ge 2
modes=$(stat -c %a "$S"/sh."$p".*.pb.gz 2>/dev/null | sort -u | tr '\n' ' ')
check "snapshots: mode 600, as the trace ($modes)" test "$modes" = "600 "

# pprof -o, plot -o, check --junit, recode: a link another user planted
# at the output's name is not followed (before: the target was truncated).
nobody ln -s "$secret" "$S/out"
for cmd in "pprof -o $S/out $F" "plot -o $S/out $F" "recode $F $S/out" \
           "check --max-alloc 1GiB --junit $S/out $F"; do
    timeout -k 2 "$LIM" $M $cmd >/dev/null 2>"$T/out.err"; st=$?
    check "${cmd%% *}: output at another user's link refused (exit $st): $(head -c 160 "$T/out.err")" \
        sh -c "[ $st != 0 ] && grep -q 'symbolic link of another user' '$T/out.err'"
    check "${cmd%% *}: the file the link points to is untouched" intact
done
# ... nor a file of another user replaced; a fresh name is written whole,
# mode 0666 less the umask as before; /dev/null and the user's own links work.
nobody sh -c "echo theirs > '$S/theirs'"
"$M" pprof -o "$S/theirs" "$F" >/dev/null 2>"$T/out.err"; st=$?
check "pprof -o: another user's file refused (exit $st)" \
    sh -c "[ $st != 0 ] && grep -qx theirs '$S/theirs' && grep -q 'another user' '$T/out.err'"
(umask 022; "$M" plot -o "$S/mine.svg" "$F") 2>"$T/out.err"; st=$?
check "plot -o: a new file, mode 644 ($st, $(stat -c %a "$S/mine.svg"))" \
    sh -c "[ $st = 0 ] && [ \$(stat -c %a '$S/mine.svg') = 644 ] && grep -q '</svg>' '$S/mine.svg'"
ln -s "$T/target.svg" "$T/mylink"
"$M" plot -o "$T/mylink" "$F" 2>"$T/out.err"; st=$?
check "plot -o: the user's own link is written through ($st)" \
    sh -c "[ $st = 0 ] && [ -L '$T/mylink' ] && grep -q '</svg>' '$T/target.svg'"
"$M" pprof -o /dev/null "$F" 2>"$T/out.err"; st=$?
check "pprof -o /dev/null still works ($st)" sh -c "[ $st = 0 ] && [ -c /dev/null ]"
check "no temporary file left in the shared directory" sh -c "! ls -a '$S' | grep -q '\.tmp\.'"

# ------------------------------------------- 3. a run adopts only its files
# A trace of another user dropped beside the run's FILE while it runs
# (here by the program itself, then handed to nobody): not listed, not
# symbolized, not rewritten. Our own trace whose command line holds
# terminal escapes and a CI workflow command: listed escaped.
cp "$F" "$T/dropped"; chmod 644 "$T/dropped"
esc=$(printf 'x\033]0;pwned\007\n::error::fake')
rm -f "$S"/app.ctf*
timeout -k 2 "$LIM" "$M" run -i 1 -o "$S/app.ctf" -- sh -c \
    'cp "$0" "$1.424242" && chown nobody "$1.424242"; sh -c : "$2"; :' \
    "$T/dropped" "$S/app.ctf" "$esc" >/dev/null 2>"$T/run.err"; st=$?
check "run with another user's file beside FILE: ends ($st)" test "$st" = 0
check "run: the other user's file is not listed" sh -c "! grep -Eq 'app\.ctf\.424242( \(.*)?\$' '$T/run.err'"
check "run: ... and said to be left alone: $(grep -a 'another user' "$T/run.err" | head -c 160)" \
    grep -q '1 file beside .* belongs to another user' "$T/run.err"
check "run: ... and not rewritten (same bytes, same owner)" \
    sh -c "cmp -s '$T/dropped' '$S/app.ctf.424242' && [ \$(stat -c %U '$S/app.ctf.424242') = nobody ]"
n=$(grep -c 'app.ctf' "$T/run.err")
check "run: its own traces listed ($n lines)" test "$n" -ge 2
check "run: no raw control character from a command line in the summary" \
    sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$T/run.err'"
check "run: ... the command line shown escaped" grep -qF 'x\x1b]0;pwned\x07\x0a::e' "$T/run.err"

# ---------------------------------------- 6. FIFO and link as TRACE.rss
# fopen followed links and blocked on a FIFO: stats and plot hung.
cp "$F" "$S/r.ctf"
nobody mkfifo "$S/r.ctf.rss"
for cmd in stats "plot -o $T/r.svg"; do
    timeout -k 2 "$LIM" "$M" $cmd "$S/r.ctf" >/dev/null 2>"$T/rss.err"; st=$?
    check "${cmd%% *} with a FIFO as TRACE.rss: done, not hung (exit $st): $(head -c 120 "$T/rss.err")" \
        sh -c "[ $st = 0 ] && grep -q 'r.ctf.rss: is not a regular file' '$T/rss.err'"
done
rm -f "$S/r.ctf.rss"
printf 'memtrace-rss 1 1 1\n' > "$T/fake.rss"
nobody ln -s "$T/fake.rss" "$S/r.ctf.rss"
timeout -k 2 "$LIM" "$M" stats "$S/r.ctf" >/dev/null 2>"$T/rss.err"; st=$?
check "stats with a link as TRACE.rss: not followed ($st)" \
    sh -c "[ $st = 0 ] && grep -q 'symbolic link (not followed)' '$T/rss.err'"
rm -f "$S/r.ctf.rss"
nobody cp "$T/fake.rss" "$S/r.ctf.rss"
timeout -k 2 "$LIM" "$M" stats "$S/r.ctf" >/dev/null 2>"$T/rss.err"; st=$?
check "stats with another user's TRACE.rss: not read ($st)" \
    sh -c "[ $st = 0 ] && grep -q 'belongs to another user' '$T/rss.err'"

# ------------------------------------------------- 10. snapshots, debuginfod
# Plain symbolize and the end of a run unset DEBUGINFOD_URLS; snapshots
# kept it: build-ids went to the server (and the loop waited on it).
if command -v python3 >/dev/null; then
    python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(8)
try:
    while True:
        c, _ = s.accept(); open(sys.argv[1], "a").write("request\n"); c.close()
except Exception:
    pass
' "$T/debuginfod.log" > "$T/port" &
    SRV=$!
    wait_until 300 test -s "$T/port"
    rm -f "$T/debuginfod.log"; mkdir -p "$T/dcache" "$T/snap10"
    DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$T/port")/ DEBUGINFOD_CACHE_PATH=$T/dcache \
        timeout -k 2 "$LIM" "$M" run -i 64 --pprof-every 1s --pprof-dir "$T/snap10" \
        -o "$T/d.ctf" -- sh -c 'sleep 1.5' >/dev/null 2>&1
    kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null
    check "snapshots: no request to the debuginfod server ($(cat "$T/debuginfod.log" 2>/dev/null | wc -l))" \
        test ! -s "$T/debuginfod.log"
    check "snapshots: written meanwhile" test -n "$(ls "$T/snap10")"
fi

# ---------------------------------------------- 11. earlier pieces kept
# A recording on request (FILE-NNNN) must not truncate an earlier run's.
rm -f "$T"/per.ctf*
printf 'an earlier run\n' > "$T/per.ctf-0001"
timeout -k 2 "$LIM" "$M" run -i 64 --signal USR1 -o "$T/per.ctf" -- sh -c : >/dev/null 2>"$T/per.err"
check "ctl periods: an earlier run's FILE-0001 kept" grep -qx 'an earlier run' "$T/per.ctf-0001"
check "ctl periods: this run's recording takes the next free number, FILE-0002" \
    sh -c "'$M' info '$T/per.ctf-0002' >/dev/null 2>&1"
# A reused pid: a child whose pid is that of an earlier process that wrote
# FILE.<pid>.part0002 (its part0001 deleted by --keep). In a pid namespace
# the shell is pid 1 and its child one of the next few (the recorder's
# threads take ids too).
if unshare --pid --fork true 2>/dev/null; then
    rm -f "$T"/rot.ctf*
    for p in 2 3 4 5; do printf 'an earlier process\n' > "$T/rot.ctf.$p.part0002"; done
    MEMTRACE_ROTATE_SIZE=64k timeout -k 2 "$LIM" unshare --pid --fork \
        env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/rot.ctf" MEMTRACE_RATE=1 \
        sh -c '"$0" 100 1000 50 100 20000 20; :' "$PROGS/rotator" 2>"$T/rot.err"; st=$?
    check "rotation, reused pid: the program ran ($st)" test "$st" = 0
    check "rotation, reused pid: the earlier process's pieces are kept" \
        test "$(cat "$T"/rot.ctf.[2-5].part0002 | sort -u)" = "an earlier process"
    check "rotation, reused pid: said once: $(head -c 240 "$T/rot.err")" \
        grep -q 'rot.ctf.[2-5].part0002: cannot start this piece of the trace: exists already' "$T/rot.err"
    bad=0
    for p in "$T"/rot.ctf.[0-9]*.part0001; do "$M" info "$p" >/dev/null 2>&1 || bad=$((bad + 1)); done
    check "rotation, reused pid: its first piece is complete ($bad bad)" test "$bad" = 0
fi

# ------------------------------------------------- 12. symbolize as root
preload_raw "$S/raw.ctf" 0.01 "$PROGS/blocks" 2000 4096 3 >/dev/null 2>&1
chown nobody:nogroup "$S/raw.ctf" 2>/dev/null || chown 65534:65534 "$S/raw.ctf"
chmod 4600 "$S/raw.ctf"
"$M" symbolize "$S/raw.ctf" >/dev/null 2>"$T/sym.err"; st=$?
check "symbolize as root: a user's trace rewritten ($st): $(head -c 160 "$T/sym.err")" \
    sh -c "[ $st = 0 ] && '$M' folded '$S/raw.ctf' 2>/dev/null | grep -q work"
check "symbolize as root: owner and group kept ($(stat -c %u:%g "$S/raw.ctf"))" \
    test "$(stat -c %u:%g "$S/raw.ctf")" = 65534:65534
check "symbolize as root: mode kept, set-user-ID dropped ($(stat -c %a "$S/raw.ctf"))" \
    test "$(stat -c %a "$S/raw.ctf")" = 600
check "symbolize as root: its owner can still read it" nobody sh -c "'$M' info '$S/raw.ctf' >/dev/null"

finish
