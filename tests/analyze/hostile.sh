#!/bin/sh
# hostile.sh - traces and filters made to crash, stall or flood the tools:
# regex bombs, backtracking regexes, location codes chosen to collide in the
# hash tables, stacks hundreds of thousands of frames deep, call trees too
# big to hold, terminal escapes in names, sample counts that overflow. Each
# must give a clear error or a bounded answer, quickly. The traces are made
# here by tests/tools/gen_hostile.c (nothing big is kept in the repository).
# Every command runs with a limit on its CPU time (ulimit -t: a busy machine
# slows the wall clock, not the work), loose (sanitizers) but far below what
# the unprotected code took, and under timeout(1) with a bound far above
# the work, so that a regression that sleeps or blocks fails instead of
# hanging.
set -u
: "${MT_BUILD:?}" "${MT_BIN:?}" "${MT_TMP:?}"
GEN=$MT_BUILD/tests/tools/gen_hostile
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (make tests-build)"; exit 1; }
T=$MT_TMP
# CPU-time limit per command, seconds; a hang guard in wall-clock seconds
if [ "${MT_STAGE:-plain}" = plain ]; then LIM=5; else LIM=20; fi
HANG=300

. tests/lib.sh

# run NAME CMD... : runs CMD with LIM seconds of CPU time (and HANG seconds
# of wall clock); stdout to $T/NAME.out, stderr to $T/NAME.err; sets RC
# (152: the CPU limit, SIGXCPU; 124: the hang guard) and SECS (wall clock,
# shown only).
run() {
    name=$1; shift
    t0=$(date +%s.%N)
    ( ulimit -t "$LIM"; exec timeout -k 5 "$HANG" "$@" ) >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
    SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}

# ---------------------------------------------------------------- 1. regexes
# Bombs that glibc's regcomp compiled into a stack overflow (SIGSEGV) or
# into all the memory there is: refused at parse time, exit 2. A memory
# limit keeps a regression from taking the machine down (not under ASan,
# which reserves terabytes of address space).
"$GEN" names "$T/names.ctf" || { fail "gen_hostile names"; exit 1; }
for re in '(.*){1,32767}' '(a{32767}){32767}'; do
    (
        [ "${MT_STAGE:-plain}" = plain ] && ulimit -v 2000000
        ulimit -t "$LIM"
        exec timeout -k 5 "$HANG" "$MT_BIN" top --filter "inside:/$re/" "$T/names.ctf"
    ) >"$T/re.out" 2>"$T/re.err"
    rc=$?
    if [ $rc = 2 ] && grep -q "column .*regular expression is too large" "$T/re.err"; then
        pass "regex bomb /$re/ refused when parsed, exit 2: $(head -n 1 "$T/re.err")"
    else
        fail "regex bomb /$re/: exit $rc, $(head -n 1 "$T/re.err")"
    fi
done
# Exponential backtracking (with and without back-references) on names of
# thousands of 'a's: glibc ran for minutes; PCRE2's limits stop it.
# A pattern cannot raise its own limits, (*LIMIT_MATCH=...) only lowers them.
for re in '(a|a)*[^a]$' '(a*)*\1[^a]$' '((a*)*)*\2[^a]$' '(*LIMIT_MATCH=4000000000)(*LIMIT_HEAP=4000000000)(a|a)*[^a]$'; do
    for clause in inside hide; do
        run re "$MT_BIN" folded --filter "$clause:/$re/" "$T/names.ctf"
        if [ $RC = 2 ] && grep -q "regular expression /.*/ needs more than [0-9]* backtracking steps" "$T/re.err"; then
            pass "$clause:/$re/ stops at the backtracking limit, exit 2 in ${SECS}s"
        else
            fail "$clause:/$re/: exit $RC after ${SECS}s: $(head -n 1 "$T/re.err")"
        fi
    done
done
# An ordinary regex still works, PCRE2 syntax included.
run re "$MT_BIN" top --filter 'inside:/^(?:clear|bell)\w*/' "$T/names.ctf"
if [ $RC = 0 ] && grep -q 'bell\\x07and\\x08backspace' "$T/re.out" && ! grep -q 'retitle' "$T/re.out"; then
    pass "a PCRE2 regex selects what it should"
