#!/bin/sh
# run.sh - runs the tests under the given directories, or the given test
# files (default: all), against one build, and prints
# "N passed, N failed, N skipped".
#
# A test is an executable script tests/<layer>/*.sh or a unit-test binary
# $MT_BUILD/tests/<layer>/<name> built from tests/<layer>/<name>.c.
# A test may report several results by printing lines "PASS: what" and
# "FAIL: what"; otherwise its exit status is its one result (77 = skipped;
# the first line it printed says why, and is shown).
# Environment given to tests:
#   MT_BUILD     build directory (default build)
#   MT_BIN       the CLI, $MT_BUILD/memtrace
#   MT_FIXTURES  tests/fixtures/memtrace
#   MT_STAGE     plain | asan | tsan  (tests skip themselves where they don't apply)
#   MT_TMP       a scratch directory, removed afterwards
#   MEMTRACE_NAME_CACHE  $MT_TMP/name-cache: memtrace's name cache, the test's own
set -u
cd "$(dirname "$0")/.."
MT_BUILD=${MT_BUILD:-build}
MT_BIN=$MT_BUILD/memtrace
MT_FIXTURES=tests/fixtures/memtrace
MT_STAGE=${MT_STAGE:-plain}
export MT_BUILD MT_BIN MT_FIXTURES MT_STAGE

[ $# -gt 0 ] || set -- tests/common tests/docs tests/trace tests/record tests/analyze tests/present tests/programs tests/push tests/viewer tests/python tests/package

passed=0 failed=0 skipped=0
failures="" skips=""
root=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-tests.XXXXXX")
for dir in "$@"; do
    if [ -f "$dir" ]; then set_srcs=$dir
    elif [ -d "$dir" ]; then set_srcs="$dir/*.sh $dir/*.c"
    else continue; fi
    # shellcheck disable=SC2086
    for src in $set_srcs; do
        [ -f "$src" ] || continue
        case "$src" in
            *.sh) name=${src%.sh}; cmd="sh $src" ;;
            *.c) name=${src%.c}; bin=$MT_BUILD/$name
                 if [ ! -x "$bin" ]; then
                     echo "FAIL $name (not built: $bin)"; failed=$((failed+1))
                     failures="$failures $name"; continue
                 fi
                 cmd=$bin ;;
        esac
        MT_TMP=$root/$(echo "$name" | tr / _); mkdir -p "$MT_TMP"; export MT_TMP
        # each test its own name cache (memtrace symbolize), never the user's
        case $MT_TMP in /*) MEMTRACE_NAME_CACHE=$MT_TMP/name-cache ;; *) MEMTRACE_NAME_CACHE=$PWD/$MT_TMP/name-cache ;; esac
        export MEMTRACE_NAME_CACHE
        out=$root/out.txt
        start=$(date +%s)
        $cmd >"$out" 2>&1 </dev/null
        rc=$?
        secs=$(( $(date +%s) - start ))
        np=$(grep -c '^PASS: ' "$out"); nf=$(grep -c '^FAIL: ' "$out")
        if [ $rc = 77 ] && [ "$nf" = 0 ]; then
            why=$(head -n 1 "$out")
            skipped=$((skipped+1)); skips="$skips $name"
            echo "skip $name ($MT_STAGE${why:+: $why})"; continue
        fi
        if [ "$nf" = 0 ] && [ $rc != 0 ]; then nf=1; fi
        if [ "$np" = 0 ] && [ "$nf" = 0 ]; then np=1; fi
        passed=$((passed+np)); failed=$((failed+nf))
        if [ "$nf" = 0 ]; then
            echo "ok   $name ($np checks, ${secs}s)"
        else
            echo "FAIL $name (exit $rc, $nf failed, ${secs}s)"
            failures="$failures $name"
            grep -v '^PASS: ' "$out" | tail -n 40 | sed 's/^/    | /'
        fi
    done
done
rm -rf "$root"
[ -n "$skips" ] && echo "skipped:$skips"
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
