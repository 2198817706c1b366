#!/bin/sh
# profiles_input.sh - pprof profiles as input, without Go (profiles_go.sh
# has Go's own): what every command does with a profile.
#  - round trip: `memtrace pprof` of a fixture trace, read back, gives the
#    trace's `top` (by allocated and by live bytes, errors included) and
#    `folded` line for line;
#  - a profile without a sampling period (as tcmalloc's or jemalloc's):
#    read, one warning that the error cannot be derived, no error marks,
#    and `info` says so;
#  - a profile with only inuse_* values answers --by live and refuses
#    --by alloc with one line, and one with alloc only the other way;
#  - stats gives a profile's totals (inside: filters them);
#  - what needs times (lifetimes, plot, --at, time or size filter
#    clauses, several files merged) is refused with one line, exit 1 or 2;
#  - hostile files (tests/analyze/mkprofile.py: truncated, 11-byte varints,
#    groups, wrong wire types, location id 0, undefined or defined twice, undefined
#    functions, string indexes out of range, wrong value counts, huge
#    lengths, samples without values, a location of many lines repeated
#    into millions of frames, a gzip bomb, truncated gzip) fail with one
#    line naming the
#    file (and the offset), exit 1, never a crash; negative values and a
#    recursive stack are read;
#  - small files that encode tens of millions of location references (one
#    location 30 million times in a stack, one sample of 30 million
#    values, 1100 distinct stacks of 4000,
#    800 distinct from their root) are refused with the offset, and one
#    stack of 4000 in 15000 samples is read, all within a bound on memory
#    and CPU time far above the work;
#  - a Go profile's error is Go's sampling error, known answers worked out
#    here: a site that mixes a 14.5 MB object with 349,000 small strings
#    has its strings' error, counts carry their 1/p, and the samples of a
#    stack saturate rather than wrap;
#  - a gzipped profile is read member after member (two members make one
#    profile; two profiles concatenated are refused, never read as the
#    first alone), and bytes after the last member are refused.
set -u
. tests/lib.sh
: "${MT_BIN:?}" "${MT_FIXTURES:?}" "${MT_TMP:?}"
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed"; exit 77; }
M=$MT_BIN T=$MT_TMP
mk() { python3 tests/analyze/mkprofile.py "$1" "$T/$1" || fail "mkprofile.py $1"; }

# one line on stderr with WORDS, exit status in STATUSES; stdout empty
refused() {
    what=$1 words=$2 statuses=$3; shift 3
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if case " $statuses " in *" $rc "*) false ;; *) true ;; esac; then
        fail "$what: exit $rc (wanted $statuses)"; sed 's/^/    /' "$T/err"; return
    fi
    if [ "$(wc -l <"$T/err")" != 1 ] || ! grep -q -- "$words" "$T/err" || [ -s "$T/out" ]; then
        fail "$what: not one line saying '$words'"; sed 's/^/    /' "$T/err"; return
    fi
    pass "$what"
}

# --- round trip of memtrace's own output
for fx in prodcons leak; do
    "$M" pprof -o "$T/$fx.pb.gz" "$MT_FIXTURES/$fx.ctf" || fail "pprof $fx"
    for by in alloc live; do
        "$M" top --by $by "$MT_FIXTURES/$fx.ctf" | sed 1d >"$T/trace.txt"
        "$M" top --by $by "$T/$fx.pb.gz" 2>"$T/err" | sed 1d >"$T/profile.txt"
        check "$fx: top --by $by of its pprof output is the trace's" cmp -s "$T/trace.txt" "$T/profile.txt"
        [ -s "$T/err" ] && fail "$fx: warnings reading memtrace's own profile: $(cat "$T/err")"
    done
    "$M" folded "$MT_FIXTURES/$fx.ctf" >"$T/trace.txt"
    "$M" folded "$T/$fx.pb.gz" >"$T/profile.txt"
    check "$fx: folded of its pprof output is the trace's" cmp -s "$T/trace.txt" "$T/profile.txt"
done
head -n 1 "$T/profile.txt" >/dev/null
"$M" top "$T/leak.pb.gz" | head -n 1 | grep -q "from a pprof profile: memtrace's pprof output, 8000 bytes per sample" ||
    fail "top's header does not say the input is memtrace's pprof output"
