#!/bin/sh
# hostile.sh - malformed and hostile requests get an error status and the
# server keeps serving: path traversal, unknown paths, other methods, huge
# query strings, too many parameters, bad filters and parameters, a foreign
# Host header, raw garbage on the socket; answers in valid UTF-8 JSON
# whatever names and parameters hold. Also the command's own errors and
# the port fallback.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }

start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 || exit 1
base=${VIEW_URL%/}

code() { curl -s -o "$MT_TMP/body" -w '%{http_code}' "$@"; }
expect() { # expect WHAT STATUS CURL-ARGS...
    what=$1 want=$2; shift 2
    got=$(code "$@")
    if [ "$got" = "$want" ]; then pass "$what -> $want"; else fail "$what -> $got, wanted $want"; fi
}

expect "path traversal" 400 --path-as-is "$base/../../etc/passwd"
expect "encoded path traversal" 400 --path-as-is "$base/%2e%2e/%2e%2e/etc/passwd"
expect "traversal into the API" 400 --path-as-is "$base/api/../index.html"
expect "unknown page" 404 "$base/etc/passwd"
expect "unknown API endpoint" 404 "$base/api/shutdown"
expect "odd bytes in the path" 400 "$base/a%01%20%ffb"
got=$(code "$base/a%00b")
case $got in 4*) pass "NUL in the path -> $got" ;; *) fail "NUL in the path -> $got" ;; esac
expect "over-long path" 400 "$base/$(head -c 400 /dev/zero | tr '\0' a)"
expect "POST" 405 -X POST --data x=1 "$base/api/info"
expect "DELETE" 405 -X DELETE "$base/"
expect "HEAD" 200 -I "$base/"
expect "bad filter" 400 "$base/api/tree?filter=size:12parsecs"
check "bad filter answer says why" grep -q '"error":"filter: column' "$MT_TMP/body"
expect "unknown filter clause" 400 "$base/api/curve?filter=bogus:1"
expect "bad number" 400 "$base/api/tree?min=lots"
expect "negative threshold" 400 "$base/api/tree?min=-1"
expect "not-a-number threshold" 400 "$base/api/tree?min=nan"
expect "bad direction" 400 "$base/api/tree?dir=sideways"
expect "bad metric" 400 "$base/api/tree?metric=weight"
expect "too many buckets" 400 "$base/api/curve?n=100000000"
expect "reversed time range" 400 "$base/api/curve?t0=5&t1=1"
expect "no such function id" 400 "$base/api/function?id=99999999"
expect "no such function name" 404 "$base/api/function?name=nope"
big=$(head -c 9000 /dev/zero | tr '\0' x)
expect "over-long parameter" 414 "$base/api/tree?filter=inside:$big"
huge=$(head -c 70000 /dev/zero | tr '\0' x)
got=$(code "$base/api/tree?filter=inside:$huge")
case $got in 4*) pass "70 kB query string -> $got" ;; *) fail "70 kB query string -> $got" ;; esac
many=$(i=0; while [ $i -lt 40 ]; do printf 'a%d=1&' $i; i=$((i + 1)); done)
expect "40 parameters" 400 "$base/api/info?$many"
expect "foreign Host header (DNS rebinding)" 403 -H "Host: evil.example:80" "$base/api/info"
expect "loopback Host header" 200 -H "Host: localhost:${base##*:}" "$base/api/info"

