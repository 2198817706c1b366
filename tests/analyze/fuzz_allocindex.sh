#!/bin/sh
# fuzz_allocindex.sh - runs the allocation index's libFuzzer target (index
# files opened and folded, with and without a filter, against a small
# trace's model) for about 20 seconds. Any crash, sanitizer report, timeout
# or memory blow-up fails the test (libFuzzer exits non-zero and leaves the
# input in $MT_TMP). Only in the plain stage: the target carries its own
# sanitizers. Longer runs: see fuzz/fuzz_allocindex.c.
set -u
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
printf '\001MTALLIX\n\001\000\000\000\200\000\000\000' > "$MT_TMP/corpus/file"
secs=${MT_FUZZ_SECONDS:-20}
timeout -k 5 $((secs + 60)) "$MT_BUILD/fuzz/fuzz_allocindex" -max_total_time="$secs" \
    -rss_limit_mb=1024 -timeout=10 -max_len=4096 \
    -artifact_prefix="$MT_TMP/" "$MT_TMP/corpus" >"$MT_TMP/fuzz.log" 2>&1
rc=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$MT_TMP/fuzz.log")
if [ $rc = 0 ] && [ -n "$runs" ]; then
    echo "PASS: allocation index fuzzed for ${secs}s ($runs inputs), nothing found"
else
    echo "FAIL: fuzzer exit $rc"
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$MT_TMP/fuzz.log" | head -n 20
    tail -n 5 "$MT_TMP/fuzz.log"
    ls "$MT_TMP"/crash-* "$MT_TMP"/timeout-* "$MT_TMP"/oom-* 2>/dev/null | while read -r f; do
        echo "input: $f"; od -A d -c "$f" | head -n 8
    done
    exit 1
fi
