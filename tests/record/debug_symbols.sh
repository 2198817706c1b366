#!/bin/sh
# debug_symbols.sh - names for stripped binaries from what a distribution
# gives: a separate debug file found by build-id under the debug root
# (Debian's -dbgsym packages: /usr/lib/debug/.build-id/xx/yyyy.debug; here a
# scratch root named by MEMTRACE_DEBUG_ROOT), by .gnu_debuglink (a binary
# without build-id, checked by CRC), and MiniDebugInfo (.gnu_debugdata, the
# xz-compressed symbol table inside the binary, made here with objcopy and
# xz). Where no name can be had, one line says how to get them.
. tests/record/progs/lib.sh
# About finding debug information: the name cache would name a build-id
# named before in this test (a binary and its stripped copy share theirs);
# tests/record/symbolize_cache.sh tests the cache.
MEMTRACE_NAME_CACHE=0; export MEMTRACE_NAME_CACHE
skip_under_tsan
for t in objcopy strip xz nm readelf; do
    command -v $t >/dev/null || { echo "$t not installed (scripts/install-deps.sh test)"; exit 77; }
done
M=$PWD/$MT_BIN
D=$T/dbg
rm -rf "$D"; mkdir -p "$D/root"

# hidden_block is static: no stripped binary's .dynsym names it
cat > "$D/prog.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) static void *hidden_block(size_t n) { return malloc(n); }
__attribute__((noinline)) void *make_block(size_t n) { return hidden_block(n); }
int main(void)
{
    void *volatile keep;
    for (int i = 0; i < 20000; i++) {
        keep = make_block(1000 + i % 7);
        if (i % 2)
            free(keep);
    }
    return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$D/full" "$D/prog.c" || fail "compile"
line=$(grep -n 'static void \*hidden_block' "$D/prog.c" | cut -d: -f1)
run() { preload_raw "$1" 0.001 "$2" || fail "$2 ran"; }

# ------------------------------------------------ 1. by build-id
cp "$D/full" "$D/byid" && strip --strip-all "$D/byid"
id=$(readelf -n "$D/byid" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
rest=${id#??}; dir=${id%"$rest"}
mkdir -p "$D/root/.build-id/$dir"
objcopy --only-keep-debug "$D/full" "$D/root/.build-id/$dir/$rest.debug"
run "$D/id.ctf" "$D/byid"
"$M" top -n 1 "$D/id.ctf" >"$D/id.plain" 2>"$D/id.plain.err"
check "stripped, no debug root: the site stays module+offset ($(sed -n 4p "$D/id.plain"))" \
    grep -q 'byid+0x[0-9a-f]* ' "$D/id.plain"
check "stripped: one line says how to get the names ($(head -c 300 "$D/id.plain.err"))" \
    sh -c "[ \$(wc -l < '$D/id.plain.err') = 1 ] &&
           grep -q \"frames in $D/byid without a symbol stay module+0xoffset: it has no debug information here; install its debug symbols (Debian: the -dbgsym package that 'find-dbgsym-packages $D/byid' names) or run 'memtrace symbolize --debuginfod URL $D/id.ctf'\" '$D/id.plain.err'"
DEBUGINFOD_URLS="http://127.0.0.1:9/ http://127.0.0.1:10/" "$M" top -n 1 "$D/id.ctf" >/dev/null 2>"$D/id.env.err"
check "DEBUGINFOD_URLS set: the line names its first server" \
    grep -q "memtrace symbolize --debuginfod http://127.0.0.1:9/ $D/id.ctf'" "$D/id.env.err"
MEMTRACE_DEBUG_ROOT=$D/root "$M" top -n 1 "$D/id.ctf" >"$D/id.top" 2>"$D/id.err"
check "debug file by build-id: the static function with file and line ($(sed -n 4p "$D/id.top"))" \
    grep -q "hidden_block ($D/prog.c:$line)" "$D/id.top"
check "debug file by build-id: no note" test ! -s "$D/id.err"
cp "$D/id.ctf" "$D/id2.ctf"
MEMTRACE_DEBUG_ROOT=$D/root "$M" symbolize "$D/id2.ctf" 2>"$D/sym.err"
check "symbolize with the debug root: every frame named ($(cat "$D/sym.err"))" \
    grep -q ": 3 of 3 frames named$" "$D/sym.err"
"$M" symbolize "$D/id.ctf" 2>"$D/sym0.err"
check "symbolize without it: the same one-line advice" \
    grep -q "$D/byid has no debug information here: some of its frames stay module+offset; install its debug symbols (Debian: the -dbgsym package that find-dbgsym-packages $D/byid names)" "$D/sym0.err"
# a debug file of another build under the build-id's name is not used
sed 's/1000 + i % 7/2000 + i % 5/' "$D/prog.c" >"$D/other.c"
cc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$D/other" "$D/other.c"
mkdir -p "$D/bad/.build-id/$dir"
objcopy --only-keep-debug "$D/other" "$D/bad/.build-id/$dir/$rest.debug"
MEMTRACE_DEBUG_ROOT=$D/bad "$M" top -n 1 "$D/id.ctf" >"$D/bad.top" 2>/dev/null
check "a debug file with another build-id is not used ($(sed -n 4p "$D/bad.top"))" \
    grep -q 'byid+0x' "$D/bad.top"
MEMTRACE_DEBUG_ROOT=relative/root "$M" top -n 1 "$D/id.ctf" >/dev/null 2>"$D/rel.err"
check "MEMTRACE_DEBUG_ROOT not absolute: said, and ignored" \
    grep -q "MEMTRACE_DEBUG_ROOT=relative/root ignored: not an absolute path" "$D/rel.err"

# ------------------------------------------------ 2. by .gnu_debuglink
# no build-id: the debuglink's name under ROOT/<the binary's directory>,
# checked by its CRC
cc -O1 -g -fno-omit-frame-pointer -Wl,--build-id=none -o "$D/linkfull" "$D/prog.c"
objcopy --only-keep-debug "$D/linkfull" "$D/link.debug"
cp "$D/linkfull" "$D/link" && strip --strip-all "$D/link" &&
    objcopy --add-gnu-debuglink="$D/link.debug" "$D/link"
mkdir -p "$D/root$D"
mv "$D/link.debug" "$D/root$D/link.debug"
run "$D/link.ctf" "$D/link"
MEMTRACE_DEBUG_ROOT=$D/root "$M" top -n 1 "$D/link.ctf" >"$D/link.top" 2>"$D/link.err"
check "debug file by .gnu_debuglink under the root: named ($(sed -n 4p "$D/link.top"))" \
    grep -q "hidden_block ($D/prog.c:$line)" "$D/link.top"
"$M" top -n 1 "$D/link.ctf" >"$D/link0.top" 2>/dev/null
check "by .gnu_debuglink: not without the root" grep -q 'link+0x' "$D/link0.top"

# ------------------------------------------------ 3. MiniDebugInfo
# the recipe distributions use: the function symbols .dynsym lacks, in an
# xz-compressed ELF file in .gnu_debugdata
cp "$D/full" "$D/mini"
nm -D "$D/mini" --format=posix --defined-only | awk '{print $1}' | sort >"$D/dynsyms"
nm "$D/mini" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" {print $1}' | sort >"$D/funcsyms"
comm -13 "$D/dynsyms" "$D/funcsyms" >"$D/keep"
objcopy --only-keep-debug "$D/mini" "$D/mini.dbg"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$D/keep" \
    "$D/mini.dbg" "$D/minidebuginfo"
xz -f "$D/minidebuginfo"
strip --strip-all "$D/mini"
objcopy --add-section .gnu_debugdata="$D/minidebuginfo.xz" "$D/mini"
check "MiniDebugInfo binary: .gnu_debugdata, no .symtab" \
    sh -c "readelf -S '$D/mini' | grep -q gnu_debugdata && ! readelf -S '$D/mini' | grep -q '\.symtab'"
run "$D/mini.ctf" "$D/mini"
"$M" top -n 1 "$D/mini.ctf" >"$D/mini.top" 2>"$D/mini.err"
check "MiniDebugInfo: the static function named ($(sed -n 4p "$D/mini.top"))" \
    grep -q "hidden_block ($D/mini)" "$D/mini.top"
check "MiniDebugInfo: its caller named" grep -q "<- make_block ($D/mini)" "$D/mini.top"
check "MiniDebugInfo: every frame named, no note" test ! -s "$D/mini.err"

# ------------------------------------------------ 4. one line for a run
# three forked children of one stripped program: one warning, not three
cat > "$D/forks.c" <<'C'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) static void *blk(size_t n) { return malloc(n); }
int main(void)
{
    for (int k = 0; k < 3; k++)
        if (fork() == 0) {
            for (int i = 0; i < 4000; i++)
                free(blk(4096));
            _exit(0);
        }
    while (wait(NULL) > 0)
        ;
    return 0;
}
C
cc -O1 -fno-omit-frame-pointer -o "$D/forks" "$D/forks.c" && strip --strip-all "$D/forks" || fail "compile forks"
"$M" run -i 64k -o "$D/forks.ctf" -- "$D/forks" 2>"$D/forks.err" || fail "memtrace run forks"
check "run of a stripped program with 3 children: 3 child traces" \
    test "$(ls "$D" | grep -c '^forks\.ctf\.[0-9]*$')" = 3
check "run: the advice once ($(grep -c 'has no debug information here' "$D/forks.err") lines)" \
    test "$(grep -c "$D/forks has no debug information here" "$D/forks.err")" = 1
finish
