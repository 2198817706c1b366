#!/bin/sh
# notebook.sh - python/examples/alloc_stats.ipynb runs to the end in
# Jupyter (Debian's jupyter-nbconvert) on the bundled trace: no cell fails,
# the size, lifetime and memory plots are drawn, and the per-site table
# ranks the trace's biggest site first, as `memtrace top` does.
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
command -v jupyter-nbconvert >/dev/null 2>&1 && /usr/bin/python3 -c "import pandas, matplotlib, ipykernel" 2>/dev/null ||
    { echo "jupyter-nbconvert, python3-pandas, python3-matplotlib not installed (scripts/install-deps.sh test)"; exit 77; }
lib=$(cd "$MT_BUILD" && pwd)
out=$MT_TMP/alloc_stats.out.ipynb
first=$("$MT_BIN" top --json -n 1 tests/fixtures/memtrace/prodcons.ctf | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['sites'][0]['site']['function'])")
(cd python/examples && MEMTRACE_LIBDIR=$lib PYTHONPATH=.. PYDEVD_DISABLE_FILE_VALIDATION=1 \
    timeout 300 jupyter-nbconvert --to notebook --execute --output "$out" alloc_stats.ipynb) \
    >"$MT_TMP/nb.log" 2>&1 || { echo "FAIL: the notebook runs to the end"; tail -20 "$MT_TMP/nb.log"; exit 1; }
/usr/bin/python3 - "$out" "$first" <<'PYEOF'
import sys, nbformat
nb = nbformat.read(sys.argv[1], 4)
outs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
errors = [o for o in outs if o.output_type == "error"]
print(("PASS" if not errors else "FAIL") + ": every cell ran without an error (%d errors)" % len(errors))
images = sum(1 for o in outs if "image/png" in o.get("data", {}))
print(("PASS" if images >= 3 else "FAIL") + ": the size, lifetime and memory plots are drawn (%d images)" % images)
texts = [o["data"]["text/plain"] for o in outs if "text/plain" in o.get("data", {})]
per_site = next((t for t in texts if "never_freed" in t), "")
rows = [l for l in per_site.splitlines()[2:] if l.strip()]
ok = bool(rows) and rows[0].startswith(sys.argv[2][:30])
print(("PASS" if ok else "FAIL") + ": the per-site table ranks %s first, as top does" % sys.argv[2])
PYEOF
