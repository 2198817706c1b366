#!/bin/sh
# attach.sh - '--push' on 'memtrace attach PID' and 'memtrace ctl --push
# URL PID start': the memtrace process (never the profiled one) pushes a
# profile every interval and one at the end; the profiled program (python3
# holding 64 MiB it allocated after the recording began) runs on and exits
# with its own status. Known answers: some push shows the 64 MiB in use;
# the pushes' alloc_* deltas add up to what the trace allocated (also for
# a process in a container of its own, whose trace is read inside its
# root); the summary's "N sent" is what the loopback server got; with
# --no-trace the trace is gone at the end and the pushes came all the
# same; 'ctl status' shows the pusher's counts while it pushes; SIGTERM to
# 'ctl --push' stops the recording. Each payload decoded by check.py (and
# go tool pprof).
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
. tests/push/support/lib.sh
push_python
HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS= GO111MODULE=off
export HOME GOCACHE GOPATH GOFLAGS GO111MODULE
mkdir -p "$HOME"
cd "$T" || exit 1

# the attachee: says ready, waits for GO, then allocates 64 MiB (after the
# recording began: an attach sees only what comes after it) and holds them
# until STOP; exits 3. Sampled 1 in 8 KiB, the 64 MiB block weighs 8192
# samples (a standard deviation of 1.1%): 60-70 MiB is 5 of them and more.
ATTACHEE='import os, sys, time
print("ready", os.getpid(), flush=True)
t = time.monotonic()
while not os.path.exists(sys.argv[1]) and time.monotonic() - t < 600:
    time.sleep(0.05)
x = bytearray(64 << 20)
open(sys.argv[3], "w").close()
while not os.path.exists(sys.argv[2]) and time.monotonic() - t < 600:
    time.sleep(0.05)
