#!/bin/sh
# demo.sh - what `make demo` shows: profile the bundled example program
# (examples/leaky.c, a toy server whose cache leaks) with `memtrace run`,
# then show where its memory goes with `memtrace top`; then the same for
# the C++ example (examples/sessions.cc).
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

# The C++ example: threads, maps of strings, temporaries and a leak, built
# at -O2 -g. Sites are the functions of the program, not std::allocator.
if [ -x "$B/examples/sessions" ]; then
    ctrace=$out/sessions.ctf
    echo
    echo "\$ memtrace run --interval 32k -o $ctrace -- $B/examples/sessions"
    "$M" run --interval 32k -o "$ctrace" -- "$B/examples/sessions" || exit 1
    echo
    echo "\$ memtrace top --by live $ctrace   # sessions left open: the leak"
    "$M" top --by live -n 3 -c 1 "$ctrace" || exit 1
    echo
    echo "\$ memtrace top --by temporary $ctrace   # blocks freed within 1 ms"
    "$M" top --by temporary -n 3 -c 1 "$ctrace" || exit 1
fi
echo
echo "The trace is $trace; explore it in the browser with: $M view $trace"
