#!/bin/sh
# defaults.sh - the recorder's defaults and per-byte sampling, end to end
# through traces (tests/record/sampling.c checks the process in depth):
#  - no rate given: one sample per 512 KiB on average (rate 1/524288 in the
#    header, and 2 GiB allocated gives 4096 +- 5 sd samples), with
#    `memtrace run` and with LD_PRELOAD + MEMTRACE;
#  - rate 1 samples every byte (1000 malloc(0): 1000 samples), rate 0.5
#    gives half the bytes within 5 standard errors;
#  - stacks are cut at 128 frames by default, at MEMTRACE_DEPTH / --depth
#    frames when given (a "[truncated]" marker frame is not counted).
. tests/record/progs/lib.sh
skip_under_tsan
B=$PROGS/blocks

# site_samples TRACE: samples of the allocations made in work()
site_samples() { summary "$1" | awk '$1 == "SITE" && $2 == "work" { print $5 }'; }
# within GOT WANT SD: |GOT - WANT| <= 5 SD
within() { awk -v g="$1" -v w="$2" -v s="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 5 * s) }'; }
# depths TRACE: "max count_at_max" of the frames per stack, marker excluded
depths() {
    "$MT_BIN" dump "$1" | awk '
        $1 == "ev" && $3 == "alloc" { if (have) d[n]++; n = 0; have = 1; next }
        $1 == "bt" && $NF != "[truncated]" { n++ }
        END { if (have) d[n]++; m = 0; for (k in d) if (k + 0 > m) m = k + 0; print m, d[m] }'
}

# 2 GiB in 64 KiB blocks: 4096 samples expected at 512 KiB, sd 64
"$MT_BIN" run -o "$T/def.ctf" -- "$B" 32768 65536 1 2>/dev/null || fail "memtrace run with no rate ran"
check "memtrace run: default rate 1/524288 in the header" \
    sh -c "'$PROGS/summary' '$T/def.ctf' | grep -q '^INFO .* rate=1.9073486328125e-06 '"
n=$(site_samples "$T/def.ctf")
check "memtrace run: 2 GiB allocated gives $n samples, expected 4096 +- 320" within "$n" 4096 64
env -u MEMTRACE_RATE LD_PRELOAD="$LIB" MEMTRACE="$T/env.ctf" "$B" 32768 65536 1 || fail "preloaded with no MEMTRACE_RATE ran"
"$MT_BIN" symbolize -q "$T/env.ctf" || fail "memtrace symbolize env.ctf"
check "LD_PRELOAD: default rate 1/524288 in the header" \
    sh -c "'$PROGS/summary' '$T/env.ctf' | grep -q '^INFO .* rate=1.9073486328125e-06 '"
n=$(site_samples "$T/env.ctf")
check "LD_PRELOAD: 2 GiB allocated gives $n samples, expected 4096 +- 320" within "$n" 4096 64

# rate 1: every byte, malloc(0) counting 1 byte
preload "$T/r1.ctf" 1 "$B" 1000 0 1 || fail "rate 1 ran"
n=$(site_samples "$T/r1.ctf")
check "rate 1: 1000 malloc(0) give 1000 samples ($n)" test "$n" = 1000
preload "$T/r1b.ctf" 1 "$B" 300 77 1 || fail "rate 1 ran"
n=$(site_samples "$T/r1b.ctf")
check "rate 1: 300 blocks of 77 bytes give 23100 samples ($n)" test "$n" = 23100
# rate 0.5: 20000 x 100 bytes: 1e6 samples expected, sd sqrt(2e6 / 4)
preload "$T/half.ctf" 0.5 "$B" 20000 100 1 || fail "rate 0.5 ran"
n=$(site_samples "$T/half.ctf")
check "rate 0.5: 2e6 bytes give $n samples, expected 1000000 +- 3536" within "$n" 1000000 707.1

# stack depth: a 300-deep recursion
preload "$T/deep.ctf" 0.001 "$B" 2000 1000 300 || fail "deep ran"
set -- $(depths "$T/deep.ctf")
check "default depth: stacks cut at 128 frames (deepest $1, $2 stacks)" test "$1" = 128
MEMTRACE_DEPTH=20 preload "$T/d20.ctf" 0.001 "$B" 2000 1000 300 || fail "MEMTRACE_DEPTH=20 ran"
set -- $(depths "$T/d20.ctf")
check "MEMTRACE_DEPTH=20: stacks cut at 20 frames (deepest $1, $2 stacks)" test "$1" = 20
"$MT_BIN" run --depth 7 -r 0.001 -o "$T/d7.ctf" -- "$B" 2000 1000 300 2>/dev/null || fail "--depth 7 ran"
set -- $(depths "$T/d7.ctf")
check "memtrace run --depth 7: stacks cut at 7 frames (deepest $1, $2 stacks)" test "$1" = 7
MEMTRACE_DEPTH=20 preload "$T/shallow.ctf" 0.001 "$B" 2000 1000 3 || fail "shallow ran"
set -- $(depths "$T/shallow.ctf")
check "MEMTRACE_DEPTH=20: a shallow stack is whole (work, 4 x descend, main: deepest $1)" \
    sh -c "[ '$1' -ge 6 ] && [ '$1' -lt 20 ]"
finish