"$M" check --max-live-end 1GiB "$T/leak.pb.gz" >"$T/out" 2>&1
check "check: a budget on a profile holds" grep -q "budget holds" "$T/out"
"$M" check --max-live-end 1MiB "$T/leak.pb.gz" >"$T/out" 2>&1
[ $? = 1 ] && grep -q "FAIL" "$T/out" && pass "check: a budget on a profile fails" ||
    fail "check: 1 MiB live at the end of leak.pb.gz passed"
"$M" diff "$T/leak.pb.gz" "$MT_FIXTURES/leak.ctf" >"$T/out" 2>&1
check "diff: a trace against its own pprof output differs nowhere" \
    grep -q "^no significant difference in [0-9]* sites" "$T/out"

# --- no sampling period: read, the error unknown
mk noperiod
"$M" top "$T/noperiod" >"$T/out" 2>"$T/err"
check "no period: top reads it" grep -q "alpha (a.c:10)" "$T/out"
check "no period: one warning that the error cannot be derived" \
    sh -c "[ \$(grep -c 'error of its figures cannot be derived' '$T/err') = 1 ]"
check "no period: no error shown" sh -c "! grep -E '[0-9]%[~?]|  [0-9]+%  alpha' '$T/out' && grep -q ' -  alpha' '$T/out'"
"$M" info "$T/noperiod" >"$T/out" 2>/dev/null
check "no period: info says the error cannot be derived" grep -q "^error: *cannot be derived" "$T/out"
check "no period: info gives the total" grep -q "^allocated: *4000 bytes" "$T/out"
"$M" pprof -o "$T/noperiod.again" "$T/noperiod" 2>/dev/null
"$M" top "$T/noperiod.again" >"$T/out" 2>"$T/err"
check "no period: its re-export still has no error" sh -c "grep -q ' -  alpha' '$T/out' && grep -q 'cannot be derived' '$T/err'"

# --- one kind of values only
mk inuse_only
"$M" top --by live "$T/inuse_only" >"$T/out" 2>&1
check "inuse only: --by live answers" grep -q "500 B" "$T/out"
refused "inuse only: --by alloc refused" "without allocated (alloc_\*) values" "1" "$M" top --by alloc "$T/inuse_only"
mk alloc_only
refused "alloc only: --by live refused" "without in-use" "1" "$M" top --by live "$T/alloc_only"
refused "inuse only: folded (alloc) refused" "without allocated" "1" "$M" folded "$T/inuse_only"
refused "inuse only: diff --by alloc refused" "without allocated" "1" "$M" diff --by alloc "$T/inuse_only" "$T/inuse_only"

# --- what a profile cannot answer
mk heap
P=$T/heap
refused "lifetimes refused" "is a pprof profile" 1 "$M" lifetimes "$P"
"$M" stats "$P" >"$T/out" 2>&1
check "stats: a profile's totals" sh -c "grep -q '^allocated   4.98 KiB in 11 blocks' '$T/out' && grep -q '^live at end 4.49 KiB in 6 blocks' '$T/out'"
"$M" stats --filter inside:beta "$P" >"$T/out" 2>&1
check "stats --filter inside: on a profile" grep -q '^allocated   4.00 KiB in 1 blocks' "$T/out"
refused "stats --at refused" "is a pprof profile: it holds no times" 1 "$M" stats --at 1s "$P"
refused "plot refused" "is a pprof profile" 1 "$M" plot -o "$T/x.svg" "$P"
refused "top --at refused" "is a pprof profile: it holds no times" 1 "$M" top --by live --at 1s "$P"
refused "top --at peak refused" "is a pprof profile: it holds no times" 1 "$M" top --by live --at peak "$P"
refused "a time filter refused" "filter clauses on times" 1 "$M" top --filter alloc:1s-2s "$P"
refused "a size filter refused" "filter clauses on times, sizes" 1 "$M" top --filter size:1k- "$P"
refused "several files refused" "read alone" 1 "$M" top "$P" "$T/leak.pb.gz"
"$M" top --filter inside:gamma "$P" >"$T/out" 2>&1
check "inside: works on a profile" grep -q "beta (a.c:20)" "$T/out"
"$M" top --filter '!inside:beta' "$P" >"$T/out" 2>&1
check "!inside: works on a profile" sh -c "grep -q 'alpha (a.c:10)' '$T/out' && ! grep -q 'beta (a.c:20)' '$T/out'"

