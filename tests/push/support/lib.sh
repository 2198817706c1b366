# support/lib.sh - what the push tests share (sourced; in a directory of its
# own so that tests/run.sh does not take it for a test): a loopback
# server (server.py) per case, a profiled program that holds 64 MiB until
# told to stop, and a run of 'memtrace run --push' stopped once the server
# has seen what
# the case waits for (no fixed sleeps: every wait polls for its event,
# bounded far above the work).
#
#   push_python              the python3 with Debian's protobuf module (or FAIL)
#   server_start CASE MODE [SLOW]   starts server.py: $S (its dir), $URL
#   run_push CASE ARGS...    starts memtrace run ARGS -- the holder in the
#                            background: $RUN_PID, output in $T/CASE.err
#   wait_file FILE [SECS]    waits until FILE exists (default 120 s): 0/1
#   stop_run CASE            lets the holder exit (status 3) and waits for
#                            memtrace: $RUN_ST
#   server_stop              stops the server
#   trace_total TRACE        the trace's allocated bytes (memtrace stats)
#   check_pprofs CASE DIR TRACE  the pprof payloads DIR holds (check.py's
#                            NNNN.pb.gz) against TRACE, the trace they
#                            come from (needs the HOLDER's 64 MiB; LO HI:
#                            the MiB some push has in use, default 64 74)
. tests/lib.sh
T=${MT_TMP:-/tmp}
M=$PWD/$MT_BIN
HERE=$PWD/tests/push
# the holder: allocates 64 MiB, keeps them until STOPFILE exists (bounded),
# exits 3 (a status memtrace must pass on)
HOLDER='import os, sys, time
x = bytearray(64 << 20)
t = time.monotonic()
while not os.path.exists(sys.argv[1]) and time.monotonic() - t < 600:
    time.sleep(0.05)
sys.exit(3)'

push_python() {
    PY=/usr/bin/python3
    if ! "$PY" -c 'import google.protobuf' 2>/dev/null || ! command -v protoc >/dev/null; then
        echo "FAIL: python3-protobuf and protobuf-compiler are needed (scripts/install-deps.sh test)"
        exit 1
    fi
}

wait_file() {
    _n=$(( ${2:-120} * 10 ))
    while [ ! -e "$1" ] && [ "$_n" -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
    [ -e "$1" ]
}

server_start() {
    S=$T/$1; rm -rf "$S"; mkdir -p "$S"
    "$PY" "$HERE/server.py" "$2" "$S" "$S/port" ${3:+"$3"} &
    SERVER_PID=$!
    wait_file "$S/port" 60 || { echo "FAIL: $1: the test server did not start"; exit 1; }
    URL=http://127.0.0.1:$(cat "$S/port")
}

server_stop() {
    touch "$S/stop"
    wait "$SERVER_PID" 2>/dev/null
}

run_push() {
    _case=$1; shift
    rm -f "$T/$_case.stop"
    # (a hang guard far above the work: 124 if memtrace never ends)
    (cd "$T" && exec timeout -k 5 600 "$M" run -i 8k "$@" -o "$T/$_case.ctf" -- \
        /usr/bin/python3 -c "$HOLDER" "$T/$_case.stop") > "$T/$_case.out" 2> "$T/$_case.err" &
    RUN_PID=$!
}

stop_run() {
    touch "$T/$1.stop"
    wait "$RUN_PID"; RUN_ST=$?
}

# the trace's allocated bytes (memtrace stats on the finished trace)
trace_total() {
    "$M" stats --json "$1" 2>/dev/null | "$PY" -c 'import json, sys
print(round(json.load(sys.stdin)["total"]["alloc_bytes"]))'
}
# the pprof payloads: go tool pprof reads each; one shows the 64 MiB in use;
# alloc_* are each interval's (Pyroscope's delta heap profiles): over every
# push they add up to what the whole trace allocated
check_pprofs() { # CASE DIR TRACE [LO HI]: in use (MiB) in some push (default 64 74)
    n=0 bad=0 held=0 asum=0
    for f in "$2"/[0-9]*.pb.gz; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        if command -v go >/dev/null 2>&1; then
            go tool pprof -raw "$f" > "$f.raw" 2>&1 || { bad=$((bad + 1)); continue; }
            # inuse_space is the 4th value (Go's heap order)
            v=$(awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
                s && /:/ { split($0, a, ":"); split(a[1], v, " "); t += v[4] } END { printf "%.0f", t }' "$f.raw")
            [ "$v" -ge $((${4:-64} << 20)) ] && [ "$v" -le $((${5:-74} << 20)) ] && held=$((held + 1))
            a=$(awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
                s && /:/ { split($0, a, ":"); split(a[1], v, " "); t += v[2] } END { printf "%.0f", t }' "$f.raw")
            asum=$((asum + a))
        fi
    done
    total=$(trace_total "$3")
    check "$1: the pushes' alloc_space deltas add up to the trace's $total bytes (got $asum)" \
        awk -v a="$asum" -v b="$total" -v lo="${4:-64}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > lo * 2^20 && d <= 0.001 * b) }' 
    check "$1: $n pprof payloads, go tool pprof reads them all ($bad failed)" test "$n" -ge 2 -a "$bad" = 0
    check "$1: a push while the program holds 64 MiB shows ${4:-64}-${5:-74} MiB in use ($held pushes)" test "$held" -ge 1
}
