#!/bin/sh
# symbolize.sh - traces written in the profiled process hold raw frames
# (module path, "module+0xoffset", no line); `memtrace symbolize` names them
# outside the process, in place, and never damages a trace; frames nothing
# can name stay "module+0xoffset" with no invented ":0" line.
. tests/record/progs/lib.sh
# About finding debug information: the name cache would name a build-id
# named before in this test (a binary and its stripped copy share theirs);
# tests/record/symbolize_cache.sh tests the cache.
MEMTRACE_NAME_CACHE=0; export MEMTRACE_NAME_CACHE
skip_under_tsan
rate=0.0001
sites=$PWD/$PROGS/sites

# Bare LD_PRELOAD: complete and readable without symbolization.
preload_raw "$T/raw.ctf" $rate "$sites" >/dev/null || fail "sites ran"
"$MT_BIN" dump --raw-frames "$T/raw.ctf" >"$T/raw.dump" || fail "raw trace dumps"
check "raw frame: module path as file, module+0xoffset as function, no line" \
    grep -Eq "  bt [0-9]+ 0x[0-9a-f]+ $sites:0:[0-9]+-[0-9]+ sites\+0x[0-9a-f]+\$" "$T/raw.dump"
# (reports name raw frames as they read them: tests/present/names.sh)
cp "$T/raw.ctf" "$T/raw-copy.ctf"
"$MT_BIN" symbolize "$T/raw.ctf" 2>"$T/sym.err"; st=$?
check "symbolize: exit 0 ($st)" test "$st" = 0
check "symbolize: says how many frames it named" grep -Eq 'raw.ctf: [1-9][0-9]* of [0-9]+ frames named' "$T/sym.err"
"$MT_BIN" dump --raw-frames "$T/raw.ctf" >"$T/sym.dump"
check "symbolized: function, file:line" grep -Eq ' [^ ]*sites\.c:[1-9][0-9]*:0-0 site_small_freed$' "$T/sym.dump"
check "symbolized: same events" sh -c "grep -c '^ev' '$T/raw.dump' | cmp -s - /dev/fd/3 3<<E
\$(grep -c '^ev' '$T/sym.dump')
E"
summary "$T/raw.ctf" >"$T/sym.sum"
check "symbolized: estimates by site" grep -q '^SITE site_small_freed ' "$T/sym.sum"
cp "$T/raw.ctf" "$T/again.ctf"
"$MT_BIN" symbolize "$T/again.ctf" 2>"$T/again.err"
check "symbolizing twice: nothing to do, file unchanged" sh -c \
    "grep -q 'nothing to symbolize' '$T/again.err' && cmp -s '$T/raw.ctf' '$T/again.ctf'"

# memtrace run symbolizes every trace of the run: FILE and FILE.<pid>.
"$MT_BIN" run -r $rate -o "$T/run.ctf" -- sh -c "'$sites' >/dev/null; '$sites' >/dev/null" 2>"$T/run.err" ||
    fail "memtrace run ran"
n=0
for t in "$T/run.ctf" "$T"/run.ctf.*; do
    [ -f "$t" ] || continue
    case $t in *symbolize-*) fail "temporary file left: $t"; continue ;; esac
    if "$MT_BIN" dump --raw-frames "$t" | grep -Eq ' site_small_freed$'; then n=$((n + 1)); fi
done
check "memtrace run: both child traces named ($n)" test "$n" -ge 2
check "memtrace run: no raw frame of the program left" sh -c "! cat '$T'/run.ctf* | strings | grep -q '^sites+0x'"

# No debug info: the ELF symbol, with the module as file and no line.
cp "$PROGS/sites" "$T/sites-nodebug" && strip --strip-debug "$T/sites-nodebug"
preload "$T/nodebug.ctf" $rate "$T/sites-nodebug" >/dev/null || fail "sites-nodebug ran"
"$MT_BIN" top --by count "$T/nodebug.ctf" >"$T/nodebug.top" 2>/dev/null
check "no debug info: symbol (module), no ':0'" grep -Eq "site_small_freed \($T/sites-nodebug\)\$" "$T/nodebug.top"

