#!/bin/sh
# redis.sh - a real service with its own allocator: Debian's redis-server
# (linked with jemalloc) under `memtrace run`, loaded by redis-benchmark on
# loopback. It must start (it died before main), keep jemalloc (its INFO
# says so, and jemalloc holds the data: allocator_allocated), and the
# trace's peak must agree with redis's own accounting (used_memory_peak
# counts jemalloc's usable sizes, a little more than the sizes asked for:
# 0.65-1.15x; it read 8x when sampled blocks grew differently).
. tests/record/progs/lib.sh
skip_under_tsan
command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1 || {
    echo "redis-server and redis-benchmark not installed (scripts/install-deps.sh test installs them)"
    exit 77
}
port=$((20000 + $$ % 20000))
"$MT_BIN" run -o "$T/redis.ctf" -- redis-server --port "$port" --bind 127.0.0.1 --save '' \
    --appendonly no --dir "$T" >"$T/redis.log" 2>&1 &
run=$!
up=0
wait_until 300 redis-cli -p "$port" ping >/dev/null 2>&1 && up=1
check "redis-server starts under the recorder" test "$up" = 1
if [ "$up" = 1 ]; then
    timeout 60 redis-benchmark -p "$port" -q -n 200000 -t set,lpush,sadd -d 256 -r 300000 -P 16 \
        >"$T/bench.out" 2>&1
    check "redis-benchmark completes against it" grep -q "SADD" "$T/bench.out"
    redis-cli -p "$port" info memory | tr -d '\r' >"$T/info.txt"
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
fi
wait "$run"
info() { sed -n "s/^$1://p" "$T/info.txt"; }
case $(info mem_allocator) in jemalloc*) pass "redis still runs on jemalloc ($(info mem_allocator))" ;;
    *) fail "redis's allocator under the recorder: '$(info mem_allocator)'" ;; esac
aa=$(info allocator_allocated) um=$(info used_memory_peak)
check "jemalloc holds redis's data (allocator_allocated ${aa:-?} for used_memory_peak ${um:-?})" \
    awk -v a="${aa:-0}" -v u="${um:-1}" 'BEGIN { exit !(a > 0.5 * u) }'
pk=$("$MT_BIN" stats --json "$T/redis.ctf" 2>/dev/null | grep -o '"peak_bytes":[0-9]*' | cut -d: -f2)
awk -v p="${pk:-0}" -v u="${um:-1}" 'BEGIN {
    r = p / u
    printf "%s: peak live memory estimated %.1f MiB, redis used_memory_peak %.1f MiB (%.2fx)\n",
        (r > 0.65 && r < 1.15 ? "PASS" : "FAIL"), p / 1048576, u / 1048576, r }'
finish
