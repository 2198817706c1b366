#!/bin/sh
# progress.sh - a report reading a big trace shows how far it got on stderr
# when stderr is a terminal ("memtrace top: reading 42%", cleared at the
# end), and prints nothing of the kind when stderr is a file.
set -u
B=${MT_BUILD:-build}
BIN=${MT_BIN:-$B/memtrace}
T=${MT_TMP:-/tmp}
command -v script > /dev/null || { echo "SKIP: no script(1) for a terminal"; exit 77; }
[ -x "$B/bench/viewer-gen" ] || make -s --no-print-directory BUILD="$B" bench-tools > /dev/null 2>&1
[ -x "$B/bench/viewer-gen" ] || { echo "FAIL: cannot build $B/bench/viewer-gen"; exit 1; }
# big enough that a report takes well over the first line's 250 ms on an
# idle machine, on two threads (6M events took about 0.25 s)
"$B/bench/viewer-gen" "$T/progress.ctf" 20000000 > /dev/null
fail=0
ok() { echo "PASS: $1"; }
ko() { echo "FAIL: $1"; fail=1; }
# diff reads its two sides at once: one line for both, which never goes
# back, and is cleared at the end
script -qec "$BIN diff $T/progress.ctf $T/progress.ctf > $T/out.txt" "$T/tty.txt" > /dev/null 2>&1
tr '\r' '\n' < "$T/tty.txt" | sed -n 's/.*memtrace diff: reading \([0-9]*\)%.*/\1/p' > "$T/pct.txt"
if [ -s "$T/pct.txt" ] && awk 'NR > 1 && $1 < last { bad = 1 } { last = $1 } $1 > 100 { bad = 1 } END { exit bad }' "$T/pct.txt"; then
    ok "diff shows one percent for both sides, never going back ($(tr '\n' ' ' < "$T/pct.txt"))"
else
    ko "diff's percent read: $(tr '\n' ' ' < "$T/pct.txt")"
fi
if tr '\r' '\n' < "$T/tty.txt" | tail -n 2 | grep -aq "reading"; then
    ko "diff clears the progress line at the end"
else
    ok "diff clears the progress line at the end"
fi
for cmd in top folded; do
    script -qec "$BIN $cmd $T/progress.ctf > $T/out.txt" "$T/tty.txt" > /dev/null 2>&1
    if grep -aq "memtrace $cmd: reading [0-9]*%" "$T/tty.txt"; then
        ok "$cmd shows the percent read on a terminal"
    else
        ko "$cmd shows the percent read on a terminal: $(head -c 300 "$T/tty.txt")"
    fi
    # the last thing on the terminal is the line being cleared
    if tr '\r' '\n' < "$T/tty.txt" | tail -n 2 | grep -aq "reading"; then
        ko "$cmd clears the progress line at the end"
    else
        ok "$cmd clears the progress line at the end"
    fi
    [ -s "$T/out.txt" ] && ok "$cmd still writes its report" || ko "$cmd still writes its report"
    "$BIN" $cmd "$T/progress.ctf" > /dev/null 2> "$T/err.txt"
    if [ -s "$T/err.txt" ]; then
        ko "$cmd prints no progress when stderr is a file: $(head -c 200 "$T/err.txt")"
    else
        ok "$cmd prints no progress when stderr is a file"
    fi
done
exit $fail
