#!/bin/sh
# dynlib.sh - libcurl and libmicrohttpd are loaded by the commands that use
# them, at first use (lib/common/dynlib.h), never linked into the CLI: the
# binary does not need them, a report runs where they cannot be loaded, and
# view and run --push, where they cannot, stop with one line naming the
# library, what needs it and the Debian package, before anything starts
# (no server, no program run).
set -u
: "${MT_BIN:?}" "${MT_TMP:?}" "${MT_FIXTURES:?}"
. tests/lib.sh
M=$MT_BIN
T=$MT_TMP

if command -v readelf >/dev/null 2>&1; then
    readelf -d "$M" >"$T/dyn" 2>&1
    if grep -q 'NEEDED' "$T/dyn" && ! grep -Eq 'NEEDED.*(libcurl|libmicrohttpd)' "$T/dyn"; then
        pass "the CLI does not link libcurl or libmicrohttpd"
    else
        fail "the CLI links: $(grep NEEDED "$T/dyn" | tr -s ' ' | tr '\n' ' ')"
    fi
fi

# Stand-ins that cannot be loaded, found first on the library path.
mkdir -p "$T/lib"
: >"$T/lib/libcurl.so.4"
: >"$T/lib/libmicrohttpd.so.12"
nolib() { LD_LIBRARY_PATH="$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }

nolib "$M" info "$MT_FIXTURES/leak.ctf" >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 0 ] && [ -s "$T/out" ] && [ ! -s "$T/err" ]; then
    pass "a report runs without either library"
else
    fail "info without the libraries: exit $rc: $(head -c 300 "$T/err")"
fi

# refused WHAT STATUS LINE CMD...: exit STATUS, stderr exactly LINE, stdout
# empty, and the program run would have left no mark
refused() {
    what=$1 status=$2 line=$3; shift 3
    rm -f "$T/ran"
    nolib "$@" >"$T/out" 2>"$T/err"; rc=$?
    printf '%s\n' "$line" >"$T/expected"
    if [ $rc = "$status" ] && cmp -s "$T/err" "$T/expected" && [ ! -s "$T/out" ] && [ ! -e "$T/ran" ]; then
        pass "$what"
    else
        fail "$what: exit $rc: $(head -c 400 "$T/err")"
    fi
}
refused "view without libmicrohttpd" 1 \
    "memtrace view: cannot load libmicrohttpd.so.12, which the viewer needs (Debian package libmicrohttpd12 or libmicrohttpd12t64): $T/lib/libmicrohttpd.so.12: file too short" \
    "$M" view --port 0 "$MT_FIXTURES/leak.ctf"
refused "run --push without libcurl" 2 \
    "memtrace run: --push: cannot load libcurl.so.4, which sending profiles needs (Debian package libcurl4 or libcurl4t64): $T/lib/libcurl.so.4: file too short" \
    "$M" run --push http://127.0.0.1:9/ingest -o "$T/p.ctf" -- touch "$T/ran"
finish
