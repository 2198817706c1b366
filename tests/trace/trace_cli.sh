#!/bin/sh
# trace_cli.sh - programs/trace_cli.c, what the codec commands (dump,
# info) share: --help on stdout with status 0; no file or two files: what
# is wrong and a pointer to --help on stderr (the option driver's form),
# nothing on stdout, status 2; '-' reads standard input
# and gives what the file gives (but its name); a file that is not there:
# "memtrace CMD: FILE: reason", status 1; a damaged trace's skipped packets
# as "memtrace CMD: warning: FILE: offset N: ..." on stderr, one line
# each, and the rest still read (status 0).
set -u
. tests/lib.sh
T=$MT_TMP
F=$MT_FIXTURES

for cmd in dump info; do
    "$MT_BIN" $cmd --help >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc = 0 ] && head -n 1 "$T/out" | grep -q "^usage: memtrace $cmd " && [ ! -s "$T/err" ]; then
        pass "$cmd --help: the usage on stdout, status 0"
    else
        fail "$cmd --help: status $rc, stdout $(head -n 1 "$T/out")"
    fi
    for args in "" "$F/leak.ctf $F/major.ctf"; do
        # shellcheck disable=SC2086
        "$MT_BIN" $cmd $args >"$T/out" 2>"$T/err"; rc=$?
        if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
           [ "$(cat "$T/err")" = "memtrace $cmd: expected one trace file
memtrace $cmd: see 'memtrace $cmd --help'" ]; then
            pass "$cmd with ${args:+two files}${args:-no file}: what is wrong and --help on stderr, status 2"
        else
            fail "$cmd with ${args:-no file}: status $rc (want 2), stderr $(head -n 1 "$T/err")"
        fi
    done
    "$MT_BIN" $cmd "$T/no-such.ctf" >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc = 1 ] && [ "$(cat "$T/err")" = "memtrace $cmd: $T/no-such.ctf: No such file or directory" ]; then
        pass "$cmd of a missing file: one line naming it, status 1"
    else
        fail "$cmd of a missing file: status $rc, stderr $(head -c 300 "$T/err")"
    fi
done

"$MT_BIN" dump "$F/leak.ctf" >"$T/file.txt" 2>&1 || fail "dump of leak.ctf"
"$MT_BIN" dump - <"$F/leak.ctf" >"$T/stdin.txt" 2>&1 || fail "dump - of leak.ctf"
check "dump -: standard input gives what the file gives ($(wc -l <"$T/file.txt") lines)" \
    cmp -s "$T/file.txt" "$T/stdin.txt"
"$MT_BIN" info "$F/leak.ctf" | sed 1d >"$T/file.txt"
"$MT_BIN" info - <"$F/leak.ctf" >"$T/stdin.txt"
if [ "$(head -n 1 "$T/stdin.txt")" = "file:              -" ] && sed 1d "$T/stdin.txt" | cmp -s - "$T/file.txt"; then
    pass "info -: named '-', the rest as for the file"
else
    fail "info -: $(head -n 1 "$T/stdin.txt")"
fi

"$MT_BIN" dump "$F/rate1_skips.ctf" >"$T/out" 2>"$T/err"; rc=$?
n=$(grep -c "^memtrace dump: warning: $F/rate1_skips.ctf: offset [0-9]*: skipping " "$T/err")
others=$(grep -vc "^memtrace dump: warning: " "$T/err")
if [ $rc = 0 ] && [ "$n" = 2 ] && [ "$others" = 0 ] && tail -n 1 "$T/out" | grep -q '^end'; then
    pass "a damaged trace: its 2 skipped packets as warnings in the CLI's form, the rest read"
else
    fail "a damaged trace: status $rc, $n warnings, $others other lines: $(head -c 300 "$T/err")"
fi
finish
