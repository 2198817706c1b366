#!/bin/sh
# attach_real.sh - 'memtrace attach' on real programs that were not started
# under memtrace: Debian's redis-server (jemalloc) while redis-benchmark
# loads it, and a python3 loop whose only thread never waits in a system
# call. Each keeps running and answering after the detach, its allocations
# are in the trace under its own function names, and redis keeps jemalloc.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
MT=$PWD/$MT_BIN
cd "$T" || exit 1
ran=0

if command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1; then
    ran=1
    port=$((20000 + $$ % 20000))
    redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir "$T" >redis.log 2>&1 &
    rp=$!
    for i in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
    timeout 60 redis-benchmark -p $port -q -n 150000 -t set,lpush,get -d 64 -r 100000 -P 16 \
        >bench.out 2>&1 &
    bp=$!
    sleep 0.5
    "$MT" attach --duration 1500ms -i 64k -o redis.ctf $rp >attach.log 2>&1
    check "attach to redis-server under load: exit 0 ($(tr '\n' ' ' <attach.log))" test $? = 0
    wait $bp
    check "redis-benchmark completes" grep -q 'GET' bench.out
    check "redis answers after the detach" sh -c "redis-cli -p $port set k v | grep -q OK && redis-cli -p $port get k | grep -q v"
    check "redis keeps jemalloc" sh -c "redis-cli -p $port info memory | grep -q 'mem_allocator:jemalloc'"
    "$MT" top -n 20 redis.ctf >redis.top 2>&1
    check "the trace has redis's allocation sites (zmalloc, sds)" grep -Eq 'zmalloc|sdsnewlen|_sdsnewlen' redis.top
    check "and says it started mid-run" sh -c "'$MT' info redis.ctf | grep -q '^attached:'"
    redis-cli -p $port shutdown nosave >/dev/null 2>&1
    wait $rp
    check "redis-server shuts down cleanly (exit 0)" test $? = 0
fi

PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$PY" ]; then
    ran=1
    cat >loop.py <<'EOF'
import os, sys
n = 0
keep = []
stop = sys.argv[1]
def build_table(n):
    return {("k%d" % i): [i, str(i) * 3] for i in range(2000)}
while not os.path.exists(stop):
    keep.append(build_table(n))
    if len(keep) > 50:
        keep.pop(0)
    n += 1
    if n % 50 == 0:
        print(n, flush=True)
print("done", sum(len(k) for k in keep), flush=True)
EOF
    rm -f pystop
    "$PY" loop.py pystop >py.out 2>&1 &
    pp=$!
    sleep 0.5
    "$MT" attach --duration 1s -i 64k -o py.ctf $pp >pyattach.log 2>&1
    check "attach to a busy python3: exit 0 ($(tr '\n' ' ' <pyattach.log))" test $? = 0
    # its next line of progress, however long a loaded machine takes
    n1=$(tail -1 py.out); n2=$n1
    for i in $(seq 600); do n2=$(tail -1 py.out); [ "$n2" != "$n1" ] && break; sleep 0.1; done
    check "python3 runs on after the detach ($n1 -> $n2)" test "$n1" != "$n2"
    touch pystop; wait $pp
    check "python3 ends normally" sh -c "[ $? = 0 ] && grep -q '^done 100000' py.out"
    "$MT" top -n 20 py.ctf >py.top 2>&1
    check "the trace has CPython's dict allocations" grep -Eq 'dict|PyObject_Malloc|_PyObject' py.top
fi
[ $ran = 1 ] || { echo "neither redis-server nor python3 installed"; exit 77; }
finish