# --- Go's sampling error, from Go's p = 1 - exp(-s/R), worked out here
# apart: an object of s bytes recorded with probability p adds s/p bytes
# (variance s^2 (1-p)/p^2) and 1/p objects ((1-p)/p^2); a sample of n
# objects had n p recorded, so its bytes' variance is n s^2 (1-p)/p and its
# count's n (1-p)/p, summed over a site's samples of every size
mk go_mixed
python3 - >"$T/want" <<'PY'
from math import exp, sqrt
R = 524288.0
def var(n, b):
    s = b / n
    p, q = 1 - exp(-s / R), exp(-s / R)
    return n * s * s * q / p, n * q / p
sites = {"alpha": [(1, 14500000), (349000, 5584000)], "beta": [(1000, 1024000)]}
for name, ss in sorted(sites.items()):
    vb = sum(var(n, b)[0] for n, b in ss)
    vn = sum(var(n, b)[1] for n, b in ss)
    print(name, "alloc", "%.4f" % (sqrt(vb) / sum(b for n, b in ss)))
    print(name, "count", "%.4f" % (sqrt(vn) / sum(n for n, b in ss)))
PY
for by in alloc count; do
    "$M" top --by $by --json "$T/go_mixed" 2>/dev/null |
        sed -n 's/.*"short":"\([a-z]*\)",.*"rse":\([0-9.]*\).*/\1 '$by' \2/p'
done | sort >"$T/got"
sort "$T/want" >"$T/want.s"
if [ -s "$T/got" ] && awk 'NR == FNR { w[$1 " " $2] = $3; next }
        { d = $3 - w[$1 " " $2]; if (d < 0) d = -d; if (!($1 " " $2 in w) || d > 0.0005) bad = 1; n++ }
        END { exit bad || n != 4 }' "$T/want.s" "$T/got"; then
    pass "Go profile: a site of one 14.5 MB object and 349,000 strings shows its strings' error (8.5 %), counts with their 1/p (31 %, 72 %)"
else
    fail "Go profile: errors differ from Go's sampling"; paste "$T/want.s" "$T/got" | sed 's/^/    /'
fi
"$M" info "$T/go_mixed" >"$T/out" 2>&1
check "Go profile: info's total error sums the variances (bytes ±8.8 %)" grep -q "^allocated: .*(bytes ±8.8%, blocks ±30.6%)" "$T/out"
"$M" diff "$T/go_mixed" "$T/go_mixed" >"$T/out" 2>&1
check "Go profile: diff's header counts samples below 2^32" \
    sh -c "grep -q 'from [0-9]* samples' '$T/out' && ! grep -q 'from [0-9]\{10,\} samples' '$T/out'"
mk line0
"$M" diff --json "$T/line0" "$T/line0" >"$T/out" 2>&1
"$M" top "$T/line0" >"$T/top" 2>&1
check "diff names a site of unknown line as top does: alpha (a.c), never a.c:0" \
    sh -c "grep -q '\"name\":\"alpha (a.c)\"' '$T/out' && ! grep -q 'a.c:0' '$T/out' && grep -q ' alpha (a.c)\$' '$T/top'"
mk wrap
"$M" top --json "$T/wrap" >"$T/out" 2>&1
check "samples of a stack saturate, never wrap (alpha's 8 EiB twice: rse 0, not 1)" \
    grep -q '"short":"alpha","value":[0-9.]*,"share":[0-9.]*,"rse":0.0000' "$T/out"

# --- hostile files
for k in truncated long_varint wire_type group loc_zero loc_missing dup_loc func_missing string_range \
         values_count no_values huge_len; do
    mk $k
    refused "hostile $k: refused with the offset" "$T/$k: offset [0-9]*" 1 "$M" top "$T/$k"
done
mk not_memory
refused "a CPU profile: not a memory profile" "not a memory profile" 1 "$M" top "$T/not_memory"
for k in negative cycle; do
    mk $k
    "$M" top --by live "$T/$k" >"$T/out" 2>"$T/err"
    check "odd but valid $k: read" sh -c "[ $? = 0 ] && grep -q 'site' '$T/out'"
