#!/bin/sh
# hostile-expose.sh - `memtrace view --host 0.0.0.0` and `--host ::` expose
# the trace to the network: the command says so on stderr, prints URLs that
# work (loopback first, then the machine's addresses, never 0.0.0.0), keeps
# refusing Host headers that name another site (DNS rebinding) while
# accepting the machine's own names and addresses, and `::` takes IPv4
# connections too (dual stack), as --help says. On loopback: no warning.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }

code() { curl -s -o "$MT_TMP/body" -w '%{http_code}' --max-time 10 "$@"; }
expect() { # expect WHAT STATUS CURL-ARGS...
    what=$1 want=$2; shift 2
    got=$(code "$@")
    if [ "$got" = "$want" ]; then pass "$what -> $want"; else fail "$what -> $got, wanted $want"; fi
}

start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q || exit 1
check "loopback: no warning on stderr" sh -c "! grep -q warning '$VIEW_ERR'"
stop_viewer

start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q --host 0.0.0.0 || exit 1
port=$(echo "$VIEW_URL" | sed 's|.*:\([0-9]*\)/$|\1|')
check "0.0.0.0: warns on stderr that the trace is exposed" \
    grep -q 'warning: listening on every network interface.*can read the trace' "$VIEW_ERR"
check "0.0.0.0: the URL printed first is a loopback one ($VIEW_URL)" \
    sh -c "echo '$VIEW_URL' | grep -q '^http://127.0.0.1:$port/$'"
check "0.0.0.0: no URL with 0.0.0.0 printed" sh -c "! grep -q '0\.0\.0\.0' '$VIEW_OUT'"
expect "0.0.0.0: foreign Host header refused (DNS rebinding)" 403 -H "Host: evil.example:$port" "${VIEW_URL}api/info"
expect "0.0.0.0: loopback URL answers" 200 "${VIEW_URL}api/info"
hn=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)
expect "0.0.0.0: the machine's name ($hn) accepted as Host" 200 -H "Host: $hn:$port" "${VIEW_URL}api/info"
# every other printed URL given by address answers, with its own Host header
others=$(sed -n 's/^  also at \(http[^ ]*\)$/\1/p' "$VIEW_OUT")
n=0
for u in $others; do
    case $u in
        http://\[*) continue ;;            # IPv6: 0.0.0.0 listens on IPv4 only
        http://[0-9]*) n=$((n + 1)); expect "0.0.0.0: printed URL $u answers" 200 "${u}api/info" ;;
    esac
done
ip4=$(awk '$1 != "lo" && $3 != "00000000"' /proc/net/route 2>/dev/null | head -n 1)
if [ -n "$ip4" ]; then
    check "0.0.0.0: this machine has a network route; its address is printed ($n)" [ "$n" -ge 1 ]
fi
stop_viewer

if ! grep -q . /proc/net/if_inet6 2>/dev/null; then
    echo "(no IPv6 on this machine: :: not tested)"
    exit 0
fi
if ! start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q --host ::; then
    fail ":: starts"
    exit 0
fi
port=$(echo "$VIEW_URL" | sed 's|.*:\([0-9]*\)/$|\1|')
check ":: warns on stderr" grep -q 'warning: listening on every network interface' "$VIEW_ERR"
check ":: the URL printed first is a loopback one ($VIEW_URL)" \
    sh -c "echo '$VIEW_URL' | grep -q '^http://127.0.0.1:$port/$'"
expect ":: answers on IPv6 loopback" 200 "http://[::1]:$port/api/info"
expect ":: answers on IPv4 loopback too (dual stack)" 200 "http://127.0.0.1:$port/api/info"
expect ":: foreign Host header refused" 403 -H "Host: evil.example" "http://[::1]:$port/api/info"
stop_viewer
