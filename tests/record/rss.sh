#!/bin/sh
# rss.sh - resident memory beside the trace (FILE.rss): written by the
# recorder with the trace's pid and start, one line per sample; stats shows
# peak RSS (peak_rss_bytes in --json) and plot draws it; a missing file
# shows nothing, a file of another recording is ignored with a warning, a
# damaged line stops reading there with a warning naming the line, and
# nothing crashes. MEMTRACE_RSS_MS=0 writes no FILE.rss.
. tests/record/progs/lib.sh
skip_under_tsan
B=$MT_BIN
out=$(preload "$T/r.ctf" 0.00006 "$PROGS/mmaps")
check "mmaps ran" test "$out" = ok
check "FILE.rss written beside the trace" test -s "$T/r.ctf.rss"
pid=$(summary "$T/r.ctf" | sed -n 's/^INFO pid=\([0-9]*\) .*/\1/p')
check "its header names the trace's process" sh -c "head -1 '$T/r.ctf.rss' | grep -q '^memtrace-rss 2 $pid '"
lines=$(wc -l <"$T/r.ctf.rss")
check "several samples over 0.1 s of life ($lines lines)" test "$lines" -ge 3

peak() { "$B" stats --json "$1" 2>"$T/err" | sed -n 's/.*"peak_rss_bytes":\([0-9null]*\).*/\1/p'; }
p=$(peak "$T/r.ctf")
# The program touches 48 MiB of one mapping at its peak.
check "peak RSS ($p) at least the 48 MiB the program touched" test "${p:-0}" -ge 50331648
check "text report shows it" sh -c "'$B' stats '$T/r.ctf' | grep -q '^peak RSS'"
"$B" plot -o "$T/r.svg" "$T/r.ctf"
check "plot draws resident memory" grep -q "resident memory (RSS)" "$T/r.svg"

cp "$T/r.ctf" "$T/none.ctf"
check "no FILE.rss: peak_rss_bytes is null" test "$(peak "$T/none.ctf")" = null
check "no FILE.rss: no warning" test ! -s "$T/err"

cp "$T/r.ctf" "$T/stale.ctf"
sed '1s/^memtrace-rss \([12]\) [0-9]*/memtrace-rss \1 1/' "$T/r.ctf.rss" >"$T/stale.ctf.rss"
check "another recording's FILE.rss is ignored" test "$(peak "$T/stale.ctf")" = null
check "... with a warning" grep -q "another recording" "$T/err"

cp "$T/r.ctf" "$T/bad.ctf"
{ sed -n 1,2p "$T/r.ctf.rss"; echo "12x34 5 - - -"; sed -n '3,$p' "$T/r.ctf.rss"; } >"$T/bad.ctf.rss"
pb=$(peak "$T/bad.ctf")
check "damaged line: what came before is used ($pb)" test "${pb:-null}" != null
check "damaged line: warning names line 3" grep -q "bad.ctf.rss: line 3:" "$T/err"

cp "$T/r.ctf" "$T/junk.ctf"
head -c 3000 /dev/urandom >"$T/junk.ctf.rss"
"$B" stats "$T/junk.ctf" >/dev/null 2>"$T/err"
check "random bytes as FILE.rss: stats still works" test $? = 0
check "... with a warning" test -s "$T/err"

cp "$T/r.ctf" "$T/cut.ctf"
head -c $(($(wc -c <"$T/r.ctf.rss") - 3)) "$T/r.ctf.rss" >"$T/cut.ctf.rss"
check "a last line cut short (killed while writing) is skipped silently" \
    sh -c "test \"\$('$B' stats --json '$T/cut.ctf' 2>&1 >/dev/null)\" = ''"

rm -f "$T/off.ctf.rss"
MEMTRACE_RSS_MS=0 preload "$T/off.ctf" 0.00006 "$PROGS/mmaps" >/dev/null
check "MEMTRACE_RSS_MS=0: no FILE.rss" test ! -e "$T/off.ctf.rss"
finish
