#!/bin/sh
# agree.sh - top, folded and pprof name the same allocation sites on a real
# program: Debian's sqlite3 (stripped; its allocations go through
# sqlite3Malloc, named from the dynamic symbol table, and nameless frames of
# libsqlite3 under it). top reads a shallow model first: a cut holding only
# that plumbing must be read deeper, not taken as the site.
set -u
. tests/record/progs/lib.sh
skip_under_tsan
[ -x /usr/bin/sqlite3 ] || { echo "sqlite3 not installed"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
M=$PWD/$MT_BIN
case ${MT_STAGE:-plain} in
plain) REC=$M ;;
asan) REC=$PWD/build/memtrace; [ -x "$REC" ] || exit 77 ;;
esac
cd "$T" || exit 1
printf '%s\n' 'create table t(a, b);' \
    'with recursive c(x) as (select 1 union all select x + 1 from c where x < 30000) insert into t select x, randomblob(100) from c;' \
    'create index i on t(b);' >q.sql
"$REC" run -i 16k -o s.ctf -- /usr/bin/sqlite3 :memory: <q.sql >/dev/null 2>&1
"$M" top --json s.ctf >top.json 2>/dev/null
"$M" folded s.ctf >folded.txt 2>/dev/null
top1=$(python3 -c "import json; j = json.load(open('top.json')); print(j['sites'][0]['site']['function'])" 2>/dev/null)
# folded: the innermost frame of each stack, summed; the heaviest one
fold1=$(awk '{ v = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); s[f[n]] += v }
             END { for (k in s) if (s[k] > best) { best = s[k]; b = k }; print b }' folded.txt)
check "top's first site is folded's heaviest site ('$top1', '$fold1')" \
    test -n "$top1" -a "$top1" = "$fold1"
check "top's first site is not allocation plumbing ('$top1')" \
    sh -c "! echo '$top1' | grep -Eq '^sqlite3(Malloc|Realloc|MallocZero)\$|^sqlite3_(malloc|realloc)'"
n=$(grep -c '' folded.txt)
check "folded wrote stacks ($n)" test "$n" -gt 0
finish
