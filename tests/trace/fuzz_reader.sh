#!/bin/sh
# fuzz_reader.sh - runs the reader's libFuzzer target for about 30 seconds,
# seeded with the fixture traces. Any crash, sanitizer report, timeout or
# memory blow-up fails the test (libFuzzer exits non-zero and leaves the
# input in $MT_TMP). Only in the plain stage: the target carries its own
# sanitizers. Longer runs: see docs/api-trace.md ("Fuzzing").
set -u
: "${MT_BUILD:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "the fuzz target carries its own sanitizers: plain stage only"; exit 77; }
command -v clang >/dev/null 2>&1 || { echo "FAIL: clang not installed (scripts/install-deps.sh test)"; exit 1; }
if ! make -s --no-print-directory BUILD="$MT_BUILD" fuzz >"$MT_TMP/build.log" 2>&1; then
    echo "FAIL: building the fuzz target"; tail -n 20 "$MT_TMP/build.log"; exit 1
fi
mkdir -p "$MT_TMP/corpus"
secs=${MT_FUZZ_SECONDS:-30}
"$MT_BUILD/fuzz/fuzz_reader" -max_total_time="$secs" -rss_limit_mb=1024 -timeout=10 \
    -max_len=65536 -artifact_prefix="$MT_TMP/" "$MT_TMP/corpus" "$MT_FIXTURES" \
    >"$MT_TMP/fuzz.log" 2>&1
rc=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$MT_TMP/fuzz.log")
if [ $rc = 0 ] && [ -n "$runs" ]; then
    echo "PASS: reader fuzzed for ${secs}s ($runs inputs), nothing found"
else
    echo "FAIL: fuzzer exit $rc"
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$MT_TMP/fuzz.log" | head -n 20
    tail -n 5 "$MT_TMP/fuzz.log"
    ls "$MT_TMP"/crash-* "$MT_TMP"/timeout-* "$MT_TMP"/oom-* 2>/dev/null | while read -r f; do
        echo "input: $f"; od -A d -t x1 "$f" | head -n 8
    done
    exit 1
fi
