#!/bin/sh
# cli_run.sh - 'memtrace run': options, the default trace name, the rate
# written in the trace, exit status passed through (also for signals and
# commands that cannot be run), and where-the-trace-went messages.
. tests/record/progs/lib.sh
skip_under_tsan
M=$PWD/$MT_BIN

"$M" run --help >"$T/help" 2>&1; st=$?
check "--help exits 0 and prints usage" test "$st" = 0 && grep -q '^usage: memtrace run' "$T/help"
"$M" run >/dev/null 2>&1; check "no command: usage error 2" test $? = 2
"$M" run -i nonsense true >/dev/null 2>&1; check "bad interval: 2" test $? = 2
"$M" run -i 4k -r 0.1 true >/dev/null 2>&1; check "--interval and --rate: 2" test $? = 2
"$M" run -r 2 true >/dev/null 2>&1; check "rate > 1: 2" test $? = 2

cd "$T" || exit 1
"$M" run -i 64k -- "$OLDPWD/$PROGS/forker" child 2>"$T/err"; st=$?
check "runs the command (status $st)" test "$st" = 0
f=$(ls forker.*.ctf 2>/dev/null | head -n 1)
check "default trace name CMD.PID.ctf ($f)" test -n "$f"
check "says where the trace went" grep -q "^memtrace run: trace written to $f\$" "$T/err"
check "rate is 1/interval" sh -c "'$OLDPWD/$PROGS/summary' '$f' | grep -q '^INFO .* rate=1.52587890625e-05 word_size=8 '"

"$M" run -o "$T/five.ctf" sh -c 'exit 5' 2>/dev/null; check "exit status passed through (5)" test $? = 5
"$M" run -o "$T/kill.ctf" sh -c 'kill -9 $$' 2>/dev/null; st=$?
check "killed by SIGKILL: 137 ($st)" test "$st" = 137
"$M" run -o "$T/none.ctf" /nonexistent/prog 2>"$T/err"; st=$?
check "command not found: 127 ($st) with a message" test "$st" = 127 && grep -q 'nonexistent/prog' "$T/err"
MEMTRACE_LIB=/nonexistent/libmemtrace.so "$M" run true 2>/dev/null
check "missing library: 1" test $? = 1
cd "$OLDPWD"
finish