else
    fail "PCRE2 regex: exit $RC: $(head -n 3 "$T/re.out" "$T/re.err")"
fi

# --------------------------------------------------------- 3. hash flooding
# Codes that all fell into one slot of the reader's location table (and of
# the model's code table): every probe walked all of them, quadratic time
# (the unkeyed code took 7 s for info, 12 s for top on the first).
"$GEN" collide "$T/collide.ctf" 80000 || { fail "gen_hostile collide"; exit 1; }
"$GEN" collide-model "$T/collide-model.ctf" 100000 || { fail "gen_hostile collide-model"; exit 1; }
for f in collide collide-model; do
    cmds="info top"
    [ $f = collide-model ] && cmds=top # info does not build a model
    for cmd in $cmds; do
        run flood "$MT_BIN" $cmd "$T/$f.ctf"
        if [ $RC = 0 ]; then
            pass "$cmd on $(wc -c <"$T/$f.ctf")-byte trace of colliding codes ($f) in ${SECS}s"
        else
            fail "$cmd on colliding codes ($f): exit $RC after ${SECS}s (limit ${LIM} s of CPU)"
        fi
    done
done

# ------------------------------------------------------- 4. deep-stack bombs
# 20,000 stacks of 300,000 frames in 380 KB: the common prefixes make each
# stack a few bytes. Work per allocation must follow what it adds (the
# model compared whole stacks: 6 billion steps), and every output is
# bounded: stacks are cut at 1024 frames under a "[truncated]" frame
# (before: 150 MB of folded output, growing with the depth).
"$GEN" bomb "$T/bomb.ctf" 20000 300000 || { fail "gen_hostile bomb"; exit 1; }
run bomb "$MT_BIN" folded "$T/bomb.ctf"
bytes=$(wc -c <"$T/bomb.out")
maxd=$(awk '{ n = split($1, a, ";"); if (n > m) m = n } END { print m + 0 }' "$T/bomb.out")
notrunc=$(grep -vc '^\[truncated\];recurse;' "$T/bomb.out")
if [ $RC = 0 ] && [ "$maxd" = 1024 ] && [ "$notrunc" = 0 ] && [ "$bytes" -lt 2000000 ]; then
    pass "folded on a deep-stack bomb: $bytes bytes, stacks of $maxd frames starting with [truncated], ${SECS}s"
else
    fail "folded on a deep-stack bomb: exit $RC, $bytes bytes, depth $maxd, $notrunc lines without [truncated], ${SECS}s"
fi
run bomb "$MT_BIN" pprof -o "$T/bomb.pb.gz" "$T/bomb.ctf"
bytes=$(wc -c <"$T/bomb.pb.gz" 2>/dev/null || echo 0)
raw=$(gzip -dc "$T/bomb.pb.gz" 2>/dev/null | wc -c)
if [ $RC = 0 ] && [ "$raw" -lt 20000000 ] && gzip -dc "$T/bomb.pb.gz" | grep -aq '\[truncated\]'; then
    pass "pprof on a deep-stack bomb: $bytes bytes ($raw uncompressed) with a [truncated] frame, ${SECS}s"
else
    fail "pprof on a deep-stack bomb: exit $RC, $bytes bytes ($raw uncompressed), ${SECS}s"
fi
run bomb "$MT_BIN" top -n 3 --filter inside:leaf_3 "$T/bomb.ctf"
if [ $RC = 0 ] && grep -q 'leaf_3 (bomb.c:23)' "$T/bomb.out" && grep -q '<- recurse' "$T/bomb.out"; then
    pass "top --filter inside: on a deep-stack bomb, ${SECS}s"
else
    fail "top --filter inside: on a deep-stack bomb: exit $RC, ${SECS}s"
fi
run bomb "$MT_BIN" top --json -n 1 --filter 'hide:leaf' "$T/bomb.ctf"
if [ $RC = 0 ] && grep -q '"function":"recurse"' "$T/bomb.out"; then
    pass "hide: on a deep-stack bomb (the allocation site becomes recurse), ${SECS}s"
