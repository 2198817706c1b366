#!/bin/sh
# realacc.sh - the recorder's estimates on real programs against an exact
# count made in the same run: tests/record/preload/exactcount.c, preloaded
# behind the recorder, sees every request the recorder passes on to the
# allocator and counts bytes allocated, the peak of live bytes and the live
# bytes at exit. Programs: sqlite3 building and indexing a table in memory
# (realloc-heavy), git pack-objects packing this checkout's history (the
# delta search of `git gc --aggressive`), python3 building and dropping
# dicts and strings (malloc
# blocks only: pymalloc's arenas are mappings, not counted by the preload),
# at the default interval and at 64 KiB. Bytes allocated and live at exit
# must be within 5 standard deviations (sqrt(bytes * interval)), the peak
# within 4 (the peak's estimator and its error: docs/estimates.md).
. tests/record/progs/lib.sh
skip_under_tsan
cc -O2 -shared -fPIC -o "$T/exact.so" tests/record/preload/exactcount.c 2>"$T/cc.err" ||
    { fail "exactcount.so builds"; cat "$T/cc.err"; finish; }
cat >"$T/sq.sql" <<'SQL'
create table t(a integer primary key, b text, c blob);
with recursive s(i) as (select 1 union all select i+1 from s where i < 150000)
  insert into t select i, hex(randomblob(40)), randomblob(300) from s;
create index tb on t(b);
select count(*), sum(length(c)) from t group by a % 7;
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
PY=/usr/bin/python3; [ -x "$PY" ] || PY=$(command -v python3)

# measure NAME INTERVAL FILTER CMD... (stdin passed on)
measure() {
    name=$1 iv=$2 filt=$3; shift 3
    rm -f "$T/$name.ctf" "$T/$name.ctf".* "$T/ex".*
    LD_PRELOAD="$T/exact.so" EXACT_OUT="$T/ex" "$MT_BIN" run -o "$T/$name.ctf" --interval "$iv" --no-follow \
        -- "$@" >/dev/null 2>"$T/$name.err" || { fail "$name runs under the recorder"; cat "$T/$name.err"; return; }
    # the program's process: the largest exact count
    ex=$(cat "$T/ex".* 2>/dev/null | sort -t= -k3 -n | tail -1)
    "$MT_BIN" stats --json ${filt:+-f "$filt"} "$T/$name.ctf" >"$T/$name.json" 2>/dev/null
    j() { grep -o "\"$1\":[0-9]*" "$T/$name.json" | head -1 | cut -d: -f2; }
    awk -v ex="$ex" -v a="$(j alloc_bytes)" -v p="$(j peak_filtered_bytes)" -v l="$(j live_at_end_selected_bytes)" \
        -v iv="$iv" -v name="$name" 'BEGIN {
        n = split(ex, f, /[ =]/)
        for (i = 2; i < n; i += 2) x[f[i]] = f[i + 1]
        if (x["alloc"] == "") { printf "FAIL: %s: no exact count\n", name; exit }
        sd = sqrt(x["alloc"] * iv); d = (a - x["alloc"]) / sd
        printf "%s: %s: bytes allocated %d, estimated %d (%.1f sd)\n", (d < 5 && d > -5 ? "PASS" : "FAIL"), name, x["alloc"], a, d
        sd = sqrt((x["live"] > iv ? x["live"] : iv) * iv); d = (l - x["live"]) / sd
        printf "%s: %s: live at exit %d, estimated %d (%.1f sd)\n", (d < 5 && d > -5 ? "PASS" : "FAIL"), name, x["live"], l, d
        sd = sqrt(x["peak"] * iv); d = (p - x["peak"]) / sd
        printf "%s: %s: peak live %d, estimated %d (%.2fx, %.1f sd)\n", (d < 4 && d > -4 ? "PASS" : "FAIL"), name, x["peak"], p, p / x["peak"], d
    }'
}

if command -v sqlite3 >/dev/null 2>&1; then
    measure sqlite3-512k 524288 "" sqlite3 :memory: <"$T/sq.sql"
    measure sqlite3-64k 65536 "" sqlite3 :memory: <"$T/sq.sql"
else
    echo "PASS: sqlite3 not installed: skipped"
fi
# git packing this project's own history (a fresh clone has it): the
# delta search of pack-objects, as in `git gc --aggressive`
if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
    measure git-pack-512k 524288 "" git pack-objects --revs --all --stdout --window=50 -q </dev/null
else
    echo "PASS: not in a git checkout: git pack-objects skipped"
fi
measure python3-512k 524288 kind:malloc "$PY" "$T/py.py" </dev/null
measure python3-64k 65536 kind:malloc "$PY" "$T/py.py" </dev/null
finish
