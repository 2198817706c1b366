#!/usr/bin/env python3
"""server.py - a loopback HTTP server for the push tests: it stands in for
Pyroscope, Parca or an OpenTelemetry collector on 127.0.0.1 (port 0: the
kernel picks one, written to PORTFILE), saves every request it gets
(DIR/NNNN.body and DIR/NNNN.json: method, path, headers, what it answered)
and answers as MODE says:

  ok           200 to every request
  429once      429 with Retry-After: 1 to the first request, then 200
  500twice     500 to the first two requests, then 200
  always500    500 to every request
  reject400    400 to every request
  reset        closes the connection without an answer (first two), then 200
  slow         waits SLOW seconds before answering 200

usage: server.py MODE DIR PORTFILE [SLOW]
Stops when DIR/stop exists (checked twice a second)."""
import http.server
import json
import os
import socket
import struct
import sys
import threading
import time

mode, outdir, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
slow = float(sys.argv[4]) if len(sys.argv) > 4 else 0
count = 0
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        global count
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with lock:
            count += 1
            i = count
        status, extra = 200, {}
        if mode == "429once" and i == 1:
            status, extra = 429, {"Retry-After": "1"}
        elif mode == "500twice" and i <= 2:
            status = 500
        elif mode == "always500":
            status = 500
        elif mode == "reject400":
            status = 400
        elif mode == "reset" and i <= 2:
            status = 0
        meta = {"method": "POST", "path": self.path, "headers": dict(self.headers.items()),
                "status": status, "time": time.time()}
        base = os.path.join(outdir, "%04d" % i)
        with open(base + ".body", "wb") as f:
            f.write(body)
        with open(base + ".json.tmp", "w") as f:
            json.dump(meta, f)
        os.rename(base + ".json.tmp", base + ".json")
        if status == 0:
            # an abortive close: RST instead of an answer
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if mode == "slow":
            time.sleep(slow)
        reply = b"{}" if status == 200 else b"no thanks"
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
threading.Thread(target=srv.serve_forever, daemon=True).start()
while not os.path.exists(os.path.join(outdir, "stop")):
    time.sleep(0.5)
srv.shutdown()
