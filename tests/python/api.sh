#!/bin/sh
# api.sh - the Python package (python/memtrace) on the C analysis library:
# info, allocations, top, stats, curve and diff agree with the CLI's JSON
# on the same traces; filters are the CLI's (a bad one raises with its
# position); a C trace has malloc/mmap kinds and the program's own sites;
# allocations() has each allocation's OCaml 5 domain (a trace that three
# domains wrote, tests/tools/gen_domains), which domain:N selects.
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
: "${MT_FIXTURES:=tests/fixtures/memtrace}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
PY=/usr/bin/python3
$PY -c "import numpy, pandas" 2>/dev/null ||
    { echo "python3-pandas not installed (scripts/install-deps.sh test installs it)"; exit 77; }
[ -f "$MT_BUILD/libmemtrace-analyze.so" ] || { echo "FAIL: $MT_BUILD/libmemtrace-analyze.so not built"; exit 1; }
T=$MT_TMP
"$MT_BIN" top --json -n 0 --by live "$MT_FIXTURES/leak.ctf" >"$T/top.json"
"$MT_BIN" stats --json "$MT_FIXTURES/leak.ctf" >"$T/stats.json"
"$MT_BIN" stats --json -f 'size:>=32' "$MT_FIXTURES/leak.ctf" >"$T/stats4k.json"
"$MT_BIN" diff --json "$MT_FIXTURES/prodcons.ctf" "$MT_FIXTURES/prodcons_v3.ctf" >"$T/diff.json" 2>/dev/null
P=$MT_BUILD/tests/record/progs/growing
if [ -x "$P" ] && [ -f "$MT_BUILD/libmemtrace.so" ]; then
    "$MT_BIN" run --interval 4k -o "$T/c.ctf" -- "$P" 4000 >/dev/null 2>&1 || rm -f "$T/c.ctf"
fi
"$MT_BUILD/tests/tools/gen_domains" "$T/domains.ctf" || echo "FAIL: gen_domains wrote no trace"
"$MT_BIN" top --json -n 0 -f domain:5 "$T/domains.ctf" >"$T/top5.json"
MEMTRACE_LIBDIR=$MT_BUILD PYTHONPATH=python:tests/python $PY - "$MT_FIXTURES" "$T" "$MT_BIN" <<'PYEOF'
import json, math, os, subprocess, sys
import memtrace
fx, tmp, cli = sys.argv[1:4]
from checks import check, finish

t = memtrace.open(os.path.join(fx, "leak.ctf"))
info = t.info
check(info["executable"].endswith("leak.exe") and info["word_size"] == 64,
      "info: the executable and word size of leak.ctf (%s, %d)" % (info["executable"], info["word_size"]))
stats = json.load(open(os.path.join(tmp, "stats.json")))
df = t.allocations()
check(len(df) == info["allocations"], "allocations(): one row per sampled allocation (%d)" % len(df))
check(list(df.columns[:4]) == ["time", "size", "samples", "bytes"], "allocations(): the documented columns first")
ab = df["bytes"].sum()
check(abs(ab - stats["total"]["alloc_bytes"]) <= 1e-6 * stats["total"]["alloc_bytes"] + 1,
      "the rows' bytes add up to stats' allocated bytes (%.0f vs %.0f)" % (ab, stats["total"]["alloc_bytes"]))
live = df.loc[~df["freed"], "bytes"].sum()
check(abs(live - stats["total"]["live_bytes"]) <= 1e-6 * stats["total"]["live_bytes"] + 1,
      "never-freed rows add up to stats' live bytes at the end (%.0f vs %.0f)" % (live, stats["total"]["live_bytes"]))
check(df["lifetime"].dropna().ge(0).all() and df.loc[~df["freed"], "lifetime"].isna().all(),
      "lifetimes are >= 0, NaN for blocks never freed")
