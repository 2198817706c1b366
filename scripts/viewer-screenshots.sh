#!/bin/sh
# viewer-screenshots.sh - refreshes docs/images/viewer-*.png from the
# fixtures, with `memtrace view` and headless Chromium (Debian's chromium,
# playwright-core from tests/viewer). Usage: sh scripts/viewer-screenshots.sh [BUILD]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mt-shots.XXXXXX")
p1= p2=
trap 'kill $p1 $p2 2>/dev/null || true; rm -rf "$tmp"' EXIT
[ -d tests/viewer/node_modules/playwright-core ] || (cd tests/viewer && npm ci --no-audit --no-fund)
serve() { # serve FILE OUT
    "$B/memtrace" view --port 0 -q "$1" > "$2" &
    while ! grep -q '^Serving' "$2" 2>/dev/null; do sleep 0.05; done
}
serve tests/fixtures/memtrace/leak.ctf "$tmp/a"; p1=$!
serve tests/fixtures/memtrace/upstream_ocamlopt_v2.ctf "$tmp/b"; p2=$!
url() { sed -n 's/^Serving \(http[^ ]*\).*/\1/p' "$1"; }
mkdir -p docs/images "$tmp/profile"
(cd tests/viewer && node screenshots.js "$(url "$tmp/a")" "$(url "$tmp/b")" ../../docs/images "$tmp/profile")
ls -l docs/images/viewer-*.png
