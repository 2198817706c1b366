#!/bin/sh
# cli_run.sh - 'memtrace run': options, the default trace name, the rate
# written in the trace, exit status passed through (also for signals and
# commands that cannot be run), and where-the-trace-went messages: FILE is
# checked before the command starts; the run ends with a summary of every
# trace it wrote, largest first, that never claims what did not happen (no
# sample, cut short); traces land beside FILE; an empty trace's report
# points at the others; a program started by a symbolic link is named by
# the link.
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
status_and_err "no command: usage error 2, saying so" $st 2 '^memtrace run: expected a command to run$' "$T/err"
check "no command: points at --help" grep -qx "memtrace run: see 'memtrace run --help'" "$T/err"
"$M" run -i nonsense true >/dev/null 2>"$T/err"; st=$?
status_and_err "bad interval: 2, naming it" $st 2 "^memtrace run: --interval nonsense: expected a size" "$T/err"
"$M" run -i 4k -r 0.1 true >/dev/null 2>"$T/err"; st=$?
status_and_err "--interval and --rate: 2, saying not both" $st 2 '^memtrace run: .*not both' "$T/err"
"$M" run -r 2 true >/dev/null 2>"$T/err"; st=$?
status_and_err "rate > 1: 2, naming it" $st 2 "^memtrace run: --rate 2: expected a probability per byte" "$T/err"

cd "$T" || exit 1
"$M" run -i 64k -- "$OLDPWD/$PROGS/forker" child 2>"$T/err"; st=$?
check "runs the command (status $st)" test "$st" = 0
f=$(ls forker.*.ctf 2>/dev/null | head -n 1)
check "default trace name CMD.PID.ctf ($f)" test -n "$f"
check "says where the trace went, with samples and bytes: $(cat "$T/err")" \
    grep -q "^memtrace run: trace written to $f: [1-9][0-9]* samples, .* allocated (estimated)\$" "$T/err"
check "rate is 1/interval" sh -c "'$OLDPWD/$PROGS/summary' '$f' | grep -q '^INFO .* rate=1.52587890625e-05 word_size=8 '"

"$M" run -o "$T/five.ctf" sh -c 'exit 5' 2>/dev/null; check "exit status passed through (5)" test $? = 5
"$M" run -o "$T/kill.ctf" sh -c 'kill -9 $$' 2>/dev/null; st=$?
check "killed by SIGKILL: 137 ($st)" test "$st" = 137
"$M" run -o "$T/none.ctf" /nonexistent/prog 2>"$T/err"; st=$?
status_and_err "command not found: 127 with a message naming it" $st 127 '^memtrace run: .*/nonexistent/prog' "$T/err"
MEMTRACE_LIB=/nonexistent/libmemtrace.so "$M" run true 2>"$T/err"; st=$?
status_and_err "missing library: 1 with a message" $st 1 '^memtrace run: .*libmemtrace' "$T/err"
cd "$OLDPWD"

# FILE that cannot be written: one line, exit 2, the command never runs.
mkdir -p "$T/adir"
ln -sf "$T/elsewhere" "$T/alink.ctf"
for o in "$T/adir" "$T/missing/x.ctf" "$T/alink.ctf"; do
    "$M" run -o "$o" -- sh -c 'echo ran' >"$T/out" 2>"$T/err"; st=$?
    check "-o $o: exit 2 before running ($st, $(cat "$T/out"))" test "$st" = 2 -a ! -s "$T/out"
    check "-o $o: one line naming it, no claim of a trace: $(cat "$T/err")" \
        sh -c "[ \$(wc -l <'$T/err') = 1 ] && grep -q '^memtrace run: $o: ' '$T/err' && ! grep -q written '$T/err'"
done
# A directory we may not write to (as root: run as nobody).
R=$(mktemp -d /tmp/memtrace-ro.XXXXXX) && chmod 755 "$R"
as_user=
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
    chmod 555 "$R"
fi
if [ "$(id -u)" != 0 ] || [ -n "$as_user" ]; then
    $as_user "$M" run -o "$R/x.ctf" -- sh -c 'echo ran' >"$T/out" 2>"$T/err"; st=$?
    check "-o in a directory we cannot write: exit 2 before running ($st): $(cat "$T/err")" \
        test "$st" = 2 -a ! -s "$T/out" -a "$(wc -l <"$T/err")" = 1
fi
rmdir "$R"

# A wrapper that allocates next to nothing (a shell: about 2 KiB, sampled
# once in 2000 runs at this interval) and a relative FILE: the program's trace is
# listed first, FILE is listed with no samples, every trace lands beside
# FILE even if the program runs elsewhere, and processes that sampled
# nothing (/bin/true allocates nothing) leave no file.
mkdir -p "$T/w/sub"
(cd "$T/w" && "$M" run -i 4m -o wrap.ctf -- sh -c 'cd sub && /bin/true && exec "$1" hold 0' - \
    "$OLDPWD/$PROGS/faults") 2>"$T/err"; st=$?
