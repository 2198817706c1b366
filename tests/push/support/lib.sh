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
