#!/bin/sh
# notrace.sh - 'memtrace run --push' with a rotated recording, and with
# --no-trace. Known answers: with every piece kept (--rotate-size 64k
# --keep 1000), the pushes' alloc_* deltas add up to what all the pieces
# allocated, pieces filling faster than the pushes come (memtrace stats on
# each; the blocks a piece carries over are live there, never allocated
# again): nothing lost at a rotation, nothing counted twice; the same for
# 'ctl --push PID start' on a rotated recording. With
# --no-trace the pushes come all the same (one shows the 64 MiB the
# program holds), the private directory never holds more than a few 64k
# pieces while the program runs, and nothing is left of it at the end.
[ "${MT_STAGE:-plain}" = plain ] || { echo "runs programs under the plain recorder: plain stage only"; exit 77; }
. tests/push/support/lib.sh
push_python
cd "$T" || exit 1

# --- rotated, every piece kept: the deltas add up across the pieces (the
# holder also allocates and frees 1 MB every 10 ms: a piece of 64k fills
# in a fraction of a second, several of them between two pushes)
PLAIN=$HOLDER
HOLDER='import os, sys, time
x = bytearray(64 << 20)
t = time.monotonic()
while not os.path.exists(sys.argv[1]) and time.monotonic() - t < 600:
    y = [bytearray(10000) for _ in range(100)]
    time.sleep(0.01)
sys.exit(3)'
server_start rot ok
run_push rot --push "$URL/v1development/profiles" --push-every 200ms --rotate-size 64k --keep 1000
wait_file "$S/0006.json" || fail "rotated: 6 pushes within 120 s"
wait_file rot.ctf.part0008 || fail "rotated: an eighth piece within 120 s"
stop_run rot
server_stop
"$PY" "$HERE/check.py" otlp "$S" "$S" > rot.check 2>&1 || fail "rotated: check.py: $(cat rot.check)"
grep '^FAIL' rot.check
pieces=$(ls | grep -cE '^rot\.ctf\.part[0-9]+$')
total=0
for f in $(ls | grep -E '^rot\.ctf\.part[0-9]+$'); do
    total=$((total + $(trace_total "$f")))
done
sum=$(awk -F'\t' '{ s += $5 } END { printf "%.0f", s }' "$S/summary.tsv")
check "rotated: $pieces pieces (the recording did rotate)" test "$pieces" -ge 2
check "rotated: the pushes' alloc_space deltas add up to the pieces' $total bytes (got $sum)" \
    awk -v a="$sum" -v b="$total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 64 * 2^20 && d <= 0.001 * b) }'
check "rotated: $(grep 'push:' rot.err)" grep -q 'push: [1-9][0-9]* sent, 0 dropped' rot.err

# --- the same through 'ctl --push PID start' on a program started dormant:
# the pieces of its recording FILE-0001
server_start crot ok
rm -f crot.stop
(exec timeout -k 5 600 "$M" run -i 8k --paused --rotate-size 64k --keep 1000 -o "$T/crot.ctf" -- \
    /usr/bin/python3 -c "$HOLDER" "$T/crot.stop") > crot.out 2> crot.err &
RUN_PID=$!
_n=1200
until pp=$(pgrep -P "$(pgrep -P $RUN_PID)") && [ -n "$pp" ] && "$M" ctl "$pp" status 2>/dev/null | grep -q dormant ||
      [ $_n = 0 ]; do sleep 0.1; _n=$((_n - 1)); done
timeout -k 5 600 "$M" ctl --push "$URL/v1development/profiles" --push-every 200ms "$pp" start \
    > cpush.out 2> cpush.err &
cpid=$!
wait_file crot.ctf-0001.part0008 || fail "ctl rotated: an eighth piece within 120 s"
"$M" ctl "$pp" stop > /dev/null 2>&1
wait $cpid; cst=$?
touch crot.stop; wait $RUN_PID
server_stop
"$PY" "$HERE/check.py" otlp "$S" "$S" > crot.check 2>&1 || fail "ctl rotated: check.py: $(cat crot.check)"
grep '^FAIL' crot.check
total=0
for f in $(ls | grep -E '^crot\.ctf-0001\.part[0-9]+$'); do
    total=$((total + $(trace_total "$f")))
done
sum=$(awk -F'\t' '{ s += $5 } END { printf "%.0f", s }' "$S/summary.tsv")
check "ctl rotated: exit 0 ($cst), $(grep 'push:' cpush.err)" \
    sh -c "[ $cst = 0 ] && grep -q 'push: [1-9][0-9]* sent, 0 dropped' cpush.err"
check "ctl rotated: the pushes' alloc_space deltas add up to the pieces' $total bytes (got $sum)" \
    awk -v a="$sum" -v b="$total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.001 * b) }'
HOLDER=$PLAIN

# --- --no-trace: a private directory in TMPDIR, bounded, removed at the end
server_start none ok
mkdir -p "$T/tmp"
rm -f none.stop
(TMPDIR=$T/tmp exec timeout -k 5 600 "$M" run -i 8k --no-trace --rotate-size 64k \
    --push "$URL/v1development/profiles" --push-every 200ms -- \
    /usr/bin/python3 -c "$HOLDER" "$T/none.stop") > none.out 2> none.err &
RUN_PID=$!
wait_file "$S/0004.json" || fail "--no-trace: 4 pushes within 120 s"
most=0
for i in 1 2 3 4 5 6 7 8 9 10; do   # (what the directory holds, now and then)
    k=$(ls "$T"/tmp/memtrace-run.*/ 2>/dev/null | wc -l)
    [ "$k" -gt "$most" ] && most=$k
    sleep 0.1
done
touch none.stop; wait $RUN_PID; st=$?
server_stop
"$PY" "$HERE/check.py" otlp "$S" "$S" > none.check 2>&1 || fail "--no-trace: check.py: $(cat none.check)"
grep '^FAIL' none.check
n=$(ls "$S" | grep -c '^[0-9]*\.json$')
check "--no-trace: the program's status (3; got $st)" test "$st" = 3
check "--no-trace: $n pushes, all said ($(grep 'push:' none.err))" grep -q "push: $n sent, 0 dropped" none.err
check "--no-trace: a push shows the 64 MiB in use" \
    awk -F'\t' -v lo=$((64 << 20)) -v hi=$((74 << 20)) '$4 >= lo && $4 <= hi { n++ } END { exit !n }' "$S/summary.tsv"
check "--no-trace: the directory held at most a few files while it ran ($most)" test "$most" -ge 1 -a "$most" -le 8
check "--no-trace: nothing left ($(ls -A "$T/tmp" | tr '\n' ' '))" test -z "$(ls -A "$T/tmp")"
check "--no-trace: said so" grep -q 'no trace kept' none.err
check "--no-trace: no trace in the working directory" sh -c '! ls python3.*.ctf >/dev/null 2>&1'
finish
