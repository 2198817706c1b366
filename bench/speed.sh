#!/bin/sh
# speed.sh - the reports against the speed of the disk: `memtrace top`,
# `memtrace stats`, `memtrace recode` and `memtrace leaks` on a big trace against md5sum
# reading the same file, with bench/decode (the codec alone) as the floor;
# per-round ratios to md5sum (wall and CPU time), the peak RSS, and where
# the CPU goes (perf's shares per thread and per part of the code).
#
#   sh bench/speed.sh          # BUILD=build REPS=5 EVENTS=50000000
#   TRACE=t.ctf sh bench/speed.sh   # an existing trace
#   PERF=0 sh bench/speed.sh   # no perf profile
#   INSN=0 sh bench/speed.sh   # no instruction budget (callgrind)
#   RT=1 sh bench/speed.sh     # the timed commands at real-time priority
#   BASE=other/build sh bench/speed.sh   # also that build's top and stats
#                              # (top0, stats0) in the same rounds
#
# The trace: bench/viewer-gen.c with EVENTS events (50M: 444 MB, 25.5
# million sampled blocks, 400 call paths), kept in $BUILD/bench. Rounds are
# interleaved (md5sum, decode, top, stats, recode, leaks in turn), warm page
# cache; the ratio of a command is the median of its per-round ratios to
# that round's md5sum (a machine shared with other jobs changes speed
# between rounds, less within one). Goals: top and stats at most 2x md5sum
# with at most 300 MB, recode at most 2x, leaks at most 300 MB.
#
# The profile (perf record, one run each) gives each thread's share of the
# command's CPU samples (the busiest thread bounds the wall time of a
# two-thread read) and, per thread, the shares of:
#   decode   lib/trace (reader, move-to-front tables, input)
#   encode   lib/trace/writer.c (recode)
#   stacks   finding each allocation's call path: lib/analyze/buildread.c,
#            buildpipe.c, stacks.c, lib/common (hashes, location table)
#   fold     live blocks and folding into the per-path costs: fold.c,
#            buildfold.c, build.c, peak.c
#   sums     the reports' accumulators: statsacc.c, curveacc.c, hist.c,
#            sinkthread.c, and the rest of lib/analyze
#   handoff  pipe.c, the lock and futex calls between the threads
#   alloc    malloc, free, realloc, memset and the kernel's page faults
#   io       read(2): the kernel copying the page cache out, file systems
#   other    everything else (the report's printing, the kernel's rest)
#
# The instruction budget (valgrind's callgrind, when it is installed; the
# VM's perf has no hardware counters): instructions an event of each
# command on a trace of the same generator with INSN_EVENTS events
# (default 2 million, in $BUILD/bench), per thread and per part as above
# (code inlined from a header counts for the function it is inlined in).
# Instructions do not change with the machine's load: compare them between
# builds where wall times cannot resolve a difference.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-5}
EVENTS=${EVENTS:-50000000}
PERF=${PERF:-1}
INSN=${INSN:-1}
INSN_EVENTS=${INSN_EVENTS:-2000000}
M=$BUILD/memtrace
bench_need "$BUILD" "cli bench-tools" "$M" "$BUILD/bench/decode" "$BUILD/bench/viewer-gen"
bench_scratch memtrace-speed
TRACE=${TRACE:-$BUILD/bench/paths-$EVENTS.ctf}
[ -f "$TRACE" ] || "$BUILD/bench/viewer-gen" "$TRACE" "$EVENTS" > /dev/null
NAMES="md5sum decode top stats recode leaks"
BASE=${BASE:-}
[ -z "$BASE" ] || NAMES="$NAMES top0 stats0 leaks0"

cat "$TRACE" > /dev/null   # warm the page cache
i=0
while [ $i -lt "$REPS" ]; do
    timed md5sum md5sum "$TRACE"
    timed decode "$BUILD/bench/decode" "$TRACE"
    timed top "$M" top "$TRACE"
    timed stats "$M" stats "$TRACE"
    timed recode "$M" recode "$TRACE" "$tmp/out.ctf"
    rm -f "$tmp/out.ctf"
    timed leaks "$M" leaks "$TRACE"
    if [ -n "$BASE" ]; then
        timed top0 "$BASE/memtrace" top "$TRACE"
        timed stats0 "$BASE/memtrace" stats "$TRACE"
        timed leaks0 "$BASE/memtrace" leaks "$TRACE"
    fi
    i=$((i + 1))
done