else
    fail "hide: on a deep-stack bomb: exit $RC, ${SECS}s"
fi

# Stacks one frame longer each time through 20,000 functions (220 KB): the
# innermost 1024 frames differ every time, so cut stacks share little;
# their copies are bounded (MT_STACK_CUT_BUDGET nodes, then shorter cuts).
# Before: 180 MB of folded output (growing with the square of the trace),
# 39 MB of pprof.
"$GEN" slide "$T/slide.ctf" 6000 20000 || { fail "gen_hostile slide"; exit 1; }
lim=$LIM; LIM=$((LIM * 3))
( run slide "$MT_BIN" folded "$T/slide.ctf"; echo "$RC $SECS" >"$T/slide.rc" )
read -r RC SECS <"$T/slide.rc"
LIM=$lim
bytes=$(wc -c <"$T/slide.out")
maxd=$(awk '{ n = split($1, a, ";"); if (n > m) m = n } END { print m + 0 }' "$T/slide.out")
if [ "$RC" = 0 ] && [ "$bytes" -lt 30000000 ] && [ "$maxd" -le 1024 ]; then
    pass "folded on sliding deep stacks: $bytes bytes, at most $maxd frames a line, ${SECS}s"
else
    fail "folded on sliding deep stacks: exit $RC, $bytes bytes, $maxd frames, ${SECS}s"
fi
run slide "$MT_BIN" pprof -o "$T/slide.pb.gz" "$T/slide.ctf"
raw=$(gzip -dc "$T/slide.pb.gz" 2>/dev/null | wc -c)
if [ $RC = 0 ] && [ "$raw" -lt 10000000 ]; then
    pass "pprof on sliding deep stacks: $raw bytes uncompressed, ${SECS}s"
else
    fail "pprof on sliding deep stacks: exit $RC, $raw bytes uncompressed, ${SECS}s"
fi

# --------------------------------------------------- 8. terminal escapes
# Names with OSC/CSI sequences, BEL, BS, newlines, DEL and C1 controls: no
# raw control byte reaches the terminal from any text report; they are
# written \xHH; UTF-8 text stays as it is.
ctl=$(printf '[\001-\010\013-\037\177]')
c1=$(printf '\302[\200-\237]')
lone=$(printf '\233')
for cmd in "top -n 20" "top -n 20 --by live" "folded" "dump" "info" "stats"; do
    run esc "$MT_BIN" $cmd "$T/names.ctf"
    name=$(echo "$cmd" | cut -d' ' -f1)
    if [ $RC != 0 ]; then
        fail "$cmd on names with control characters: exit $RC"
    elif LC_ALL=C grep -q "$ctl" "$T/esc.out" || LC_ALL=C grep -q "$c1" "$T/esc.out" ||
         LC_ALL=C grep -q "$lone" "$T/esc.out"; then
        fail "$cmd prints raw control characters from the trace: $(LC_ALL=C grep -n "$ctl\|$c1\|$lone" "$T/esc.out" | head -n 2 | od -c | head -n 3)"
    else
        pass "$cmd prints no raw control character from the trace"
    fi
    case $name in top|folded|dump)
        # (folded writes ';', its separator, as ':')
        if grep -q 'retitle' "$T/esc.out" && ! grep -q '\\x1b\]0[;:]pwned\\x07retitle' "$T/esc.out"; then
            fail "$cmd: the OSC name is not written as \\x1b]0;pwned\\x07retitle"
        elif grep -q "$(printf 'caf\303\251_ok')" "$T/esc.out"; then
            pass "$cmd writes escapes as \\xHH and keeps UTF-8 names"
        else
            fail "$cmd: UTF-8 name not kept as is"
        fi ;;
    esac
done