d4 = t.allocations("size:>=32")
s4 = json.load(open(os.path.join(tmp, "stats4k.json")))
check(len(d4) > 0 and (d4["size"] >= 32).all() and abs(d4["bytes"].sum() - s4["total"]["alloc_bytes"]) < 1 + 1e-6 * s4["total"]["alloc_bytes"],
      "a filter as the CLI takes it selects the same allocations (%d rows)" % len(d4))
try:
    t.allocations("size:>=32 bogus:1")
    check(False, "a bad filter raises")
except memtrace.MemtraceError as e:
    check("column" in str(e), "a bad filter raises MemtraceError saying where (%s)" % e)
top = t.top(by="live")
ref = json.load(open(os.path.join(tmp, "top.json")))
check(top.columns[0] == "site", "top(): the site is the first column")
check([r["site"]["function"] for r in ref["sites"]] == list(top["function"]),
      "top(by='live') lists the sites of `top --json --by live` in order")
check(all(abs(a - r["value"]) < 1e-6 * max(1, abs(a)) for a, r in zip(top["value"], ref["sites"])),
      "top(by='live') values equal the CLI's")
check(set(df["site"].cat.categories) >= set(n for n in top["site"]),
      "the allocations' site names are top's names")
st = t.stats()
check(st["total"]["alloc_bytes"] == stats["total"]["alloc_bytes"], "stats() is stats --json")
c = t.curve(200)
check(len(c) == 200 and abs(c["total"].max() - stats["peak_curve_max_bytes"]) <= 1e-6 * stats["peak_curve_max_bytes"] + 1,
      "curve(): 200 buckets whose highest is the curve's maximum (%.0f vs %.0f)" % (c["total"].max(), stats["peak_curve_max_bytes"]))
a = memtrace.open(os.path.join(fx, "prodcons.ctf"))
b = memtrace.open(os.path.join(fx, "prodcons_v3.ctf"))
dd = a.diff(b)
ref = json.load(open(os.path.join(tmp, "diff.json")))
check(len(dd) == len(ref.get("entries", [])), "diff(): the entries of `memtrace diff --json` (%d)" % len(dd))
same = a.diff(a)
check(not same["significant"].any() if len(same) else True, "a trace against itself: nothing significant")
try:
    memtrace.open(os.path.join(tmp, "missing.ctf"))
    check(False, "a missing file raises")
except memtrace.MemtraceError as e:
    check("missing.ctf" in str(e), "a missing file raises MemtraceError naming it")
dt = memtrace.open(os.path.join(tmp, "domains.ctf"))
dd = dt.allocations()
counts = dd["domain"].value_counts().to_dict()
check(counts == {0: 12, 5: 4, 300: 3},
      "allocations(): the domain of each allocation of a three-domain trace (%s)" % counts)
d5 = dt.allocations("domain:5")
check(len(d5) == 4 and (d5["domain"] == 5).all() and (d5["size"] == 800).all(),
      "domain:5 selects that domain's 4 allocations of 800 bytes")
ref5 = json.load(open(os.path.join(tmp, "top5.json")))
check([r["site"]["function"] for r in ref5["sites"]] == list(dt.top(filter="domain:5")["function"]) == ["load"],
      "top(filter='domain:5') is `memtrace top -f domain:5` (load)")
check((df["domain"] == 0).all(), "a v2 trace's allocations are all of domain 0")
cpath = os.path.join(tmp, "c.ctf")
if os.path.exists(cpath):
    ct = memtrace.open(cpath)
    cd = ct.allocations()
    check(set(cd["kind"].cat.categories) <= {"malloc", "mmap"} and (cd["kind"] == "malloc").any(),
          "a C trace's kinds are malloc/mmap (%s)" % list(cd["kind"].cat.categories))
    check(cd["site"].astype(str).str.startswith("leak_session").any(),
          "a C trace's sites are the program's functions")
    texts = ct.stacks(cd["stack"])
    check(len(texts) == len(cd) and texts.astype(str).str.contains(r"main;.*leak_session").any(),
          "stacks(): the allocations' stacks as text, outermost first (main;...;leak_session)")
finish()
PYEOF