# raw garbage on the socket: no crash
port=${base##*:}
if command -v python3 >/dev/null; then
    python3 - "$port" <<'PY'
import socket, sys
port = int(sys.argv[1])
for payload in [b"\x00\xff\x13garbage\r\n\r\n", b"GET " + b"/" * 5000 + b" HTTP/1.1\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-A: b\r\n" * 3000 + b"\r\n",
                b"GET /api/info HTTP/9.9\r\n\r\n", b"GET /api/info HTTP/1.1\r\nContent-Length: -5\r\n\r\n"]:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(payload)
        s.recv(4096)
    except Exception:
        pass
    s.close()
PY
fi
expect "still serving after all that" 200 "$base/api/info"
check "server process alive" kill -0 "$VIEW_PID"

# the next free port when the asked one is taken
first_port=$port
url1=$VIEW_URL; pid1=$VIEW_PID
start_viewer "$MT_FIXTURES/prodcons.ctf" --port "$first_port" -q || exit 1
p2=$(echo "$VIEW_URL" | sed 's|.*:\([0-9]*\)/$|\1|')
check "port $first_port taken: served on another port ($p2)" [ "$p2" != "$first_port" ]
check "URL on 127.0.0.1" sh -c "echo '$VIEW_URL' | grep -q '^http://127.0.0.1:'"
expect "second server answers" 200 "${VIEW_URL}api/info"
stop_viewer
VIEW_PID=$pid1
stop_viewer
check "first server stopped cleanly" [ "$VIEW_RC" = 0 ]

# the command's own errors
"$MT_BIN" view --help > "$MT_TMP/help" 2>&1
check "--help exits 0 and shows usage" sh -c "[ $? = 0 ] && grep -q 'usage: memtrace view' '$MT_TMP/help'"
"$MT_BIN" view "$MT_TMP/missing.ctf" >/dev/null 2>"$MT_TMP/err"; rc=$?
check "missing file: exit 1 with the file named" sh -c "[ $rc = 1 ] && grep -q 'missing.ctf' '$MT_TMP/err'"
head -c 3000 "$MT_FIXTURES/leak.ctf" | tail -c 2000 > "$MT_TMP/junk.ctf"
"$MT_BIN" view "$MT_TMP/junk.ctf" >/dev/null 2>"$MT_TMP/err"; rc=$?
check "not a trace: exit 1 with a reason" sh -c "[ $rc = 1 ] && grep -q 'junk.ctf' '$MT_TMP/err'"
"$MT_BIN" view --port 99999 x.ctf >/dev/null 2>&1; rc=$?
check "bad --port: usage error 2" [ "$rc" = 2 ]
"$MT_BIN" view --host not-an-address --port 0 "$MT_FIXTURES/rate1.ctf" >/dev/null 2>"$MT_TMP/err"; rc=$?
check "bad --host: exit 1 with a reason" sh -c "[ $rc = 1 ] && grep -q 'not-an-address' '$MT_TMP/err'"
"$MT_BIN" view >/dev/null 2>&1; rc=$?
check "no file: usage error 2" [ "$rc" = 2 ]

# Answers are JSON in valid UTF-8 whatever a trace's names or a request's
# parameters hold: overlong forms, surrogates and code points past U+10FFFF
# went through the viewer's own UTF-8 check (163 of 800 fuzzed answers were
# not UTF-8). Both the single-trace API and the compare endpoints.
gen=$MT_BUILD/tests/tools/gen_hostile
if [ -x "$gen" ] && command -v python3 >/dev/null; then
    "$gen" names "$MT_TMP/names.ctf" || fail "gen_hostile names"
    utf8_answers() { # utf8_answers BASE-URL PATHS...: prints "bad/total" and the first bad one
        python3 - "$@" <<'PY'
import json, sys, urllib.request, urllib.error
base, paths = sys.argv[1], sys.argv[2:]
odd = ["%C0%AF", "%E0%80%AF", "%ED%A0%80", "%ED%BF%BF", "%F4%90%80%80", "%F5%80%80%80",
       "%FF", "%C2%9B", "%1B%5D0%3Bx%07", "caf%C3%A9"]
bad, total, first = 0, 0, ""
for p in paths:
    for o in odd:
        url = base + p.replace("ODD", o)
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                body = r.read()
        except urllib.error.HTTPError as e:
            body = e.read()
        total += 1
        try:
            json.loads(body.decode("utf-8", "strict"))
        except Exception as e:
            bad += 1
            first = first or "%s: %s" % (url, e)
print("%d/%d %s" % (bad, total, first))
PY
    }
    start_viewer "$MT_TMP/names.ctf" --port 0 -q || exit 1
    res=$(utf8_answers "$VIEW_URL" "api/hotspots?filter=inside:ODD" "api/tree?min=0&filter=inside:ODD" \
        "api/filter?filter=inside:ODD" "api/filter?filter=hide:/ODD/" "api/curve?filter=inside:ODD" \
        "api/function?name=ODD" "api/function?name=over" "api/tree?metric=ODD" "api/info?filter=ODD" \
        "api/graph?min=0&filter=hide:ODD" "api/stats?filter=size:ODD")
    check "viewer: every answer valid UTF-8 JSON (bad/total: $res)" [ "${res%%/*}" = 0 ]
    stop_viewer
    start_viewer "$MT_TMP/names.ctf" "$MT_TMP/names.ctf" --port 0 -q || exit 1
    cbase=${VIEW_URL%compare.html}
    res=$(utf8_answers "$cbase" "api/compare?key=site&filter=inside:ODD" "api/compare?key=path" \
        "api/compare?by=ODD" "api/compare_info?x=ODD" "api/compare_curves?filter=ODD")
    check "viewer compare: every answer valid UTF-8 JSON (bad/total: $res)" [ "${res%%/*}" = 0 ]
    stop_viewer
fi
