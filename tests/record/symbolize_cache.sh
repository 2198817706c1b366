#!/bin/sh
# symbolize_cache.sh - the name cache of `memtrace symbolize` and `memtrace
# run`: what a binary's debug information gave is kept by its build-id, a
# later trace of the same binary is named from it (byte for byte what the
# debug information gives; a binary without: its symbol table, in a file of
# its own read only while it has none), and a cache file that is damaged, a link,
# writable by others or too big is refused with a warning, never trusted.
. tests/record/progs/lib.sh
skip_under_tsan
rate=0.0001
XDG_CACHE_HOME=$T/xdg; export XDG_CACHE_HOME
unset MEMTRACE_NAME_CACHE
dir=$XDG_CACHE_HOME/memtrace/names
prog=$T/prog
cp "$PROGS/sites" "$prog"
id=$(readelf -n "$prog" | awk '/Build ID:/ { print $3 }')
[ -n "$id" ] || { echo "the test program has no build-id"; exit 77; }
cache=$dir/$id

preload_raw "$T/raw.ctf" $rate "$prog" >/dev/null || fail "the program ran"
sym() { # COPY [ARGS...]: symbolizes a copy of the raw trace; its stderr in COPY.err
    c=$1; shift
    cp "$T/raw.ctf" "$T/$c.ctf"
    "$MT_BIN" symbolize "$@" "$T/$c.ctf" 2>"$T/$c.err"
}

# The reference: no cache at all.
MEMTRACE_NAME_CACHE=0 sym ref; st=$?
check "without the cache: exit 0 ($st)" test "$st" = 0
check "MEMTRACE_NAME_CACHE=0: no cache directory made" test ! -e "$XDG_CACHE_HOME/memtrace"
sym opt --no-name-cache
check "--no-name-cache: no cache directory made, same trace" \
    sh -c "test ! -e '$XDG_CACHE_HOME/memtrace' && cmp -s '$T/ref.ctf' '$T/opt.ctf'"
"$MT_BIN" dump --raw-frames "$T/ref.ctf" >"$T/ref.dump"
check "reference: the program's frames have file and line" \
    grep -Eq ' [^ ]*sites\.c:[1-9][0-9]*:0-0 site_small_freed$' "$T/ref.dump"

# First run with the cache: the debug information, then a file by build-id.
sym first
check "first: named from the debug information (nothing from the cache)" \
    sh -c "grep -Eq 'frames named' '$T/first.err' && ! grep -q 'name cache' '$T/first.err'"
check "first: same trace as without the cache" cmp -s "$T/ref.ctf" "$T/first.ctf"
check "first: the cache file is named by the program's build-id" test -f "$cache"
check "first: file 0600, directory 0700" sh -c \
    "test \"\$(stat -c %a '$cache')\" = 600 && test \"\$(stat -c %a '$dir')\" = 700"

# Second: named from the cache, byte for byte the same trace.
sym second
n=$(sed -n 's/.*, \([0-9]*\) from the name cache.*/\1/p' "$T/second.err")
check "second: frames named from the cache (${n:-none})" test "${n:-0}" -gt 0
check "second: same trace as without the cache" cmp -s "$T/ref.ctf" "$T/second.ctf"

# The cache is what named them: the binary's debug information is gone
# (strip --strip-debug keeps its build-id) and the lines are still there.
strip --strip-debug "$prog"
sym stripped
check "debug information stripped: still named from the cache, the same trace" \
    cmp -s "$T/ref.ctf" "$T/stripped.ctf"
MEMTRACE_NAME_CACHE=0 sym stripped-nocache
"$MT_BIN" dump --raw-frames "$T/stripped-nocache.ctf" >"$T/stripped-nocache.dump"
check "debug information stripped, no cache: no line (so the cache named them)" \
    sh -c "! grep -Eq 'sites\.c:[1-9][0-9]*:0-0 site_small_freed\$' '$T/stripped-nocache.dump'"

