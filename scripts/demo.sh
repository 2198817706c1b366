#!/bin/sh
# demo.sh - what `make demo` shows (placeholder until the recorder exists).
set -eu
cd "$(dirname "$0")/.."
build/memtrace info tests/fixtures/memtrace/leak.ctf