# rounds NAME: the median per-round ratio to md5sum, wall then CPU (user +
# system: timed's fields 1, 2 and 4)
rounds() {
    paste -d' ' "$tmp/$1" "$tmp/md5sum" | awk '{ print $1 / $5 }' | median | awk '{ printf "%.2f", $1 }'
    printf ' '
    paste -d' ' "$tmp/$1" "$tmp/md5sum" | awk '{ print ($2 + $4) / ($6 + $8) }' | median | awk '{ printf "%.2f", $1 }'
}
echo "trace: $TRACE ($(wc -c < "$TRACE") bytes); $REPS interleaved rounds, medians; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %8s %8s %8s %10s %10s\n' what wall_s cpu_s xwall xcpu maxrss_MB
for w in $NAMES; do
    cpu=$(awk '{ print $2 + $4 }' "$tmp/$w" | median)
    # shellcheck disable=SC2046  # two words: the two ratios
    set -- $(rounds "$w")
    printf '%-8s %8s %8s %8s %10s %10s\n' "$w" "$(col_median "$w" 1)" "$cpu" "$1" "$2" \
        "$(col_median "$w" 3 | awk '{ printf "%.0f", $1 / 1024 }')"
done
echo "(xwall, xcpu: per-round ratios to md5sum. Goals: top, stats, recode xwall <= 2; top, stats, leaks <= 300 MB)"

