#!/bin/sh
# demo.sh - what `make demo` shows: profile the bundled example program
# (examples/leaky.c, a toy server whose cache leaks) with `memtrace run`,
# then show where its memory goes with `memtrace top`.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
M=$B/memtrace
out=${DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/memtrace-demo.XXXXXX")}
mkdir -p "$out" || exit 1
trace=$out/leaky.ctf

if [ ! -x "$M" ] || [ ! -x "$B/examples/leaky" ] || [ ! -f "$B/libmemtrace.so" ]; then
    echo "demo: build first (make)" >&2
    exit 1
fi

echo "\$ memtrace run -o $trace -- $B/examples/leaky"
"$M" run -o "$trace" -- "$B/examples/leaky" || exit 1
echo
echo "\$ memtrace top --by live $trace      # what is still allocated at exit: the leak"
"$M" top --by live -n 5 "$trace" || exit 1
echo
echo "\$ memtrace top $trace                # what was allocated over the whole run"
"$M" top -n 5 "$trace" || exit 1
echo
echo "The trace is $trace; explore it in the browser with: $M view $trace"
