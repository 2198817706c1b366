#!/bin/sh
# peak_coverage.sh - how often the peak's 95 % interval covers the true peak
# of live memory on real, unmodified programs: each run records the program
# with `memtrace run` while tests/record/preload/exactcount.c, preloaded
# behind the recorder, counts every request exactly (its peak of live
# bytes), and compares `memtrace stats --json -f kind:malloc` (the preload
# counts malloc blocks, not mappings) with it. Programs:
#   sqlite3   a 1,000,000-row table built and indexed in memory
#   cc1plus   the C++ compiler proper on a file including <regex>
#             (preprocessed first, so that one process does the work)
#   git       pack-objects of this checkout's history (--window=50)
#   python3   dicts and strings built and dropped
# (Not redis: the preload, which calls glibc's allocator, cannot stand in
# for the jemalloc redis is linked with, whose malloc_usable_size redis
# calls on the blocks.)
# For each program and interval: runs, how many intervals cover the exact
# peak, how many lie above it (the truth below the lower bound) and below
# it, the mean and range of estimate / exact, and how often the estimate is
# below the live bytes at the end as the same trace shows them (never).
#
#   sh bench/peak_coverage.sh [BUILD]     (after make; BUILD defaults to build;
#                                          a copy elsewhere keeps a long run apart from rebuilds)
#   RUNS=10 INTERVALS="512k 64k" PROGS="sqlite3 cc1plus git python3"
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
case $B in /*) MT=$B/memtrace ;; *) MT=$PWD/$B/memtrace ;; esac
RUNS=${RUNS:-10}
INTERVALS=${INTERVALS:-"512k 64k"}
PROGS=${PROGS:-"sqlite3 cc1plus git python3"}
T=$(mktemp -d "${TMPDIR:-/tmp}/mt-peakcov.XXXXXX")
trap 'rm -rf "$T"' EXIT
cc -O2 -shared -fPIC -o "$T/exact.so" tests/record/preload/exactcount.c || exit 1

cat >"$T/sq.sql" <<'SQL'
create table t(a integer primary key, b text, c blob);
with recursive s(i) as (select 1 union all select i+1 from s where i < 1000000)
  insert into t select i, hex(randomblob(16)), randomblob(40) from s;
create index tb on t(b);
select count(*) from t;
SQL
cat >"$T/py.py" <<'PY'
keep = []
for r in range(30):
    d = {i: ("x%d" % i) * (1 + i % 40) for i in range(20000)}
    if r % 3 == 0:
        keep.append(d)
    s = [bytes(1000 + i % 5000) for i in range(2000)]
print(len(keep))
PY
printf '#include <regex>\n#include <string>\nint f(const std::string &s) { std::regex r("(a|b)*c[0-9]+"); return std::regex_search(s, r); }\n' >"$T/re.cc"
CC1PLUS=$(g++ -print-prog-name=cc1plus 2>/dev/null)
g++ -E -O1 "$T/re.cc" -o "$T/re.ii" 2>/dev/null || CC1PLUS=

PY=/usr/bin/python3; [ -x "$PY" ] || PY=$(command -v python3)
mkdir "$T/res"

# one NAME INTERVAL INPUT CMD...: one run (stdin from INPUT); appends
# "exact estimate lo hi end" to $T/res/NAME.INTERVAL
one() {
    name=$1 iv=$2 in=$3; shift 3
    rm -f "$T/r.ctf" "$T/r.ctf".* "$T/ex".*
    LD_PRELOAD="$T/exact.so" EXACT_OUT="$T/ex" "$MT" run -o "$T/r.ctf" --interval "$iv" \
        --no-follow -- "$@" >/dev/null 2>"$T/err" <"$in" || { echo "$name: failed"; cat "$T/err"; return; }
    # the program's process: the most bytes allocated (the memtrace process
    # that runs it is counted too, and its peak can be the larger)
    ex=$(cat "$T/ex".* 2>/dev/null | sort -t= -k3 -n | tail -1 | sed 's/.*peak=\([0-9]*\).*/\1/')
    "$MT" stats --json -f kind:malloc "$T/r.ctf" >"$T/r.json" 2>/dev/null
    j() { grep -o "\"$1\":[0-9.]*" "$T/r.json" | head -1 | cut -d: -f2; }
    echo "$ex $(j peak_filtered_bytes) $(j peak_filtered_lo_bytes) $(j peak_filtered_hi_bytes) $(j live_at_end_selected_bytes)" >>"$T/res/$name.$iv"
}
for p in $PROGS; do
    for iv in $INTERVALS; do
        r=0
        while [ $r -lt "$RUNS" ]; do
            case $p in
            sqlite3) command -v sqlite3 >/dev/null && one sqlite3 "$iv" "$T/sq.sql" sqlite3 :memory: ;;
            cc1plus) [ -n "$CC1PLUS" ] &&
                one cc1plus "$iv" /dev/null "$CC1PLUS" -fpreprocessed -quiet -O1 "$T/re.ii" -o "$T/re.s" ;;
            git) git rev-parse --git-dir >/dev/null 2>&1 &&
                one git "$iv" /dev/null git pack-objects --revs --all --stdout --window=50 -q ;;
            python3) one python3 "$iv" /dev/null "$PY" "$T/py.py" ;;
            esac
            r=$((r + 1))
        done
    done
done

printf '%-8s %5s %4s %7s %6s %6s %7s %13s %9s\n' program interval runs covered above below "mean" "range" "<end"
for f in "$T"/res/*; do
    [ -f "$f" ] || continue
    b=${f##*/}
    awk -v name="${b%%.*}" -v iv="${b#*.}" '$1 > 0 && $2 != "" {
        n++; r = $2 / $1; s += r; if (n == 1 || r < mn) mn = r; if (n == 1 || r > mx) mx = r
        if ($3 <= $1 && $1 <= $4) c++; else if ($3 > $1) a++; else b++
        if ($2 < $5) e++ }
        END { if (n) printf "%-8s %5s %4d %7d %6d %6d %6.3fx %6.3f-%5.3f %9d\n", name, iv, n, c, a, b, s / n, mn, mx, e }' "$f"
done
