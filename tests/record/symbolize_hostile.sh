#!/bin/sh
# symbolize_hostile.sh - `memtrace symbolize` on traces and files made to
# stall it or blow up its cost. A trace names its modules by path, and
# libdw's search for debug information opened whatever those paths and the
# modules' .gnu_debuglink / .gnu_debugaltlink lead to: a FIFO blocked it
# forever, /dev/zero fed its CRC forever, at the end of `memtrace run` too.
# Small traces made it take gigabytes or minutes: a 10 KB array per code,
# one module loaded again under each of its spellings, module and code
# tables searched linearly or with an unkeyed hash, a descriptor per module
# until the limit. Every command runs under a CPU-time limit (a regression
# fails instead of hanging) and timeout(1) far above it; limits are loose
# but far below what the old code took. The traces are made here by tests/tools/gen_rawframes.c.
# (A CRC over a sparse file: seconds for nothing.)
. tests/record/progs/lib.sh
skip_under_tsan
set -u
GEN=$MT_BUILD/tests/tools/gen_rawframes
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (make tests-build)"; exit 1; }
command -v objcopy >/dev/null || { echo "objcopy (binutils) is needed"; exit 77; }
if [ "${MT_STAGE:-plain}" = plain ]; then LIM=5; else LIM=20; fi
SITES=$PWD/$PROGS/sites
# the return address of a call in main: a frame every module copy names
OFF=$(printf %x $((0x$(nm "$SITES" | awk '$3 == "main" { print $1 }') + 8)))

# sym NAME TRACE [LIMIT]: symbolize with a time limit; RC (124: timed out),
# SECS, stderr in $T/NAME.err
sym() {
    name=$1 trace=$2 lim=${3:-$LIM}
    t0=$(date +%s.%N)
    # the limit is on CPU time (a loaded machine stretches the wall clock);
    # the wall clock only guards against a hang, far above the work
    (ulimit -t "$lim"; exec timeout -k 2 300 "$MT_BIN" symbolize "$trace") 2>"$T/$name.err"
    RC=$?
    SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}
named() { grep -Eq ": $1 of $1 frames named\$" "$T/$2.err"; }

# ------------------------------------------------------------- 1. hangs
D=$T/hang
mkdir -p "$D"
# a module without build-id or DWARF, and a FIFO where libdw looked for
# its separate debug file (MODULE.debug beside it)
objcopy --strip-debug --remove-section=.note.gnu.build-id "$SITES" "$D/nobid.so"
mkfifo "$D/nobid.so.debug"
# a .gnu_debuglink of ../../(...)/dev/zero: an endless CRC
up=$(printf '../%.0s' $(seq 17))   # 3 * 17 + 9 bytes: a multiple of 4, then the CRC
printf '%sdev/zero\000\001\002\003\004' "$up" >"$D/link-zero"
objcopy --strip-debug --remove-section=.note.gnu.build-id \
    --add-section .gnu_debuglink="$D/link-zero" "$SITES" "$D/zero.so"
# a .gnu_debuglink naming a FIFO
printf 'fifo.dbg\000\000\000\000\001\002\003\004' >"$D/link-fifo"
objcopy --strip-debug --remove-section=.note.gnu.build-id \
    --add-section .gnu_debuglink="$D/link-fifo" "$SITES" "$D/linkfifo.so"
mkfifo "$D/fifo.dbg"
# a .gnu_debugaltlink (dwz file) naming a FIFO
printf 'alt.fifo\000ABCDEFGHIJKLMNOPQRST' >"$D/link-alt"
objcopy --add-section .gnu_debugaltlink="$D/link-alt" "$SITES" "$D/alt.so"
mkfifo "$D/alt.fifo"
# .gnu_debuglinks to sparse files (holes cost their maker nothing): 8 GiB
# (libdw's CRC ran over all of it, about 20 s) and 1000 MiB (under the
# size limit of a CRC, but mostly holes)
for big in 8G:huge 1000M:hole; do
    printf '%s.dbg\000\000\000\000\001\002\003\004' "${big#*:}" >"$D/link-${big#*:}"
    objcopy --strip-debug --remove-section=.note.gnu.build-id \
        --add-section .gnu_debuglink="$D/link-${big#*:}" "$SITES" "$D/${big#*:}.so"
    printf '\177ELF' >"$D/${big#*:}.dbg"
    truncate -s "${big%:*}" "$D/${big#*:}.dbg"
done
for m in nobid zero linkfifo alt huge hole; do
    "$GEN" codes "$D/$m.ctf" "$D/$m.so" 3 "$OFF" || fail "gen_rawframes codes $m"
    sym "$m" "$D/$m.ctf"
    if [ $RC = 0 ] && named 3 "$m"; then
        pass "$m.so: no hang, frames named, ${SECS}s"
    else
        fail "$m.so: exit $RC after ${SECS}s (124: timed out): $(head -c 300 "$T/$m.err")"
    fi
