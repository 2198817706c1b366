#!/bin/sh
# realprogs.sh - real programs behave identically under the recorder: same
# standard output and exit status with and without profiling (sqlite3,
# python3, a C++ program throwing exceptions, a 16-thread program), and
# each leaves a readable trace with allocations in it.
. tests/record/progs/lib.sh
skip_under_tsan
rate=0.0001   # a sample every 10 KB: many samples, still fast

same() { # same NAME EXPECTED_STATUS CMD... (stdin from $T/in if present)
    name=$1 want=$2; shift 2
    in=/dev/null; [ -f "$T/$name.in" ] && in=$T/$name.in
    "$@" <"$in" >"$T/$name.plain" 2>&1; s1=$?
    rm -f "$T/$name.ctf"
    preload "$T/$name.ctf" $rate "$@" <"$in" >"$T/$name.traced" 2>&1; s2=$?
    check "$name: exit status $s1 with and without the recorder (got $s2)" test "$s1" = "$s2"
    check "$name: exit status is the expected $want" test "$s1" = "$want"
    check "$name: identical output" cmp -s "$T/$name.plain" "$T/$name.traced"
    if summary "$T/$name.ctf" >"$T/$name.sum"; then
        n=$(sed -n 's/^INFO .* allocs=\([0-9]*\) .*/\1/p' "$T/$name.sum")
        check "$name: trace readable, $n sampled allocations" test "${n:-0}" -gt 0
    else
        fail "$name: trace readable"
    fi
}

if command -v sqlite3 >/dev/null 2>&1; then
    cat >"$T/sqlite.in" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)
INSERT INTO t SELECT x, printf('name-%08d', x), x * 0.5 FROM c;
CREATE INDEX t_name ON t(name);
SELECT count(*), sum(v), min(name), max(name) FROM t;
SELECT substr(name, 1, 9) AS k, count(*) FROM t GROUP BY k ORDER BY k LIMIT 5;
SQL
    same sqlite 0 sqlite3 :memory:
    printf 'SELECT * FROM no_such_table;\n' >"$T/sqlite_err.in"
    same sqlite_err 1 sqlite3 -bail :memory:
else
    fail "sqlite3 not installed (scripts/install-deps.sh test)"
fi

py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
if [ -n "$py" ]; then
    same python 4 $py -c '
import json, collections, sys
d = {i: [str(j) * 3 for j in range(i % 50)] for i in range(20000)}
c = collections.Counter(len(v) for v in d.values())
s = json.dumps({"n": len(d), "hist": sorted(c.items())[:5]})
print(s)
print(sum(len(x) for v in d.values() for x in v))
sys.exit(4)'
else
    fail "python3 not installed"
fi

same cxx 0 "$PROGS/cxx"
same threads 0 "$PROGS/threads"
finish