sys.exit(3)'
wait_line() { # FILE PATTERN: until a line matches (bounded far above the wait)
    _n=1200
    while ! grep -q "$2" "$1" 2>/dev/null && [ "$_n" -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
    grep -q "$2" "$1" 2>/dev/null
}
requests() { ls "$S" | grep -c '^[0-9]*\.json$'; }
# after the 64 MiB are held: two more pushes (so one shows them)
two_more() {
    wait_file "$1.held" || fail "$2: the program allocated within 120 s"
    _k=$(( $(requests) + 2 ))
    wait_file "$S/$(printf %04d $_k).json" || fail "$2: $_k pushes within 120 s"
}

# Can this machine ptrace at all? (a container without CAP_SYS_PTRACE cannot)
rm -f probe.go probe.stop
/usr/bin/python3 -c "$ATTACHEE" probe.go probe.stop probe.held > probe.out 2>&1 &
pp=$!
wait_line probe.out ready
"$M" attach --duration 100ms -o probe.ctf $pp > probe.log 2>&1; rc=$?
touch probe.go probe.stop; wait $pp
[ $rc = 2 ] && { echo "ptrace is not permitted here: $(cat probe.log)"; exit 77; }

# --- attach, Pyroscope: labels, tenant; Ctrl-C ends it (one more push)
server_start apyro ok
/usr/bin/python3 -c "$ATTACHEE" a.go a.stop a.held > a.out 2>&1 &
ap=$!
wait_line a.out ready
timeout -k 5 600 "$M" attach -i 8k -o "$T/a.ctf" --push "$URL/push.v1.PusherService/Push" \
    --push-every 200ms --label env=test --push-tenant team-a $ap > a.log 2>&1 &
mp=$!
wait_line a.log 'recording' || fail "attach: recording within 120 s ($(cat a.log))"
touch a.go
two_more a attach
kill -INT $mp; wait $mp; st=$?
touch a.stop; wait $ap; ast=$?
server_stop
check "attach: exit 0 after Ctrl-C ($st: $(tr '\n' ' ' < a.log))" test $st = 0
check "attach: the program runs on and exits with its own status (3; got $ast)" test $ast = 3
"$PY" "$HERE/check.py" pyroscope "$S" "$S" > a.check 2>&1 || fail "attach: check.py: $(cat a.check)"
grep '^FAIL' a.check
n=$(requests)
check "attach: the summary counts what the server got ($n)" grep -q "push: $n sent, 0 dropped" a.log
check "attach: service_name is the program's (python3), --label kept" \
    awk -F'\t' '$3 != "python3" || $8 !~ /env=test/ { bad = 1 } END { exit bad || NR < 3 }' "$S/summary.tsv"
check "attach: X-Scope-OrgID on every request" \
    "$PY" -c 'import glob, json, sys
h = [json.load(open(f))["headers"] for f in glob.glob(sys.argv[1] + "/[0-9]*.json")]
sys.exit(not h or any(x.get("X-Scope-OrgID") != "team-a" for x in h))' "$S"
check_pprofs attach "$S" "$T/a.ctf" 60 70

# --- attach --no-trace, OTLP: pushes, and no trace left at the end
server_start aotlp ok
/usr/bin/python3 -c "$ATTACHEE" n.go n.stop n.held > n.out 2>&1 &
ap=$!
wait_line n.out ready
timeout -k 5 600 "$M" attach -i 8k --no-trace --push "$URL/v1development/profiles" \
    --push-every 200ms $ap > n.log 2>&1 &
mp=$!
wait_line n.log 'recording' || fail "attach --no-trace: recording within 120 s ($(cat n.log))"
touch n.go
two_more n "attach --no-trace"
kill -TERM $mp; wait $mp; st=$?
touch n.stop; wait $ap
server_stop
"$PY" "$HERE/check.py" otlp "$S" "$S" > n.check 2>&1 || fail "attach --no-trace: check.py: $(cat n.check)"
grep '^FAIL' n.check
n=$(requests)
check "attach --no-trace: exit 0, $n pushes sent and said ($(grep 'push:' n.log))" \
    sh -c "[ $st = 0 ] && [ $n -ge 3 ] && grep -q 'push: $n sent, 0 dropped' n.log"
check "attach --no-trace: every request passes profcheck's rules" grep -q ', 0 failures' n.check
check "attach --no-trace: a push shows the 64 MiB in use" \
    awk -F'\t' -v lo=$((60 << 20)) -v hi=$((70 << 20)) '$4 >= lo && $4 <= hi { n++ } END { exit !n }' "$S/summary.tsv"
nt=$(sed -n 's/.* into \(.*\) (attached in.*/\1/p' n.log)
check "attach --no-trace: the trace went in /tmp, without -o ($nt)" \
    sh -c "case '$nt' in /tmp/python3.*.ctf) exit 0 ;; esac; exit 1"
check "attach --no-trace: no trace left ($(ls "$nt"* 2>/dev/null | tr '\n' ' '))" \
    sh -c "! ls '$nt'* >/dev/null 2>&1 && ! ls /tmp/.python3.* >/dev/null 2>&1"

# --- attach --push to a process in another mount namespace with a root of
# its own (a container that sees neither libmemtrace.so nor this
# directory): the trace is written inside its root, read from there for
# each push, moved here at the end; the pushes' alloc_* add up to it
A=$(dirname "$M")/tests/record/progs/attachee
R=$T/nsroot
mkdir -p "$R/lib/x86_64-linux-gnu" "$R/lib64" "$R/tmp" "$R/proc" "$R/bin"
if [ -x "$A" ] && [ -f /lib/x86_64-linux-gnu/libc.so.6 ] && [ -f /lib64/ld-linux-x86-64.so.2 ] &&
    cp /lib/x86_64-linux-gnu/libc.so.6 "$R/lib/x86_64-linux-gnu/" &&
    cp /lib64/ld-linux-x86-64.so.2 "$R/lib64/" && cp "$A" "$R/bin/attachee" &&
    unshare -m sh -c "mount -t proc proc '$R/proc' && umount '$R/proc'" 2>/dev/null; then
    server_start ans ok
    unshare -m sh -c "mount -t proc proc '$R/proc' && exec chroot '$R' /bin/attachee /tmp/stop" \
        > ns.out 2>&1 &
    wait_line ns.out ready
    pn=$(pgrep -n -f '^/bin/attachee /tmp/stop')
    timeout -k 5 600 "$M" attach -i 16k -o "$T/ns.ctf" --push "$URL/v1development/profiles" \
        --push-every 200ms $pn > ns.log 2>&1 &
    mp=$!
    wait_line ns.log 'recording' || fail "container: recording within 120 s ($(cat ns.log))"
    wait_file "$S/0003.json" || fail "container: 3 pushes within 120 s"
    kill -INT $mp; wait $mp; st=$?
    touch "$R/tmp/stop"
    server_stop
    "$PY" "$HERE/check.py" otlp "$S" "$S" > ns.check 2>&1 || fail "container: check.py: $(cat ns.check)"
    grep '^FAIL' ns.check
    n=$(requests)
    total=$(trace_total "$T/ns.ctf")
    sum=$(awk -F'\t' '{ s += $5 } END { printf "%.0f", s }' "$S/summary.tsv")
    check "container: exit 0, $n pushes sent and said ($(grep 'push:' ns.log))" \
        sh -c "[ $st = 0 ] && [ $n -ge 4 ] && grep -q 'push: $n sent, 0 dropped' ns.log"
    check "container: the trace moved here, none left inside" \
        sh -c "[ -s '$T/ns.ctf' ] && ! ls '$R/tmp' | grep -q ctf"
    check "container: the pushes' alloc_space deltas add up to the trace's $total bytes (got $sum)" \
        awk -v a="$sum" -v b="$total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.001 * b) }'
    check "container: service_name is the process's (attachee)" \
        awk -F'\t' '$3 != "attachee" { bad = 1 } END { exit bad || NR < 4 }' "$S/summary.tsv"
else
    echo "no private mount namespace here (or no test programs built): the container case is not tested"
fi

# --- ctl --push PID start on a program started dormant; 'ctl PID stop'
# from elsewhere ends the recording, and with it the pushing
server_start cparca ok
rm -f c.go c.stop c.held
timeout -k 5 600 "$M" run --paused -i 8k -o "$T/c.ctf" -- \
    /usr/bin/python3 -c "$ATTACHEE" c.go c.stop c.held > c.out 2> c.err &
rp=$!
wait_line c.out ready
cp=$(awk '/^ready/ { print $2; exit }' c.out)
timeout -k 5 600 "$M" ctl --push "$URL/profiles/writeraw" --push-every 200ms \
    --label job=ctl $cp start > ctl.out 2> ctl.err &
mp=$!
wait_line ctl.out 'recording into' || fail "ctl start: recording within 120 s ($(cat ctl.out ctl.err))"
touch c.go
two_more c "ctl start"
"$M" ctl $cp status > status.out 2>&1
cm=$(pgrep -P $mp)   # memtrace ctl, under timeout
check "ctl status: the pusher's counts ($(tr '\n' ' ' < status.out))" \
    grep -Eq "push to .*profiles/writeraw by process $cm: [1-9][0-9]* sent, 0 dropped" status.out
"$M" ctl $cp stop > stop.out 2>&1
wait $mp; st=$?
server_stop
check "ctl start --push: exit 0 once the recording stopped ($st: $(tr '\n' ' ' < ctl.err))" test $st = 0
"$PY" "$HERE/check.py" parca "$S" "$S" > c.check 2>&1 || fail "ctl: check.py: $(cat c.check)"
grep '^FAIL' c.check
n=$(requests)
check "ctl start --push: the summary counts what the server got ($n)" \
    grep -q "push: $n sent, 0 dropped" ctl.err
check "ctl start --push: service_name python3, job=ctl" \
    awk -F'\t' '$3 != "python3" || $8 !~ /job=ctl/ { bad = 1 } END { exit bad || NR < 3 }' "$S/summary.tsv"
check_pprofs "ctl start" "$S" "$T/c.ctf-0001" 60 70

# --- ctl --push on the same program: SIGTERM to it stops the recording it
# pushes (a second one, c.ctf-0002), then the last profile goes out
server_start cterm ok
timeout -k 5 600 "$M" ctl --push "$URL/v1development/profiles" --push-every 200ms \
    $cp start > ctl2.out 2> ctl2.err &
mp=$!
wait_line ctl2.out 'recording into .*c.ctf-0002' || fail "ctl start (2): recording within 120 s ($(cat ctl2.out ctl2.err))"
wait_file "$S/0002.json" || fail "ctl start (2): 2 pushes within 120 s"
kill -TERM $mp; wait $mp; st=$?
"$M" ctl $cp status > status2.out 2>&1
server_stop
n=$(requests)
check "ctl --push, SIGTERM: exit 0, the recording stopped ($(tr '\n' ' ' < status2.out))" \
    sh -c "[ $st = 0 ] && grep -q ': dormant' status2.out && ! grep -q 'push to' status2.out"
check "ctl --push, SIGTERM: $n pushes sent and said ($(grep 'push:' ctl2.err))" \
    sh -c "[ $n -ge 3 ] && grep -q 'push: $n sent, 0 dropped' ctl2.err"
"$PY" "$HERE/check.py" otlp "$S" "$S" > c2.check 2>&1 || fail "ctl (2): check.py: $(cat c2.check)"
grep '^FAIL' c2.check
touch c.stop; wait $rp; rst=$?
check "ctl start --push: the program's status is run's (3; got $rst)" test $rst = 3

# --- option errors: exit 2, nothing done to the process
"$M" ctl --push http://127.0.0.1:9/v1development/profiles 1 stop > e1.out 2>&1
check "ctl: --push with stop is refused (exit 2)" sh -c "[ $? = 2 ] && grep -q 'start only' e1.out"
"$M" attach --no-trace 1 > e2.out 2>&1
check "attach: --no-trace without --push is refused (exit 2)" sh -c "[ $? = 2 ] && grep -q 'needs --push' e2.out"
finish
