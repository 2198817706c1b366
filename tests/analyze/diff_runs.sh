#!/bin/sh
# diff_runs.sh - 'memtrace diff' on repeated runs of one deterministic
# program (tests/record/progs/diffsites.c: 30 sites of equal size) recorded
# with the recorder:
#  - two runs of the same program give "no significant difference" (exit 0)
#    at the documented rate: at most alpha = 5% of pairs may be called
#    different; 40 pairs may show at most 6 (P(>= 7) < 0.5% at 5%), by
#    allocated bytes, live bytes, allocated blocks and per call path live at
#    the peak, at equal and at different sampling rates;
#  - a site whose allocations doubled is found (exit 1), first, with an
#    estimated change within 4 standard errors of the true change;
#  - two moments of one trace: from time 0 to the end, the growth of each
#    site is what it keeps live, within 4 standard errors; a window against
#    itself changes by exactly nothing.
. tests/record/progs/lib.sh
skip_under_tsan
# Under the sanitizer stage the CLI (MT_BIN) is sanitized, but a sanitized
# recorder cannot be preloaded into plain programs: record with the plain
# build's (the stage after it), or skip when there is none.
if [ "${MT_STAGE:-plain}" != plain ]; then
    [ -f build/libmemtrace.so ] && [ -d build/tests/record/progs ] || exit 77
    LIB=$PWD/build/libmemtrace.so PROGS=build/tests/record/progs
fi
P=$PROGS/diffsites
[ -x "$P" ] || { fail "$P not built"; finish; }
rate() { awk "BEGIN { printf \"%.17g\", 1 / $1 }"; }
R16=$(rate 16384) R8=$(rate 8192)
pairs=40 diff_alloc=0 diff_live=0 diff_count=0 diff_path=0 bad=0
i=0
while [ $i -lt $pairs ]; do
    r2=$R16; [ $((i % 2)) = 1 ] && r2=$R8    # every other pair at two rates
    preload "$T/a.ctf" "$R16" "$P" >/dev/null || bad=$((bad + 1))
    preload "$T/b.ctf" "$r2" "$P" >/dev/null || bad=$((bad + 1))
    "$MT_BIN" diff "$T/a.ctf" "$T/b.ctf" >"$T/out" 2>&1; rc=$?
    case $rc in 0) ;; 1) diff_alloc=$((diff_alloc + 1)); cp "$T/out" "$T/fp_alloc_$i" ;; *) bad=$((bad + 1)) ;; esac
    "$MT_BIN" diff --by live "$T/a.ctf" "$T/b.ctf" >"$T/out" 2>&1; rc=$?
    case $rc in 0) ;; 1) diff_live=$((diff_live + 1)) ;; *) bad=$((bad + 1)) ;; esac
    "$MT_BIN" diff --by count "$T/a.ctf" "$T/b.ctf" >"$T/out" 2>&1; rc=$?
    case $rc in 0) ;; 1) diff_count=$((diff_count + 1)) ;; *) bad=$((bad + 1)) ;; esac
    "$MT_BIN" diff --key path --by live --at peak "$T/a.ctf" "$T/b.ctf" >"$T/out" 2>&1; rc=$?
    case $rc in 0) ;; 1) diff_path=$((diff_path + 1)) ;; *) bad=$((bad + 1)) ;; esac
    i=$((i + 1))
done
check "every run recorded and compared (no exit 2)" [ "$bad" = 0 ]
check "same program, allocated bytes: $diff_alloc of $pairs pairs called different (at most 6)" [ "$diff_alloc" -le 6 ]
check "same program, live bytes: $diff_live of $pairs pairs called different (at most 6)" [ "$diff_live" -le 6 ]
check "same program, blocks allocated: $diff_count of $pairs pairs called different (at most 6)" [ "$diff_count" -le 6 ]
check "same program, live at the peak per call path: $diff_path of $pairs pairs called different (at most 6)" [ "$diff_path" -le 6 ]

# A doubled site, by allocated and by live bytes (at a 4 KiB and a 2 KiB
# interval, so that the quarter each site keeps live has enough samples).
R4=$(rate 4096) R2=$(rate 2048)
preload "$T/base.ctf" "$R4" "$P" >"$T/base.txt"
for k in 3 17 28; do
    preload "$T/new.ctf" "$R2" "$P" $k >"$T/new.txt"
    site=$(printf 'site_%02d' $k)
    for by in alloc live; do
        col=3; [ $by = live ] && col=4
        truth=$(awk -v s=$site -v c=$col '$2 == s { v[FILENAME] = $c } END { printf "%d", v[ARGV[2]] - v[ARGV[1]] }' "$T/base.txt" "$T/new.txt")
        "$MT_BIN" diff --by $by --json "$T/base.ctf" "$T/new.ctf" >"$T/d.json"; rc=$?
        check "$site doubled ($by): exit 1" [ $rc = 1 ]
        python3 - "$T/d.json" "$site" "$truth" "$by" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1])); site, truth, by = sys.argv[2], float(sys.argv[3]), sys.argv[4]
e = d["entries"][0]
ok = e["function"] == site and e["significant"]
print("%s: %s doubled (%s): found first (first is %s, p_adj %.2g)" % ("PASS" if ok else "FAIL", site, by, e["function"], e["p_adj"]))
err = abs(e["delta"] - truth) / e["se"]
ok2 = err <= 4
print("%s: %s doubled (%s): change %.0f within 4 se (%.0f) of the truth %.0f (%.1f se)" % ("PASS" if ok2 else "FAIL", site, by, e["delta"], e["se"], truth, err))
others = [x for x in d["entries"][1:] if x["significant"]]
print("%s: %s doubled (%s): no other site called different (%d)" % ("PASS" if len(others) <= 1 else "FAIL", site, by, len(others)))
sys.exit(0 if ok and ok2 and len(others) <= 1 else 1)
PY
    done
done

# Two moments of one trace: nothing is live at 0; at the end each site
# keeps a quarter of its blocks.
"$MT_BIN" diff --json --windows 0 end "$T/base.ctf" >"$T/m.json"; rc=$?
check "moments 0 and end: exit 1 (every site grew)" [ $rc = 1 ]
python3 - "$T/m.json" "$T/base.txt" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
truth = {l.split()[1]: float(l.split()[3]) for l in open(sys.argv[2]) if l.startswith("TRUTH")}
bad = []
for e in d["entries"]:
    if e["function"] in truth:
        t = truth[e["function"]]
        if abs(e["delta"] - t) > 4 * e["se"] or e["base"] != 0 or not e["significant"]:
            bad.append((e["function"], e["delta"], e["se"], t))
n = sum(1 for e in d["entries"] if e["function"] in truth)
ok = n == 30 and not bad
print("%s: moments 0 -> end: all 30 sites grew by what they keep live, within 4 se (%d sites, off: %s)" % ("PASS" if ok else "FAIL", n, bad[:3]))
sys.exit(0 if ok else 1)
PY
"$MT_BIN" diff --json --windows 0-end 0-end "$T/base.ctf" >"$T/w.json"; rc=$?
check "a window against itself: exit 0" [ $rc = 0 ]
check "a window against itself: every change exactly 0" \
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not all(e["delta"] == 0 and e["p"] == 1 for e in d["entries"]) or not d["entries"])' "$T/w.json"
"$MT_BIN" diff --windows end end "$T/base.ctf" >/dev/null; rc=$?
check "a moment against itself: exit 0" [ $rc = 0 ]
finish