# No symbols: module+0xoffset stays, still without a line.
cp "$PROGS/sites" "$T/sites-stripped" && strip --strip-all "$T/sites-stripped"
preload "$T/stripped.ctf" $rate "$T/sites-stripped" >/dev/null || fail "sites-stripped ran"
"$MT_BIN" top "$T/stripped.ctf" >"$T/stripped.top" 2>/dev/null
check "no symbols: module+0xoffset (module), no ':0'" \
    grep -Eq "sites-stripped\+0x[0-9a-f]+ \($T/sites-stripped\)\$" "$T/stripped.top"
check "no symbols: no line anywhere" sh -c "! grep -q 'sites-stripped:0' '$T/stripped.top'"

# A module rebuilt after the run is not used: its frames stay raw.
cp "$PROGS/sites" "$T/sites-changed"
preload_raw "$T/changed.ctf" $rate "$T/sites-changed" >/dev/null || fail "sites-changed ran"
cp "$PROGS/threads" "$T/sites-changed"   # another build at the same path
"$MT_BIN" symbolize "$T/changed.ctf" 2>"$T/changed.err"; st=$?
check "changed module: exit 0 ($st), warning names it" grep -q "sites-changed has changed since the trace was recorded" "$T/changed.err"
"$MT_BIN" dump --raw-frames "$T/changed.ctf" >"$T/changed.dump"
check "changed module: frames stay module+0xoffset" grep -Eq ' sites-changed\+0x[0-9a-f]+$' "$T/changed.dump"

# An inline chain too long for one location event (24 inlined templates,
# ~6 KB of names) keeps its outermost function and its innermost function
# and line, instead of becoming "??".
preload "$T/chain.ctf" $rate "$PROGS/inline_chain" >/dev/null || fail "inline_chain ran"
"$MT_BIN" dump --raw-frames "$T/chain.ctf" | awk '/^ev .* alloc/ { n++ } n == 1 && $1 == "bt" && $2 == 1' >"$T/chain.bt"
check "long inline chain: innermost location is the malloc line of Level<0, ...>::go" \
    sh -c "tail -n 1 '$T/chain.bt' | grep -Eq 'inline_chain\.cc:22:0-0 Level<0, std::map<'"
check "long inline chain: outermost location is deep_alloc" \
    sh -c "head -n 1 '$T/chain.bt' | grep -q 'inline_chain\.cc:26:0-0 deep_alloc(unsigned long)'"
check "long inline chain: no unknown frame" sh -c "! '$MT_BIN' dump '$T/chain.ctf' | grep -q '<unknown>'"

# Traces without raw frames (OCaml's, already symbolized) are left alone.
cp "$MT_FIXTURES/prodcons.ctf" "$T/ocaml.ctf"
"$MT_BIN" symbolize "$T/ocaml.ctf" 2>"$T/ocaml.err"; st=$?
check "OCaml trace: exit 0 ($st), nothing to symbolize, unchanged" sh -c \
    "grep -q 'nothing to symbolize' '$T/ocaml.err' && cmp -s '$T/ocaml.ctf' '$MT_FIXTURES/prodcons.ctf'"

# A trace naming a FIFO as a module does not hang the symbolizer.
cp "$PROGS/sites" "$T/fifo-module.bin"
preload_raw "$T/fifo.ctf" $rate "$T/fifo-module.bin" >/dev/null
rm -f "$T/fifo-module.bin"; mkfifo "$T/fifo-module.bin"
timeout 20 "$MT_BIN" symbolize "$T/fifo.ctf" 2>"$T/fifo.err"; st=$?
check "module path is a FIFO: no hang, exit 0 ($st), frames stay raw" sh -c \
    "test $st = 0 && grep -q 'cannot read $T/fifo-module.bin' '$T/fifo.err'"

