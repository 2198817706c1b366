#!/bin/sh
# unwind.sh - call stacks through code built without frame pointers: with
# MEMTRACE_UNWIND=dwarf (the default) and auto, an allocation made four
# calls deep in a program built with -O2 -fomit-frame-pointer shows all
# four callers in order; the user function that called strdup (glibc has
# no frame pointers) is kept; the recorder's own frames and the threads'
# start-up frames (the thread's, and libc's above main) stay out of stacks.
. tests/record/progs/lib.sh
skip_under_tsan
command -v "${CC:-cc}" >/dev/null 2>&1 || { echo "FAIL: no C compiler (${CC:-cc})"; exit 1; }
rate=0.001
NOFP=$T/nofp
"${CC:-cc}" -std=gnu11 -O2 -g -fomit-frame-pointer -o "$NOFP" tests/record/nofp/nofp.c ||
    { fail "nofp.c builds"; finish; }
"${CC:-cc}" -std=gnu11 -O2 -g -fno-omit-frame-pointer -o "$NOFP-fp" tests/record/nofp/nofp.c ||
    { fail "nofp.c builds with frame pointers"; finish; }

chain='main > nofp_level1 > nofp_level2 > nofp_level3 > nofp_level4$'

for mode in dwarf auto; do
    MEMTRACE_UNWIND=$mode preload "$T/deep-$mode.ctf" $rate "$NOFP" deep 20000 ||
        fail "$mode: nofp deep ran"
    stacks "$T/deep-$mode.ctf" >"$T/deep-$mode.st"
    n=$(wc -l <"$T/deep-$mode.st")
    check "$mode: samples taken ($n)" test "$n" -ge 100
    p=$(share "$T/deep-$mode.st" "$chain")
    check "$mode: main and the four callers in order, no frame pointers ($p% of stacks)" test "$p" -ge 95
done
# The same program with the frame-pointer walk loses the callers: what the
# DWARF walk is for (and a check that the program really has no chain).
MEMTRACE_UNWIND=fp preload "$T/deep-fp.ctf" $rate "$NOFP" deep 20000 || fail "fp: nofp deep ran"
stacks "$T/deep-fp.ctf" >"$T/deep-fp.st"
p=$(share "$T/deep-fp.st" 'nofp_level2 > nofp_level3')
check "fp: without frame pointers the callers are lost ($p% of stacks have them)" \
    sh -c "[ -s '$T/deep-fp.st' ] && [ $p -le 5 ]"

