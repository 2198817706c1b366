#!/bin/sh
# progress.sh - a report reading a big trace shows how far it got on stderr
# when stderr is a terminal ("memtrace top: reading 42%", cleared at the
# end), and prints nothing of the kind when stderr is a file.
set -u
. tests/lib.sh
B=${MT_BUILD:-build}
BIN=${MT_BIN:-$B/memtrace}
T=${MT_TMP:-/tmp}
command -v script > /dev/null || { echo "SKIP: no script(1) for a terminal"; exit 77; }
[ -x "$B/bench/viewer-gen" ] || make -s --no-print-directory BUILD="$B" bench-tools > /dev/null 2>&1
[ -x "$B/bench/viewer-gen" ] || { echo "FAIL: cannot build $B/bench/viewer-gen"; exit 1; }
# big enough that a report takes well over the first line's 250 ms on an
# idle machine, on two threads (6M events took about 0.25 s)
"$B/bench/viewer-gen" "$T/progress.ctf" 20000000 > /dev/null
# diff reads its two sides at once: one line for both, which never goes
# back, and is cleared at the end
script -qec "$BIN diff $T/progress.ctf $T/progress.ctf > $T/out.txt" "$T/tty.txt" > /dev/null 2>&1
tr '\r' '\n' < "$T/tty.txt" | sed -n 's/.*memtrace diff: reading \([0-9]*\)%.*/\1/p' > "$T/pct.txt"
if [ -s "$T/pct.txt" ] && awk 'NR > 1 && $1 < last { bad = 1 } { last = $1 } $1 > 100 { bad = 1 } END { exit bad }' "$T/pct.txt"; then
    pass "diff shows one percent for both sides, never going back ($(tr '\n' ' ' < "$T/pct.txt"))"
else
    fail "diff's percent read: $(tr '\n' ' ' < "$T/pct.txt")"
fi
if tr '\r' '\n' < "$T/tty.txt" | tail -n 2 | grep -aq "reading"; then
    fail "diff clears the progress line at the end"
else
    pass "diff clears the progress line at the end"
fi
for cmd in top folded; do
    script -qec "$BIN $cmd $T/progress.ctf > $T/out.txt" "$T/tty.txt" > /dev/null 2>&1
    if grep -aq "memtrace $cmd: reading [0-9]*%" "$T/tty.txt"; then
        pass "$cmd shows the percent read on a terminal"
    else
        fail "$cmd shows the percent read on a terminal: $(head -c 300 "$T/tty.txt")"
    fi
    # the last thing on the terminal is the line being cleared
    if tr '\r' '\n' < "$T/tty.txt" | tail -n 2 | grep -aq "reading"; then
        fail "$cmd clears the progress line at the end"
    else
        pass "$cmd clears the progress line at the end"
    fi
    [ -s "$T/out.txt" ] && pass "$cmd still writes its report" || fail "$cmd still writes its report"
    "$BIN" $cmd "$T/progress.ctf" > /dev/null 2> "$T/err.txt"
    if [ -s "$T/err.txt" ]; then
        fail "$cmd prints no progress when stderr is a file: $(head -c 200 "$T/err.txt")"
    else
        pass "$cmd prints no progress when stderr is a file"
    fi
done
finish
