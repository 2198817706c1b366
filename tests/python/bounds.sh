#!/bin/sh
# bounds.sh - the Python package's arguments that C would take wrongly or
# that would cost without bound: curve(n) beyond 100,000 buckets (10^7 took
# 751 MB) raises ValueError within a memory bound far below that, and
# curve(0) too; stacks() takes a list, an array or a Series of stack ids
# (the same text for each, a Series keeps its index) and refuses what is
# not one with a clear error; a path, filter, at, by or key holding a NUL
# byte raises ValueError instead of being read cut short.
set -u
: "${MT_BUILD:=build}" "${MT_TMP:=/tmp}" "${MT_FIXTURES:=tests/fixtures/memtrace}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
PY=/usr/bin/python3
$PY -c "import numpy, pandas" 2>/dev/null ||
    { echo "python3-pandas not installed (scripts/install-deps.sh test installs it)"; exit 77; }
[ -f "$MT_BUILD/libmemtrace-analyze.so" ] || { echo "FAIL: $MT_BUILD/libmemtrace-analyze.so not built"; exit 1; }
(
    ulimit -v 1500000   # far above the work, far below 10^7 buckets' 751 MB added to it
    MEMTRACE_LIBDIR=$MT_BUILD PYTHONPATH=python:tests/python exec $PY - "$MT_FIXTURES" <<'PYEOF'
import os, sys
import numpy as np
import pandas as pd
import memtrace
from checks import check, finish
fx = sys.argv[1]
leak = os.path.join(fx, "leak.ctf")
t = memtrace.open(leak)


def raises(kind, fn, words):
    try:
        fn()
    except kind as e:
        return words in str(e)
    except Exception:
        return False
    return False


check(raises(ValueError, lambda: t.curve(10 ** 7), "from 1 to 100000"),
      "curve(10**7): ValueError naming the bound, no 751 MB")
check(raises(ValueError, lambda: t.curve(0), "from 1 to 100000"), "curve(0): ValueError")
check(raises(TypeError, lambda: t.curve("500"), "number of buckets"), "curve('500'): TypeError")
c = t.curve(100000)
check(0 < len(c) <= 100000, "curve(100000) is answered (%d rows)" % len(c))

ids = t.allocations()["stack"][:50]
s_series = t.stacks(ids)
s_list = t.stacks(list(ids))
s_array = t.stacks(ids.to_numpy())
check(s_list.tolist() == s_series.tolist() == s_array.tolist() and len(s_list) == 50 and
      s_list.astype(str).str.contains("Dune__exe__Leak").all(),
      "stacks(): a list, an array and a Series of ids give the same 50 stacks")
sub = ids[10:20]
check(list(t.stacks(sub).index) == list(sub.index), "stacks(Series) keeps the Series' index")
check(list(t.stacks(list(sub)).index) == list(range(10)), "stacks(list): a plain index")
check(raises(ValueError, lambda: t.stacks(["a"]), "stack ids"), "stacks(['a']): ValueError saying what ids are")
check(raises(ValueError, lambda: t.stacks([-1]), "stack ids"), "stacks([-1]): ValueError")
check(raises(TypeError, lambda: t.stacks(5), "stack ids"), "stacks(5): TypeError")

check(raises(ValueError, lambda: memtrace.open(leak + "\0.junk"), "NUL"),
      "a path with a NUL byte: ValueError, not the path cut short")
check(raises(ValueError, lambda: t.top(filter="size:>=1\0x"), "NUL"), "a filter with a NUL byte: ValueError")
check(raises(ValueError, lambda: t.top(by="alloc\0"), "NUL"), "by with a NUL byte: ValueError")
check(raises(ValueError, lambda: t.stats(at="end\0"), "NUL"), "at with a NUL byte: ValueError")
check(raises(ValueError, lambda: t.diff(t, key="site\0"), "NUL"), "a diff key with a NUL byte: ValueError")
finish()
PYEOF
)
