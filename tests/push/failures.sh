#!/bin/sh
# failures.sh - 'memtrace run --push' when the engine is down, refuses,
# asks to slow down, fails, resets the connection or answers slowly: the
# program's exit status is memtrace's all the same, memtrace ends within
# its drain bound (10 s; checked against 60 s), retries happen (the same
# profile sent again, after the Retry-After asked for), and every profile
# not delivered is counted and said in the summary (and while it runs, by
# 'memtrace ctl PID status'). Option errors exit 2
# before the program starts. Every wait is for an event the server saved.
[ "${MT_STAGE:-plain}" = plain ] || { echo "runs programs under the plain recorder: plain stage only"; exit 77; }
. tests/push/support/lib.sh
push_python
jtime() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["time"])' "$1"; }
elapsed_le() { # T0 T1 MAX
    awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { exit !(b - a <= m) }'
}

# --- down: nothing listens on the port
server_start down ok; server_stop
run_push down --push "$URL/push.v1.PusherService/Push" --push-every 200ms
wait_file "$T/down.ctf" || fail "down: the program started"
# while it runs, 'memtrace ctl PID status' says the drops (the queue of 16
# fills within seconds: a profile every 200 ms, none delivered)
mp=$(pgrep -P "$RUN_PID"); pp=$(pgrep -P "$mp")
_n=1200
until "$M" ctl "$pp" status > "$T/down.status" 2>&1 &&
      grep -Eq "push to .* by process $mp: 0 sent, [1-9][0-9]* dropped \([1-9][0-9]* queue full" "$T/down.status" ||
      [ $_n = 0 ]; do sleep 0.1; _n=$((_n - 1)); done
check "down: 'ctl PID status' says the drops while it runs ($(tail -n 1 "$T/down.status"))" \
    grep -Eq "push to .* by process $mp: 0 sent, [1-9][0-9]* dropped \([1-9][0-9]* queue full" "$T/down.status"
t0=$(date +%s); stop_run down; t1=$(date +%s)
check "down: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
check "down: memtrace ended within 60 s of the program ($((t1 - t0)) s)" elapsed_le "$t0" "$t1" 60
check "down: nothing sent, the drops counted and said ($(grep 'push:' "$T/down.err"))" \
    grep -Eq 'push: 0 sent, [1-9][0-9]* dropped \(.*(undelivered at exit|queue full|retries exhausted).*Couldn.t connect' "$T/down.err"

# --- 429 with Retry-After: 1, then ok: the same profile again, a second later
server_start r429 429once
run_push r429 --push "$URL/profiles/writeraw" --push-every 200ms
wait_file "$S/0003.json" || fail "429: 3 requests within 120 s"
stop_run r429; server_stop
check "429: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
check "429: the refused profile is sent again, unchanged" cmp -s "$S/0001.body" "$S/0002.body"
a=$(jtime "$S/0001.json"); b=$(jtime "$S/0002.json")
check "429: the retry came after Retry-After's second ($a -> $b)" \
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b - a >= 0.95) }'
check "429: nothing dropped, the retry counted ($(grep 'push:' "$T/r429.err"))" \
    grep -Eq 'push: [1-9][0-9]* sent, 0 dropped, [1-9][0-9]* retries' "$T/r429.err"

# --- 500 twice, then ok: backoff 1 s then 2 s
server_start r500 500twice
run_push r500 --push "$URL/profiles/writeraw" --push-every 200ms
wait_file "$S/0003.json" || fail "500: 3 requests within 120 s"
stop_run r500; server_stop
check "500: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
check "500: the same profile until it is taken" sh -c "cmp -s '$S/0001.body' '$S/0002.body' && cmp -s '$S/0001.body' '$S/0003.body'"
a=$(jtime "$S/0002.json"); b=$(jtime "$S/0003.json")
check "500: the backoff doubles (second wait >= 1.9 s: $a -> $b)" \
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b - a >= 1.9) }'
check "500: nothing dropped ($(grep 'push:' "$T/r500.err"))" grep -Eq 'push: [1-9][0-9]* sent, 0 dropped' "$T/r500.err"