done
# the end of `memtrace run` symbolizes: the same FIFO beside the program
objcopy --strip-debug --remove-section=.note.gnu.build-id "$SITES" "$D/prog"
mkfifo "$D/prog.debug"
t0=$(date +%s.%N)
# (a hang guard far above the work: a blocked read uses no CPU time)
timeout -k 2 120 "$MT_BIN" run -o "$D/run.ctf" -- "$D/prog" >/dev/null 2>"$T/run.err"
RC=$?
SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
if [ $RC = 0 ] && "$MT_BIN" dump --raw-frames "$D/run.ctf" | grep -q ' site_small_freed$'; then
    pass "memtrace run, a FIFO as the program's debug file: ends in ${SECS}s, frames named"
else
    fail "memtrace run, a FIFO as the program's debug file: exit $RC after ${SECS}s: $(head -c 300 "$T/run.err")"
fi

# ---------------------------------------------------------------- 2. cost
# Where memory is measured: an address-space limit (not under ASan, which
# reserves terabytes of it). The old code took 8 KB a code (434 MB here).
if [ "${MT_STAGE:-plain}" = plain ]; then VLIM=250000; else VLIM=unlimited; fi
cp "$SITES" "$T/mod"
"$GEN" codes "$T/codes.ctf" "$T/mod" 100000 "$OFF" || fail "gen_rawframes codes"
( ulimit -v $VLIM; sym codes "$T/codes.ctf"; echo "$RC $SECS" >"$T/codes.rc" )
read -r RC SECS <"$T/codes.rc"
n=$(sed -n 's/.*: \([0-9]*\) of 100000 frames named.*/\1/p' "$T/codes.err")
if [ "$RC" = 0 ] && [ "${n:-0}" -ge 90000 ]; then
    pass "100,000 distinct codes (address space: $VLIM KB): $n named, ${SECS}s"
else
    fail "100,000 distinct codes: exit $RC, ${n:-no} frames named, ${SECS}s: $(head -c 300 "$T/codes.err")"
fi

# One module (with DWARF) spelled 1,500 ways: loaded once (the old code
# loaded it 1,500 times: 1.9 GB).
mkdir -p "$T/dir"
cp "$MT_BIN" "$T/dir/mod"
"$GEN" spellings "$T/spell.ctf" "$T/dir/mod" 1500 || fail "gen_rawframes spellings"
( ulimit -v $VLIM; sym spell "$T/spell.ctf"; echo "$RC $SECS" >"$T/spell.rc" )
read -r RC SECS <"$T/spell.rc"
if [ "$RC" = 0 ] && grep -Eq ': [0-9]+ of 6000 frames named' "$T/spell.err" &&
   ! grep -q 'cannot read' "$T/spell.err"; then
    pass "one module spelled 1,500 ways (address space: $VLIM KB): $(sed -n 's/.*: \([0-9]* of 6000\) frames.*/\1/p' "$T/spell.err") named, ${SECS}s"
else
    fail "one module spelled 1,500 ways: exit $RC, ${SECS}s: $(head -c 300 "$T/spell.err")"
fi

# 60,000 modules that do not exist: one hash look-up each (the old linear
# search and warning list took 30 s).
"$GEN" modules "$T/mods.ctf" "$T/nowhere/m" 60000 || fail "gen_rawframes modules"
sym mods "$T/mods.ctf"
w=$(grep -c 'cannot read' "$T/mods.err")
if [ $RC = 0 ] && [ "$w" = 60000 ]; then
    pass "60,000 missing modules: one warning each, ${SECS}s"
else
    fail "60,000 missing modules: exit $RC, $w warnings, ${SECS}s (limit ${LIM}s)"
fi

# 300 distinct modules with 64 descriptors: modules are closed and opened
# again as needed (the old code kept one open per module and could read
# none past the limit).
mkdir -p "$T/many"
i=0; while [ $i -lt 300 ]; do cp "$SITES" "$T/many/m$i"; i=$((i + 1)); done
"$GEN" modules "$T/many.ctf" "$T/many/m" 300 "$OFF" || fail "gen_rawframes modules"
( ulimit -n 64; sym many "$T/many.ctf"; echo "$RC $SECS" >"$T/many.rc" )
read -r RC SECS <"$T/many.rc"
if [ "$RC" = 0 ] && named 300 many && ! grep -q 'cannot read' "$T/many.err"; then
    pass "300 modules with a limit of 64 descriptors: all named, ${SECS}s"
else
    fail "300 modules with 64 descriptors: exit $RC, ${SECS}s: $(tail -n 2 "$T/many.err")"
fi

# Codes that all fell into one slot of the rewriter's unkeyed code table
# (the old code took 26 s for these 160,000).
HOSTILE=$MT_BUILD/tests/tools/gen_hostile
"$HOSTILE" collide "$T/collide.ctf" 160000 || fail "gen_hostile collide"
sym collide "$T/collide.ctf"
if [ $RC = 0 ] && grep -q 'nothing to symbolize' "$T/collide.err"; then
    pass "160,000 colliding codes: ${SECS}s"
else
    fail "160,000 colliding codes: exit $RC after ${SECS}s (limit ${LIM}s)"
fi
finish
