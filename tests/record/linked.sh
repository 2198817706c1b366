#!/bin/sh
# linked.sh - the recorder linked into a program (-lmemtrace) instead of
# preloaded: tracing started by memtrace_start_tracing with a context, or
# by MEMTRACE through memtrace_trace_if_requested (which the library also
# calls at load time: calling it again must not complain).
. tests/record/progs/lib.sh
skip_under_tsan
A=$MT_BUILD/tests/record/linked-app

out=$(env -u MEMTRACE -u MEMTRACE_ROOT "$A" "$T/api.ctf" 2>"$T/err"); st=$?
check "API: runs ($st, $out)" test "$st" = 0 -a "$out" = "requested=0 stop=0"
check "API: nothing on stderr" test ! -s "$T/err"
"$MT_BIN" symbolize -q "$T/api.ctf" || fail "API: trace symbolizes"
summary "$T/api.ctf" >"$T/api.sum" || fail "API: trace readable"
check "API: context and rate" grep -q '^CONTEXT linked api$' "$T/api.sum"
check "API: allocation site named" grep -q '^SITE linked_site ' "$T/api.sum"

out=$(env -u MEMTRACE_ROOT MEMTRACE="$T/env.ctf" MEMTRACE_RATE=0.001 "$A" 2>"$T/err"); st=$?
check "MEMTRACE: runs ($st, $out)" test "$st" = 0 -a "$out" = "requested=1 stop=0"
check "MEMTRACE: nothing on stderr" test ! -s "$T/err"
"$MT_BIN" symbolize -q "$T/env.ctf" || fail "MEMTRACE: trace symbolizes"
summary "$T/env.ctf" >"$T/env.sum" || fail "MEMTRACE: trace readable"
check "MEMTRACE: rate from MEMTRACE_RATE" grep -q '^INFO .* rate=0.001 ' "$T/env.sum"
awk '$1 == "SITE" && $2 == "linked_site" { est = $3 }
     END { t = 100000 * 1000 + 1048576; sd = sqrt(1000 * t); d = est - t; if (d < 0) d = -d
           printf "%s: estimated bytes %d, truth %d (%.1f sd)\n", d <= 5 * sd ? "PASS" : "FAIL", est, t, d / sd }' "$T/env.sum"
finish
