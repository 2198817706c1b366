#!/bin/sh
# report.sh - what programs/report.c says when it opens traces for the
# reports, checked line by line: a trace without samples says why (a
# finished process that allocated less than one interval, or a process
# that did not finish it) and lists the traces its run's other processes
# wrote beside it, largest first, with their sizes, samples and commands
# (leak.ctf's 47.2 MiB and 6187 samples, prodcons.ctf's 159 MiB and 2079),
# not the ones without samples nor side files; a missing file, a trace cut
# inside its header and a bad filter are refused naming the file, the
# offset, the filter's column, with exit 1, 1 and 2.
set -u
: "${MT_BIN:?}" "${MT_TMP:?}" "${MT_FIXTURES:?}"
. tests/lib.sh
M=$(cd "$(dirname "$MT_BIN")" && pwd)/$(basename "$MT_BIN")
F=$(cd "$MT_FIXTURES" && pwd)
cd "$MT_TMP" || exit 1

# expect WHAT FILE LINE...: FILE holds exactly the lines
expect() {
    what=$1 file=$2; shift 2
    printf '%s\n' "$@" >expected
    if cmp -s "$file" expected; then pass "$what"; else fail "$what: $(head -c 600 "$file")"; fi
}

# The checks on a trace `memtrace run` writes run in the plain stage only:
# a sanitized recorder cannot be preloaded into a program that is not.
if [ "${MT_STAGE:-plain}" = plain ]; then
    # an empty trace of a finished process: true under a 1 GiB interval
    # (its few kilobytes are sampled with a chance of a few in a million)
    "$M" run -i 1G -o e.ctf -- true 2>/dev/null || fail "memtrace run -i 1G true"
    cp "$F/leak.ctf" e.ctf.4242             # a child's trace
    cp "$F/prodcons.ctf" e.ctf.4244.1       # a child's after an exec
    head -c 3000 "$F/leak.ctf" >e.ctf.4243  # a child's without a sample yet
    "$M" top e.ctf >out 2>err; rc=$?
    expect "an empty trace of a finished run: why, then its siblings largest first (exit $rc)" err \
        "memtrace top: e.ctf has no samples: its process allocated less than about one sampling interval (1.00 GiB) in all" \
        "memtrace top: other processes of its run wrote traces beside it, largest first:" \
        "memtrace top:   e.ctf.4244.1: 159 MiB allocated, 2079 samples, prodcons.exe" \
        "memtrace top:   e.ctf.4242: 47.2 MiB allocated, 6187 samples, fixture:leak"
    check "an empty trace: the report is still written, exit 0" sh -c "[ $rc = 0 ] && grep -q 'no site has any' out"

    head -c 150 e.ctf >u.ctf   # before the recorder's end mark
    "$M" stats u.ctf >/dev/null 2>err
    expect "an empty trace its process did not finish: said so, after the reader's warning" err \
        "memtrace stats: warning: u.ctf: offset 110: skipping truncated packet header at end of file (40 of 66 bytes)" \
        "memtrace stats: u.ctf has no samples: its process did not finish it (still running, killed or crashed) and wrote none before that"

    head -c 100 e.ctf >h.ctf
    "$M" folded h.ctf >out 2>err; rc=$?
    expect "a trace cut inside its header: file, offset, what (exit $rc)" err \
        "memtrace folded: h.ctf: offset 0: truncated trace-info packet (100 of 110 bytes)"
    check "a trace cut inside its header: exit 1" test $rc = 1
fi

"$M" top nothere.ctf >out 2>err; rc=$?
expect "a missing file: refused naming it (exit $rc)" err "memtrace top: nothere.ctf: No such file or directory"
check "a missing file: exit 1, nothing on stdout" sh -c "[ $rc = 1 ] && [ ! -s out ]"

"$M" top --filter 'size:>=4q' "$F/leak.ctf" >out 2>err; rc=$?
expect "a bad filter: the reason and a caret under its column (exit $rc)" err \
    "memtrace top: filter: column 9: unknown unit 'q' in size '4q' (use B, k, M, G, T)" \
    "  size:>=4q" \
    "          ^"
check "a bad filter: exit 2" test $rc = 2
finish
