#!/bin/sh
# big.sh - big traces served folded (--fold-above): on a generated trace, one
# viewer with the whole model and one forced to fold (--fold-above 0) give
# the same answers for every endpoint and a set of filters (allocation,
# lifetime, size, time window, inside:, hide:, live:peak, raw stacks):
# equal but for the last bits of sums made in another order; the curve is
# downsampled (within 2% of the peak per bucket) and a filtered peak (and its
# estimate, from the grid) within 1% (docs/viewer.md, "Big traces"). The folded viewer folds its
# filters from the allocation index it wrote (viewer/allocidx.c): its
# answers byte-identical to reading the trace again (--no-index). Also: the
# trace file replaced under a folded viewer.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "FAIL: curl missing (scripts/install-deps.sh test)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing (scripts/install-deps.sh test)"; exit 1; }
gen=$MT_BUILD/bench/viewer-gen
[ -x "$gen" ] || { echo "FAIL: $gen not built (make tests-build)"; exit 1; }

ctf=$MT_TMP/big.ctf
"$gen" "$ctf" 300000 >/dev/null || { echo "FAIL: viewer-gen"; exit 1; }
start_viewer "$ctf" --port 0 -q || exit 1
whole=$VIEW_URL
start_viewer "$ctf" --port 0 --fold-above 0 || exit 1
folded=$VIEW_URL
# the sums of a folded load made on the reading thread (the code path before
# they moved to a second thread): answers byte-identical to the default's
printf '#!/bin/sh\nexec "%s" --route=one-thread "$@"\n' "$(cd "$(dirname "$MT_BIN")" && pwd)/$(basename "$MT_BIN")" > "$MT_TMP/one-thread"
chmod +x "$MT_TMP/one-thread"
real_bin=$MT_BIN; MT_BIN=$MT_TMP/one-thread
start_viewer "$ctf" --port 0 -q --fold-above 0 || exit 1
MT_BIN=$real_bin
onethread=$VIEW_URL
# each filter read from the trace again, as before the allocation index
start_viewer "$ctf" --port 0 -q --fold-above 0 --no-index || exit 1
reread=$VIEW_URL

curl -s -o "$MT_TMP/info" "${folded}api/info"
check "the forced one is folded" grep -q '"folded":true' "$MT_TMP/info"
curl -s -o "$MT_TMP/info" "${whole}api/info"
check "below --fold-above: the whole model" grep -q '"folded":false' "$MT_TMP/info"
grep -q 'folded: a big trace' "$MT_TMP/view2.err"
check "the folded load says so on stderr" [ $? = 0 ]

# a function that allocates, for inside:
site=$(curl -s "${whole}api/hotspots" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sites"][1]["name"])')
fid=$(curl -s "${whole}api/hotspots" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sites"][0]["id"])')

# compares the pairs of answers listed in a file (whole, folded, endpoint, URL)
cat > "$MT_TMP/cmp.py" <<'PY'
import json, sys

def close(x, y, rel):
    return abs(x - y) <= rel * max(abs(x), abs(y), 1e-300)

def compare(a, b, endpoint):
    bad = []
    def walk(x, y, path):
        if isinstance(x, dict) and isinstance(y, dict):
            if set(x) != set(y):
                bad.append(path + ": keys differ"); return
            for k in x:
                walk(x[k], y[k], path + "." + k)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                bad.append(path + ": lengths %d %d" % (len(x), len(y))); return
            if endpoint == "curve" and path.split(".")[-1] in ("total", "filtered", "filtered_alloc"):
                peak = max([abs(v) for v in x] + [1])
                d = max([abs(u - v) for u, v in zip(x, y)] + [0])
                if d > 0.02 * peak:
                    bad.append("%s: off by %g (peak %g)" % (path, d, peak))
                return
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, "%s[%d]" % (path, i))
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
            key = path.split(".")[-1]
            if key in ("load_seconds", "model_memory"):
                return
            rel = 1e-9
            if key in ("peak_filtered_bytes", "peak_filtered_time") or path.startswith(".filtered_peak") \
                    or path.startswith(".peak_filtered."):
                rel = 0.01
            if not close(x, y, rel):
                bad.append("%s: %r != %r" % (path, x, y))
        elif x != y and path != ".folded":
            bad.append("%s: %r != %r" % (path, x, y))
    walk(a, b, "")
    return bad

ok = 0
for line in open(sys.argv[1]):
    fa, fb, ep, u = line.rstrip("\n").split("\t")
    bad = compare(json.load(open(fa)), json.load(open(fb)), ep)
    if bad:
        print("FAIL: %s: folded answer differs: %s" % (u, "; ".join(bad[:4])))
    else:
        ok += 1
print(ok)
PY

n=0
same=0
sameread=0
: > "$MT_TMP/pairs"
for filter in "" "size:>=4k" "alloc:0.05s-0.15s" "lifetime:<1ms" "collect:never" "live:peak" \
              "inside:$site" "!inside:$site+size:<=256" "hide:mod00" "live:0.1s"; do
    for q in "info" "stats" "curve?n=600" "curve?n=200&t0=0.1&t1=0.2" "hist" "tree?dir=sites" \
             "tree?dir=main&metric=live" "graph" "hotspots" "hotspots?metric=live&only=sites" \
             "function?id=$fid" "tree?dir=sites&raw=1" "filter"; do
        [ "$q" = info ] && [ -n "$filter" ] && continue
        ep=${q%%\?*}
        case $q in *\?*) sep='&' ;; *) sep='?' ;; esac
        u="api/$q${sep}filter=$(printf %s "$filter" | sed 's/%/%25/g; s/ /%20/g; s/+/%20/g; s/</%3C/g; s/>/%3E/g; s/=/%3D/g; s/!/%21/g')"
        n=$((n + 1))
        ca=$(curl -s -o "$MT_TMP/a$n.json" -w '%{http_code}' "$whole$u")
        cb=$(curl -s -o "$MT_TMP/b$n.json" -w '%{http_code}' "$folded$u")
        if [ "$ca" != 200 ] || [ "$cb" != 200 ]; then
            fail "$u: status $ca (whole) $cb (folded)"; continue
        fi
        cd=$(curl -s -o "$MT_TMP/d$n.json" -w '%{http_code}' "$reread$u")
        if [ "$ep" = info ] || { [ "$cd" = 200 ] && cmp -s "$MT_TMP/b$n.json" "$MT_TMP/d$n.json"; }; then
            sameread=$((sameread + 1))
        else
            fail "$u: the answer from the index differs from the trace read again ($cd)"
        fi
        cc=$(curl -s -o "$MT_TMP/c$n.json" -w '%{http_code}' "$onethread$u")
        if [ "$ep" = info ] || { [ "$cc" = 200 ] && cmp -s "$MT_TMP/b$n.json" "$MT_TMP/c$n.json"; }; then
            same=$((same + 1))
        else
            fail "$u: the summing thread's answer differs from the reading thread's ($cc)"
        fi
        printf '%s\t%s\t%s\t%s\n' "$MT_TMP/a$n.json" "$MT_TMP/b$n.json" "$ep" "$u" >> "$MT_TMP/pairs"
    done
