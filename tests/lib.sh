# lib.sh - what test scripts of several layers share; sourced (as
# ". tests/lib.sh") by scripts tests/run.sh runs from the top of the
# checkout, with MT_BUILD and MT_TMP set. The C unit tests' counterpart of
# the checks is tests/check.h.
#
#   pass WHAT...              prints "PASS: WHAT"
#   fail WHAT...              prints "FAIL: WHAT" and counts it in $fails
#                             (a count kept from before the file was sourced)
#   check WHAT COMMAND...     pass WHAT when COMMAND succeeds, else fail WHAT
#   finish                    exits 0 when nothing failed, else 1
#   wait_until SECS COMMAND...
#                             waits for an event: runs COMMAND every 0.05 s
#                             until it succeeds (status 0) or SECS seconds
#                             have gone by (status 1); SECS is a bound far
#                             above the wait, for a loaded machine
#   need_bench_tools TOOL...  builds $MT_BUILD/bench/TOOL where it is
#                             missing; "FAIL" and exit 1 if it cannot be
#   fuzz_run TARGET WHAT SECS ARGS...
#                             runs the libFuzzer target $MT_BUILD/fuzz/TARGET
#                             for SECS seconds with ARGS (its corpus among
#                             them); "PASS: WHAT fuzzed ..." when it found
#                             nothing, else "FAIL" with what it found (the
#                             report and the inputs it left in $MT_TMP)
#                             and exit 1
#   fixture_text NAME         prints the reference text dump of the fixture
#                             trace $MT_FIXTURES/NAME.ctf (stored compressed:
#                             NAME.txt.gz, or NAME.txt.xz for the largest);
#                             "FAIL" on stderr and status 1 when there is
#                             none or it does not decompress

fails=${fails:-0}
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() {
    _cw=$1; shift
    if "$@"; then pass "$_cw"; else fail "$_cw"; fi
}
finish() { [ "$fails" = 0 ]; exit $?; }
wait_until() {
    _wu_end=$(( $(date +%s) + $1 )); shift
    until "$@"; do
        [ "$(date +%s)" -lt "$_wu_end" ] || return 1
        sleep 0.05
    done
}

need_bench_tools() {
    for tool in "$@"; do
        [ -x "$MT_BUILD/bench/$tool" ] ||
            make -s --no-print-directory BUILD="$MT_BUILD" "$MT_BUILD/bench/$tool" > /dev/null 2>&1
        [ -x "$MT_BUILD/bench/$tool" ] || { echo "FAIL: cannot build $MT_BUILD/bench/$tool"; exit 1; }
    done
}

fuzz_run() {
    target=$1 what=$2 secs=$3
    shift 3
    timeout -k 5 $((secs + 60)) "$MT_BUILD/fuzz/$target" -max_total_time="$secs" \
        -rss_limit_mb=1024 -timeout=10 -artifact_prefix="$MT_TMP/" "$@" >"$MT_TMP/fuzz.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$MT_TMP/fuzz.log")
    if [ $rc = 0 ] && [ -n "$runs" ]; then
        echo "PASS: $what fuzzed for ${secs}s ($runs inputs), nothing found"
        return 0
    fi
    echo "FAIL: fuzzer exit $rc"
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error|round-trip' "$MT_TMP/fuzz.log" | head -n 20
    tail -n 5 "$MT_TMP/fuzz.log"
    ls "$MT_TMP"/crash-* "$MT_TMP"/timeout-* "$MT_TMP"/oom-* 2>/dev/null | while read -r f; do
        echo "input: $f"; od -A d -c "$f" | head -n 8
    done
    exit 1
}

fixture_text() {
    _ft=$MT_FIXTURES/$1.txt
    if [ -f "$_ft.gz" ]; then gzip -dc "$_ft.gz"
    elif [ -f "$_ft.xz" ]; then xz -dc "$_ft.xz"
    else echo "FAIL: no reference text for the fixture $1 ($_ft.gz)" >&2; return 1
    fi || { echo "FAIL: the reference text of the fixture $1 does not decompress" >&2; return 1; }
}
