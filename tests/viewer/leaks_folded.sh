#!/bin/sh
# leaks_folded.sh - the Leaks tab's endpoint (/api/leaks) on traces served
# folded (--fold-above 0): the same answer, byte for byte, as the viewer
# with the whole model (suspects, their figures and sparklines, every site
# with all=1), for several filters; folded from the allocation index and
# with --no-index alike; and its suspects are those `memtrace leaks --json`
# finds: growing's leak_session at interval 1 (its 256-byte sessions kept
# forever, cache_put flat after a tenth of the run) and leak.ctf's.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing (scripts/install-deps.sh test)"; exit 1; }
P=$MT_BUILD/tests/record/progs/growing
[ -x "$P" ] || { echo "FAIL: $P not built (make tests-build)"; exit 1; }
# (a sanitized recorder is not preloaded into a plain program: the
# recording is the plain stage's; the viewer's code is checked in every one)
traces=$MT_TMP/leak.ctf
if "$MT_BIN" run --interval 1 -o "$MT_TMP/g.ctf" -- "$P" 4000 >/dev/null 2>&1; then
    traces="$MT_TMP/g.ctf $traces"
elif [ "${MT_STAGE:-plain}" = plain ]; then
    echo "FAIL: memtrace run of growing"
fi

# (a copy: a folded viewer writes its allocation index beside the trace)
cp "$MT_FIXTURES/leak.ctf" "$MT_TMP/leak.ctf"
for t in $traces; do
    name=$(basename "$t" .ctf)
    "$MT_BIN" leaks --json --all -n 0 "$t" >"$MT_TMP/$name.cli" ||
        { echo "FAIL: memtrace leaks $t"; continue; }
    start_viewer "$t" --port 0 -q || exit 1
    whole=$VIEW_URL
    start_viewer "$t" --port 0 -q --fold-above 0 || exit 1
    folded=$VIEW_URL
    start_viewer "$t" --port 0 -q --fold-above 0 --no-index || exit 1
    reread=$VIEW_URL
    curl -s "${folded}api/info" | grep -q '"folded":true'
    check "$name: the viewer with --fold-above 0 is folded" [ $? = 0 ]
    for flt in "" "size:>=64" "lifetime:>1ms" "inside:main" "!inside:handle"; do
        q=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$flt")
        for all in "" 1; do
            for v in whole folded reread; do
                eval "url=\$$v"
                curl -s -o "$MT_TMP/$v.json" -w '%{http_code}' "${url}api/leaks?all=$all&filter=$q" \
                    >"$MT_TMP/$v.code"
            done
            check "$name, filter '$flt', all=$all: answered (HTTP 200)" \
                grep -qx 200 "$MT_TMP/folded.code"
            check "$name, filter '$flt', all=$all: folded, the whole model's answer byte for byte" \
                cmp -s "$MT_TMP/whole.json" "$MT_TMP/folded.json"
            check "$name, filter '$flt', all=$all: read from the trace (--no-index), the same" \
                cmp -s "$MT_TMP/whole.json" "$MT_TMP/reread.json"
        done
    done
    # the unfiltered suspects and every site's figures: memtrace leaks's
    curl -s -o "$MT_TMP/folded.json" "${folded}api/leaks?all=1&filter="
    check "$name: the folded Leaks tab lists memtrace leaks --json's sites, suspects and figures" \
        python3 - "$MT_TMP/$name.cli" "$MT_TMP/folded.json" <<'PY'
import json, sys
cli, view = (json.load(open(p)) for p in sys.argv[1:3])
assert view["available"], view
assert view["n_suspects"] == cli["n_suspects"], (view["n_suspects"], cli["n_suspects"])
rows = {(s["name"], s["line"]): s for s in view["sites"]}
for s in cli["sites"]:
    v = rows[(s["site"]["function"], s["site"]["line"])]
    assert v["suspect"] == s["suspect"], s
    # (the CLI prints 6 significant digits)
    g = s["growth_bytes_per_s"]
    assert abs(v["growth"] - g) <= 1e-5 * max(1, abs(g)), (v, s)
    assert abs(v["live_end"] - s["live_end_bytes"]) <= 1e-5 * max(1, s["live_end_bytes"]), (v, s)
PY
done
# (the viewers are stopped on exit: lib.inc)
[ -f "$MT_TMP/g.cli" ] &&
    check "growing: leak_session is the one suspect, cache_put and handle are not" python3 - \
        "$MT_TMP/g.cli" <<'PY'
import json, sys
cli = json.load(open(sys.argv[1]))
sus = [s["site"]["function"] for s in cli["sites"] if s["suspect"]]
assert sus == ["leak_session"], sus
PY
finish
