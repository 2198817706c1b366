#!/bin/sh
# readme.sh - README.md's commands work as written: the quick start runs
# build/memtrace (what `make` builds), and before the first command written
# as a bare `memtrace` the README says that it stands for build/memtrace and
# is on the PATH only after `make install`.
. tests/lib.sh
R=README.md
first_build=$(grep -n '^    build/memtrace ' "$R" | head -n 1 | cut -d: -f1)
first_bare=$(grep -nE '^    (\$ )?memtrace ' "$R" | head -n 1 | cut -d: -f1)
said=$(grep -n 'make install' "$R" | awk -F: -v b="${first_bare:-0}" -v a="${first_build:-0}" \
    '$1 > a && $1 < b { print $1; exit }')
check "the quick start runs build/memtrace (line ${first_build:-none})" test -n "$first_build"
check "between it and the first bare memtrace (line ${first_bare:-none}), the README says it needs make install (line ${said:-none})" \
    test -n "$said"
if [ -n "$said" ]; then
    check "... and that memtrace stands for build/memtrace" \
        sh -c "sed -n '$((said - 2)),$((said + 1))p' '$R' | grep -q 'build/memtrace'"
fi
finish
