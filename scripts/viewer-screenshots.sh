#!/bin/sh
# viewer-screenshots.sh - refreshes docs/images/viewer-*.png from the
# fixtures and a trace of the C++ example (build/examples/sessions), with
# `memtrace view` and headless Chromium (Debian's chromium, playwright-core
# from tests/viewer). Usage: sh scripts/viewer-screenshots.sh [BUILD]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mt-shots.XXXXXX")
p1= p2= p3=
trap 'kill $p1 $p2 $p3 2>/dev/null || true; rm -rf "$tmp"' EXIT
[ -d tests/viewer/node_modules/playwright-core ] || (cd tests/viewer && npm ci --no-audit --no-fund)
serve() { # serve FILE OUT
    "$B/memtrace" view --port 0 -q "$1" > "$2" &
    while ! grep -q '^Serving' "$2" 2>/dev/null; do sleep 0.05; done
}
serve tests/fixtures/memtrace/leak.ctf "$tmp/a"; p1=$!
serve tests/fixtures/memtrace/upstream_ocamlopt_v2.ctf "$tmp/b"; p2=$!
url() { sed -n 's/^Serving \(http[^ ]*\).*/\1/p' "$1"; }
mkdir -p docs/images "$tmp/profile"
(cd tests/viewer && node screenshots.js ocaml "$(url "$tmp/a")" "$(url "$tmp/b")" ../../docs/images "$tmp/profile")
# run from the temporary directory: the page shows the program's and the
# trace's paths, which should not be this checkout's
cp "$B/examples/sessions" "$tmp/sessions"
mt=$(cd "$B" && pwd)/memtrace
(cd "$tmp" && "$mt" run --interval 16k -o sessions.ctf -- ./sessions >/dev/null)
(cd "$tmp" && exec "$mt" view --port 0 -q sessions.ctf > c) &
p3=$!
while ! grep -q '^Serving' "$tmp/c" 2>/dev/null; do sleep 0.05; done
mkdir -p "$tmp/profile2"
(cd tests/viewer && node screenshots.js cxx "$(url "$tmp/c")" ../../docs/images "$tmp/profile2")
ls -l docs/images/viewer-*.png
