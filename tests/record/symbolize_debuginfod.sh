#!/bin/sh
# symbolize_debuginfod.sh - `memtrace symbolize --debuginfod URL` fetches
# the debug information of a stripped binary by its build-id from a
# debuginfod server (Debian's, started here on loopback, serving the
# unstripped build), caches it where libdebuginfod caches, and says clearly
# when the server has no such build-id or cannot be reached. A server is
# asked only when named by the option: DEBUGINFOD_URLS in the environment
# alone makes no report, viewer or symbolize connect anywhere.
. tests/record/progs/lib.sh
# About finding debug information: the name cache would name a build-id
# named before in this test (a binary and its stripped copy share theirs);
# tests/record/symbolize_cache.sh tests the cache.
MEMTRACE_NAME_CACHE=0; export MEMTRACE_NAME_CACHE
skip_under_tsan
command -v debuginfod >/dev/null ||
    { echo "debuginfod not installed (scripts/install-deps.sh test)"; exit 77; }
command -v curl >/dev/null || { echo "curl not installed (scripts/install-deps.sh test)"; exit 77; }
M=$PWD/$MT_BIN
D=$T/dfd
rm -rf "$D"; mkdir -p "$D/srv" "$D/cache"

cat > "$D/prog.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) void *make_block(size_t n) { return malloc(n); }
int main(void)
{
    void *volatile keep;
    for (int i = 0; i < 20000; i++) {
        keep = make_block(1000 + i % 7);
        if (i % 2)
            free(keep);
    }
    return 0;
}
C
# the served build has DWARF; the one that runs here only its symbols,
# with the same build-id (objcopy --strip-debug)
cc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$D/srv/prog" "$D/prog.c" || fail "compile"
objcopy --strip-debug "$D/srv/prog" "$D/prog" || fail "strip"
id=$(readelf -n "$D/prog" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
check "stripped copy keeps the build-id ($id)" \
    test -n "$id" -a "$id" = "$(readelf -n "$D/srv/prog" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')"
# a second stripped program the server does not have
sed 's/make_block/other_block/' "$D/prog.c" > "$D/other.c"
cc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$D/other.full" "$D/other.c" &&
    objcopy --strip-debug "$D/other.full" "$D/other" && rm -f "$D/other.full"
oid=$(readelf -n "$D/other" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
preload_raw "$D/t.ctf" 0.001 "$D/prog" || fail "prog ran"
preload_raw "$D/o.ctf" 0.001 "$D/other" || fail "other ran"
for n in plain env fetch again refused; do cp "$D/t.ctf" "$D/$n.ctf"; done

# Without a server: the ELF symbol, no line.
"$M" symbolize -q "$D/plain.ctf"
"$M" top -n 1 "$D/plain.ctf" >"$D/plain.top" 2>/dev/null
check "no server: the symbol only ($(sed -n 4p "$D/plain.top"))" grep -q "make_block ($D/prog)" "$D/plain.top"

"$M" symbolize --debuginfod nonsense "$D/plain.ctf" 2>"$D/bad.err"; st=$?
check "--debuginfod nonsense: usage error 2 ($st: $(head -c 120 "$D/bad.err"))" \
    sh -c "[ $st = 2 ] && grep -q 'not a server URL' '$D/bad.err'"

# The server, on loopback: in a network namespace of its own when this
# machine allows one (it listens on every address), else on a free port.
cat > "$D/inner.sh" <<'S'
D=$1 M=$2 id=$3 netns=$4
if [ "$netns" = 1 ]; then ip link set lo up 2>/dev/null || exit 3; port=8002
else port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); fi
url=http://127.0.0.1:$port
debuginfod -F -p "$port" -d "$D/db.sqlite" -t 0 -g 0 "$D/srv" >"$D/server.log" 2>&1 &
srv=$!
ok=0
for i in $(seq 6000); do   # 300 s: a bound far above the start
    curl -sf -o /dev/null "$url/buildid/$id/debuginfo" && { ok=1; break; }
    kill -0 $srv 2>/dev/null || break
    sleep 0.05
done
if [ $ok = 1 ]; then
    echo "$url" >"$D/url"
    export DEBUGINFOD_CACHE_PATH=$D/cache
    # the environment alone: no fetch
    DEBUGINFOD_URLS=$url "$M" symbolize "$D/env.ctf" 2>"$D/env.err"
    DEBUGINFOD_URLS=$url "$M" top -n 1 "$D/env.ctf" >"$D/env.top" 2>&1
    [ -e "$D/cache/$id" ] && echo "$D/cache/$id" >"$D/env.fetched"
    "$M" symbolize --debuginfod "$url" "$D/fetch.ctf" 2>"$D/fetch.err"; echo $? >"$D/fetch.rc"
    "$M" top -n 1 "$D/fetch.ctf" >"$D/fetch.top" 2>&1
    "$M" symbolize --debuginfod "$url" "$D/o.ctf" 2>"$D/unknown.err"; echo $? >"$D/unknown.rc"
    kill $srv; wait $srv 2>/dev/null
    # cached: named again with the server gone
    "$M" symbolize --debuginfod "$url" "$D/again.ctf" 2>"$D/again.err"
    "$M" top -n 1 "$D/again.ctf" >"$D/again.top" 2>&1
    # a server that cannot be reached
    start=$(date +%s)
    DEBUGINFOD_CACHE_PATH=$D/cache2 "$M" symbolize --debuginfod "http://127.0.0.1:$port" \
        "$D/refused.ctf" 2>"$D/refused.err"; echo $? >"$D/refused.rc"
    echo $(( $(date +%s) - start )) >"$D/refused.secs"
else
    kill $srv 2>/dev/null; wait $srv 2>/dev/null
    exit 4
fi
S
netns=0
unshare --net true 2>/dev/null && netns=1
if [ $netns = 1 ]; then unshare --net sh "$D/inner.sh" "$D" "$M" "$id" 1; st=$?
else sh "$D/inner.sh" "$D" "$M" "$id" 0; st=$?; fi
if [ $st != 0 ]; then
    echo "debuginfod could not start or serve $D/srv (exit $st): $(tail -n 3 "$D/server.log" 2>/dev/null)"
    [ "$fails" = 0 ] && exit 77
    finish
fi
url=$(cat "$D/url")

check "DEBUGINFOD_URLS alone: nothing fetched, the symbol only ($(sed -n 4p "$D/env.top"))" \
    sh -c "grep -q 'make_block ($D/prog)' '$D/env.top' && ! grep -q 'prog[.]c' '$D/env.top' && test ! -e '$D/env.fetched'"
check "--debuginfod URL: exit 0 ($(cat "$D/fetch.rc"): $(head -c 200 "$D/fetch.err"))" test "$(cat "$D/fetch.rc")" = 0
check "--debuginfod URL: function, file and line from the server ($(sed -n 4p "$D/fetch.top"))" \
    grep -q 'make_block (.*prog.c:2)' "$D/fetch.top"
check "--debuginfod URL: cached where libdebuginfod caches ($(ls "$D/cache" | head -n 3 | tr '\n' ' '))" \
    test -s "$D/cache/$id/debuginfo"
check "cached: named again with the server gone ($(sed -n 4p "$D/again.top"))" \
    grep -q 'make_block (.*prog.c:2)' "$D/again.top"
check "unknown build-id: exit 0 ($(cat "$D/unknown.rc")), a warning naming the server, the build-id and the module" \
    sh -c "[ \$(cat '$D/unknown.rc') = 0 ] && grep -q '$url has no debug information for build-id $oid ($D/other)' '$D/unknown.err'"
check "unreachable server: exit 0 ($(cat "$D/refused.rc")) in $(cat "$D/refused.secs") s, one clear warning: $(head -c 200 "$D/refused.err")" \
    sh -c "[ \$(cat '$D/refused.rc') = 0 ] && [ \$(cat '$D/refused.secs') -le 5 ] &&
           [ \$(grep -c 'cannot get debug information from http://127.0.0.1:[0-9]*: ' '$D/refused.err') = 1 ]"

# DEBUGINFOD_URLS pointing at a listener that records every connection:
# reports, the viewer and symbolize of a stripped binary's trace (debug
# information missing: what would be fetched) never connect.
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(15)
try:
    while True:
        c, _ = s.accept(); open(sys.argv[1], "a").write("connection\n"); c.close()
except Exception:
    pass
' "$D/listener.log" >"$D/port" &
lis=$!
wait_until 300 test -s "$D/port"
DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$D/port")
export DEBUGINFOD_URLS
cp "$D/t.ctf" "$D/l.ctf"
for c in top stats folded dump; do "$M" $c "$D/l.ctf" >/dev/null 2>&1; done
"$M" pprof -o "$D/l.pb.gz" "$D/l.ctf" >/dev/null 2>&1
timeout 10 "$M" view --port 0 --quiet "$D/l.ctf" >/dev/null 2>&1 &
v=$!; sleep 1; kill $v 2>/dev/null; wait $v 2>/dev/null
"$M" symbolize -q "$D/l.ctf"
unset DEBUGINFOD_URLS
kill $lis 2>/dev/null; wait $lis 2>/dev/null
check "DEBUGINFOD_URLS set: no connection from top, stats, folded, dump, pprof, view or symbolize ($(cat "$D/listener.log" 2>/dev/null | wc -l))" \
    test ! -s "$D/listener.log"
finish