done
mk frames_bomb
refused "a location of many lines repeated: refused" "too many frames for its size" 1 "$M" top "$T/frames_bomb"
# small files that encode tens of millions of location references: bounded
# by what they mean (a limit on memory and CPU time far above the work;
# before, 4 GB and 80 s)
bounded() {
    (
        [ "${MT_STAGE:-plain}" = plain ] && ulimit -v 700000
        ulimit -t 120
        exec "$@"
    )
}
mk deep_stack
refused "one location 30 million times in a stack: refused" \
    "deep_stack: offset [0-9]* of the inflated data: sample 0: its stack holds more than 4096 locations" \
    1 bounded "$M" folded "$T/deep_stack"
mk many_values
refused "one sample of 30 million values: refused" \
    "many_values: offset [0-9]* of the inflated data: sample 0: it holds more than 256 values" \
    1 bounded "$M" top "$T/many_values"
mk distinct_stacks
refused "1100 distinct stacks of 4000 locations: refused" \
    "distinct_stacks: offset [0-9]* of the inflated data: sample 1048: the distinct stacks hold more than" \
    1 bounded "$M" top "$T/distinct_stacks"
mk distinct_roots
refused "800 stacks of 4000 locations distinct from their root: refused" \
    "distinct_roots: its distinct stacks make more than 2097152 call-path nodes" \
    1 bounded "$M" folded "$T/distinct_roots"
mk repeated_stacks
for cmd in "top --json" "folded" "stats" "info"; do
    # shellcheck disable=SC2086
    bounded "$M" $cmd "$T/repeated_stacks" >"$T/out" 2>"$T/err"
    check "one stack of 4000 locations in 15000 samples: $cmd reads it in bounded memory" \
        grep -q "1500000\|1.43 MiB" "$T/out"
done
bounded "$M" folded "$T/repeated_stacks" >"$T/out" 2>&1
check "one stack of 4000 locations in 15000 samples: one folded line cut at 1024 frames, 1500000 B" \
    sh -c "[ \$(wc -l <'$T/out') = 1 ] && [ \$(tr ';' '\n' <'$T/out' | wc -l) = 1024 ] && grep -q '^\[truncated\];' '$T/out' && grep -q ' 1500000\$' '$T/out'"
head -c 200000000 /dev/zero | gzip -1 >"$T/bomb.gz"
refused "gzip bomb refused" "inflates to more than 64 MiB: refused" 1 "$M" top "$T/bomb.gz"
head -c 300 "$T/leak.pb.gz" >"$T/cut.gz"
refused "truncated gzip refused" "gzip data truncated" 1 "$M" top "$T/cut.gz"
printf '\037\213garbage' >"$T/badgz"
refused "bad gzip refused" "bad gzip data\|gzip data truncated" 1 "$M" top "$T/badgz"
# gzip members: every one is read, as gzip -d does; what follows the last is refused
gzip -dc "$T/heap" >"$T/heap.raw"
head -c 100 "$T/heap.raw" | gzip >"$T/split.gz"
tail -c +101 "$T/heap.raw" | gzip >>"$T/split.gz"
"$M" stats "$T/split.gz" >"$T/out" 2>&1
check "a profile in two gzip members: read whole (4.98 KiB in 11 blocks)" \
    grep -q '^allocated   4.98 KiB in 11 blocks' "$T/out"
cat "$T/heap" "$T/leak.pb.gz" >"$T/two.gz"
"$M" check --max-alloc 10MiB "$T/two.gz" >"$T/out" 2>"$T/err"
rc=$?
[ $rc != 0 ] && grep -q "several gzip members" "$T/err" && ! grep -q "budget holds" "$T/out" &&
    pass "two profiles concatenated: check refuses them (exit $rc), never passes on the first alone" ||
    { fail "two profiles concatenated: check exit $rc"; sed 's/^/    /' "$T/out" "$T/err"; }
{ cat "$T/heap"; printf 'junk\n'; } >"$T/trailing.gz"
refused "trailing garbage after the gzip data refused" \
    "trailing.gz: offset [0-9]*: 5 bytes after the end of gzip member 1 are not another gzip member" 1 \
    "$M" top "$T/trailing.gz"
finish
