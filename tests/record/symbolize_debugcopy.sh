#!/bin/sh
# symbolize_debugcopy.sh - the inflated copies of compressed debug files in
# the name cache (lib/symbolize/debugcache.c): naming a libc frame makes a
# copy of libc6-dbg's file with its sections inflated, by libc's build-id;
# a later trace with libc frames new to the name cache is named from the
# copy (even with no system debug file reachable), byte for byte what the
# shipped debug file gives; a copy that is damaged, truncated, a link,
# writable by others or over the cap is refused with one warning, never
# trusted, and the trace is still the reference.
. tests/record/progs/lib.sh
skip_under_tsan
XDG_CACHE_HOME=$T/xdg; export XDG_CACHE_HOME
unset MEMTRACE_NAME_CACHE MEMTRACE_DEBUG_ROOT
dir=$XDG_CACHE_HOME/memtrace/names

# Two traces, every allocation sampled: /bin/echo, then ls (libc functions
# echo never calls: opendir, qsort, ...).
preload_raw "$T/a.ctf" 1 /bin/echo hi >/dev/null || fail "echo ran"
preload_raw "$T/b.ctf" 1 ls -la /usr/lib >/dev/null || fail "ls ran"
libc=$("$MT_BIN" dump --raw-frames "$T/a.ctf" | awk '$4 ~ /\/libc\.so\.6:/ { sub(/:.*/, "", $4); print $4; exit }')
[ -n "$libc" ] || { echo "SKIP: no libc frame in echo's trace"; exit 77; }
id=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
[ -f "$dbg" ] || { echo "SKIP: libc's debug file is not installed (Debian: libc6-dbg)"; exit 77; }
readelf -S -W "$dbg" 2>/dev/null | grep -q '\.debug_info .* C ' ||
    { echo "SKIP: libc6-dbg's sections are not compressed here (nothing to inflate)"; exit 77; }
copy=$dir/$id.debug
offs() { "$MT_BIN" dump --raw-frames "$1" | grep -o 'libc\.so\.6+0x[0-9a-f]*' | sort -u; }
offs "$T/a.ctf" >"$T/a.off"; offs "$T/b.ctf" >"$T/b.off"
new=$(comm -13 "$T/a.off" "$T/b.off" | wc -l)
check "ls's trace has libc frames echo's has not ($new)" test "$new" -gt 0

sym() { # COPY TRACE [ARGS...]: symbolizes a copy of raw trace TRACE; stderr in COPY.err
    c=$1 r=$2; shift 2
    cp "$T/$r.ctf" "$T/$c.ctf"
    "$MT_BIN" symbolize "$@" "$T/$c.ctf" 2>"$T/$c.err"
}
MEMTRACE_NAME_CACHE=0 sym refa a; MEMTRACE_NAME_CACHE=0 sym refb b
"$MT_BIN" dump --raw-frames "$T/refb.ctf" >"$T/refb.dump"
check "reference: ls's libc frames have source lines" grep -Eq ' [^ ]*\.c:[1-9][0-9]*:0-0 (opendir|__opendir|qsort|__qsort_r|msort_with_tmp) *' "$T/refb.dump"

# echo's trace: named as without the cache, libc's copy made. A temporary
# copy left by a run killed while writing it (its process gone) is removed,
# not counted forever against the caps; one of a live process is kept.
mkdir -p "$dir"; chmod 0700 "$XDG_CACHE_HOME" "$XDG_CACHE_HOME/memtrace" "$dir"
truncate -s 5M "$dir/.$id.debug.tmp.2147483646.1"
live=$$   # this shell: alive while memtrace runs
truncate -s 1M "$dir/.$id.debug.tmp.$live.1"
sym first a
check "first: a dead run's temporary copy removed" test ! -e "$dir/.$id.debug.tmp.2147483646.1"
check "first: a live process's temporary copy kept" test -e "$dir/.$id.debug.tmp.$live.1"
rm -f "$dir/.$id.debug.tmp.$live.1"
check "first: same trace as without the cache" cmp -s "$T/refa.ctf" "$T/first.ctf"
check "first: libc's inflated copy made by its build-id, mode 0600" \
    sh -c "test -f '$copy' && test \"\$(stat -c %a '$copy')\" = 600"
check "the copy has no compressed section left" sh -c "! readelf -S -W '$copy' 2>/dev/null | grep -q '\\.debug_[a-z_]* .* C '"
check "the copy ends in its trailer" sh -c "tail -c 12 '$copy' | head -c 8 | grep -q MTINFLT1"
cp "$copy" "$T/good.debug"