# One escaper for every text output (lib/present/escape.c): its UTF-8
# validator takes no overlong form, surrogate or code point past U+10FFFF,
# and no line may be a CI workflow command ("::error ...", "##[...]") because
# of what a name holds. utf8_ok FILE: strictly valid UTF-8.
utf8_ok() {
    if command -v python3 >/dev/null; then
        python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8", "strict")' "$1" 2>/dev/null
    else
        iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1
    fi
}
clean() { # clean FILE: no raw control byte, valid UTF-8, no workflow command
    ! LC_ALL=C grep -q "$ctl\|$c1\|$lone" "$1" && utf8_ok "$1" &&
        ! grep -q '^[[:space:]]*::\|##\[' "$1"
}
for cmd in "top -n 20" "folded" "dump" "stats" "info"; do
    run esc "$MT_BIN" $cmd "$T/names.ctf"
    if [ $RC = 0 ] && clean "$T/esc.out" && clean "$T/esc.err"; then
        pass "$cmd: valid UTF-8 (no overlong form, surrogate or U+110000), no workflow command"
    else
        fail "$cmd: invalid UTF-8 or a workflow command: $(LC_ALL=C grep -an '^[[:space:]]*::\|##\[' "$T/esc.out" | head -n 2)"
    fi
done
run esc "$MT_BIN" top -n 20 "$T/names.ctf"
if grep -q '^ .*\\x3a:error title=pwned::workflow' "$T/esc.out" && grep -q 'old\\x23#\[error\]form' "$T/esc.out" &&
   grep -q 'over\\xc0\\xaflong' "$T/esc.out" && grep -q 'surr\\xed\\xa0\\x80ogate' "$T/esc.out"; then
    pass "top shows the workflow commands and the bytes that are not UTF-8 escaped"
else
    fail "top: names not escaped as expected"
fi
# diff's own escaper let C1 controls and invalid UTF-8 through
run esc "$MT_BIN" diff --all --by count "$T/names.ctf" "$T/names.ctf"
if [ $RC = 0 ] && clean "$T/esc.out" && grep -q 'raw\\x9bc1' "$T/esc.out"; then
    pass "diff: names escaped by the one escaper (C1, invalid UTF-8, workflow commands)"
else
    fail "diff: exit $RC, raw C1 controls, invalid UTF-8 or workflow commands"
fi
# plot's SVG: well-formed XML and UTF-8 whatever the executable's name holds
for kind in memory sizes lifetimes; do
    run esc "$MT_BIN" plot -k $kind --title "$(printf 'T\377\033[2J<&>')" -o "$T/names.svg" "$T/names.ctf"
    run esc2 "$MT_BIN" plot -k $kind -o "$T/names2.svg" "$T/names.ctf"
    if [ $RC = 0 ] && utf8_ok "$T/names.svg" && utf8_ok "$T/names2.svg" &&
       ! LC_ALL=C grep -q "$ctl" "$T/names.svg" "$T/names2.svg" &&
       { ! command -v python3 >/dev/null ||
         python3 -c 'import sys, xml.dom.minidom as d; [d.parse(f) for f in sys.argv[1:]]' "$T/names.svg" "$T/names2.svg"; }; then
        pass "plot -k $kind: the SVG is well-formed XML in valid UTF-8 (executable's name, --title)"
    else
        fail "plot -k $kind: exit $RC, SVG not well-formed or not UTF-8"
    fi
done
# check: the name (a path with bytes that are not UTF-8, %, CR, LF) in its
# text, its ::error line (%25, %0D, %0A) and its JUnit XML
odd=$(printf 'a%%25b\rc\nd::error::x\377y\033[2J')
GITHUB_ACTIONS=true run chk "$MT_BIN" check --max-alloc 1k --name "$odd" --junit "$T/junit.xml" "$T/names.ctf"
errs=$(grep -c '^::' "$T/chk.out")
if [ $RC = 1 ] && [ "$errs" = 1 ] && grep -q '^::error title=memtrace check::a%2525b%0Dc%0Ad::error::x\\xffy\\x1b\[2J: ' "$T/chk.out" &&
   ! LC_ALL=C grep -q "$ctl" "$T/chk.out" && utf8_ok "$T/chk.out"; then
    pass "check: one ::error line, %, CR and LF encoded, no raw control byte"
