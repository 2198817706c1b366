#!/bin/sh
# faithful.sh - a sampled block behaves as the allocator's block would, so
# the sample is of the program's real behaviour:
#  - nodes that grow up to malloc_usable_size before asking for more (as
#    redis's strings do): live memory at exit within 5 standard deviations
#    of the truth (when sampled blocks had usable sizes of their own, they
#    were asked to grow less often than their peers and stayed sampled:
#    11x the truth);
#  - a buffer doubled by realloc to 256 MiB: the peak counts the buffer
#    once (the new block used to be reported before the old one was freed:
#    1.5x), and the recorder does not add the buffer's size to the peak RSS
#    (realloc stays the allocator's, mremap included).
. tests/record/progs/lib.sh
skip_under_tsan
G=$PROGS/grow
interval=65536
rate=$(awk "BEGIN { printf \"%.17g\", 1 / $interval }")
json() { "$MT_BIN" stats --json "$1" 2>/dev/null | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2; }
truth() { sed -n "s/^TRUTH .*$1=\([0-9]*\).*/\1/p" "$2"; }

for run in 1 2; do
    preload_raw "$T/u.ctf" "$rate" "$G" usable 20000 100 >"$T/u.out" || fail "grow usable ran"
    t=$(truth live "$T/u.out") e=$(json "$T/u.ctf" live_at_end_bytes)
    awk -v t="$t" -v e="${e:-0}" -v R=$interval -v run=$run 'BEGIN {
        sd = sqrt(t * R); d = (e - t) / sd
        printf "%s: nodes grown to their usable size (run %d): live at exit %d estimated %d (%.1f sd)\n",
            (d <= 5 && d >= -5 ? "PASS" : "FAIL"), run, t, e, d }'
done

"$G" double 256 >"$T/plain.out" || fail "grow double ran"
preload_raw "$T/d.ctf" 1.9073486328125e-06 "$G" double 256 >"$T/d.out" || fail "grow double ran under the recorder"
t=$(truth peak "$T/d.out") p=$(json "$T/d.ctf" peak_bytes)
awk -v t="$t" -v p="${p:-0}" 'BEGIN {
    r = p / t
    printf "%s: a buffer doubled to 256 MiB by realloc: peak %d estimated %d (%.2fx)\n",
        (r > 0.85 && r < 1.2 ? "PASS" : "FAIL"), t, p, r }'
h0=$(sed -n 's/^HWM kib=//p' "$T/plain.out") h1=$(sed -n 's/^HWM kib=//p' "$T/d.out")
awk -v a="$h0" -v b="$h1" 'BEGIN {
    printf "%s: peak RSS of the doubling program %d KiB, %d KiB under the recorder (%.2fx)\n",
        (b < a * 1.15 + 8192 ? "PASS" : "FAIL"), a, b, b / a }'
finish
