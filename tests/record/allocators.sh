#!/bin/sh
# allocators.sh - the recorder keeps the program's own allocator, and a
# sampled block is that allocator's block. allocprobe prints what a program
# can see of its allocator (usable sizes, alignment, realloc in place, whose
# heap, the allocator's own statistics); under the recorder at rate 1 (every
# block sampled) the output must be identical to a run without it, for
# glibc, and for jemalloc, tcmalloc and mimalloc preloaded or linked in.
# Also: the trace has the blocks (a program run on jemalloc is traced),
# and mmap calls the allocator makes for its heap are not counted again as
# the program's mappings.
. tests/record/progs/lib.sh
skip_under_tsan
libdir() { for f in /usr/lib/*/"$1" /usr/lib/"$1" /lib/*/"$1"; do [ -f "$f" ] && { echo "$f"; return; }; done; }
je=$(libdir libjemalloc.so.2)
tc=$(libdir libtcmalloc_minimal.so.4)
mi=$(libdir libmimalloc.so.2)

# compare NAME ALLOCATOR_PRELOAD PROGRAM
compare() {
    name=$1 extra=$2 prog=$3
    env ${extra:+LD_PRELOAD="$extra"} "$prog" >"$T/$name.plain" 2>&1 || fail "$name: runs without the recorder"
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB${extra:+:$extra}" MEMTRACE="$T/$name.ctf" MEMTRACE_RATE=1 \
        "$prog" >"$T/$name.traced" 2>&1 || fail "$name: runs under the recorder at rate 1"
    if cmp -s "$T/$name.plain" "$T/$name.traced"; then
        pass "$name: what the program sees of its allocator is the same with every block sampled ($(wc -l <"$T/$name.plain") facts)"
    else
        fail "$name: the program sees a different allocator under the recorder:"
        diff "$T/$name.plain" "$T/$name.traced" | head -20
    fi
    allocs=$(summary "$T/$name.ctf" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
    check "$name: the trace has the program's blocks (allocs=$allocs)" test "${allocs:-0}" -gt 2000
    # the 20 MB held at once are malloc blocks: nothing of them as mmap
    mm=$("$MT_BIN" stats --json -f kind:mmap "$T/$name.ctf" 2>/dev/null | grep -o '"alloc_bytes":[0-9]*' | head -1 | cut -d: -f2)
    check "$name: the allocator's own mappings are not counted as the program's (mmap bytes ${mm:-?})" \
        test "${mm:-1}" -lt 4000000
}

compare glibc "" "$PROGS/allocprobe"
for a in "jemalloc:$je" "tcmalloc:$tc" "mimalloc:$mi"; do
    an=${a%%:*} lib=${a#*:}
    if [ -z "$lib" ]; then
        echo "PASS: $an not installed here (scripts/install-deps.sh test installs it): skipped"
        continue
    fi
    compare "$an-preloaded" "$lib" "$PROGS/allocprobe"
    grep -q "^$an:" "$T/$an-preloaded.plain" && pass "$an-preloaded: the probe saw $an" \
        || fail "$an-preloaded: the probe did not see $an"
    # linked in, as Debian's redis-server links jemalloc
    if cc -O1 -w -o "$T/allocprobe-$an" tests/record/progs/allocprobe.c -ldl "$lib" 2>"$T/cc.err"; then
        compare "$an-linked" "" "$T/allocprobe-$an"
    else
        fail "$an-linked: could not build the probe against $lib"; cat "$T/cc.err"
    fi
done

# memtrace run keeps a preloaded allocator behind the recorder
if [ -n "$je" ]; then
    LD_PRELOAD="$je" "$MT_BIN" run -o "$T/run.ctf" --rate 1 -- "$PROGS/allocprobe" >"$T/run.out" 2>"$T/run.err"
    check "memtrace run with LD_PRELOAD=libjemalloc: the program still runs on jemalloc" \
        cmp -s "$T/run.out" "$T/jemalloc-preloaded.plain"
fi

# An allocator preloaded before the recorder takes malloc from it: say so.
if [ -n "$je" ]; then
    env -u MEMTRACE_ROOT LD_PRELOAD="$je:$LIB" MEMTRACE="$T/wrong.ctf" "$PROGS/allocprobe" >/dev/null 2>"$T/wrong.err"
    check "jemalloc preloaded before the recorder: one line says that nothing is sampled" \
        grep -q "malloc is not the recorder's" "$T/wrong.err"
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB:$je" MEMTRACE="$T/right.ctf" "$PROGS/allocprobe" >/dev/null 2>"$T/right.err"
    check "recorder first: no such line" test ! -s "$T/right.err"
fi

# Debian's redis-server is linked with jemalloc and calls malloc_usable_size
# on every block: it died before main.
if command -v redis-server >/dev/null 2>&1; then
    out=$("$MT_BIN" run -o "$T/redis.ctf" -- redis-server --version 2>/dev/null); st=$?
    check "redis-server --version runs under the recorder (exit $st)" test "$st" = 0
    case $out in *jemalloc*) pass "redis-server reports its allocator as jemalloc" ;;
        *) fail "redis-server's version line: $out" ;; esac
else
    echo "PASS: redis-server not installed: skipped"
fi
finish
