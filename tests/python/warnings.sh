#!/bin/sh
# warnings.sh - the Python package gives the reading's warnings to Python:
# memtrace.open() of a trace with a block freed twice, or of two traces one
# of them cut short, issues each warning once as a MemtraceWarning (the
# text the CLI prints after "memtrace CMD: ", file and offset included),
# pointing at the caller's line, and writes nothing on the process's
# stderr (a notebook would never show it); a sound trace warns nothing.
# Opened folded (fold_above=0: each query reads the traces again), the
# same warnings come once from open(), and none from the queries after it
# (top, curve, stats, allocations, diff): a warning per open.
set -u
: "${MT_BUILD:=build}" "${MT_TMP:=/tmp}" "${MT_FIXTURES:=tests/fixtures/memtrace}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
PY=/usr/bin/python3
[ -x $PY ] || { echo "FAIL: python3 missing (scripts/install-deps.sh test installs it)"; exit 1; }
$PY -c "import numpy, pandas" 2>/dev/null ||
    { echo "python3-pandas not installed (scripts/install-deps.sh test installs it)"; exit 77; }
[ -f "$MT_BUILD/libmemtrace-analyze.so" ] || { echo "FAIL: $MT_BUILD/libmemtrace-analyze.so not built"; exit 1; }
GEN=$MT_BUILD/tests/tools/gen_hostile
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (make tests-build)"; exit 1; }
"$GEN" carried-twice "$MT_TMP/twice.ctf" || { echo "FAIL: gen_hostile carried-twice"; exit 1; }
head -c 3000 "$MT_FIXTURES/leak.ctf" >"$MT_TMP/cut.ctf"
MEMTRACE_LIBDIR=$MT_BUILD PYTHONPATH=python:tests/python $PY - "$MT_FIXTURES" "$MT_TMP" \
    2>"$MT_TMP/stderr" <<'PYEOF'
import os, sys, warnings
import memtrace
from checks import check, finish
fx, tmp = sys.argv[1], sys.argv[2]
leak, twice, cut = (os.path.join(fx, "leak.ctf"), os.path.join(tmp, "twice.ctf"),
                    os.path.join(tmp, "cut.ctf"))


def opened(*paths, **how):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = memtrace.open(*paths, **how)   # the line the warnings name
    return t, w


def queried(t):
    """The warnings of queries on t, each of them reading a folded trace
    again (a filter that leaves allocations out, so none is the open's
    own model)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        top = t.top(filter="size:>=1")
        curve = t.curve(n=10, filter="size:>=1")
        t.curve(n=10)
        t.stats(filter="size:>=1")
        t.allocations(filter="size:>=1")
        t.diff(t)
    return w, top, curve


t, w = opened(twice)
check([str(x.message) for x in w] ==
      ["memtrace: warning: collection of unknown or already collected object 2 (ignored)"],
      "freed twice: one MemtraceWarning, the builder's text: %r" % [str(x.message) for x in w])
check(all(x.category is memtrace.MemtraceWarning for x in w), "freed twice: a MemtraceWarning")
check(all(os.path.basename(x.filename) == "<stdin>" for x in w),
      "freed twice: the warning names the caller's line, not the package's: %r"
      % [x.filename for x in w])
check(t.info["allocations"] > 0, "freed twice: the trace still opens")
t, w = opened(leak, cut)
check([str(x.message) for x in w] ==
      ["memtrace: warning: %s: offset 621: skipping truncated packet at end of file "
       "(2379 of 28579 bytes)" % cut],
      "two traces, one cut short: the merger's warning once, file and offset: %r"
      % [str(x.message) for x in w])
t, w = opened(leak)
check(w == [], "a sound trace: no warning")

# the same traces opened folded: the whole route's warnings, once
for paths, what in (([twice], "freed twice"), ([leak, cut], "one cut short")):
    whole, ww = opened(*paths)
    t, w = opened(*paths, fold_above=0)
    check(t.folded, "%s: fold_above=0 opens it folded" % what)
    check([str(x.message) for x in w] == [str(x.message) for x in ww] and len(w) == 1,
          "%s, folded: open() gives the whole route's warning: %r"
          % (what, [str(x.message) for x in w]))
    check(all(x.category is memtrace.MemtraceWarning and
              os.path.basename(x.filename) == "<stdin>" for x in w),
          "%s, folded: a MemtraceWarning at the caller's line" % what)
    q, top, curve = queried(t)
    check(q == [], "%s, folded: the queries repeat no warning: %r"
          % (what, [str(x.message) for x in q]))
    check(len(top) > 0 and float(curve["filtered"].max()) > 0,
          "%s, folded: the queries still answer (%d top rows)" % (what, len(top)))
    check(top.equals(whole.top(filter="size:>=1")),
          "%s, folded: top() as the whole model's" % what)
finish()
PYEOF
rc=$?
if [ -s "$MT_TMP/stderr" ]; then
    echo "FAIL: the package wrote on stderr: $(head -c 300 "$MT_TMP/stderr")"
    exit 1
fi
exit $rc
