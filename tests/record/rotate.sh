#!/bin/sh
# rotate.sh - long runs in pieces (MEMTRACE_ROTATE_TIME, MEMTRACE_ROTATE_SIZE,
# MEMTRACE_KEEP, memtrace run --rotate-time/--rotate-size/--keep): pieces
# FILE.part0001, ... appear at the bound, each reads cleanly and is marked
# ended; every piece after the first starts with the blocks still live,
# carried over; allocation totals over the pieces equal those of the same
# run without rotation (carried blocks are not counted again), live memory
# at the end of the last piece equals the run's, and blocks carried over
# are freed in a later piece; KEEP bounds the number of pieces (and their
# .rss files); forked and exec'd children rotate their own FILE.<pid>;
# bad settings and a directory that disappears are reported, never
# harmful.
. tests/record/progs/lib.sh
skip_under_tsan
R=$PROGS/rotator
pieces() { ls "$1".part* 2>/dev/null | grep -E '\.part[0-9]+$'; }
# site_sum SITE COLUMN FILES...: sum of a SITE column (3 allocated, 4 live)
site_sum() {
    s=$1 c=$2; shift 2
    for g in "$@"; do summary "$g"; done | awk -v s="$s" -v c="$c" '$1 == "SITE" && $2 == s { t += $c } END { printf "%.0f\n", t }'
}

# The reference: the same deterministic run, not rotated (rate 1: every
# block is sampled, every figure is exact).
ref=$T/ref.ctf
preload "$ref" 1 "$R" 100 1000 50 100 400 10000 || fail "reference run"

f=$T/time.ctf
MEMTRACE_ROTATE_TIME=1s preload "$f" 1 "$R" 100 1000 50 100 400 10000; st=$?
check "time bound: program ran normally (status $st)" test "$st" = 0
check "time bound: no FILE itself, only pieces" test ! -e "$f"
n=$(pieces "$f" | wc -l)
check "time bound: a piece a second over about 4 s ($n pieces)" test "$n" -ge 3 -a "$n" -le 7
k=0 bad=0 nocarry=0 freed_carried=0
for p in $(pieces "$f"); do
    k=$((k + 1))
    summary "$p" > "$T/p.sum" 2>&1 || { bad=$((bad + 1)); cat "$T/p.sum"; continue; }
    grep -q '^END .* marked=1$' "$T/p.sum" || bad=$((bad + 1))
    test -e "$p.rss" || bad=$((bad + 1))
    carried=$(sed -n 's/^CARRIED n=\([0-9]*\).*/\1/p' "$T/p.sum")
    if [ $k = 1 ]; then [ "$carried" = 0 ] || nocarry=$((nocarry + 1))
    else [ "$carried" -gt 0 ] || nocarry=$((nocarry + 1)); fi
    # the early blocks, all carried, half of them freed in this piece
    cb=$(sed -n 's/^CARRIED .*live_bytes=\([0-9]*\)/\1/p' "$T/p.sum")
    le=$(awk '$1 == "SITE" && $2 == "leak_early" { print $4 }' "$T/p.sum")
    [ $k -gt 1 ] && [ "$cb" -ge 100000 ] && [ "$le" = 50000 ] && freed_carried=1
done
check "time bound: every piece reads to its end, is marked ended, has its .rss" test "$bad" = 0
check "time bound: the first piece carries nothing, every later one the live blocks" \
    test "$nocarry" = 0
check "time bound: blocks carried over are freed in a later piece" test "$freed_carried" = 1
for s in leak_early churn main; do
    a=$(site_sum $s 3 $(pieces "$f")) b=$(site_sum $s 3 "$ref")
    check "time bound: $s allocated over all pieces = without rotation ($a, $b)" test "$a" = "$b"
done
last=$(pieces "$f" | tail -n 1)
for s in leak_early churn main; do
    a=$(site_sum $s 4 "$last") b=$(site_sum $s 4 "$ref")
    check "time bound: $s live at the end of the last piece = without rotation ($a, $b)" \
        test "$a" = "$b"
