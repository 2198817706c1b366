#!/bin/sh
# names.sh - a trace never symbolized (recorded under bare LD_PRELOAD, or by
# a `memtrace run` killed before its symbolize step) is named by every
# report and the viewer as they read it, from the binaries on this machine
# whose build-id is the recorded one: top, stats, lifetimes, folded, pprof,
# diff, check, dump and the viewer's API give function names and lines
# with no `memtrace symbolize`. A binary rebuilt since (another build-id)
# or gone is not used: its frames stay module+0xoffset (never another
# program's names) and a note names it.
set -u
: "${MT_BIN:=build/memtrace}" "${MT_BUILD:=build}" "${MT_TMP:=/tmp}" "${MT_STAGE:=plain}"
# The traces are recorded by the plain build's recorder (a sanitized one
# cannot be preloaded into plain programs); the CLI under test reads them.
LIB=$PWD/build/libmemtrace.so
[ -f "$LIB" ] || { echo "needs the plain build's recorder (make): $LIB"; exit 77; }
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing (scripts/install-deps.sh test)"; exit 1; }
. "$(dirname "$0")/../viewer/lib.inc"   # start_viewer, pass, fail, check
T=$MT_TMP

cp tests/record/progs/rawnames.c "$T/prog.c"
cc -O0 -g -fno-omit-frame-pointer -o "$T/prog" "$T/prog.c" || { fail "cannot compile the test program"; exit 1; }
record() { # record TRACE PROGRAM: bare LD_PRELOAD, no symbolize step
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$1" MEMTRACE_RATE=0.0001 "$2"
}
record "$T/a.ctf" "$T/prog" || { fail "the program ran under the recorder"; exit 1; }
"$MT_BIN" dump --raw-frames "$T/a.ctf" | grep -q ' prog+0x[0-9a-f]*$' &&
    pass "the trace holds raw frames (prog+0xoffset)" || fail "the trace holds raw frames"
cp "$T/a.ctf" "$T/a.orig"

# ------------------------------------------------------------- reports
"$MT_BIN" top -n 3 "$T/a.ctf" >"$T/top" 2>"$T/top.err"
check "top: leaky with file and line, without symbolize" grep -q 'leaky (.*prog.c:14)' "$T/top"
check "top: its caller main" grep -q '<- main (.*prog.c:' "$T/top"
check "top: no note, no advice to symbolize ($(head -c 200 "$T/top.err"))" test ! -s "$T/top.err"
"$MT_BIN" folded "$T/a.ctf" >"$T/folded"
check "folded: main;leaky and main;churn" sh -c "grep -q '^main;leaky [0-9]*\$' '$T/folded' && grep -q '^main;churn [0-9]*\$' '$T/folded'"
"$MT_BIN" pprof -o "$T/a.pb.gz" "$T/a.ctf"
check "pprof: the profile names leaky and prog.c" sh -c "gzip -dc '$T/a.pb.gz' | grep -aq leaky && gzip -dc '$T/a.pb.gz' | grep -aq prog.c"
all=$("$MT_BIN" stats --json "$T/a.ctf" | grep -o '"total":{"alloc_bytes":[0-9]*' | grep -o '[0-9]*$')
in=$("$MT_BIN" stats --json --filter 'inside:leaky' "$T/a.ctf" | grep -o '"total":{"alloc_bytes":[0-9]*' | grep -o '[0-9]*$')
check "stats --filter inside:leaky: a named function selects its blocks ($in of $all bytes)" \
    sh -c "[ '${in:-0}' -gt 0 ] && [ '${in:-0}' -lt '${all:-0}' ]"
"$MT_BIN" lifetimes --filter 'inside:churn' "$T/a.ctf" >"$T/life"
check "lifetimes --filter inside:churn: churn's samples ($(wc -l <"$T/life") lines)" test "$(wc -l <"$T/life")" -gt 10
"$MT_BIN" diff "$T/a.ctf" "$T/a.ctf" >"$T/diff" 2>&1
check "diff: sites by name" grep -q 'leaky' "$T/diff"
"$MT_BIN" check --site leaky --max-alloc 1KiB "$T/a.ctf" >"$T/check" 2>&1; st=$?
check "check --site leaky: the budget applies to the named site and fails (exit $st)" \
    sh -c "[ $st = 1 ] && grep -qi 'fail' '$T/check'"
