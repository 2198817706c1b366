# lib.sh - helpers sourced by the recorder's shell tests.
#
# Gives: LIB (libmemtrace.so), PROGS (helper programs), pass/fail/check/finish
# (tests/lib.sh),
# preload (run a command under the recorder), summary (trace summary),
# stacks (a trace's stacks as lines of names), share (a share of lines).
LIB=$PWD/$MT_BUILD/libmemtrace.so
PROGS=$MT_BUILD/tests/record/progs
T=${MT_TMP:-/tmp}
. tests/lib.sh    # pass, fail, check, finish
# preload FILE RATE CMD... : run CMD with the recorder writing FILE, then
# symbolize FILE and FILE.* as `memtrace run` does (raw: preload_raw).
preload() {
    f=$1; preload_raw "$@"; st=$?
    for t in "$f" "$f".*; do
        [ -f "$t" ] && "$MT_BIN" symbolize -q "$t" >/dev/null 2>&1
    done
    return $st
}
preload_raw() {
    f=$1 r=$2; shift 2
    env -u MEMTRACE_ROOT LD_PRELOAD="$LIB" MEMTRACE="$f" MEMTRACE_RATE="$r" "$@"
}
summary() { "$PROGS/summary" "$@"; }
# stacks DUMP: one line per sampled allocation of the trace DUMP, its
# frames' function names outermost first, separated by " > ".
stacks() {
    "$MT_BIN" dump "$1" | awk '
        $1 == "ev" && $3 == "alloc" { if (have) print line; line = ""; have = 1; next }
        $1 == "bt" { line = (line == "" ? "" : line " > ") $NF; next }
        END { if (have) print line }'
}
# share FILE PATTERN: percentage of the lines of FILE matching PATTERN (ERE).
share() {
    awk -v re="$2" '{ n++ } $0 ~ re { k++ } END { print n ? int(100 * k / n) : 0 }' "$1"
}
# Preloading a TSan-built recorder into other programs makes no sense.
skip_under_tsan() {
    [ "${MT_STAGE:-plain}" = tsan ] || return 0
    echo "runs programs under the preloaded recorder: plain stage only"
    exit 77
}
