#!/bin/sh
# fixtures.sh - every endpoint answers well-formed JSON on every fixture,
# including the synthetic edge cases (NUL and odd bytes in names, empty
# backtraces, codes without locations, deep stacks), and the answers agree
# with each other: the tree's root is the selection's total, children never
# outweigh their parent, the histogram sums to the total, the curve never
# shows more filtered than total memory.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null && command -v python3 >/dev/null || { echo "FAIL: curl or python3 missing (scripts/install-deps.sh test)"; exit 1; }

for ctf in "$MT_FIXTURES"/*.ctf; do
    name=$(basename "$ctf")
    start_viewer "$ctf" --port 0 -q || { fail "$name: server did not start"; continue; }
    for q in info "curve?n=500" "tree?dir=sites&min=0" "tree?dir=main&min=0" "graph?min=0" hist hotspots \
             "function?id=0" "stats?filter=live:end" "tree?filter=hide:/./"; do
        curl -s -o "$MT_TMP/$name.$(printf '%s' "$q" | tr -c 'a-z0-9' _)" -w '%{http_code}\n' "${VIEW_URL}api/$q" >> "$MT_TMP/codes"
    done
    python3 - "$MT_TMP" "$name" <<'PY'
import glob, json, os, sys
tmp, name = sys.argv[1], sys.argv[2]
bad = []
docs = {}
for f in sorted(glob.glob(os.path.join(tmp, name + ".*"))):
    key = f[len(os.path.join(tmp, name)) + 1:]
    try:
        docs[key] = json.load(open(f, encoding="utf-8"))
    except Exception as e:
        bad.append("%s: %s" % (key, e))
print(("FAIL: " if bad else "PASS: ") + name + ": every answer is JSON" + (" (" + "; ".join(bad) + ")" if bad else ""))
if bad:
    sys.exit(0)
info = docs["info"]
for key in ("tree_dir_sites_min_0", "tree_dir_main_min_0"):
    t = docs[key]; n = t["nodes"]
    ok = abs(n["v"][0] - info["total"]["alloc_bytes"]) <= 1e-6 * max(1, n["v"][0])
    kids = {}
    for i in range(1, t["n"]):
        kids.setdefault(n["p"][i], 0)
        kids[n["p"][i]] += n["v"][i]
    ok = ok and all(v <= n["v"][p] * (1 + 1e-9) + 1e-6 for p, v in kids.items())
    ok = ok and all(0 <= n["f"][i] < len(t["funcs"]["name"]) for i in range(1, t["n"]))
    print(("PASS: " if ok else "FAIL: ") + name + ": " + key + " consistent with the total")
h = docs["hist"]
ok = abs(sum(h["size"]["bytes"]) - info["total"]["alloc_bytes"]) <= 1e-6 * max(1, info["total"]["alloc_bytes"])
print(("PASS: " if ok else "FAIL: ") + name + ": size histogram sums to the total")
c = docs["curve_n_500"]
ok = all(f <= t * (1 + 1e-9) + 1e-6 for f, t in zip(c["filtered"], c["total"])) and len(c["total"]) == 500
print(("PASS: " if ok else "FAIL: ") + name + ": curve filtered <= total")
PY
    stop_viewer
    check "$name: server stopped cleanly" [ "$VIEW_RC" = 0 ]
done
check "every request answered 200" [ "$(sort -u "$MT_TMP/codes")" = 200 ]
