#!/bin/sh
# engines.sh - 'memtrace run --push' to loopback stand-ins for Pyroscope
# (Push, and /ingest for older servers), Parca and an OpenTelemetry
# collector (tests/push/server.py), every request decoded independently
# (tests/push/check.py: JSON, base64, gzip, protoc-compiled OTLP messages,
# profcheck's rules; each pprof payload by 'go tool pprof'). Known answers:
# the program holds 64 MiB (a Python bytearray) while pushes go out, so
# some push has about 64 MiB in use; alloc_* are each interval's, so over
# every push they add up to what the whole trace allocated; the program's
# exit status (3) is memtrace's.
[ "${MT_STAGE:-plain}" = plain ] || { echo "runs programs under the plain recorder: plain stage only"; exit 77; }
. tests/push/support/lib.sh
push_python
HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS= GO111MODULE=off
export HOME GOCACHE GOPATH GOFLAGS GO111MODULE
mkdir -p "$HOME"

# --- Pyroscope: path guessed from the URL, tenant, bearer token, labels
server_start pyro ok
printf 'Bearer s3cret-token\n' > "$T/token"; chmod 600 "$T/token"
run_push pyro --push "$URL/push.v1.PusherService/Push" --push-every 200ms --label env=test \
    --label region=eu-west --push-tenant team-a --push-auth-file "$T/token"
wait_file "$S/0003.json" || fail "pyroscope: 3 pushes within 120 s"
stop_run pyro
check "pyroscope: memtrace's status is the program's (3; got $RUN_ST)" test "$RUN_ST" = 3
server_stop
"$PY" "$HERE/check.py" pyroscope "$S" "$S" > "$T/pyro.check" 2>&1 || fail "pyroscope: check.py: $(cat "$T/pyro.check")"
grep '^FAIL' "$T/pyro.check"
n=$(ls "$S" | grep -c '^[0-9]*\.json$')
check "pyroscope: the summary counts what the server got ($n)" \
    grep -q "push: $n sent, 0 dropped" "$T/pyro.err"
check "pyroscope: service_name is the program's, --label's kept" \
    awk -F'\t' '$3 != "python3" || $8 !~ /env=test/ || $8 !~ /region=eu-west/ { bad = 1 } END { exit bad || NR < 3 }' "$S/summary.tsv"
check "pyroscope: X-Scope-OrgID and the bearer token on every request" \
    "$PY" -c 'import glob, json, sys
h = [json.load(open(f))["headers"] for f in glob.glob(sys.argv[1] + "/[0-9]*.json")]
sys.exit(not h or any(x.get("X-Scope-OrgID") != "team-a" or x.get("Authorization") != "Bearer s3cret-token" for x in h))' "$S"
check_pprofs pyroscope "$S" "$T/pyro.ctf"

# --- Parca: format given, path appended to a base URL, basic auth,
# service_name overridden
server_start parca ok
printf 'alice:pa ss\n' > "$T/basic"; chmod 600 "$T/basic"
run_push parca --push "$URL/" --push-format parca --push-every 200ms \
    --label service_name=billing --push-auth-file "$T/basic"
wait_file "$S/0003.json" || fail "parca: 3 pushes within 120 s"
stop_run parca
check "parca: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
server_stop
"$PY" "$HERE/check.py" parca "$S" "$S" > "$T/parca.check" 2>&1 || fail "parca: check.py: $(cat "$T/parca.check")"
grep '^FAIL' "$T/parca.check"
check "parca: --label service_name=billing replaces the program's name" \
    awk -F'\t' '$3 != "billing" { bad = 1 } END { exit bad || NR < 3 }' "$S/summary.tsv"
check "parca: basic auth from the file" \
    "$PY" -c 'import base64, glob, json, sys
h = [json.load(open(f))["headers"] for f in glob.glob(sys.argv[1] + "/[0-9]*.json")]
want = "Basic " + base64.b64encode(b"alice:pa ss").decode()
sys.exit(not h or any(x.get("Authorization") != want for x in h))' "$S"
check_pprofs parca "$S" "$T/parca.ctf"