# Errors leave the trace as it was.
"$MT_BIN" symbolize "$T/missing.ctf" 2>"$T/missing.err"; st=$?
check "missing trace: exit 1 ($st) with the file named" sh -c "test $st = 1 && grep -q 'missing.ctf' '$T/missing.err'"
printf 'garbage' >"$T/notrace.ctf"
cp "$T/notrace.ctf" "$T/notrace.orig"
"$MT_BIN" symbolize "$T/notrace.ctf" 2>"$T/notrace.err"; st=$?
check "not a trace: exit 1 ($st), file untouched" sh -c "test $st = 1 && cmp -s '$T/notrace.ctf' '$T/notrace.orig'"
check "not a trace: no temporary file left" sh -c "! ls '$T'/notrace.ctf.symbolize-* 2>/dev/null"
chmod 640 "$T/raw-copy.ctf"
"$MT_BIN" symbolize -q "$T/raw-copy.ctf" || fail "symbolize -q"
check "rewritten trace keeps its permissions" test "$(stat -c %a "$T/raw-copy.ctf")" = 640

# A trace still being written is left alone (renaming over it would lose
# what its process writes next).
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/live.ctf" MEMTRACE_RATE=0.001 MEMTRACE_FLUSH_MS=20 \
    "$PROGS/faults" sleep >"$T/live.out" 2>&1 &
pid=$!
wait_until 300 grep -q ready "$T/live.out"
wait_until 300 test -s "$T/live.ctf"
cp "$T/live.ctf" "$T/live.before"
"$MT_BIN" symbolize "$T/live.ctf" 2>"$T/live.err"; st=$?
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
check "trace of a running process: exit 1 ($st), says so" sh -c \
    "test $st = 1 && grep -q 'still being written by process $pid' '$T/live.err'"
check "trace of a running process: no temporary file left" sh -c "! ls '$T'/live.ctf.symbolize-* 2>/dev/null"

# A symbolizer killed midway leaves the trace readable and no file behind.
preload_raw "$T/big.ctf" 0.01 "$PROGS/cxx" >/dev/null || fail "cxx ran"
for d in 0.02 0.04 0.06 0.08 0.1 0.13 0.16 0.2 0.3; do
    cp "$T/big.ctf" "$T/killed-sym.ctf"
    timeout -s KILL $d "$MT_BIN" symbolize -q "$T/killed-sym.ctf" 2>/dev/null
    "$MT_BIN" info "$T/killed-sym.ctf" >/dev/null 2>&1 || fail "symbolize killed after $d s: trace unreadable"
done
check "symbolize killed midway: no temporary file left" sh -c "! ls '$T'/killed-sym.ctf.symbolize-* 2>/dev/null"

# A program killed with SIGKILL leaves a readable trace that symbolizes.
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/killed.ctf" MEMTRACE_RATE=0.001 MEMTRACE_FLUSH_MS=20 \
    "$PROGS/faults" sleep >"$T/killed.out" 2>&1 &
pid=$!
# killed once it has allocated ("ready") and a flush has written samples
has_allocs() { "$MT_BIN" dump --raw-frames "$T/killed.ctf" 2>/dev/null | grep -q ' faults+0x'; }
wait_until 300 grep -q ready "$T/killed.out"
wait_until 300 has_allocs
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
"$MT_BIN" symbolize "$T/killed.ctf" 2>"$T/killed.err"; st=$?
check "SIGKILLed program: trace symbolizes ($st: $(head -c 200 "$T/killed.err"))" test "$st" = 0
"$MT_BIN" dump --raw-frames "$T/killed.ctf" >"$T/killed.dump" 2>/dev/null
check "SIGKILLed program: named frames" grep -Eq 'faults\.c:[1-9][0-9]*:0-0 ' "$T/killed.dump"
finish