# --- reset: the connection closed without an answer, twice
server_start reset reset
run_push reset --push "$URL/profiles/writeraw" --push-every 200ms
wait_file "$S/0003.json" || fail "reset: 3 requests within 120 s"
stop_run reset; server_stop
check "reset: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
check "reset: the profile is sent again" cmp -s "$S/0001.body" "$S/0003.body"
check "reset: nothing dropped ($(grep 'push:' "$T/reset.err"))" grep -Eq 'push: [1-9][0-9]* sent, 0 dropped' "$T/reset.err"

# --- 400: refused, dropped at once with one message, not retried
server_start r400 reject400
run_push r400 --push "$URL/profiles/writeraw" --push-every 200ms
wait_file "$S/0003.json" || fail "400: 3 requests within 120 s"
stop_run r400; server_stop
n=$(ls "$S" | grep -c '^[0-9]*\.json$')
check "400: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
check "400: one message for every refusal" test "$(grep -c 'refused (HTTP 400: no thanks)' "$T/r400.err")" = 1
check "400: the $n refused counted, none retried ($(grep 'push:' "$T/r400.err"))" \
    grep -Eq "push: 0 sent, $n dropped \\($n refused by the server; last: HTTP 400: no thanks\\)\$" "$T/r400.err"

# --- 500 for ever: 5 attempts, then the profile is given up (a push every
# 2 s: the 15 s of backoff fill 7 of the queue's 16 places, so the profile
# retried is not the oldest one dropped for room)
server_start r500x always500
run_push r500x --push "$URL/profiles/writeraw" --push-every 2s
wait_file "$S/0005.json" || fail "always 500: 5 requests within 120 s"
stop_run r500x; server_stop
check "always 500: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
same5() { for i in 2 3 4 5; do cmp -s "$S/0001.body" "$S/000$i.body" || return 1; done; }
check "always 500: the first profile tried 5 times" same5
check "always 500: given up and said ($(grep 'push:' "$T/r500x.err"))" \
    sh -c "grep -q 'after 5 attempts: profile dropped' '$T/r500x.err' && grep -Eq 'push: 0 sent, [0-9]+ dropped \\(.*retries exhausted' '$T/r500x.err'"

# --- slow: the server takes 90 s to answer (over the 30 s request bound)
server_start slow slow 90
run_push slow --push "$URL/profiles/writeraw" --push-every 200ms
wait_file "$S/0001.json" || fail "slow: a request within 120 s"
t0=$(date +%s); stop_run slow; t1=$(date +%s)
check "slow: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
check "slow: memtrace ended within 60 s of the program ($((t1 - t0)) s)" elapsed_le "$t0" "$t1" 60
check "slow: the undelivered counted ($(grep 'push:' "$T/slow.err"))" \
    grep -Eq 'push: 0 sent, [1-9][0-9]* dropped \(.*undelivered at exit' "$T/slow.err"
server_stop

# --- option errors: exit 2, the program never runs
bad() { # WHAT EXPECTED-MESSAGE ARGS...
    _w=$1 _m=$2; shift 2
    rm -f "$T/bad.ctf"
    "$M" run "$@" -o "$T/bad.ctf" -- /bin/true > /dev/null 2> "$T/bad.err"; _st=$?
    check "$_w: exit 2, '$_m' (got $_st: $(head -c 300 "$T/bad.err"))" \
        sh -c "[ $_st = 2 ] && grep -q -- '$_m' '$T/bad.err' && [ ! -e '$T/bad.ctf' ]"
}
printf 'Bearer x\n' > "$T/open-token"; chmod 644 "$T/open-token"
bad "an auth file others may read" "readable by others than its owner" \
    --push http://127.0.0.1:9/ingest --push-format pyroscope --push-auth-file "$T/open-token"
printf 'no colon no bearer\n' > "$T/odd-token"; chmod 600 "$T/odd-token"
bad "an auth file of neither form" "Bearer TOKEN" \
    --push http://127.0.0.1:9/x --push-format parca --push-auth-file "$T/odd-token"
bad "a URL whose path names no format" "give --push-format" --push http://127.0.0.1:9/somewhere
bad "not http" "expected an http" --push ftp://127.0.0.1/v1development/profiles
bad "a label name engines refuse" "expected NAME=VALUE" \
    --push http://127.0.0.1:9/v1development/profiles --label 'bad-name=1'
bad "--push-every below 100ms" "at least 100ms" \
    --push http://127.0.0.1:9/v1development/profiles --push-every 10ms
bad "push options without --push" "need --push URL" --label env=x
finish