else
    fail "check: exit $RC, $errs workflow command lines: $(grep -a '^::' "$T/chk.out" | od -c | head -n 3)"
fi
if utf8_ok "$T/junit.xml" && ! LC_ALL=C grep -q "$ctl" "$T/junit.xml" &&
   { ! command -v python3 >/dev/null || python3 -c 'import sys, xml.dom.minidom as d; d.parse(sys.argv[1])' "$T/junit.xml"; }; then
    pass "check --junit: well-formed XML in valid UTF-8"
else
    fail "check --junit: not well-formed or not UTF-8"
fi
# symbolize warnings name modules by the paths in the trace
"$GEN" rawmod "$T/rawmod.ctf" || { fail "gen_hostile rawmod"; exit 1; }
run sym "$MT_BIN" symbolize "$T/rawmod.ctf"
if grep -q 'warning: .*cannot read /no/such/dir\\x1b\[2J/::error' "$T/sym.err" && clean "$T/sym.err"; then
    pass "symbolize: module paths from the trace escaped in its warnings"
else
    fail "symbolize: warning not escaped: $(head -n 1 "$T/sym.err" | od -c | head -n 2)"
fi
# an empty trace points at the other processes of its run, by command line
"$GEN" run "$T/run.ctf" || { fail "gen_hostile run"; exit 1; }
run emp "$MT_BIN" top "$T/run.ctf"
if grep -q 'run.ctf.4242: .*\\x3a:error title=pwned::x \\x1b\]0;title\\x07' "$T/emp.err" && clean "$T/emp.err"; then
    pass "an empty trace's note on the other processes escapes their command lines"
else
    fail "empty trace's note: $(grep 4242 "$T/emp.err" | od -c | head -n 3)"
fi
# memtrace run's summary table (plain stage: it preloads the recorder)
if [ "${MT_STAGE:-plain}" = plain ] && [ -f "$MT_BUILD/libmemtrace.so" ]; then
    run rsum "$MT_BIN" run -o "$T/rr.ctf" -- sh -c 'cp "$1" "$0.4242"' "$T/rr.ctf" "$T/run.ctf.4242"
    if grep -q '  \\x3a:error title=pwned::x .*rr.ctf.4242' "$T/rsum.err" && clean "$T/rsum.err"; then
        pass "run: the summary table escapes command lines"
    else
        fail "run's summary: exit $RC: $(grep 4242 "$T/rsum.err" | od -c | head -n 3)"
    fi
fi

