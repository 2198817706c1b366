#!/bin/sh
# hostile-slow.sh - slow clients (slowloris) cannot lock other users out: 80
# connections that trickle a header line every half second stay open while
# a normal request must still be answered within 3 s, and a connection that
# stops sending in the middle of a request is dropped after 15 s. Off loopback, one
# address cannot hold more than its share of connections: with 60 slow
# connections from 127.0.0.1, a request from the machine's other address
# is still answered, and the slow address gets no more than its share.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }

# slow HOST PORT N SECONDS: open N connections, trickle headers for SECONDS;
# prints how many were still open at the end.
slow() {
    python3 - "$@" <<'PY'
import socket, sys, time
host, port, n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
socks = []
for i in range(n):
    try:
        s = socket.create_connection((host, port), timeout=2)
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks.append(s)
    except OSError:
        pass
end = time.time() + secs
while time.time() < end:
    time.sleep(0.5)
    alive = []
    for s in socks:
        try:
            s.sendall(b"X-Slow: 1\r\n")
            alive.append(s)
        except OSError:
            s.close()
    socks = alive
# a refused connection is closed by the server: count those still open
open_ = 0
for s in socks:
    s.setblocking(False)
    try:
        open_ += s.recv(1) == b"" and 0 or 1
    except BlockingIOError:
        open_ += 1
    except OSError:
        pass
print(open_)
PY
}

# timed GET: prints "STATUS SECONDS"
timed() { curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}' "$@"; }
within() { # within WHAT MAXSECONDS "STATUS SECONDS"
    set -- "$1" "$2" $3
    if [ "$3" = 200 ] && awk "BEGIN { exit !($4 < $2) }"; then pass "$1: 200 in $4 s"
    else fail "$1: status $3 after $4 s (wanted 200 within $2 s)"; fi
}

start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q || exit 1
port=${VIEW_URL%/}; port=${port##*:}
# a connection that sends half a request and then nothing: closed after the
# idle timeout (15 s), checked at the end
python3 - "$port" > "$MT_TMP/idle.out" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=120)
s.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n")
t0 = time.time()
try:
    s.recv(1)
except OSError:
    pass
print("%.1f" % (time.time() - t0))
PY
ip=$!
sleep 0.3
slow 127.0.0.1 "$port" 80 5 > "$MT_TMP/slow.out" &
sp=$!
sleep 2
within "80 slow connections open: a normal request" 3 "$(timed "${VIEW_URL}api/info")"
wait $sp
check "the 80 slow connections were accepted ($(cat "$MT_TMP/slow.out") still open)" \
    [ "$(cat "$MT_TMP/slow.out")" -ge 70 ]
within "after they left" 3 "$(timed "${VIEW_URL}api/info")"
check "server process alive" kill -0 "$VIEW_PID"
wait $ip
idle=$(cat "$MT_TMP/idle.out")
check "a silent half-sent request is dropped after the idle timeout (${idle} s, 13-100: not before, and not never on a loaded machine)" \
    awk "BEGIN { exit !($idle >= 13 && $idle <= 100) }"
stop_viewer

# per address, off loopback
addr=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v -e '^127\.' -e : | head -n 1)
if [ -z "$addr" ]; then
    echo "(no non-loopback IPv4 address: per-address limit not tested)"
    exit 0
fi
start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q --host 0.0.0.0 || exit 1
port=${VIEW_URL%/}; port=${port##*:}
slow 127.0.0.1 "$port" 60 4 > "$MT_TMP/slow.out" &
sp=$!
sleep 2
within "60 slow connections from 127.0.0.1: a request to $addr" 3 \
    "$(timed -H "Host: $addr:$port" "http://$addr:$port/api/info")"
wait $sp
n=$(cat "$MT_TMP/slow.out")
check "one address holds at most its share of connections ($n of 60 kept open)" [ "$n" -le 40 ]
stop_viewer