# budget NAME CMD...: callgrind's instructions of CMD, per event (the
# small trace's INSN_EVENTS), per thread (busiest first) and part
budget() {
    name=$1; shift
    rm -f "$tmp"/cg.*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg.%p" \
        "$@" > /dev/null 2> "$tmp/cg.err" ||
        { echo "$name: callgrind failed: $(tail -n 1 "$tmp/cg.err")"; return 0; }
    for f in "$tmp"/cg.*-[0-9]*; do
        callgrind_annotate --auto=no --inclusive=no --threshold=100 "$f" 2> /dev/null | grep '%)' |
            grep -v 'PROGRAM TOTALS' | sed "s/([^)]*)//; s|^|$(basename "$f") |"
    done | awk -v name="$name" -v events="$INSN_EVENTS" '
        function part(f, fn) {
            if (f ~ /lib\/trace\/writer\.c$/) return "encode"
            if (f ~ /lib\/trace\//) return "decode"
            if (f ~ /lib\/analyze\/(buildread|buildpipe|stacks)\.c$/ || f ~ /lib\/common\//) return "stacks"
            if (f ~ /lib\/analyze\/(fold|buildfold|build|peak)\.c$/) return "fold"
            if (f ~ /lib\/analyze\/pipe\.c$/) return "handoff"
            if (f ~ /lib\/analyze\//) return "sums"
            if (fn ~ /^(pthread_|__pthread|futex|__lll_|___pthread)/ || fn ~ /futex/) return "handoff"
            if (fn ~ /^(_int_|__libc_|)(malloc|free|realloc|calloc|memalign|posix_memalign)/ ||
                fn ~ /^(malloc|_int_free|__memset|memset|cfree|unlink_chunk|tcache|sysmalloc|alloc_perturb)/)
                return "alloc"
            if (fn ~ /^(read|__read|__libc_read)$/) return "io"
            return "other"
        }
        {
            t = $1; n = $2; gsub(/,/, "", n); loc = $3
            fn = loc; sub(/^.*:/, "", fn); f = loc; sub(/:[^:]*$/, "", f)
            row++; th[row] = t; ins[row] = n; fun[row] = fn; file[row] = f
            if (NF >= 4) home[fn] = f   # (out of line: its own file)
        }
        END {
            for (r = 1; r <= row; r++) {
                f = (fun[r] in home) ? home[fun[r]] : file[r]
                p = part(f, fun[r])
                share[th[r]] += ins[r]; cell[th[r], p] += ins[r]
            }
            n = 0
            for (t in share) { n++; tid[n] = t }
            for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++)
                if (share[tid[b]] > share[tid[a]]) { x = tid[a]; tid[a] = tid[b]; tid[b] = x }
            if (n > 3) n = 3
            printf "%-8s", name
            for (a = 1; a <= n; a++) printf "  thread %d: %6.0f", a, share[tid[a]] / events
            printf "\n"
            split("decode encode stacks fold sums handoff alloc io other", parts, " ")
            for (q = 1; q <= 9; q++) {
                line = sprintf("  %-8s", parts[q]); any = 0
                for (a = 1; a <= n; a++) {
                    v = cell[tid[a], parts[q]] / events; if (v >= 0.5) any = 1
                    line = line sprintf("  %16.0f", v)
                }
                if (any) print line
            }
        }'
}
if [ "$INSN" = 1 ]; then
    if command -v valgrind > /dev/null && command -v callgrind_annotate > /dev/null; then
        small=$BUILD/bench/paths-$INSN_EVENTS.ctf
        [ -f "$small" ] || "$BUILD/bench/viewer-gen" "$small" "$INSN_EVENTS" > /dev/null
        echo
        echo "instructions an event (callgrind, $INSN_EVENTS events of the same generator), per thread (busiest first) and part"
        budget decode "$BUILD/bench/decode" "$small"
        budget top "$M" top "$small"
        budget stats "$M" stats "$small"
        budget recode "$M" recode "$small" "$tmp/out.ctf"
        rm -f "$tmp/out.ctf"
        if [ -n "$BASE" ]; then
            budget top0 "$BASE/memtrace" top "$small"
            budget stats0 "$BASE/memtrace" stats "$small"
        fi
    else
        echo "no valgrind: no instruction budget"
    fi
fi

[ "$PERF" = 1 ] || exit 0
command -v perf > /dev/null || { echo "no perf: no profile"; exit 0; }
# symbol -> source file, for the memtrace binary and bench/decode
for bin in "$M" "$BUILD/bench/decode"; do
    nm -l --defined-only "$bin" 2> /dev/null | awk -v b="$(basename "$bin")" \
        'NF >= 4 && ($2 == "t" || $2 == "T") { f = $4; sub(/:[0-9]+$/, "", f); print b, $3, f }'
done > "$tmp/syms"
profile() {
    name=$1; shift
    perf record -q -F 1999 -o "$tmp/perf.data" -- "$@" > /dev/null 2> "$tmp/perf.err" ||
        { echo "$name: perf record failed: $(tail -n 1 "$tmp/perf.err")"; return 0; }
    perf report -i "$tmp/perf.data" --no-children --sort pid,dso,sym --stdio -q 2> /dev/null |
        awk -v name="$name" -v syms="$tmp/syms" '
        BEGIN { while ((getline l < syms) > 0) { split(l, w, " "); file[w[1] " " w[2]] = w[3] } }
        function part(dso, sym, kernel,   f) {
            sub(/\.(constprop|part|isra|cold|lto_priv)[.0-9]*$/, "", sym)
            f = file[dso " " sym]
            if (f ~ /lib\/trace\/writer\.c$/) return "encode"
            if (f ~ /lib\/trace\//) return "decode"
            if (f ~ /lib\/analyze\/(buildread|buildpipe|stacks)\.c$/ || f ~ /lib\/common\//) return "stacks"
            if (f ~ /lib\/analyze\/(fold|buildfold|build|peak)\.c$/) return "fold"
            if (f ~ /lib\/analyze\/pipe\.c$/) return "handoff"
            if (f ~ /lib\/analyze\//) return "sums"
            if (sym ~ /^(pthread_|__pthread|futex|__lll_|___pthread)/ || sym ~ /futex/) return "handoff"
            if (sym ~ /^(_int_|__libc_|)(malloc|free|realloc|calloc|memalign|posix_memalign)/ ||
                sym ~ /^(malloc|_int_free|__memset|memset|__memset_avx2|cfree|unlink_chunk|tcache|sysmalloc|alloc_perturb)/ ||
                sym ~ /(page_fault|clear_page|do_anonymous|handle_mm_fault|alloc_pages|__handle_mm|folio|zap_|unmap|lru)/) return "alloc"
            if (kernel && sym ~ /(copy_to_iter|copy_user|filemap|read|vfs_|ext4|xfs|_copy_|rep_movs)/) return "io"
            return "other"
        }
        /%/ {
            pct = $1; sub(/%/, "", pct); pid = $2; dso = $3; kernel = ($4 == "[k]")
            sym = $5; for (k = 6; k <= NF; k++) sym = sym " " $k
            p = part(dso, sym, kernel)
            share[pid] += pct; cell[pid, p] += pct; total += pct
        }
        END {
            n = 0
            for (t in share) { n++; tid[n] = t }
            for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++)
                if (share[tid[b]] > share[tid[a]]) { x = tid[a]; tid[a] = tid[b]; tid[b] = x }
            if (n > 3) n = 3
            printf "%-8s", name
            for (a = 1; a <= n; a++) printf "  thread %d: %5.1f%%", a, share[tid[a]]
            printf "\n"
            split("decode encode stacks fold sums handoff alloc io other", parts, " ")
            for (q = 1; q <= 9; q++) {
                line = sprintf("  %-8s", parts[q]); any = 0
                for (a = 1; a <= n; a++) {
                    v = cell[tid[a], parts[q]]; if (v >= 0.05) any = 1
                    line = line sprintf("  %16.1f%%", v)
                }
                if (any) print line
            }
        }'
}
echo
echo "perf: shares of each command's CPU samples, per thread (busiest first) and part"
profile decode "$BUILD/bench/decode" "$TRACE"
profile top "$M" top "$TRACE"
profile stats "$M" stats "$TRACE"
profile recode "$M" recode "$TRACE" "$tmp/out.ctf"