# JSON reports: valid UTF-8 and JSON whatever the names hold (a lone byte
# 0x9b was copied raw: invalid UTF-8, so invalid JSON), no raw control bytes.
for cmd in "top --json -n 0" "stats --json"; do
    run json "$MT_BIN" $cmd "$T/names.ctf"
    if [ $RC = 0 ] && iconv -f UTF-8 -t UTF-8 "$T/json.out" >/dev/null 2>&1 &&
       ! LC_ALL=C grep -q "$ctl\|$c1" "$T/json.out" &&
       { ! command -v python3 >/dev/null || python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$T/json.out"; }; then
        pass "$cmd: valid UTF-8 JSON, control characters escaped"
    else
        fail "$cmd: exit $RC, not valid UTF-8 JSON or raw control characters"
    fi
done

# --------------------------------------------------- 9. folded truncation
# A call tree past MT_TREE_MAX_NODES (2,000,000): folded used to drop the
# stacks it could not hold, silently, with exit 0. Now a warning, and the
# missing cost in "[truncated]" lines: the weights still add up to the total.
"$GEN" wide "$T/wide.ctf" 2500 1000 || { fail "gen_hostile wide"; exit 1; }
lim=$LIM; LIM=$((LIM * 4))
run wide "$MT_BIN" folded "$T/wide.ctf"
LIM=$lim
sum=$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/wide.out")
cut=$(grep -c ';\[truncated\] [0-9]*$' "$T/wide.out")
if [ $RC = 0 ] && [ "$sum" = 25000000 ] && [ "$cut" -gt 0 ] &&
   grep -q 'warning: the call tree has more than 2000000 nodes' "$T/wide.err"; then
    pass "folded past the tree's node limit: a warning, $cut [truncated] lines, weights add up to the total"
else
    fail "folded past the tree's node limit: exit $RC, sum $sum (want 25000000), $cut [truncated] lines, stderr: $(head -c 300 "$T/wide.err")"
fi

# ---------------------------------------------------- 10. sample overflow
# Four allocations of 2^62 samples each: the live count (int64) overflowed
# (UBSan: signed overflow in the model). Refused with a clear error.
"$GEN" samples "$T/samples.ctf" || { fail "gen_hostile samples"; exit 1; }
for cmd in top stats folded; do
    run samples "$MT_BIN" $cmd "$T/samples.ctf"
    if [ $RC = 1 ] && grep -q "samples.ctf: sample counts add up to more than 2^62" "$T/samples.err" &&
       ! grep -q 'runtime error' "$T/samples.err"; then
        pass "$cmd refuses sample counts past 2^62: $(head -n 1 "$T/samples.err")"
    else
        fail "$cmd on overflowing sample counts: exit $RC: $(head -n 2 "$T/samples.err")"
    fi
done
# ------------------------------------------------- 11. numbers at the edges
# Times more than 2^62 us after the start (the curve's bucket width doubled
# past INT64_MAX; plot's width added the bucket count to the end), a .rss
# beside a trace whose start time is negative (time - start overflowed),
# and signal numbers past int ("RTMIN+4294967297" was read as RTMIN+1;
# RTMIN+2147483647 overflowed): UBSan stops the sanitizer stage at each.
"$GEN" far "$T/far.ctf" || { fail "gen_hostile far"; exit 1; }
for cmd in "stats --at peak" "top --at peak" "stats --filter size:1-" "plot -o $T/far.svg"; do
    run far "$MT_BIN" $cmd "$T/far.ctf"
    if [ $RC = 0 ] && ! grep -q 'runtime error' "$T/far.err"; then
        pass "$cmd on times past 2^62 us: exit 0, no overflow"
    else
        fail "$cmd on times past 2^62 us: exit $RC: $(head -n 2 "$T/far.err")"
    fi
done
run far "$MT_BIN" stats --at peak "$T/far.ctf"
if grep -q 'peak live .* at 9223372036854.77' "$T/far.out"; then
    pass "stats: the peak at the last time (about 2^63 us)"
else
    fail "stats: the peak of far.ctf: $(grep 'peak live' "$T/far.out")"
fi
"$GEN" negstart "$T/neg.ctf" || { fail "gen_hostile negstart"; exit 1; }
printf 'memtrace-rss 1 1 -1000000\n0 4096 - - -\n9223372036854775000 8192 - - -\n' >"$T/neg.ctf.rss"
for cmd in stats "plot -o $T/neg.svg"; do
    run neg "$MT_BIN" $cmd "$T/neg.ctf"
    if [ $RC = 0 ] && grep -q 'neg.ctf.rss: line 3: time out of range' "$T/neg.err" &&
       ! grep -q 'runtime error' "$T/neg.err"; then
        pass "$cmd: an .rss time too far from a negative start is a damaged line"
    else
        fail "$cmd with an .rss beside a negative start: exit $RC: $(head -n 2 "$T/neg.err")"
    fi
done
for sig in RTMIN+2147483647 RTMIN+4294967297 4294967306 RTMIN+-1; do
    run sig "$MT_BIN" ctl --signal "$sig" 1 status
    rc1=$RC
    run sig2 "$MT_BIN" run --signal "$sig" -o "$T/sig.ctf" -- true
    if [ $rc1 = 2 ] && [ $RC = 2 ] && grep -q "not a signal the recorder can use" "$T/sig.err" &&
       ! grep -q 'runtime error' "$T/sig.err" "$T/sig2.err"; then
        pass "--signal $sig refused by ctl and run (exit 2)"
    else
        fail "--signal $sig: ctl exit $rc1, run exit $RC: $(head -n 1 "$T/sig.err" "$T/sig2.err")"
    fi
done
finish
