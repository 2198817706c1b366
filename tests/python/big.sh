#!/bin/sh
# big.sh - the Python package on traces it reads folded (memtrace.open's
# fold_above, forced to 0 here on small traces): top(), stats(), curve(),
# diff(), allocations(filter) and stacks() give exactly what the whole model gives
# (fixtures, filters that need the blocks' ends, stack clauses, live:peak,
# several traces aggregated), and the known answers of a real program
# recorded at interval 1 (every byte sampled: growing's sites allocate
# what its source says).
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
: "${MT_FIXTURES:=tests/fixtures/memtrace}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
PY=/usr/bin/python3
$PY -c "import numpy, pandas" 2>/dev/null ||
    { echo "python3-pandas not installed (scripts/install-deps.sh test installs it)"; exit 77; }
[ -f "$MT_BUILD/libmemtrace-analyze.so" ] || { echo "FAIL: $MT_BUILD/libmemtrace-analyze.so not built"; exit 1; }
P=$MT_BUILD/tests/record/progs/growing
[ -x "$P" ] || { echo "FAIL: $P not built (make tests-build)"; exit 1; }
"$MT_BIN" run --interval 1 -o "$MT_TMP/g.ctf" -- "$P" 4000 >/dev/null 2>&1 ||
    echo "FAIL: memtrace run of growing at interval 1"
MEMTRACE_LIBDIR=$MT_BUILD PYTHONPATH=python:tests/python $PY - "$MT_FIXTURES" "$MT_TMP" <<'PYEOF'
import os, sys
import pandas as pd
import memtrace
from checks import check, finish
fx, tmp = sys.argv[1:3]


def same(what, f):
    try:
        f()
        return True
    except AssertionError as e:
        print("  %s: %s" % (what, str(e).splitlines()[0] if str(e) else "differs"))
        return False


def check_equal(a, b):
    assert a == b, "%s != %s" % (a, b)


def compare(name, paths, filters):
    w = memtrace.open(*paths, fold_above=None)
    f = memtrace.open(*paths, fold_above=0)
    check(not w.folded and f.folded and w.info == f.info,
          "%s: read folded (fold_above=0), the same info as the whole model" % name)
    for flt in filters:
        ok = True
        for by, at in (("alloc", None), ("live", None), ("live", "peak"), ("count", "1ms")):
            a, b = w.top(by=by, filter=flt, at=at), f.top(by=by, filter=flt, at=at)
            ok &= same("top %s at %s" % (by, at), lambda: pd.testing.assert_frame_equal(a, b))
            ok &= a.attrs == b.attrs
        for at in (None, "peak", "1ms"):
            ok &= same("stats at %s" % at, lambda: check_equal(w.stats(flt, at=at),
                                                             f.stats(flt, at=at)))
        for n in (1, 7, 500):
            ok &= same("curve(%d)" % n, lambda: pd.testing.assert_frame_equal(
                w.curve(n, filter=flt), f.curve(n, filter=flt)))
        for at in (None, "peak"):
            a, b = w.allocations(flt, at=at), f.allocations(flt, at=at)
            ok &= same("allocations at %s" % at, lambda: pd.testing.assert_frame_equal(a, b))
        ok &= same("stacks", lambda: pd.testing.assert_series_equal(w.stacks(a["stack"]),
                                                                    f.stacks(b["stack"])))
        check(ok, "%s, filter %r: top, stats, curve, allocations and stacks as the whole model's "
              "(%d rows)" % (name, flt, len(a)))
    w.close()
    f.close()


filters = ["", "size:>=32", "live:peak", "lifetime:>1ms", "collect:never",
           "inside:Stdlib", "!inside:List hide:Stdlib lifetime:<10ms"]
for n in ("leak", "prodcons", "rate1", "upstream_ocamlopt_v3"):
    compare(n, [os.path.join(fx, n + ".ctf")], filters)
compare("prodcons + prodcons_v3", [os.path.join(fx, "prodcons.ctf"),
                                   os.path.join(fx, "prodcons_v3.ctf")], filters[:3])

