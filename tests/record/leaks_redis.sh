#!/bin/sh
# leaks_redis.sh - leak verdicts on Debian's redis-server, whose jemalloc
# background threads block every signal: `memtrace ctl PID scan` on the
# running server and the scan at its exit (`run --leaks`) both write
# verdicts (they gave up with "thread N did not stop" when threads were
# stopped with signals), the server answers on after the scan with its
# keys intact, and it exits 0 with nothing said on stderr about the scan.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "preloads the recorder into plain programs: plain stage only"; exit 77; }
command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || {
    echo "SKIP: redis-server and redis-cli not installed (scripts/install-deps.sh test installs them)"
    exit 77
}
D=$T/leaks_redis.$$
rm -rf "$D"; mkdir -p "$D"
port=$((20000 + ($$ + 7) % 20000))
"$MT_BIN" run --leaks --signal USR2 --interval 4k -o "$D/r.ctf" -- redis-server --port "$port" \
    --bind 127.0.0.1 --save '' --appendonly no --enable-debug-command yes --dir "$D" >"$D/redis.log" 2>"$D/redis.err" &
run=$!
up=0
for i in $(seq 600); do   # up to a minute on a loaded machine
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && { up=1; break; }
    sleep 0.1
done
check "redis-server starts under the recorder" test "$up" = 1
pid=$(pgrep -P "$run" | head -1)
if [ "$up" = 1 ] && [ -n "$pid" ]; then
    redis-cli -p "$port" debug populate 20000 >/dev/null
    blockers=$(grep -l '^SigBlk:.*fffffffe7ff' /proc/"$pid"/task/*/status 2>/dev/null | wc -l)
    echo "redis has $blockers threads that block (nearly) every signal"
    "$MT_BIN" ctl "$pid" scan >"$D/scan.out" 2>&1
    check "ctl scan writes verdicts ($(cat "$D/scan.out"))" grep -q 'scanned; verdicts in .*r.ctf-0001.leaks' "$D/scan.out"
    n=$(sed -n 's/^scan [0-9]* [a-z]* \([0-9]*\) \([0-9]*\) .*/\1 \2/p' "$D/r.ctf-0001.leaks" 2>/dev/null)
    check "ctl scan judged blocks (lost, reachable: ${n:-none})" sh -c "[ -n '$n' ] && [ \$(echo $n | awk '{print \$1 + \$2}') -gt 0 ]"
    keys=$(redis-cli -p "$port" dbsize 2>/dev/null)
    check "redis answers on after the scan, its 20000 keys intact (dbsize $keys)" [ "$keys" = 20000 ]
    first=$(sed -n 2p "$D/r.ctf-0001.leaks")
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
fi
wait "$run"
st=$?
check "redis exits 0 through memtrace run (got $st)" [ "$st" = 0 ]
check "the scan at exit replaced ctl's" sh -c "[ -s '$D/r.ctf-0001.leaks' ] && [ \"\$(sed -n 2p '$D/r.ctf-0001.leaks')\" != '$first' ]"
check "nothing said about the scan ($(grep -i leaks "$D/redis.err" | head -2))" sh -c "! grep -q -- '--leaks' '$D/redis.err'"
[ "$fails" = 0 ] && rm -rf "$D"
finish