done
check "memtrace info counts the carried blocks" \
    sh -c "'$MT_BIN' info '$last' | grep -q '^carried over: *[1-9][0-9]* of them'"
got=$("$MT_BIN" info "$last" | sed -n 's/^allocated: *\([0-9]*\) bytes in .*carried over not counted.*/\1/p')
st=$("$MT_BIN" stats --json "$last" | sed -n 's/.*"total":{"alloc_bytes":\([0-9]*\).*/\1/p')
check "memtrace info's allocated bytes leave the carried blocks out, as stats does (${got:-none}, ${st:-none})" \
    test "${got:-x}" = "${st:-y}"
"$MT_BIN" recode "$last" "$T/recoded.ctf" 2>/dev/null
check "memtrace recode keeps the carried mark" \
    test "$(summary "$last" | grep '^CARRIED')" = "$(summary "$T/recoded.ctf" | grep '^CARRIED')"
# The reports: allocated over the pieces, live in the last one.
tot=0
for p in $(pieces "$f"); do
    v=$("$MT_BIN" top --json "$p" | sed -n 's/.*"total": *{[^}]*"alloc_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1)
    tot=$(awk -v a="$tot" -v b="$v" 'BEGIN { printf "%.0f", a + b }')
done
rv=$("$MT_BIN" top --json "$ref" | sed -n 's/.*"total": *{[^}]*"alloc_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1)
check "memtrace top: allocated bytes over the pieces = without rotation ($tot, $rv)" \
    test "$tot" = "$(awk -v a="$rv" 'BEGIN { printf "%.0f", a }')"
tot=0
for p in $(pieces "$f"); do
    v=$("$MT_BIN" stats --json "$p" | sed -n 's/.*"total": *{"alloc_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1)
    tot=$(awk -v a="$tot" -v b="$v" 'BEGIN { printf "%.0f", a + b }')
done
rv=$("$MT_BIN" stats --json "$ref" | sed -n 's/.*"total": *{"alloc_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1)
check "memtrace stats: allocated bytes over the pieces = without rotation ($tot, $rv)" \
    test "$tot" = "$(awk -v a="$rv" 'BEGIN { printf "%.0f", a }')"
lv=$("$MT_BIN" top --by live --json "$last" | sed -n 's/.*"total": *{[^}]*"live_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1)
rl=$("$MT_BIN" top --by live --json "$ref" | sed -n 's/.*"total": *{[^}]*"live_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1)
check "memtrace top --by live: the last piece alone = without rotation ($lv, $rl)" \
    test -n "$lv" -a "$lv" = "$rl"
# All the pieces read together are the recording again: each carried block
# is its twin of the earlier piece (counted once, live from its first
# allocation), so the totals are those of the run without rotation.
j() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d['total']['$1'], d['allocs'], d['collects'])"; }
# shellcheck disable=SC2046
"$MT_BIN" stats --json $(pieces "$f") > "$T/all.json" 2>"$T/all.err"
"$MT_BIN" stats --json "$ref" > "$T/ref.json"
for k in alloc_bytes live_bytes samples live_samples temp_bytes; do
    a=$(j "$k" < "$T/all.json") b=$(j "$k" < "$T/ref.json")
    check "memtrace stats of all the pieces: $k, allocations and frees = without rotation ($a; $b)" \
        test -n "$a" -a "$a" = "$b"
done
# shellcheck disable=SC2046
"$MT_BIN" --route=whole stats --json $(pieces "$f") > "$T/all.whole.json" 2>&1
check "memtrace stats of all the pieces: streaming = whole model" cmp -s "$T/all.json" "$T/all.whole.json"
# shellcheck disable=SC2046
"$MT_BIN" top --by live --json $(pieces "$f") | sed -n 's/.*"total": *{[^}]*"live_bytes": *\([0-9.e+]*\).*/\1/p' | head -n 1 > "$T/all.live"
check "memtrace top --by live of all the pieces = without rotation ($(cat "$T/all.live"), $rl)" \
    test "$(cat "$T/all.live")" = "$rl"
# Without the first piece (deleted by --keep), its blocks carried into the
# second are still live, never allocated.
# shellcheck disable=SC2046
"$MT_BIN" stats --json $(pieces "$f" | sed 1d) > "$T/rest.json"
check "memtrace stats of the pieces but the first: live at the end = without rotation" \
    test "$(j live_bytes < "$T/rest.json" | cut -d' ' -f1)" = "$(j live_bytes < "$T/ref.json" | cut -d' ' -f1)"
# stats of a piece with carried blocks: read as it streams and as a whole
# model, the same figures (carried blocks are live, never allocated,
# collected or never collected here)
"$MT_BIN" stats "$last" > "$T/stats.stream" 2>&1
"$MT_BIN" --route=whole stats "$last" > "$T/stats.whole" 2>&1
check "memtrace stats of a piece: streaming = whole model ($(diff "$T/stats.stream" "$T/stats.whole" | head -n 3 | tr '\n' ' '))" \
    cmp -s "$T/stats.stream" "$T/stats.whole"

# A size bound and KEEP, through memtrace run.
f=$T/size.ctf
"$MT_BIN" run --rate 1 --rotate-size 64k --keep 2 -o "$f" -- "$R" 100 1000 50 100 30000 50 \
    > /dev/null 2> "$T/size.err"; st=$?
check "memtrace run --rotate-size --keep: status 0 ($st)" test "$st" = 0
n=$(pieces "$f" | wc -l)
lastn=$(pieces "$f" | tail -n 1 | sed 's/.*\.part0*//')
check "--keep 2: 2 pieces left ($n) of $lastn" test "$n" = 2 -a "$lastn" -gt 2
check "--keep 2: the .rss of deleted pieces went with them" \
    test "$(ls "$f".part*.rss | wc -l)" = 2
check "the run's summary lists the pieces" grep -q "2 traces" "$T/size.err"
big=0
for p in $(pieces "$f"); do
    summary "$p" > /dev/null 2>&1 || fail "$(basename "$p") readable"
    sz=$(wc -c < "$p")
    [ "$sz" -lt $((65536 + 65536)) ] || big=$((big + 1))
done
check "--rotate-size 64k: pieces stay near the bound" test "$big" = 0

# Children: each process rotates its own trace.
f=$T/fork.ctf
out=$(MEMTRACE_ROTATE_TIME=1s preload "$f" 0.001 "$PROGS/forker" fork)
check "fork: program ran normally ($out)" test "$out" = ok
check "fork: the parent writes FILE.part0001" test -s "$f.part0001"
n=$(ls "$f".* | grep -cE '\.ctf\.[0-9]+\.part0001$')
check "fork: each child writes FILE.<pid>.part0001 ($n)" test "$n" = 3
f=$T/exec.ctf
out=$(MEMTRACE_ROTATE_TIME=1s preload "$f" 0.001 "$PROGS/forker" selfexec)
c=$(ls "$f".* | grep -E '\.ctf\.[0-9]+\.part0001$')
check "exec: the exec'd program writes FILE.<pid>.part0001 ($c)" test -n "$c"
[ -n "$c" ] && summary "$c" 2>/dev/null | grep -q '^SITE child_work ' ||
    fail "exec: the exec'd program's allocations in its piece"

# Recordings started on request rotate too: FILE-0001.part0001, ...; the
# recording's duration ends its last piece.
f=$T/rec.ctf
"$MT_BIN" run --rate 1 --signal USR1 --duration 2500ms --rotate-time 1s -o "$f" -- \
    "$R" 100 1000 50 100 400 10000 > /dev/null 2> "$T/rec.err"
n=$(pieces "$f-0001" | wc -l)
check "a recording on request: pieces FILE-0001.partNNNN ($n)" test "$n" -ge 2 -a "$n" -le 4
ok=0
for p in $(pieces "$f-0001"); do
    summary "$p" | grep -q '^END .* marked=1$' && ok=$((ok + 1))
done
check "a recording on request: every piece ended ($ok of $n)" test "$ok" = "$n"
check "a recording on request: memtrace run lists its pieces" grep -q "$n traces" "$T/rec.err"

# memtrace ctl finds the piece under way (FILE-0001.partNNNN).
f=$T/ctl.ctf
"$MT_BIN" run --paused --rate 1 --rotate-time 1s -o "$f" -- "$R" 100 1000 50 100 400 10000 \
    > /dev/null 2> "$T/ctl.err" &
dormant() { P=$(sed -n 's/.*process \([0-9]*\) starts dormant.*/\1/p' "$T/ctl.err"); [ -n "$P" ]; }
wait_until 300 dormant
"$MT_BIN" ctl "$P" start > "$T/ctl.out" 2>&1; st=$?
check "ctl start: recording into FILE-0001.part0001 ($st: $(cat "$T/ctl.out"))" \
    sh -c "test $st = 0 && grep -q 'recording into .*ctl.ctf-0001.part0001\$' '$T/ctl.out'"
sleep 1.5
"$MT_BIN" ctl "$P" stop > "$T/ctl.out" 2>&1; st=$?
check "ctl stop: the piece under way is complete ($st: $(cat "$T/ctl.out"))" \
    sh -c "test $st = 0 && grep -q 'stopped; .*ctl.ctf-0001.part000[0-9] is complete' '$T/ctl.out'"
wait

# Bad settings: one message, no trace, the program runs.
for v in "MEMTRACE_ROTATE_SIZE=1k" "MEMTRACE_ROTATE_SIZE=lots" "MEMTRACE_ROTATE_TIME=10ms" \
         "MEMTRACE_KEEP=0" "MEMTRACE_KEEP=3"; do
    f=$T/bad.ctf; rm -f "$f"*
    out=$(env "$v" sh -c '. tests/record/progs/lib.sh; preload_raw "$1" 1 "$2" 1 100 1 100 1 0' _ \
          "$f" "$R" 2>&1); st=$?
    check "$v: refused with a message, the program runs ($st: $out)" \
        sh -c "test $st = 0 && echo '$out' | grep -q '${v%%=*}' && ! ls '$f'* >/dev/null 2>&1"
done
for o in "--rotate-size 10" "--rotate-time 0.1s" "--keep 2" "--keep x --rotate-time 1s"; do
    # shellcheck disable=SC2086
    "$MT_BIN" run $o -o "$T/x.ctf" -- true > /dev/null 2>&1; st=$?
    check "memtrace run $o: usage error ($st)" test "$st" = 2
done
# Sizes no one means: none, negative, too small, too big, and what strtod
# takes besides decimals (hexadecimal, infinity, blanks, signs).
for v in 0 -1 1k 65535 1e30 99999999999t 0x10000 0x1p16 inf nan " 64k" "64k " +64k ""; do
    "$MT_BIN" run --rotate-size "$v" -o "$T/x.ctf" -- true > /dev/null 2>"$T/x.err"; st=$?
    check "memtrace run --rotate-size '$v': usage error naming the range ($st)" \
        sh -c "test $st = 2 && grep -q 'rotate-size .*expected a size from 64k to 1e18 bytes' '$T/x.err' && ! ls '$T/x.ctf'* >/dev/null 2>&1"
done
for v in 64k 65536 64KiB 1.5m 1e18; do
    rm -f "$T/x.ctf"*
    "$MT_BIN" run --rotate-size "$v" -o "$T/x.ctf" -- true > /dev/null 2>&1; st=$?
    check "memtrace run --rotate-size $v: accepted, one piece ($st)" \
        sh -c "test $st = 0 && test -f '$T/x.ctf.part0001'"
done
rm -f "$T/x.ctf"*
for v in 0x10000 1e30; do
    out=$(MEMTRACE_ROTATE_SIZE=$v sh -c '. tests/record/progs/lib.sh; preload_raw "$1" 1 "$2" 1 100 1 100 1 0' _ \
          "$T/x.ctf" "$R" 2>&1); st=$?
    check "MEMTRACE_ROTATE_SIZE=$v: refused with the range, the program runs ($st: $out)" \
        sh -c "test $st = 0 && echo '$out' | grep -q 'expected a size from 64k to 1e18 bytes' && ! ls '$T/x.ctf'* >/dev/null 2>&1"
done

# Files named like pieces that are not traces the run wrote: a FIFO, a
# directory, a link to a device are passed over (opening the FIFO would
# hang); a stray regular file is listed as not readable; names that only
# look alike (no number, two suffixes) are not pieces.
d=$T/odd; mkdir -p "$d"
timeout 30 "$MT_BIN" run --rotate-size 64k -o "$d/x.ctf" -- sh -c '
    mkfifo "$1.part0003"; mkdir "$1.part0004"; ln -s /dev/zero "$1.part0006"
    echo stray > "$1.part0005"; echo a > "$1.part"; echo b > "$1.part0001.part0002"' _ "$d/x.ctf" \
    > /dev/null 2> "$T/odd.err" < /dev/null; st=$?
check "pieces named oddly: memtrace run ends ($st)" test "$st" = 0
check "pieces named oddly: the FIFO, the directory and the device are passed over" \
    sh -c "! grep -q 'x.ctf.part000[346]' '$T/odd.err'"
check "pieces named oddly: a stray file is listed as not readable" \
    grep -q 'x.ctf.part0005 (not a readable trace' "$T/odd.err"
check "pieces named oddly: FILE.part and FILE.part0001.part0002 are not pieces" \
    sh -c "! grep -q 'x.ctf.part \\|part0001.part0002' '$T/odd.err'"

# The trace stays open all through a rotation: the next piece is open
# before the finished one is closed ('memtrace ctl --push' follows the
# recording by the trace the process has open, and took a moment without
# one for the recording's end). strace holds the opening of the second
# piece for 0.7 s; a watcher looks at the process's descriptors meanwhile.
if command -v strace >/dev/null 2>&1 && command -v pgrep >/dev/null 2>&1 &&
   strace -qq -o /dev/null true 2>/dev/null; then
    g=$T/gap.ctf
    strace -f -qq -o /dev/null -P "$g.part0002" -e trace=openat -e inject=openat:delay_enter=700000 \
        env LD_PRELOAD="$LIB" MEMTRACE="$g" MEMTRACE_RATE=1 MEMTRACE_ROTATE_SIZE=64k \
        "$R" 100 1000 50 100 20000 100 > /dev/null 2>&1 &
    sp=$!
    : > "$T/gap.log"
    while kill -0 $sp 2>/dev/null; do
        p=$(pgrep -n -x rotator)
        if [ -n "$p" ]; then
            o=$(ls -l "/proc/$p/fd" 2>/dev/null | grep -o 'gap\.ctf\.part[0-9]*' | head -n 1)
            echo "${o:-none}" >> "$T/gap.log"
        fi
        sleep 0.02
    done
    wait $sp
    # a look with no piece open between two with one: a moment in the
    # middle of the run without a trace
    gaps=$(awk '$1 != "none" { if (gap) n++; seen = 1; gap = 0; next } seen { gap = 1 }
                END { print n + 0 }' "$T/gap.log")
    check "rotation: the watcher saw the first two pieces open ($(sort -u "$T/gap.log" | tr '\n' ' '))" \
        sh -c "grep -q part0001 '$T/gap.log' && grep -q part0002 '$T/gap.log'"
    check "rotation: the process had a piece open at every look ($gaps moments without)" test "$gaps" = 0
else
    echo "(strace or pgrep missing, or ptrace not permitted: the rotation's open trace not checked)"
fi

# The directory goes away: the next piece cannot be made; one message,
# tracing stops, the program goes on.
d=$T/gone; mkdir -p "$d"
(MEMTRACE_ROTATE_TIME=1s preload_raw "$d/t.ctf" 1 "$R" 10 1000 5 100 300 10000 \
    > /dev/null 2> "$T/gone.err"; echo $? > "$T/gone.st") &
wait_until 300 test -e "$d/t.ctf.part0001"
rm -rf "$d"; wait
check "directory removed: the program goes on (status $(cat "$T/gone.st"))" \
    test "$(cat "$T/gone.st")" = 0
check "directory removed: one message" \
    sh -c "test \$(grep -c 'cannot start this piece' '$T/gone.err') = 1"
finish