# --- Pyroscope's /ingest (older servers): guessed from the URL's path;
# the query names SERVICE{labels} and each interval in seconds
server_start ingest ok
run_push ingest --push "$URL/ingest" --push-every 200ms --label env=test --push-tenant team-b
wait_file "$S/0003.json" || fail "ingest: 3 pushes within 120 s"
stop_run ingest
check "ingest: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
server_stop
"$PY" "$HERE/check.py" pyroscope-ingest "$S" "$S" > "$T/ingest.check" 2>&1 || fail "ingest: check.py: $(cat "$T/ingest.check")"
grep '^FAIL' "$T/ingest.check"
n=$(ls "$S" | grep -c '^[0-9]*\.json$')
check "ingest: the summary counts what the server got ($n)" grep -q "push: $n sent, 0 dropped" "$T/ingest.err"
check "ingest: name=python3{env=test} on every request" \
    awk -F'\t' '$3 != "python3" || $8 != "env=test,service_name=python3" { bad = 1 } END { exit bad || NR < 3 }' "$S/summary.tsv"
check "ingest: the intervals follow one another (from = the previous until), within the run" \
    "$PY" -c 'import sys, time
rows = [l.split("\t") for l in open(sys.argv[1])]
t = [(int(r[5]), int(r[5]) + int(r[6])) for r in rows]
now = time.time()
sys.exit(len(t) < 3 or any(b[0] != a[1] for a, b in zip(t, t[1:])) or not (now - 600 < t[0][0] <= t[-1][1] <= now + 1))' "$S/summary.tsv"
check "ingest: X-Scope-OrgID on every request" \
    "$PY" -c 'import glob, json, sys
h = [json.load(open(f))["headers"] for f in glob.glob(sys.argv[1] + "/[0-9]*.json")]
sys.exit(not h or any(x.get("X-Scope-OrgID") != "team-b" for x in h))' "$S"
check_pprofs ingest "$S" "$T/ingest.ctf"

# --- OTLP
server_start otlp ok
run_push otlp --push "$URL/v1development/profiles" --push-every 200ms --label deployment=blue
wait_file "$S/0004.json" || fail "otlp: 4 pushes within 120 s"
stop_run otlp
check "otlp: status 3 (got $RUN_ST)" test "$RUN_ST" = 3
server_stop
"$PY" "$HERE/check.py" otlp "$S" "$S" > "$T/otlp.check" 2>&1 || fail "otlp: check.py: $(cat "$T/otlp.check")"
grep '^FAIL' "$T/otlp.check"
check "otlp: every request passes profcheck's rules ($(tail -n 1 "$T/otlp.check"))" \
    grep -q ', 0 failures' "$T/otlp.check"
check "otlp: a push while the program holds 64 MiB shows 64-74 MiB in use" \
    awk -F'\t' -v lo=$((64 << 20)) -v hi=$((74 << 20)) '$4 >= lo && $4 <= hi { n++ } END { exit !n }' "$S/summary.tsv"
# alloc_* are the intervals' deltas: their sum is the whole trace's total
# (memtrace stats on the finished trace), to a byte per stack and push
total=$(trace_total "$T/otlp.ctf")
sum=$(awk -F'\t' '{ s += $5 } END { printf "%.0f", s }' "$S/summary.tsv")
check "otlp: the pushes' alloc_space deltas add up to the trace's $total bytes (got $sum)" \
    awk -v a="$sum" -v b="$total" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 64 * 2^20 && d <= 0.001 * b) }'
check "otlp: the intervals follow one another (each starts where the one before ended)" \
    "$PY" -c 'import sys
rows = [l.split("\t") for l in open(sys.argv[1])]
t = [(int(r[5]), int(r[6])) for r in rows]
sys.exit(len(t) < 4 or any(b[0] != a[0] + a[1] - 1 for a, b in zip(t, t[1:])))' "$S/summary.tsv"
check "otlp: resource attributes and --label's" \
    awk -F'\t' '$8 !~ /deployment=blue/ || $8 !~ /process.executable.name=python3/ || $8 !~ /service.name=python3/ { bad = 1 } END { exit bad }' "$S/summary.tsv"

# --- a program that ends before the first interval: the one push, at the
# end, still names its executable's build-id (read from the file once the
# process is gone)
server_start short ok
# (the program is told to stop at once: it ends long before the default
# 60 s interval)
run_push short --push "$URL/v1development/profiles"
stop_run short; st=$RUN_ST
server_stop
"$PY" "$HERE/check.py" otlp "$S" "$S" > "$T/short.check" 2>&1 || fail "short: check.py: $(cat "$T/short.check")"
want=$(readelf -n /usr/bin/python3 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -n 1)
got=$(awk -F'\t' '{ n = split($8, kv, ","); for (i = 1; i <= n; i++) if (kv[i] ~ /^build_id=/) print substr(kv[i], 10) }' "$S/summary.tsv")
check "short: status 3 ($st), one push at the end with python3's build-id ($got, want $want)" \
    test "$st" = 3 -a -n "$want" -a "$got" = "$want"
finish
