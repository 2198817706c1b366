#!/bin/sh
# versions.sh - one version everywhere: the file VERSION is what
# `memtrace --version` prints (with the commit), the Python package's
# __version__, the top of debian/changelog, every man page's header and the
# pkg-config files' Version; the libraries' sonames carry its major number.
set -u
. tests/lib.sh
v=$(cat VERSION)
so=${v%%.*}
check "VERSION is a version ($v)" sh -c "echo '$v' | grep -qx '[0-9]*\.[0-9]*\.[0-9]*'"
check "memtrace --version prints $v and a commit" \
    sh -c "'$MT_BIN' --version | grep -qx 'memtrace $v (commit [0-9a-z]*)'"
check "the Python package's version is $v" \
    [ "$(PYTHONPATH=python /usr/bin/python3 -c 'from memtrace import _version; print(_version.__version__)')" = "$v" ]
check "debian/changelog's top entry is $v" \
    [ "$(sed -n '1s/^memtrace (\([^)]*\)).*/\1/p' debian/changelog)" = "$v" ]
bad=$(grep -L "^\.TH .* \"memtrace $v\" " docs/man/*.1)
check "every man page's header says memtrace $v${bad:+ (not: $bad)}" [ -z "$bad" ]
check "the pkg-config templates take the version from the build" \
    sh -c "grep -q '^Version: @VERSION@' scripts/memtrace.pc.in && grep -q '^Version: @VERSION@' scripts/memtrace-analyze.pc.in"
for l in libmemtrace libmemtrace-analyze libmemtrace-symbolize; do
    check "$l's soname is $l.so.$so" \
        sh -c "readelf -d '$MT_BUILD/$l.so' | grep -q 'SONAME.*\[$l.so.$so\]'"
done
finish
