#!/bin/sh
# nostack.sh - allocations() names each allocation's site as `memtrace top`
# does, and an allocation without a stack (the unwinder found no frame)
# "(no stack)", never the site that sorts before it: on a trace of 3
# allocations at alpha, 5 at beta and 2 without a stack (tests/tools/
# gen_hostile nostack), the site column counts exactly those; the same
# whether every allocation or a filtered part is asked for.
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
PY=/usr/bin/python3
$PY -c "import numpy, pandas" 2>/dev/null ||
    { echo "python3-pandas not installed (scripts/install-deps.sh test installs it)"; exit 77; }
. tests/lib.sh
[ -f "$MT_BUILD/libmemtrace-analyze.so" ] || { fail "$MT_BUILD/libmemtrace-analyze.so not built"; exit 1; }
T=$MT_TMP
"$MT_BUILD/tests/tools/gen_hostile" nostack "$T/n.ctf" || { fail "gen_hostile nostack wrote no trace"; exit 1; }
MEMTRACE_LIBDIR=$MT_BUILD PYTHONPATH=python:tests/python $PY - "$T/n.ctf" <<'PYEOF'
import sys
import memtrace
from checks import check, finish
t = memtrace.open(sys.argv[1])
df = t.allocations()
names = [s.split(" (")[0] for s in df["site"].astype(str)]
check(names == ["alpha", "(no stack)", "beta", "beta", "alpha", "beta", "(no stack)", "beta",
                "alpha", "beta"],
      "allocations(): each row's site, in file order (%s)" % names)
counts = {k: names.count(k) for k in set(names)}
check(counts == {"alpha": 3, "beta": 5, "(no stack)": 2},
      "3 at alpha, 5 at beta, 2 without a stack (%s)" % counts)
part = [s.split(" (")[0] for s in t.allocations(filter="size:>=1")["site"].astype(str)]
check(part == names, "the same through a filter (%s)" % part)
late = [s.split(" (")[0] for s in t.allocations(filter="alloc:5s-1h")["site"].astype(str)]
check(late == ["beta", "(no stack)", "beta", "alpha", "beta"],
      "a filtered part keeps its allocations without a stack as such (%s)" % late)
finish()
PYEOF
