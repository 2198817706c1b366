#!/bin/sh
# fuzz_filter.sh - runs the filter language's libFuzzer target (parser,
# canonical printer, regexes applied to a model) for about 20 seconds with
# the language's dictionary. Any crash, sanitizer report, failed round trip,
# timeout or memory blow-up fails the test (libFuzzer exits non-zero and
# leaves the input in $MT_TMP). Only in the plain stage: the target carries
# its own sanitizers. Longer runs: see fuzz/fuzz_filter.c.
set -u
. tests/lib.sh
: "${MT_BUILD:?}" "${MT_TMP:?}"
[ "${MT_STAGE:-plain}" = plain ] || exit 77
command -v clang >/dev/null 2>&1 || { echo "clang not installed"; exit 77; }
if ! make -s --no-print-directory BUILD="$MT_BUILD" "$MT_BUILD/fuzz/fuzz_filter" >"$MT_TMP/build.log" 2>&1; then
    echo "FAIL: building the fuzz target"; tail -n 20 "$MT_TMP/build.log"; exit 1
fi
mkdir -p "$MT_TMP/corpus"
# seeds: the filters of the docs
for f in 'size:>=4k !inside:Stdlib' 'alloc:1s-3s collect:never hide:malloc' 'lifetime:<10ms' \
         'live:peak source:minor,major' 'inside:/^parse_(msg|hdr)$/' 'hide:"operator new"'; do
    printf '%s' "$f" >"$MT_TMP/corpus/$(printf '%s' "$f" | cksum | cut -d' ' -f1)"
done
fuzz_run fuzz_filter "filter language" "${MT_FUZZ_SECONDS:-20}" -dict=fuzz/filter.dict -max_len=512 \
    "$MT_TMP/corpus"
