#!/bin/sh
# fuzz_allocindex.sh - runs the allocation index's libFuzzer target (index
# files opened and folded, with and without a filter, against a small
# trace's model) for about 20 seconds. Any crash, sanitizer report, timeout
# or memory blow-up fails the test (libFuzzer exits non-zero and leaves the
# input in $MT_TMP). Only in the plain stage: the target carries its own
# sanitizers. Longer runs: see fuzz/fuzz_allocindex.c.
set -u
. tests/lib.sh
: "${MT_BUILD:?}" "${MT_TMP:?}"
[ "${MT_STAGE:-plain}" = plain ] || exit 77
command -v clang >/dev/null 2>&1 || { echo "clang not installed"; exit 77; }
if ! make -s --no-print-directory BUILD="$MT_BUILD" "$MT_BUILD/fuzz/fuzz_allocindex" >"$MT_TMP/build.log" 2>&1; then
    echo "FAIL: building the fuzz target"; tail -n 20 "$MT_TMP/build.log"; exit 1
fi
mkdir -p "$MT_TMP/corpus"
# seeds: records of every kind under the good header (first byte even), a
# whole file (odd)
printf '\000\002\001\000\004\003\010\001' > "$MT_TMP/corpus/records"
printf '\000\012\002\002\004\006\001\001\034\003\004' > "$MT_TMP/corpus/never-promoted"
printf '\001MTALLIX\n\002\000\000\000\200\000\000\000' > "$MT_TMP/corpus/file"
fuzz_run fuzz_allocindex "allocation index" "${MT_FUZZ_SECONDS:-20}" -max_len=4096 "$MT_TMP/corpus"
