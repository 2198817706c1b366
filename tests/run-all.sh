#!/bin/sh
# run-all.sh - what `make test` runs: every test against the plain build, the
# codec and analysis tests again under ASan+UBSan, the recorder's threaded
# tests under TSan. Ends with one line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
total_p=0 total_f=0 log=$(mktemp)

stage() { # stage NAME BUILD DIRS...
    name=$1 build=$2; shift 2
    echo "== $name"
    MT_STAGE=$name MT_BUILD=$build sh tests/run.sh "$@" | tee "$log"
    line=$(tail -n 1 "$log")
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
    f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    total_p=$((total_p + ${p:-0})); total_f=$((total_f + ${f:-1}))
}
build_failed() { echo "FAIL build of $1"; total_f=$((total_f + 1)); }

stage plain build

if make --no-print-directory -s BUILD=build/asan SANITIZE=address,undefined cli tests-build >"$log" 2>&1; then
    stage asan build/asan tests/trace tests/analyze tests/present tests/viewer
else
    tail -n 30 "$log"; build_failed asan
fi

if [ -n "$(ls tests/record/*.sh 2>/dev/null)" ]; then
    if make --no-print-directory -s BUILD=build/tsan SANITIZE=thread libs record-tests >"$log" 2>&1; then
        stage tsan build/tsan tests/record
    else
        tail -n 30 "$log"; build_failed tsan
    fi
fi
rm -f "$log"
echo
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ]
