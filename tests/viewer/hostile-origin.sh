#!/bin/sh
# hostile-origin.sh - a web page on another site must not be able to make the
# user's browser call the viewer's API: requests the browser marks as coming
# from another site (Sec-Fetch-Site: cross-site or same-site; another port of
# localhost is the same site) or with a foreign Origin get 403 with a reason,
# while the viewer's own page, a typed URL and curl keep working. Then the
# same in headless Chromium: a page served from another loopback origin
# fetches the API and loads it as an image; every such request must be
# refused. (The browser sends the viewer's own Host header in that case, so
# the Host check cannot help.)
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)

start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q || exit 1
base=${VIEW_URL%/}
port=${base##*:}

code() { curl -s -o "$MT_TMP/body" -w '%{http_code}' "$@"; }
expect() { # expect WHAT STATUS CURL-ARGS...
    what=$1 want=$2; shift 2
    got=$(code "$@")
    if [ "$got" = "$want" ]; then pass "$what -> $want"; else fail "$what -> $got, wanted $want"; fi
}

expect "Sec-Fetch-Site: cross-site" 403 -H "Sec-Fetch-Site: cross-site" "$base/api/info"
check "the 403 says why" grep -q '"error":"cross-origin request refused: .*Sec-Fetch-Site' "$MT_TMP/body"
expect "Sec-Fetch-Site: same-site (another port of localhost)" 403 -H "Sec-Fetch-Site: same-site" "$base/api/tree"
expect "Sec-Fetch-Site: cross-site, as an <img>" 403 -H "Sec-Fetch-Site: cross-site" \
    -H "Sec-Fetch-Dest: image" "$base/api/tree?filter=inside:main"
expect "Origin of another site" 403 -H "Origin: http://evil.example" "$base/api/info"
check "the 403 names the Origin" grep -q 'Origin' "$MT_TMP/body"
expect "Origin on another loopback port" 403 -H "Origin: http://127.0.0.1:1" "$base/api/info"
expect "Origin https of the same name" 403 -H "Origin: https://127.0.0.1:$port" "$base/api/info"
expect "Origin null (sandboxed frame, file:)" 403 -H "Origin: null" "$base/api/info"
expect "malformed Origin" 403 -H "Origin: http://127.0.0.1:$port:9" "$base/api/info"
expect "own page (same-origin)" 200 -H "Sec-Fetch-Site: same-origin" "$base/api/info"
expect "own Origin" 200 -H "Origin: http://127.0.0.1:$port" -H "Sec-Fetch-Site: same-origin" "$base/api/curve"
expect "own Origin, as localhost" 200 -H "Host: localhost:$port" -H "Origin: http://localhost:$port" "$base/api/info"
expect "typed URL (Sec-Fetch-Site: none)" 200 -H "Sec-Fetch-Site: none" "$base/api/info"
expect "curl (no browser headers)" 200 "$base/api/info"
expect "a link from another site to the page itself" 200 -H "Sec-Fetch-Site: cross-site" \
    -H "Sec-Fetch-Mode: navigate" "$base/"
stop_viewer

# --allow-host: a name given on the command line is accepted in Host and Origin
if start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q --allow-host viewer.example \
    --allow-host proxy.example:443; then
    base=${VIEW_URL%/}
    expect "--allow-host NAME: Host accepted" 200 -H "Host: viewer.example:8000" "$base/api/info"
    expect "--allow-host NAME: its Origin accepted" 200 -H "Origin: http://viewer.example:8000" "$base/api/info"
    expect "--allow-host NAME:443: https Origin accepted" 200 -H "Origin: https://proxy.example" "$base/api/info"
    expect "--allow-host NAME:443: another port refused" 403 -H "Origin: https://proxy.example:444" "$base/api/info"
    expect "--allow-host: other names still refused" 403 -H "Host: evil.example" "$base/api/info"
    stop_viewer
else
    fail "--allow-host accepted"
fi
"$MT_BIN" view --port 0 --allow-host 'a b/c' "$MT_FIXTURES/prodcons.ctf" >/dev/null 2>"$MT_TMP/err"
rc=$?
check "--allow-host with a malformed name: exit 1 with the name" \
    sh -c "[ $rc = 1 ] && grep -q 'a b/c' '$MT_TMP/err'"

# in a real browser (plain stage only, when Chromium is there)
if [ "${MT_STAGE:-plain}" != plain ] || [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
    echo "(no headless Chromium check in this stage)"
    exit 0
fi
need_playwright
start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q || exit 1
# the other site: a static server on another port of 127.0.0.1
mkdir -p "$MT_TMP/site"
cat > "$MT_TMP/site/evil.html" <<HTML
<!doctype html><title>elsewhere</title><body>
<img src="${VIEW_URL}api/tree?filter=inside:main">
<script>
fetch('${VIEW_URL}api/info', { mode: 'no-cors' }).catch(() => {}).finally(() =>
  fetch('${VIEW_URL}api/curve').catch(() => {}).finally(() => { document.title = 'done'; }));
</script></body>
HTML
python3 - "$MT_TMP/site" "$MT_TMP/site.port" <<'PY' &
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.log_message = lambda *a: None
sys.stderr = open("/dev/null", "w")
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.timeout = 1
import time
end = time.time() + 150
while time.time() < end:
    s.handle_request()
PY
site_pid=$!
i=0; while [ ! -s "$MT_TMP/site.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
(cd "$here" && timeout 120 node hostile-origin.js "$VIEW_URL" "$(cat "$MT_TMP/site.port")" "$profile")
rc=$?
kill $site_pid 2>/dev/null
[ $rc = 0 ] || fail "headless Chromium check (exit $rc)"
stop_viewer