small = memtrace.open(os.path.join(fx, "leak.ctf"))
check(not small.folded, "a small trace is loaded whole by default (under FOLD_ABOVE)")
big = memtrace.open(os.path.join(fx, "leak.ctf"), fold_above=0)
check(big.stats() == small.stats() and big.stats("size:>=32") == small.stats("size:>=32"),
      "stats() of a folded trace is the whole model's")
pw = memtrace.open(os.path.join(fx, "prodcons.ctf"))
pf = memtrace.open(os.path.join(fx, "prodcons.ctf"), fold_above=0)
ok = True
for kw in ({}, {"by": "live"}, {"by": "count", "key": "function"}, {"at": "peak"},
           {"by": "live_count", "key": "path", "filter": "size:>=32"}, {"at": "1ms"},
           {"filter": "inside:Stdlib lifetime:>1ms"}):
    w = small.diff(pw, **kw)
    ok &= same("diff %s" % kw, lambda: pd.testing.assert_frame_equal(big.diff(pf, **kw), w))
    ok &= same("diff mixed %s" % kw, lambda: pd.testing.assert_frame_equal(big.diff(pw, **kw), w))
    ok &= same("diff attrs %s" % kw, lambda: check_equal(big.diff(pf, **kw).attrs, w.attrs))
check(ok, "diff() of folded traces (and of a folded one against a whole one) is the whole "
      "models', for measures, keys, times and filters")
try:
    big.allocations("size:>=32 bogus:1")
    check(False, "a bad filter raises on a folded trace")
except memtrace.MemtraceError as e:
    check("column" in str(e), "a bad filter raises MemtraceError saying where (%s)" % e)
try:
    big.curve(10, filter="inside:/(/")
    check(False, "a bad regex raises in curve()")
except memtrace.MemtraceError as e:
    check("filter" in str(e), "a bad regex in curve()'s filter raises MemtraceError (%s)" % e)

# growing 4000 at interval 1: every byte sampled, the figures exact
g = memtrace.open(os.path.join(tmp, "g.ctf"), fold_above=0)
N, CACHE = 4000, 512
slots = set(i % CACHE for i in range(N) if i < N // 10 or i % 10 == 0)
cache_puts = sum(1 for i in range(N) if i < N // 10 or i % 10 == 0)
top = g.top(by="live").set_index("function")
check(g.folded and top.loc["leak_session", "live_bytes"] == 256 * N and
      top.loc["leak_session", "allocs"] == N and top.loc["load_config", "live_bytes"] == 2 << 20 and
      top.loc["cache_put", "live_bytes"] == 1024 * len(slots) and
      top.loc["cache_put", "allocs"] == cache_puts and top.loc["handle", "live_bytes"] == 0 and
      top.loc["handle", "alloc_bytes"] == 4096 * N,
      "top(by='live') of growing read folded: leak_session keeps 4000 x 256 B, cache_put "
      "%d x 1 KiB of %d, load_config 2 MiB, handle nothing of 4000 x 4 KiB" % (len(slots), cache_puts))
a = g.allocations("inside:leak_session")
check(len(a) == N and (a["size"] == 256).all() and a["bytes"].sum() == 256 * N and
      not a["freed"].any() and a["time"].is_monotonic_increasing,
      "allocations('inside:leak_session'): its 4000 blocks of 256 B in file order, never freed")
h = g.allocations("inside:handle lifetime:>=0")
check(len(h) == N and (h["size"] == 4096).all() and h["freed"].all(),
      "allocations('inside:handle lifetime:>=0'): 4000 blocks of 4 KiB, each freed")
c = g.curve(50, filter="inside:leak_session")
check(c["filtered"].iloc[-1] == 256 * N and c["filtered"].is_monotonic_increasing,
      "curve(filter='inside:leak_session') climbs to 4000 x 256 B (%.0f)" % c["filtered"].iloc[-1])
c = g.curve(50, filter="collect:never inside:cache_put")
check(c["filtered"].iloc[-1] == 1024 * len(slots),
      "curve(filter='collect:never inside:cache_put') ends at the %d entries kept (%.0f B)"
      % (len(slots), c["filtered"].iloc[-1]))
finish()
PYEOF
