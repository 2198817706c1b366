#!/bin/sh
# cli_run.sh - 'memtrace run': options, the default trace name, the rate
# written in the trace, exit status passed through (also for signals and
# commands that cannot be run), and where-the-trace-went messages.
. tests/record/progs/lib.sh
skip_under_tsan
M=$PWD/$MT_BIN

# status_and_err DESCRIPTION STATUS WANT_STATUS REGEX FILE: both must match
status_and_err() {
    if [ "$2" = "$3" ] && grep -q -- "$4" "$5"; then pass "$1"
    else fail "$1 (exit $2, want $3; stderr: $(head -c 300 "$5"))"; fi
}
"$M" run --help >"$T/help" 2>"$T/err"; st=$?
status_and_err "--help exits 0 and prints usage" $st 0 '^usage: memtrace run' "$T/help"
check "--help documents the default interval, 512k" grep -q 'default 512k' "$T/help"
check "--help writes nothing on stderr" test ! -s "$T/err"
"$M" run >/dev/null 2>"$T/err"; st=$?
status_and_err "no command: usage error 2 with the usage" $st 2 '^usage: memtrace run' "$T/err"
"$M" run -i nonsense true >/dev/null 2>"$T/err"; st=$?
status_and_err "bad interval: 2, naming it" $st 2 "^memtrace run: .*'nonsense'" "$T/err"
"$M" run -i 4k -r 0.1 true >/dev/null 2>"$T/err"; st=$?
status_and_err "--interval and --rate: 2, saying not both" $st 2 '^memtrace run: .*not both' "$T/err"
"$M" run -r 2 true >/dev/null 2>"$T/err"; st=$?
status_and_err "rate > 1: 2, naming it" $st 2 "^memtrace run: .*rate '2'" "$T/err"

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
status_and_err "command not found: 127 with a message naming it" $st 127 '^memtrace run: .*/nonexistent/prog' "$T/err"
MEMTRACE_LIB=/nonexistent/libmemtrace.so "$M" run true 2>"$T/err"; st=$?
status_and_err "missing library: 1 with a message" $st 1 '^memtrace run: .*libmemtrace' "$T/err"
cd "$OLDPWD"
finish
