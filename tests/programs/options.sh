#!/bin/sh
# options.sh - the commands' one option driver (programs/options.c), through
# the CLI: every malformed value, unknown option and missing value is
# refused with status 2 and one line naming the command, the option and the
# value and saying what was expected (then a pointer to --help), before any
# trace is read; a well-formed value of each kind is taken (known answers:
# `leaks --plan` computes from the typed rate, `top -n` shows that many
# sites); --help prints the options of the table on stdout, status 0,
# nothing on stderr; options and operands may be mixed, except for run, attach
# and ctl, whose options come first (run passes everything after its command
# to it, untouched).
set -u
. tests/lib.sh
M=${MT_BIN:-build/memtrace}
F=${MT_FIXTURES:-tests/fixtures/memtrace}/leak.ctf
T=${MT_TMP:-$(mktemp -d)}

# refused WHAT EXPECTED-LINE COMMAND...: status 2, stdout empty, stderr's
# first line is EXPECTED-LINE exactly. A hang guard far above the work (a
# command that took its bad value would go on: the viewer would serve).
refused() {
    what=$1 want=$2
    shift 2
    timeout 120 "$M" "$@" >"$T/out" 2>"$T/err"
    st=$?
    got=$(head -n 1 "$T/err")
    if [ $st = 2 ] && [ ! -s "$T/out" ] && [ "$got" = "$want" ]; then
        pass "$what"
    else
        fail "$what: status $st, stderr '$got', wanted '$want'"
    fi
}

# sizes, durations, times, rates, measures, counts, bounded numbers, choices
refused "check: a bad size" \
    "memtrace check: --max-peak 12q: expected a size, e.g. 200MiB, 512k, 1g" check --max-peak 12q "$F"
refused "check: a negative size" \
    "memtrace check: --max-alloc -1: expected a size, e.g. 200MiB, 512k, 1g" check --max-alloc -1 "$F"
refused "check: a bad percentage" \
    "memtrace check: --max-increase ten: expected a percentage, e.g. 10%" \
    check --base "$F" --max-increase ten "$F"
refused "view: a size under the least allowed" \
    "memtrace view: --memory 1000: expected a size of at least 1.00 MiB, e.g. 200MiB, 512k, 1g" \
    view --port 0 -q --memory 1000 "$F"
refused "leaks: a bad duration" \
    "memtrace leaks: --within 1parsec: unknown unit 'parsec' in time '1parsec' (use us, ms, s, m, h)" \
    leaks --plan 1MiB/h --within 1parsec
refused "leaks: a time that is no duration" \
    "memtrace leaks: --within peak: expected a duration such as 30s, 5min or 1h" leaks --plan 1MiB/h --within peak
refused "leaks: a bad rate" \
    "memtrace leaks: --plan 1MiB: expected a rate such as 1MiB/h, 200KiB/min, 50B/s" leaks --plan 1MiB
refused "top: a bad time" \
    "memtrace top: --at soon: expected a time (e.g. 3s, 250ms) but found 'soon'" top --at soon "$F"
refused "top: an unknown measure" \
    "memtrace top: --by weight: unknown measure (use alloc, count, live, live_count, temporary, temp_bytes, samples)" \
    top --by weight "$F"
refused "top: a count that is not a number" "memtrace top: --limit 3x: not a number" top -n 3x "$F"
refused "top: a negative count" "memtrace top: --callers -1: not a number" top -c -1 "$F"
refused "leaks: a count that must be positive" "memtrace leaks: --sites 0: not a positive number" \
    leaks --plan 1MiB/h --sites 0
refused "view: a number out of its range" "memtrace view: --port 65536: expected a number 0..65535" \
    view --port 65536 "$F"
refused "diff: a probability out of (0, 1)" \
    "memtrace diff: --alpha 1: expected a number between 0 and 1, e.g. 0.01" diff --alpha 1 "$F" "$F"
refused "diff: an unknown choice" "memtrace diff: --key file: use site, function or path" \
    diff --key file "$F" "$F"
refused "plot: an unknown choice" "memtrace plot: --kind pie: use memory, sizes or lifetimes" \
    plot --kind pie -o "$T/p.svg" "$F"
refused "recode: an unknown choice" "memtrace recode: --format-version 4: use 2 or 3" recode -V 4 "$F" "$T/r.ctf"

# a short option is named by its long name
refused "pprof: a short option's value" "memtrace pprof: --level 10: expected a number 1..9" pprof -l 10 -o "$T/p.pb.gz" "$F"

# unknown options, missing values, a pair short of its second value
refused "stats: an unknown long option" "memtrace stats: unknown option '--colour'" stats --colour "$F"
refused "folded: an unknown short option" "memtrace folded: unknown option '-z'" folded -z "$F"
refused "stats: a missing value" "memtrace stats: --at needs a value" stats "$F" --at
refused "lifetimes: a missing value (short)" "memtrace lifetimes: -f needs a value" lifetimes "$F" -f
refused "diff: --windows with one window" "memtrace diff: --windows takes two values: --windows A B" \
    diff --windows 0-1s
refused "run: a bad interval" \
    "memtrace run: --interval 12q: expected a size of at least 1 byte, such as 512k or 1MiB" run -i 12q true
refused "run: a rate out of (0, 1]" \
    "memtrace run: --rate 0: expected a probability per byte in (0, 1], such as 0.0001" run -r 0 true
refused "run: --interval and --rate together" "memtrace run: give --interval or --rate, not both" \
    run -i 4k --rate 0.1 true
refused "run: no command" "memtrace run: expected a command to run" run -o "$T/x.ctf"
refused "run: a push interval too short" \
    "memtrace run: --push-every 10ms: expected a time of at least 100ms, such as 60s or 5m" \
    run --push http://127.0.0.1:9/ --push-every 10ms true