done
python3 "$MT_TMP/cmp.py" "$MT_TMP/pairs" > "$MT_TMP/cmpout"
grep '^FAIL' "$MT_TMP/cmpout"
n=$(tail -1 "$MT_TMP/cmpout")
check "folded answers equal the whole model's ($n requests)" [ "$n" -ge 100 ]
check "sums on a second thread: answers byte-identical ($same requests)" [ "$same" -ge 100 ]
check "filters from the index: answers byte-identical to reading the trace ($sameread requests)" \
    [ "$sameread" -ge 100 ]
check "the folded viewer wrote the index beside the trace" grep -q 'written' "$MT_TMP/view2.err"

"$MT_BIN" view --fold-above lots "$ctf" >/dev/null 2>"$MT_TMP/err"; rc=$?
check "--fold-above with a bad size: usage error 2" sh -c "[ $rc = 2 ] && grep -q 'fold-above' '$MT_TMP/err'"

# a bad filter: the same clear error
cb=$(curl -s -o "$MT_TMP/b.json" -w '%{http_code}' "${folded}api/tree?filter=size:%3Ezz")
check "a bad filter: 400 with the parser's message" sh -c "[ $cb = 400 ] && grep -q 'filter' '$MT_TMP/b.json'"
curl -s -o "$MT_TMP/status" "${folded}api/status"
check "status lists the filters being read (none now)" grep -q '"state":"ready".*"reading":\[\]' "$MT_TMP/status"
stop_viewer
check "the folded viewer (each filter read again) stops cleanly" [ "$VIEW_RC" = 0 ]

# the trace file changes under a folded viewer: cached answers stay, a new
# filter is refused rather than read from another trace (--no-index), or
# folded from the index of the trace as loaded
cp "$ctf" "$MT_TMP/moving.ctf"
cp "$ctf" "$MT_TMP/moving2.ctf"
start_viewer "$MT_TMP/moving.ctf" --port 0 -q --fold-above 0 --no-index || exit 1
noidx=$VIEW_URL
start_viewer "$MT_TMP/moving2.ctf" --port 0 -q --fold-above 0 || exit 1
withidx=$VIEW_URL
i=0
while [ $i -lt 6000 ] && ! curl -s "${withidx}api/status" | grep -q '"state":"ready"'; do
    sleep 0.05; i=$((i + 1))
done
c1=$(curl -s -o /dev/null -w '%{http_code}' "${noidx}api/tree?filter=size:%3E1k")
sleep 1.1
"$gen" "$MT_TMP/other.ctf" 200000 >/dev/null
cat "$MT_TMP/other.ctf" > "$MT_TMP/moving.ctf"
cat "$MT_TMP/other.ctf" > "$MT_TMP/moving2.ctf"
c2=$(curl -s -o /dev/null -w '%{http_code}' "${noidx}api/tree?filter=size:%3E1k")
c3=$(curl -s -o "$MT_TMP/b.json" -w '%{http_code}' "${noidx}api/tree?filter=size:%3E2k")
check "trace replaced: a filter seen before still answered ($c1 $c2)" [ "$c1$c2" = 200200 ]
check "trace replaced: a new filter refused, saying why ($c3)" \
    sh -c "[ $c3 = 400 ] && grep -q 'trace file changed' '$MT_TMP/b.json'"
c4=$(curl -s -o "$MT_TMP/i.json" -w '%{http_code}' "${withidx}api/tree?filter=size:%3E2k")
curl -s -o "$MT_TMP/f.json" "${folded}api/tree?filter=size:%3E2k"
check "trace replaced, with the index: a new filter answered about the trace as loaded ($c4)" \
    sh -c "[ $c4 = 200 ] && cmp -s '$MT_TMP/i.json' '$MT_TMP/f.json'"
stop_viewer