# ls's trace, no system debug file reachable: libc's frames new to the
# name cache come from the copy, the same trace as the reference.
mkdir -m 0700 "$T/noroot"
MEMTRACE_DEBUG_ROOT=$T/noroot sym second b
check "second (no system debug file): same trace as the reference" cmp -s "$T/refb.ctf" "$T/second.ctf"
check "second: echo's libc frames from the name cache" grep -q 'from the name cache' "$T/second.err"
check "second: no warning about the copy" sh -c "! grep -q 'inflated debug file' '$T/second.err'"
# Without the copy those frames would have had no line: the copy named them.
rm -f "$dir/$id"; mv "$copy" "$T/moved.debug"
MEMTRACE_DEBUG_ROOT=$T/noroot MEMTRACE_NAME_CACHE=$T/other sym nocopy b
check "without the copy and the system's file: a different trace (the copy did it)" \
    sh -c "! cmp -s '$T/refb.ctf' '$T/nocopy.ctf'"
mv "$T/moved.debug" "$copy"

# symc COPY: ls's trace named with no name cache file for libc (its frames
# must come from a debug file: the copy, when it is usable).
symc() { rm -f "$dir/$id"; sym "$1" b; }
refused() { # WHAT COPY PATTERN: exactly one warning matching PATTERN, the reference trace
    check "$1: exit 0, one warning, the same trace" sh -c \
        "test \$(grep -c '$3' '$T/$2.err') = 1 && cmp -s '$T/refb.ctf' '$T/$2.ctf'"
}

# One byte changed: refused, named from the shipped file, the copy made again.
size=$(stat -c %s "$copy")
printf 'X' | dd of="$copy" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
symc flipped; refused "a copy with one byte changed" flipped "inflated debug file .* ignored: its checksum does not match"
check "a damaged copy is made again (the same bytes)" cmp -s "$T/good.debug" "$copy"
symc after; check "after: no warning, the same trace" sh -c \
    "! grep -q 'inflated debug file' '$T/after.err' && cmp -s '$T/refb.ctf' '$T/after.ctf'"

# Truncated (a crash halfway would leave the temporary file, never this).
head -c 100000 "$T/good.debug" >"$copy"
symc truncated; refused "a truncated copy" truncated "inflated debug file .* ignored: no trailer"
check "a truncated copy is made again" cmp -s "$T/good.debug" "$copy"

# A symbolic link: not followed, not replaced.
rm -f "$copy"; cp "$T/good.debug" "$T/planted"; ln -s "$T/planted" "$copy"
symc link; refused "a symbolic link" link "inflated debug file .* not used: a symbolic link"
check "the link is left as it was" sh -c "test -L '$copy' && cmp -s '$T/good.debug' '$T/planted'"
rm -f "$copy"

# Writable by others: refused, left as it was.
cp "$T/good.debug" "$copy"; chmod 0666 "$copy"
symc others; refused "a copy others may write" others "inflated debug file .* ignored: it belongs to another user or others may write"
check "a copy others may write is left as it was" sh -c \
    "cmp -s '$T/good.debug' '$copy' && test \"\$(stat -c %a '$copy')\" = 666"
chmod 0600 "$copy"

# Another build-id's copy in its place (a planted file with a right trailer).
if command -v python3 >/dev/null 2>&1; then
    other=$(readelf -n "$PROGS/sites" | awk '/Build ID:/ { print $3 }')
    python3 - "$PROGS/sites" "$copy" <<'EOF'
import struct, sys, zlib
body = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(body + b"MTINFLT1" + struct.pack("<I", zlib.crc32(body)))
EOF
    symc wrongid; refused "another build-id's copy ($other)" wrongid "inflated debug file .* ignored: it is another build-id"
fi

# Over the cap (a sparse file: nothing is read, no wait).
rm -f "$copy"; truncate -s 300M "$copy"
symc big; refused "a copy over the cap" big "inflated debug file .* ignored: larger than the cap"
rm -f "$copy"

# No name cache: no copy either.
rm -rf "$XDG_CACHE_HOME"
sym nocache b --no-name-cache
check "--no-name-cache: no copy made, the same trace" \
    sh -c "test ! -e '$copy' && cmp -s '$T/refb.ctf' '$T/nocache.ctf'"
finish
