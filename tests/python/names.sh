#!/bin/sh
# names.sh - a C trace never symbolized (recorded under bare LD_PRELOAD) read
# from Python gets the function names `memtrace top` gives it, named from the
# binaries on this machine by libmemtrace-symbolize.so as the trace is read.
# Without that library the package still reads it (frames module+0xoffset)
# with one warning; a binary rebuilt since the recording is not used (its
# frames stay raw) and a warning names it.
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
PY=/usr/bin/python3
$PY -c "import numpy, pandas" 2>/dev/null ||
    { echo "python3-pandas not installed (scripts/install-deps.sh test installs it)"; exit 77; }
. tests/lib.sh
for f in libmemtrace.so libmemtrace-analyze.so libmemtrace-symbolize.so; do
    [ -f "$MT_BUILD/$f" ] || { fail "$MT_BUILD/$f not built"; exit 1; }
done
T=$MT_TMP
cp tests/record/progs/rawnames.c "$T/prog.c"
cc -O0 -g -fno-omit-frame-pointer -o "$T/prog" "$T/prog.c" || { fail "cannot compile the test program"; exit 1; }
env -u MEMTRACE_ROOT LD_PRELOAD="$PWD/$MT_BUILD/libmemtrace.so" MEMTRACE="$T/a.ctf" MEMTRACE_RATE=0.0001 \
    "$T/prog" || { fail "the program ran under the recorder"; exit 1; }
"$MT_BIN" dump --raw-frames "$T/a.ctf" | grep -q ' prog+0x[0-9a-f]*$' &&
    pass "the trace holds raw frames (prog+0xoffset)" || fail "the trace holds raw frames"
"$MT_BIN" top --json -n 0 "$T/a.ctf" >"$T/top.json" 2>"$T/top.err" || fail "memtrace top --json"
# the symbolizer-less install: the analysis library alone in a directory
mkdir -p "$T/alone" && cp "$MT_BUILD/libmemtrace-analyze.so" "$T/alone/"

# py LIBDIR SCRIPT: runs the check script below on a.ctf with the package
# loading its libraries from LIBDIR
py() {
    MEMTRACE_LIBDIR=$1 PYTHONPATH=python:tests/python $PY - "$T/a.ctf" "$T/top.json" "$2" <<'PYEOF'
import json, sys, warnings
import memtrace
trace, topjson, what = sys.argv[1:4]
from checks import check
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t = memtrace.open(trace)
    u = memtrace.open(trace)      # a second trace: no second warning
ws = [str(w.message) for w in caught if issubclass(w.category, memtrace.MemtraceWarning)]
ref = [s["site"]["function"] for s in json.load(open(topjson))["sites"]]
top = list(t.top()["function"])
sites = set(t.allocations()["site"].astype(str))
stacks = t.stacks(t.allocations()["stack"]).astype(str)
if what == "named":
    check(sorted(ref) == ["churn", "leaky"], "memtrace top names the sites churn and leaky (%s)" % ref)
    check(top == ref, "top() gives the functions of `memtrace top --json`, in order (%s)" % top)
    check(any(s.startswith("churn (") and "prog.c:" in s for s in sites),
          "allocations(): sites named with file and line (%s)" % sorted(sites)[:2])
    check(stacks.str.contains("main;leaky").any(), "stacks(): named stacks (main;leaky)")
    check(not ws, "no warning when every frame was named (%s)" % ws)
elif what == "alone":
    check(all(f.startswith("prog+0x") for f in top) and len(top) == 2,
          "without libmemtrace-symbolize.so the sites stay prog+0xoffset (%s)" % top)
    check(len(ws) == 1 and "libmemtrace-symbolize.so" in ws[0],
          "one warning says the symbolizer library is missing (%s)" % ws)
else:
    check(all(f.startswith("prog+0x") for f in top),
          "a binary rebuilt since the recording is not used: frames stay raw (%s)" % top)
    check(len(ws) == 1 and "/prog " in ws[0] and "build-id or size differs" in ws[0],
          "a warning names the changed module (%s)" % ws)
sys.exit(0)   # (the FAIL lines count; a crash exits 1)
PYEOF
}
py "$MT_BUILD" named || fail "named: the Python checks ran to their end"
py "$T/alone" alone || fail "alone: the Python checks ran to their end"
cc -O0 -g -DOTHER -fno-omit-frame-pointer -o "$T/prog" "$T/prog.c" || { fail "cannot rebuild the test program"; exit 1; }
py "$MT_BUILD" changed || fail "changed: the Python checks ran to their end"
finish