# memtrace run: a later run of the same binary names from the cache too.
"$MT_BIN" run -r $rate -o "$T/run.ctf" -- "$prog" >/dev/null 2>"$T/run.err" || fail "memtrace run ran"
"$MT_BIN" dump --raw-frames "$T/run.ctf" >"$T/run.dump"
check "memtrace run of the stripped binary: file and line from the cache" \
    grep -Eq ' [^ ]*sites\.c:[1-9][0-9]*:0-0 site_small_freed$' "$T/run.dump"
"$MT_BIN" run --no-name-cache -r $rate -o "$T/run2.ctf" -- "$prog" >/dev/null 2>&1 ||
    fail "memtrace run --no-name-cache ran"
"$MT_BIN" dump --raw-frames "$T/run2.ctf" >"$T/run2.dump"
check "memtrace run --no-name-cache: the stripped binary has no line" \
    sh -c "grep -q ' site_small_freed\$' '$T/run2.dump' && ! grep -Eq 'sites\.c:[1-9][0-9]*:0-0 site_small_freed\$' '$T/run2.dump'"
# A binary without debug information is named from its symbol table; those
# names are kept in a file of their own (ID.sym), read only while the binary
# still has no debug information and no server is named that might give it.
mv "$cache" "$T/dwarf-cache"
# the program's files alone in the cache (a libc frame, when sampled, is
# named from libc's own file: "from the name cache" must mean the program's)
progonly() { for f in "$dir"/*; do [ "$f" = "$cache" ] || [ "$f" = "$cache.sym" ] || rm -f "$f"; done; }
MEMTRACE_NAME_CACHE=0 sym symref
sym symfirst
check "no debug information: the symbol table's names kept in ID.sym, no ID file" \
    sh -c "test -f '$cache.sym' && test ! -e '$cache'"
check "no debug information, first: same trace as without the cache" \
    cmp -s "$T/symref.ctf" "$T/symfirst.ctf"
progonly; sym symsecond
n=$(sed -n 's/.*, \([0-9]*\) from the name cache.*/\1/p' "$T/symsecond.err")
check "no debug information, second: frames named from ID.sym (${n:-none})" test "${n:-0}" -gt 0
check "no debug information, second: same trace as without the cache" \
    cmp -s "$T/symref.ctf" "$T/symsecond.ctf"
# a loopback port nothing listens on: the server is asked and refuses at once
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
progonly; DEBUGINFOD_CACHE_PATH=$T/dfd-cache sym symurl --debuginfod "http://127.0.0.1:$port"
check "no debug information, a debuginfod server named: ID.sym not read ($(tr '\n' ' ' <"$T/symurl.err" | head -c 400))" \
    sh -c "grep -q 'frames named' '$T/symurl.err' && ! grep -q 'from the name cache' '$T/symurl.err'"
# No symbol table either: frames stay raw, and a trace named from ID.sym
# still says how to get the debug symbols.
strip --strip-all "$prog"; rm -f "$cache.sym"
sym allfirst; progonly; sym allsecond
check "no symbol table, first and second: the note that says how to get debug symbols" \
    sh -c "grep -q 'has no debug information here' '$T/allfirst.err' && grep -q 'has no debug information here' '$T/allsecond.err'"
check "no symbol table, second: the same trace as the first" cmp -s "$T/allfirst.ctf" "$T/allsecond.ctf"
cp "$PROGS/sites" "$prog"   # its debug information installed again
progonly; sym symback
check "debug information installed again: ID.sym not read, named from it (lines) ($(tr '\n' ' ' <"$T/symback.err" | head -c 400))" \
    sh -c "! grep -q 'from the name cache' '$T/symback.err' && cmp -s '$T/ref.ctf' '$T/symback.ctf'"
check "debug information installed again: its names kept in ID" test -s "$cache"

cp "$PROGS/sites" "$prog"   # its debug information back: what follows must not need the cache

cp "$cache" "$T/good-cache"
# symr COPY: sym with the program's cache files alone in the directory (a
# frame in libc, which has DWARF when libc6-dbg is installed, would be
# named from libc's file: "from the name cache" must mean the program's)
symr() {
    progonly
    sym "$@"
}
refused() { # WHAT COPY PATTERN: a warning matching PATTERN, exit 0, the reference trace
    check "$1: exit 0, one warning, the same trace" sh -c \
        "test \$(grep -c '$3' '$T/$2.err') = 1 && cmp -s '$T/ref.ctf' '$T/$2.ctf'"
    check "$1: nothing taken from it" sh -c "! grep -q 'from the name cache' '$T/$2.err'"
}

# Truncated: ignored, named from the debug information, written again.
head -c 100 "$T/good-cache" >"$cache"
symr truncated; refused "truncated cache file" truncated "ignored: its checksum does not match"
symr after-truncated
check "a truncated file is written again (next run names from it)" \
    grep -q 'from the name cache' "$T/after-truncated.err"

# One byte changed in the middle (a damaged disk, a planted name).
cp "$T/good-cache" "$cache"
size=$(stat -c %s "$cache")
printf 'X' | dd of="$cache" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
symr flipped; refused "one byte changed" flipped "ignored: its checksum does not match"

# A right checksum over a wrong structure (a chain longer than the file):
# every length is checked against what is left.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/good-cache" "$cache" <<'EOF'
import struct, sys, zlib
body = bytearray(open(sys.argv[1], "rb").read()[:-4])
body[8 + 1 + body[8] + 4 + 8] = 255   # the first entry's chain length
open(sys.argv[2], "wb").write(bytes(body) + struct.pack("<I", zlib.crc32(bytes(body))))
EOF
    symr lengths; refused "a checksum over wrong lengths" lengths "ignored: a bad"
else
    fail "python3 is missing (scripts/install-deps.sh test installs it)"
fi

# Not a cache file at all.
echo "not a cache" >"$cache"
symr junk; refused "junk in the cache file" junk "ignored: not a name cache file"

# A symbolic link planted in place of the file: not followed, not replaced.
rm -f "$cache"; cp "$T/good-cache" "$T/planted"
ln -s "$T/planted" "$cache"
symr link; refused "a symbolic link" link "a symbolic link (not followed)"
check "the link's target is left as it was" cmp -s "$T/good-cache" "$T/planted"
check "the link is left as it was" test -L "$cache"
rm -f "$cache"

# Writable by others: refused, not rewritten.
cp "$T/good-cache" "$cache"; chmod 0666 "$cache"
symr others; refused "a file others may write" others "others may write to it"
check "a file others may write is left as it was" cmp -s "$T/good-cache" "$cache"
chmod 0600 "$cache"

# Another user's file (as root: the file given away).
if [ "$(id -u)" = 0 ] && chown nobody "$cache" 2>/dev/null; then
    symr foreign; refused "another user's file" foreign "belongs to another user"
    chown 0 "$cache"
fi

# The directory writable by others: refused once for the whole run.
chmod 0777 "$dir"
symr opendir; refused "a directory others may write" opendir "names not used: it belongs"
chmod 0700 "$dir"

# Over the size cap (a sparse file: nothing is read, no wait).
rm -f "$cache"; truncate -s 9M "$cache"
symr big; refused "a file over the cap" big "ignored: larger than the cap"
rm -f "$cache"

# A full directory (4096 files): no new file, the trace still named.
full=$T/full
mkdir -m 0700 "$full" && seq 4096 | sed "s|^|$full/f|" | xargs touch
MEMTRACE_NAME_CACHE=$full sym full
check "a full cache directory: no new file, the same trace" sh -c \
    "test ! -e '$full/$id' && test \$(ls '$full' | wc -l) = 4096 && cmp -s '$T/ref.ctf' '$T/full.ctf'"

# A bad MEMTRACE_NAME_CACHE: said once, the default used.
MEMTRACE_NAME_CACHE=relative/dir sym badenv
check "MEMTRACE_NAME_CACHE=relative: a warning, the same trace" sh -c \
    "grep -q 'MEMTRACE_NAME_CACHE=relative/dir ignored' '$T/badenv.err' && cmp -s '$T/ref.ctf' '$T/badenv.ctf'"
# An absolute MEMTRACE_NAME_CACHE is the directory.
MEMTRACE_NAME_CACHE=$T/other sym envdir
check "MEMTRACE_NAME_CACHE=DIR: the file is written there" test -f "$T/other/$id"
finish