refused "attach: a depth out of range" \
    "memtrace attach: --depth 0: expected a number of frames 1..1024" attach --depth 0 1
refused "attach: an unknown unwind mode" "memtrace attach: --unwind frames: use fp, dwarf or auto" \
    attach --unwind frames 1
refused "attach: a bad duration" \
    "memtrace attach: --duration soon: expected a time such as 90s, 10m, 1h or 500ms" \
    attach --duration soon 1
refused "attach: no process id" "memtrace attach: expected one process id" attach -o "$T/x.ctf"
refused "attach: a bad push label" \
    "memtrace attach: --label 9=x: expected NAME=VALUE, NAME of letters, digits and _ (not starting with a digit; not __name__)" \
    attach --push http://127.0.0.1:9/ --label 9=x 1
refused "ctl: a wait over its bound" \
    "memtrace ctl: --wait 2h: expected a time from 0 to 1h (a bare number: seconds)" ctl --wait 2h 1 start
refused "ctl: a wait that is no time" \
    "memtrace ctl: --wait soon: expected a time from 0 to 1h (a bare number: seconds)" ctl -w soon 1 start
refused "ctl: a signal the recorder cannot use" \
    "memtrace ctl: --signal KILL: not a signal the recorder can use (USR1, USR2, RTMIN+N, ...)" \
    ctl --signal KILL 1 start
refused "ctl: options come first" \
    "memtrace ctl: unexpected argument '--wait' after '1 start' (one process, one action; options come first)" \
    ctl 1 start --wait 2
refused "ctl: push options with stop" "memtrace ctl: the push options go with start only" \
    ctl --push http://127.0.0.1:9/ 1 stop
"$M" stats --colour "$F" >/dev/null 2>"$T/err"
check "an unknown option points at --help" grep -qx "memtrace stats: see 'memtrace stats --help'" "$T/err"

# taken: known answers
"$M" leaks --plan 3600B/h >"$T/plan" 2>"$T/err"
check "leaks --plan 3600B/h: typed as 1 byte per second" grep -q '^To find a leak of 1 B/s (3600B/h)' "$T/plan"
"$M" top -n 2 "$F" >"$T/top" 2>&1
check "top -n 2: two sites" [ "$(grep -c '^ *[0-9][0-9]* ' "$T/top")" = 2 ]
"$M" top "$F" -n 2 >"$T/top2" 2>&1
check "an option after the operand is an option (top FILE -n 2)" cmp -s "$T/top" "$T/top2"
"$M" top --limit=2 "$F" >"$T/top3" 2>&1
check "--limit=2 is --limit 2" cmp -s "$T/top" "$T/top3"
"$M" check --max-peak 1GiB --max-alloc 1g "$F" >"$T/chk" 2>&1
check "check: repeated budgets kept in order, both hold" \
    sh -c "[ \$(grep -c '^  ok  ' '$T/chk') = 2 ] && sed -n 2p '$T/chk' | grep -q 'peak live bytes'"

# --help: the table's options, on stdout, status 0
for cmd in top stats leaks lifetimes folded diff check pprof plot view info dump recode run attach ctl symbolize; do
    "$M" $cmd --help >"$T/help" 2>"$T/err"
    st=$?
    check "$cmd --help: status 0, usage on stdout, nothing on stderr" \
        sh -c "[ $st = 0 ] && grep -q '^usage: memtrace $cmd' '$T/help' && [ ! -s '$T/err' ]"
    check "$cmd --help: lists -h, --help" grep -q '^  -h, --help  *this help$' "$T/help"
done
"$M" top --help >"$T/help"
check "top --help: an option with its value and its help" \
    grep -q '^  -n, --limit N      sites shown (default 20, 0 = all)$' "$T/help"
check "top --help: a help line continued under its column" \
    grep -q '^                     allocated), live (bytes live at --at), live_count,$' "$T/help"
"$M" view --help >"$T/help"
check "view --help: a long value name puts the help on the next line" \
    sh -c "grep -qx '  -A, --allow-host NAME\[:PORT\]' '$T/help'"
"$M" help diff >"$T/help2"
"$M" diff --help >"$T/help3"
check "memtrace help diff = memtrace diff --help" cmp -s "$T/help2" "$T/help3"

# ctl --wait: a bare number is seconds (taken: the command goes on to the process)
"$M" ctl --wait 2 2147483647 status >"$T/out" 2>"$T/err"
st=$?
check "ctl --wait 2 (bare seconds) is taken (exit $st)" \
    sh -c "[ $st = 1 ] && grep -qx 'memtrace ctl: process 2147483647: no such process' '$T/err'"

# run stops at the first operand: the command's own options are never parsed
# (the program runs under the recorder: the plain build's; a sanitized
# recorder cannot be preloaded into a program that is not)
if [ "${MT_STAGE:-plain}" = plain ]; then
    "$M" run -o "$T/pass.ctf" -i 1m -- sh -c 'echo "$@"' sh -o y -i 5 >"$T/argv1" 2>"$T/err1"
    check "run -o FILE -- CMD -o y -i 5: CMD gets -o y -i 5" \
        sh -c "[ \"\$(cat '$T/argv1')\" = '-o y -i 5' ] && [ -f '$T/pass.ctf' ]"
    "$M" run -i 1m -o "$T/pass2.ctf" sh -c 'echo "$@"' sh -i 5 --help >"$T/argv2" 2>"$T/err2"
    check "run CMD -i 5 --help: CMD gets -i 5 --help (no --)" \
        sh -c "[ \"\$(cat '$T/argv2')\" = '-i 5 --help' ]"
else
    echo "SKIP: run's argument pass-through (runs a program under the recorder: plain stage)"
fi
finish
