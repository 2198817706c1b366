#!/bin/sh
# fuzz_reader.sh - runs the reader's libFuzzer target for about 30 seconds,
# seeded with the fixture traces. Any crash, sanitizer report, timeout or
# memory blow-up fails the test (libFuzzer exits non-zero and leaves the
# input in $MT_TMP). Only in the plain stage: the target carries its own
# sanitizers. Longer runs: see docs/api-trace.md ("Fuzzing").
set -u
. tests/lib.sh
: "${MT_BUILD:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "the fuzz target carries its own sanitizers: plain stage only"; exit 77; }
command -v clang >/dev/null 2>&1 || { echo "FAIL: clang not installed (scripts/install-deps.sh test)"; exit 1; }
if ! make -s --no-print-directory BUILD="$MT_BUILD" fuzz >"$MT_TMP/build.log" 2>&1; then
    echo "FAIL: building the fuzz target"; tail -n 20 "$MT_TMP/build.log"; exit 1
fi
mkdir -p "$MT_TMP/corpus"
fuzz_run fuzz_reader reader "${MT_FUZZ_SECONDS:-30}" -max_len=65536 "$MT_TMP/corpus" "$MT_FIXTURES"
