#!/bin/sh
# run.sh - what `make bench` runs: every benchmark script in bench/ in turn
# (each prints its own figures; docs/PERFORMANCE.md records them).
set -u
cd "$(dirname "$0")/.."
status=0
for script in bench/*.sh; do
    [ "$script" = bench/run.sh ] && continue
    echo "== $script"
    sh "$script" || status=1
done
exit $status
