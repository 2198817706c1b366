#!/bin/sh
# heapsame.sh - the recorder keeps its own memory off the program's heap.
# heapsame (tests/record/progs/heapsame.c) runs on a counting allocator
# (tests/record/preload/heapcount.c, preloaded behind the recorder as the
# program's allocator) and prints how many blocks it gained between two
# points of a recording, each after the recorder's writer has written out
# what came before: the writer meanwhile named 64 new call sites, grew its
# tables and, rotating, carried the live blocks into new pieces. The
# program's own gain is 0 (it keeps as many blocks as it frees), and must
# stay 0 under the recorder: a block the recorder took from the program's
# allocator on the way would show. What the loader allocates at start for
# the recorder (libunwind's dlopen, its threads' TLS; ARCHITECTURE.md) is
# before the first point and only reported.
. tests/record/progs/lib.sh
skip_under_tsan
cc -O2 -shared -fPIC -o "$T/heapcount.so" tests/record/preload/heapcount.c -ldl 2>"$T/cc.err" ||
    { fail "heapcount.so builds"; cat "$T/cc.err"; finish; }
P=$PROGS/heapsame

LD_PRELOAD="$T/heapcount.so" "$P" >"$T/plain.out" 2>"$T/plain.err" || fail "heapsame runs alone"
check "without the recorder the program gains no block from A to B" \
    grep -qx 'blocks gained from A to B: 0' "$T/plain.out"
plain_b=$(sed -n 's/^blocks in use at B: \([0-9]*\);.*/\1/p' "$T/plain.err")

# traced NAME ENV... : heapsame under the recorder at rate 1 (every block sampled)
traced() {
    name=$1; shift
    rm -f "$T/$name.ctf"*
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB:$T/heapcount.so" MEMTRACE="$T/$name.ctf" MEMTRACE_RATE=1 \
        "$@" "$P" >"$T/$name.out" 2>"$T/$name.err"
    st=$?
    check "$name: heapsame runs under the recorder (exit $st)" test "$st" = 0
    b=$(sed -n 's/^blocks in use at B: \([0-9]*\);.*/\1/p' "$T/$name.err")
    if grep -qx 'blocks gained from A to B: 0' "$T/$name.out"; then
        pass "$name: the program's allocator gained no block while the recorder wrote (in use at B: $b, without the recorder $plain_b)"
    else
        fail "$name: the recorder took blocks from the program's allocator while it wrote:"
        head -1 "$T/$name.out"
    fi
    [ -f "$T/$name.ctf" ] || return 0   # (rotating: pieces, counted below)
    # the program's 9000 blocks and site_c's 1000 first tries, every one sampled
    allocs=$(summary "$T/$name.ctf" 2>/dev/null | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
    check "$name: the trace has the program's 10000 allocations (allocs=${allocs:-?})" \
        test "${allocs:-0}" -ge 10000
}

traced one-file HEAPSAME_GROW="$T/one-file.ctf"
traced rotating MEMTRACE_ROTATE_SIZE=64K HEAPSAME_PIECES="$T/rotating.ctf"
traced frame-pointers MEMTRACE_UNWIND=fp HEAPSAME_GROW="$T/frame-pointers.ctf"
n=$(ls "$T"/rotating.ctf.part* 2>/dev/null | wc -l)
check "rotating: the recording was carried into several pieces ($n)" test "$n" -ge 3
finish
