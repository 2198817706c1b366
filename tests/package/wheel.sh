#!/bin/sh
# wheel.sh - `python3 -m build --no-isolation --wheel python/` gives a pure
# Python wheel of the project's one version; pip installs it into a virtual
# environment offline; there `import memtrace` finds the C library where it
# is installed (here: MEMTRACE_LIBDIR, the build's) and reads a trace, says
# in one line how to install the library when there is none, and the
# notebook runs to the end on the venv's interpreter.
set -u
. tests/lib.sh
[ "${MT_STAGE:-plain}" = plain ] || { echo "Python loads the plain build's library"; exit 77; }
/usr/bin/python3 -c "import build, setuptools, wheel, venv, numpy" 2>/dev/null ||
    { echo "python3-build, python3-venv or numpy missing (scripts/install-deps.sh test)"; exit 77; }
version=$(cat VERSION)
lib=$(cd "$MT_BUILD" && pwd)
fixture=$PWD/tests/fixtures/memtrace/prodcons.ctf
src=$MT_TMP/src
mkdir -p "$src" && cp -r python "$src/" && rm -rf "$src/python/build" "$src"/python/*.egg-info
(cd "$src" && /usr/bin/python3 -m build --no-isolation --wheel python/) >"$MT_TMP/build.log" 2>&1
st=$?
whl=$src/python/dist/memtrace-$version-py3-none-any.whl
check "python3 -m build --no-isolation --wheel python/ gives memtrace-$version-py3-none-any.whl" \
    [ $st = 0 ] && [ -f "$whl" ]
[ -f "$whl" ] || { tail -n 20 "$MT_TMP/build.log"; finish; }
check "the wheel holds the package and no library" \
    sh -c "/usr/bin/python3 -m zipfile -l '$whl' | grep -q 'memtrace/_lib.py' && ! /usr/bin/python3 -m zipfile -l '$whl' | grep -q '\.so'"

venv=$MT_TMP/venv
/usr/bin/python3 -m venv --system-site-packages "$venv" >"$MT_TMP/venv.log" 2>&1 &&
    "$venv/bin/pip" install --no-index --no-deps --quiet "$whl" >>"$MT_TMP/venv.log" 2>&1
st=$?
check "pip installs the wheel into a virtual environment, offline" [ $st = 0 ]
[ $st = 0 ] || { tail -n 20 "$MT_TMP/venv.log"; finish; }
out=$(cd / && MEMTRACE_LIBDIR=$lib "$venv/bin/python" -c "
import memtrace, sys
t = memtrace.open(sys.argv[1])
print(memtrace.__version__, memtrace.__file__.startswith(sys.argv[2]), t.info['allocations'])
" "$fixture" "$venv" 2>&1)
check "the installed package reads a trace with the library it is shown ($out)" \
    [ "$out" = "$version True $(MEMTRACE_LIBDIR=$lib PYTHONPATH=python /usr/bin/python3 -c 'import memtrace, sys; print(memtrace.open(sys.argv[1]).info["allocations"])' "$fixture")" ]
if ! ldconfig -p 2>/dev/null | grep -q libmemtrace-analyze; then
    msg=$(cd / && env -u MEMTRACE_LIBDIR "$venv/bin/python" -c "import memtrace" 2>&1 | tail -n 1)
    case $msg in
        *"ImportError: memtrace: cannot load libmemtrace-analyze.so"*"install the libmemtrace"*"make install"*) pass "without the library, import says how to install it" ;;
        *) fail "without the library, import says how to install it: $msg" ;;
    esac
fi
# the notebook, on a kernel that runs the venv's interpreter
if command -v jupyter-nbconvert >/dev/null 2>&1 && /usr/bin/python3 -c "import pandas, matplotlib, ipykernel" 2>/dev/null; then
    kdir=$MT_TMP/jupyter/kernels/memtrace-venv
    mkdir -p "$kdir"
    printf '{"argv": ["%s", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "memtrace venv", "language": "python"}\n' \
        "$venv/bin/python" >"$kdir/kernel.json"
    cp python/examples/alloc_stats.ipynb "$MT_TMP/"
    (cd "$MT_TMP" && JUPYTER_PATH=$MT_TMP/jupyter MEMTRACE_LIBDIR=$lib MEMTRACE_NOTEBOOK_TRACE=$fixture \
        PYDEVD_DISABLE_FILE_VALIDATION=1 timeout 600 jupyter-nbconvert --to notebook --execute \
        --ExecutePreprocessor.kernel_name=memtrace-venv --output nb.out.ipynb alloc_stats.ipynb) \
        >"$MT_TMP/nb.log" 2>&1
    st=$?
    errors=$(/usr/bin/python3 -c "
import sys, nbformat
nb = nbformat.read(sys.argv[1], 4)
print(sum(1 for c in nb.cells if c.cell_type == 'code' for o in c.outputs if o.output_type == 'error'))
" "$MT_TMP/nb.out.ipynb" 2>/dev/null)
    check "the notebook runs to the end from the wheel's package" [ $st = 0 ] && [ "$errors" = 0 ]
    [ $st = 0 ] || tail -n 20 "$MT_TMP/nb.log"
fi
finish