"$MT_BIN" dump "$T/a.ctf" >"$T/dump"
check "dump: named frames (function, file:line)" grep -Eq ' [^ ]*prog\.c:14:0-0 leaky$' "$T/dump"
check "the trace itself is untouched" cmp -s "$T/a.ctf" "$T/a.orig"

# ------------------------------------------------------------- viewer
if start_viewer "$T/a.ctf" --port 0 --quiet; then
    curl -s -o "$T/tree.json" "${VIEW_URL}api/tree?dir=sites"
    names=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join(sorted(set(j["funcs"]["name"][j["nodes"]["f"][i]] for i in range(1, j["n"])))))' "$T/tree.json" 2>&1)
    check "viewer api/tree: sites leaky and churn ($names)" sh -c "echo '$names' | grep -qw leaky && echo '$names' | grep -qw churn"
    stop_viewer
fi

# ------------------------------------------------ a run killed midway
# memtrace run killed by SIGKILL never symbolizes: the program goes on and
# writes its trace, raw.
MEMTRACE_LIB=$LIB "$MT_BIN" run -r 0.0001 -o "$T/k.ctf" -- "$T/prog" 1500 >/dev/null 2>&1 &
run=$!
wait_until 300 pgrep -P $run >/dev/null
child=$(pgrep -P $run | head -n 1)
sleep 0.3
kill -KILL $run; wait $run 2>/dev/null
[ -n "$child" ] && wait_until 300 sh -c "! kill -0 $child 2>/dev/null"
if "$MT_BIN" dump --raw-frames "$T/k.ctf" 2>/dev/null | grep -q ' prog+0x[0-9a-f]*$'; then
    "$MT_BIN" top -n 2 "$T/k.ctf" >"$T/ktop" 2>/dev/null
    check "killed run: its raw trace is named by top" grep -q 'leaky (.*prog.c:14)' "$T/ktop"
else
    fail "killed run: a raw trace left ($(ls "$T"/k.ctf* 2>&1 | head -c 200))"
fi

# --------------------------------------------- the binary rebuilt, gone
cp "$T/prog" "$T/app"
record "$T/b.ctf" "$T/app" || fail "app ran"
cc -O0 -g -fno-omit-frame-pointer -DOTHER -o "$T/app" "$T/prog.c"
"$MT_BIN" top -n 3 "$T/b.ctf" >"$T/btop" 2>"$T/b.err"
check "rebuilt binary: frames stay app+0xoffset" grep -Eq 'app\+0x[0-9a-f]+ \(' "$T/btop"
check "rebuilt binary: never the new build's names" sh -c "! grep -Eq 'other_|leaky|churn' '$T/btop'"
check "rebuilt binary: a note names the module that does not match ($(head -c 300 "$T/b.err"))" \
    grep -q "frames in $T/app stay module+0xoffset: the file there is not the one $T/b.ctf was recorded with" "$T/b.err"
check "rebuilt binary: and says to symbolize where it was recorded" grep -q "memtrace symbolize $T/b.ctf" "$T/b.err"
"$MT_BIN" folded "$T/b.ctf" 2>"$T/bf.err" | grep -q 'other_' && fail "folded: the new build's names" || pass "folded: no name from the new build"
check "folded: the note too" grep -q "$T/app stay module+0xoffset" "$T/bf.err"
rm -f "$T/app"
"$MT_BIN" stats "$T/b.ctf" >/dev/null 2>"$T/gone.err"
check "missing binary: a note names it ($(head -c 200 "$T/gone.err"))" \
    grep -q "frames in $T/app stay module+0xoffset: no such file on this machine" "$T/gone.err"

# ------------------------------- already symbolized: output unchanged
cp "$T/a.orig" "$T/s.ctf"
"$MT_BIN" symbolize -q "$T/s.ctf"
"$MT_BIN" top -n 3 "$T/s.ctf" >"$T/stop" 2>/dev/null
sed 's/s\.ctf/a.ctf/' "$T/stop" >"$T/stop2"
check "a symbolized trace and the same trace named as read: the same top" cmp -s "$T/top" "$T/stop2"
exit 0
