#!/bin/sh
# run-all.sh - what `make test` runs: every test against the plain build,
# the codec and analysis tests again under ASan+UBSan, the recorder's tests
# and the threaded paths (the viewer's, diff's two sides read at once) under TSan. Prints each stage's
# "N passed, N failed, N skipped" and a final line with the sums over the stages (a check run in two stages
# counts in both; a sanitizer build that fails counts as one failure).
set -u
cd "$(dirname "$0")/.."
total_p=0 total_f=0 total_s=0 summary="" log=$(mktemp)


stage() { # stage NAME BUILD DIRS...
    name=$1 build=$2; shift 2
    echo "== $name"
    MT_STAGE=$name MT_BUILD=$build sh tests/run.sh "$@" | tee "$log"
    line=$(tail -n 1 "$log")
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1/p')
    f=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2/p')
    s=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\3/p')
    if [ -z "$p" ]; then   # run.sh did not finish: its summary is missing
        p=0 f=1 s=0
        echo "FAIL $name: tests/run.sh ended without its summary line"
    fi
    total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
    summary="$summary$(printf '%-6s %s passed, %s failed, %s skipped' "$name:" "$p" "$f" "$s")
"
}
build_failed() {
    echo "FAIL build of $1"
    total_f=$((total_f + 1))
    summary="$summary$(printf '%-6s build failed (counted as 1 failure)' "$1:")
"
}

stage plain build

if make --no-print-directory -s BUILD=build/asan SANITIZE=address,undefined cli tests-build >"$log" 2>&1; then
    stage asan build/asan tests/common tests/trace tests/analyze tests/present tests/programs tests/viewer
else
    tail -n 30 "$log"; build_failed asan
fi

# the viewer's threads too: loading while serving, the summing thread of big
# traces (which also writes their allocation index), the request threads
# (folding filters from the index); folded models read on two threads; and
# the two sides diff and check read at once
if make --no-print-directory -s BUILD=build/tsan SANITIZE=thread libs record-tests cli tests-build >"$log" 2>&1; then
    stage tsan build/tsan tests/record tests/analyze/pipe.c tests/analyze/read.c tests/analyze/read_threads.sh \
        tests/viewer/loading.sh tests/viewer/big.sh tests/viewer/api.sh tests/viewer/index.sh \
        tests/analyze/diff_threads.sh
else
    tail -n 30 "$log"; build_failed tsan
fi
rm -f "$log"
echo
printf '%s' "$summary"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" = 0 ]