check "wrapper: status 0 ($st)" test "$st" = 0
check "wrapper: nothing written where the program ran" test -z "$(ls "$T/w/sub")"
files=$(cd "$T/w" && ls wrap.ctf* | grep -vc '\.rss$')   # FILE.rss: resident memory
check "wrapper: FILE and one FILE.PID, no empty ones ($(ls "$T/w" | tr '\n' ' '))" test "$files" = 2
check "wrapper: summary header: $(head -n 1 "$T/err")" \
    grep -q '^memtrace run: 2 traces, largest first:$' "$T/err"
first=$(sed -n 3p "$T/err")
check "wrapper: the program's trace first: $first" \
    sh -c "echo '$first' | grep -q ' faults hold 0  *wrap\.ctf\.[0-9]*\$'"
check "wrapper: the shell's trace listed as empty: $(sed -n 4p "$T/err")" \
    sh -c "sed -n 4p '$T/err' | grep -q '  0  *0 B  sh -c .* wrap\.ctf (no samples)\$'"
"$M" top "$T/w/wrap.ctf" >/dev/null 2>"$T/top.err"
check "top of the empty FILE says so and points at the program's trace: $(cat "$T/top.err")" \
    sh -c "grep -q 'wrap.ctf has no samples' '$T/top.err' && grep -q 'wrap\.ctf\.[0-9]*: .* allocated, [1-9][0-9]* samples, faults hold 0' '$T/top.err'"

# The siblings of an empty trace are FILE.PID and FILE.PID.K only.
mkdir -p "$T/sib"
"$M" run -i 1g -o "$T/sib/e.ctf" -- /bin/true 2>/dev/null
for n in 1234 1234.5 bak 12x; do cp "$(ls "$T/w/wrap.ctf".[0-9]* | grep -v '\.rss$')" "$T/sib/e.ctf.$n"; done
"$M" top "$T/sib/e.ctf" >/dev/null 2>"$T/top.err"
check "siblings: FILE.1234 and FILE.1234.5, not FILE.bak or FILE.12x: $(grep -c 'e\.ctf\.' "$T/top.err") listed" \
    sh -c "grep -q 'e\.ctf\.1234: ' '$T/top.err' && grep -q 'e\.ctf\.1234\.5: ' '$T/top.err' && [ \$(grep -c 'e\.ctf\.' '$T/top.err') = 2 ]"

# No sample at all: said so, not just "written".
"$M" run -o "$T/nosample.ctf" -- /bin/true 2>"$T/err"
check "no sample: says so: $(cat "$T/err")" \
    grep -q '^memtrace run: trace written to .*nosample.ctf, with no samples' "$T/err"

# A process tree: every file of the run is listed once, largest first.
"$M" run -i 64k -o "$T/tree.ctf" -- "$PROGS/forker" fork >/dev/null 2>"$T/err"
nfiles=$(ls "$T"/tree.ctf* | grep -vc '\.rss$')
check "tree: $nfiles traces, all listed: $(head -n 1 "$T/err")" \
    grep -q "^memtrace run: $nfiles traces, largest first:\$" "$T/err"
check "tree: listed largest first (samples $(sed -n '3,$p' "$T/err" | awk '{printf "%s ", $2}'))" \
    sh -c "sed -n '3,\$p' '$T/err' | awk 'NR > 1 && \$2 > prev { bad = 1 } { prev = \$2 } END { exit bad }'"

# A process killed before it finished its trace: listed as not finished.
MEMTRACE_FLUSH_MS=50 "$M" run -o "$T/k.ctf" -- sh -c '"$1" hold 300 9; true' - "$PROGS/faults" \
    2>"$T/err"
check "killed child: its trace is listed as not finished: $(grep 'k.ctf\.' "$T/err")" \
    grep -q ' faults hold 300 9 .*k\.ctf\.[0-9]* (not finished by its process: ' "$T/err"

# A write error (file size limit): the trace is cut short, not "written".
(ulimit -f 16; "$M" run -r 0.001 -o "$T/cut.ctf" -- "$PROGS/forker" child) >/dev/null 2>"$T/err"; st=$?
check "write error: status 0 ($st)" test "$st" = 0
check "write error: the summary says cut short: $(grep 'memtrace run' "$T/err")" \
    sh -c "grep -q '^memtrace run: trace .*cut.ctf is cut short' '$T/err' && ! grep -q 'written to' '$T/err'"

# A program started by a symbolic link (redis-server -> redis-check-rdb):
# the trace names it by the link it was started by, not the link's target.
mkdir -p "$T/bin"; ln -sf "$PWD/$PROGS/faults" "$T/bin/alias-of-faults"
PATH=$T/bin:$PATH "$M" run -o "$T/alias.ctf" -- alias-of-faults _exit >/dev/null 2>&1
exe=$("$M" info "$T/alias.ctf" | sed -n 's/^executable: *//p')
check "started by a link: the trace's executable is the link ($exe)" test "$exe" = "$T/bin/alias-of-faults"
check "started by a link: stats names it so" \
    sh -c "'$M' stats '$T/alias.ctf' 2>/dev/null | head -n 1 | grep -q '^trace  *$T/bin/alias-of-faults '"
finish