# strdup: glibc's strdup has no frame pointer, so a frame-pointer walk
# skips its caller; the DWARF walk (default mode) keeps it.
for prog in "$NOFP" "$NOFP-fp"; do
    name=${prog##*/}
    env -u MEMTRACE_UNWIND -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$T/$name-strdup.ctf" \
        MEMTRACE_RATE=$rate "$prog" strdup 20000 || fail "$name strdup ran"
    "$MT_BIN" symbolize -q "$T/$name-strdup.ctf"
    stacks "$T/$name-strdup.ctf" >"$T/$name-strdup.st"
    p=$(share "$T/$name-strdup.st" 'main > nofp_copy_name > [^ ]*strdup$')
    check "default mode, $name: strdup's caller kept (main > nofp_copy_name > strdup in $p%)" test "$p" -ge 95
done
# auto, no frame pointers anywhere: the chain breaks at strdup, one frame
# below main's depth; that must not pass for a complete chain.
MEMTRACE_UNWIND=auto preload "$T/auto-strdup.ctf" $rate "$NOFP" strdup 20000 || fail "auto strdup ran"
stacks "$T/auto-strdup.ctf" >"$T/auto-strdup.st"
p=$(share "$T/auto-strdup.st" 'main > nofp_copy_name > [^ ]*strdup$')
check "auto, nofp: strdup's caller kept (main > nofp_copy_name > strdup in $p%)" test "$p" -ge 95

# memtrace run --unwind sets the mode for the command.
MEMTRACE_LIB=$LIB "$MT_BIN" run -o "$T/run.ctf" --interval 1k --unwind fp -- "$NOFP" deep 5000 2>/dev/null ||
    fail "memtrace run --unwind fp ran"
stacks "$T/run.ctf" >"$T/run.st"
p=$(share "$T/run.st" 'nofp_level2')
check "run --unwind fp: frame pointers only (callers lost in all but $p%)" sh -c "[ -s '$T/run.st' ] && [ $p -le 5 ]"
MEMTRACE_LIB=$LIB "$MT_BIN" run -o "$T/run2.ctf" --interval 1k --unwind dwarf -- "$NOFP" deep 5000 2>/dev/null ||
    fail "memtrace run --unwind dwarf ran"
stacks "$T/run2.ctf" >"$T/run2.st"
check "run --unwind dwarf: the four callers" test "$(share "$T/run2.st" "$chain")" -ge 95
"$MT_BIN" run --unwind frames true 2>"$T/bad.err"; st=$?
check "run --unwind with a bad mode: usage error (exit $st)" sh -c "test $st = 2 && grep -qx 'memtrace run: --unwind frames: use fp, dwarf or auto' '$T/bad.err'"

# No recorder frames; threads' stacks start at their start routine.
MEMTRACE_UNWIND=dwarf preload "$T/thr.ctf" 0.0001 "$PROGS/threads" >/dev/null || fail "threads ran"
stacks "$T/thr.ctf" >"$T/thr.st"
check "dwarf: samples in threads" test "$(grep -c '^worker' "$T/thr.st")" -ge 50
# (The recorder's frames are those of its sources, lib/record/*.c, or
# named mtr_*/memtrace_*; glibc's inlined rtld-malloc.h calloc is not one,
# and neither is the pthread_create wrapper the program itself called.)
"$MT_BIN" dump "$T/thr.ctf" >"$T/thr.dump"
"$MT_BIN" dump "$T/deep-dwarf.ctf" >"$T/deep-dwarf.dump"
check "dwarf: no recorder frames in stacks" \
    sh -c "! grep -Eh '^ *bt .*( lib/record/[a-z]*\.c:| (mtr|memtrace)_[a-z_]*\$)' '$T/thr.dump' '$T/deep-dwarf.dump' |
           grep -vq ' pthread_create\$'"
check "dwarf: thread stacks end at the start routine (no start_thread, clone)" \
    sh -c "! grep -Eq 'start_thread|clone' '$T/thr.st'"
MEMTRACE_UNWIND=auto preload "$T/thr-auto.ctf" 0.0001 "$PROGS/threads" >/dev/null || fail "threads (auto) ran"
stacks "$T/thr-auto.ctf" >"$T/thr-auto.st"
p=$(share "$T/thr-auto.st" '^worker')
check "auto: thread stacks start at the start routine ($p%)" sh -c "[ -s '$T/thr-auto.st' ] && [ $p -ge 99 ]"

# libunwind stays out of the program's symbol scope: nothing of it is
# exported or needed by libmemtrace.so (it is dlopen'ed RTLD_LOCAL).
if ! command -v nm >/dev/null 2>&1 || ! command -v readelf >/dev/null 2>&1; then
    fail "nm or readelf not installed (binutils): libmemtrace.so's symbols not checked"
else
    check "libmemtrace.so exports no unw_/_U/_Unwind/backtrace symbol" \
        sh -c "! nm -D --defined-only '$LIB' | grep -Eq ' (unw_|_U|_Unwind|backtrace)'"
    check "libmemtrace.so does not need libunwind" sh -c "! readelf -d '$LIB' | grep -q 'NEEDED.*libunwind'"
fi
# libc's start-up frames above main are dropped: main-thread stacks start
# at main whatever the mode (fp checked on the build with frame pointers).
MEMTRACE_UNWIND=fp preload "$T/deep-fpbuild.ctf" $rate "$NOFP-fp" deep 20000 || fail "fp: deep ran"
stacks "$T/deep-fpbuild.ctf" >"$T/deep-fpbuild.st"
for st in deep-dwarf deep-auto deep-fpbuild; do
    p=$(share "$T/$st.st" '^main > ')
    check "$st: main-thread stacks start at main ($p%)" test "$p" -ge 95
    check "$st: no start-up frames (_start, __libc_start_*)" \
        sh -c "! grep -Eq '(^|> )(_start|__libc_start[a-z_]*)( |\$)' '$T/$st.st'"
done
finish
