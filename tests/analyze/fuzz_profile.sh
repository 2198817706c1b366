#!/bin/sh
# fuzz_profile.sh - runs the pprof profile reader's libFuzzer target (the
# decoder, gzip included, and the folded model built from what decodes)
# for about 20 seconds, seeded with profiles of tests/analyze/mkprofile.py
# and memtrace's own pprof output of a fixture. Any crash, sanitizer
# report, timeout or memory blow-up fails the test. Only in the plain
# stage: the target carries its own sanitizers. Longer runs: see
# fuzz/fuzz_profile.c.
set -u
. tests/lib.sh
: "${MT_BUILD:?}" "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
[ "${MT_STAGE:-plain}" = plain ] || exit 77
command -v clang >/dev/null 2>&1 || { echo "clang not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed"; exit 77; }
if ! make -s --no-print-directory BUILD="$MT_BUILD" "$MT_BUILD/fuzz/fuzz_profile" >"$MT_TMP/build.log" 2>&1; then
    echo "FAIL: building the fuzz target"; tail -n 20 "$MT_TMP/build.log"; exit 1
fi
mkdir -p "$MT_TMP/corpus" "$MT_TMP/seeds"
for k in heap noperiod inuse_only cycle negative; do
    python3 tests/analyze/mkprofile.py "$k" "$MT_TMP/seeds/$k" || fail "mkprofile.py $k"
done
# an uncompressed one too, so that mutations reach the protobuf decoder
gunzip -c "$MT_TMP/seeds/heap" >"$MT_TMP/seeds/heap.pb"
"$MT_BIN" pprof -o "$MT_TMP/seeds/leak.pb.gz" "$MT_FIXTURES/leak.ctf" || fail "memtrace pprof"
fuzz_run fuzz_profile "pprof profile reader" "${MT_FUZZ_SECONDS:-20}" -max_len=65536 \
    "$MT_TMP/corpus" "$MT_TMP/seeds"
finish
