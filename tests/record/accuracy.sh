#!/bin/sh
# accuracy.sh - estimates from a trace against the truth: a program with
# known allocation sites (small and large blocks, calloc, realloc chains,
# freed and live blocks) runs under the recorder at a 4 KiB interval and at
# rate 0.1; per site, estimated bytes allocated (n_samples / rate) and
# estimated bytes live at exit must be within 5 standard deviations
# (sqrt(bytes (1 - rate) / rate)) of the truth, and exactly 0 live for sites
# that freed everything.
. tests/record/progs/lib.sh
skip_under_tsan
for interval in 4096 10; do
    p=$(awk "BEGIN { printf \"%.17g\", 1 / $interval }")
    preload "$T/sites.ctf" "$p" "$PROGS/sites" >"$T/truth.txt" || fail "sites ran at rate $p"
    summary "$T/sites.ctf" >"$T/est.txt" || fail "trace readable at rate $p"
    check "rate $p: 5 sites reported" test "$(grep -c '^TRUTH' "$T/truth.txt")" = 5
    # sd of n_samples / p for b bytes: sqrt(b (1 - p) / p)
    awk -v R=$interval '
        $1 == "TRUTH" { ta[$2] = $3; tl[$2] = $4; n++ }
        $1 == "SITE"  { ea[$2] = $3; el[$2] = $4 }
        END {
            q = 1 - 1 / R
            for (s in ta) {
                sd = sqrt(R * q * ta[s]); d = ea[s] - ta[s]; if (d < 0) d = -d
                printf "%s: rate 1/%d: %s bytes allocated %d, estimated %d (%.1f sd)\n", (d <= 5 * sd ? "PASS" : "FAIL"), R, s, ta[s], ea[s], d / sd
                if (tl[s] == 0) {
                    printf "%s: rate 1/%d: %s live at exit estimated %d, truth 0 (must be exactly 0)\n", (el[s] == 0 ? "PASS" : "FAIL"), R, s, el[s]
                } else {
                    sd = sqrt(R * q * tl[s]); d = el[s] - tl[s]; if (d < 0) d = -d
                    printf "%s: rate 1/%d: %s live at exit %d, estimated %d (%.1f sd)\n", (d <= 5 * sd ? "PASS" : "FAIL"), R, s, tl[s], el[s], d / sd
                }
            }
        }' "$T/truth.txt" "$T/est.txt"
done
finish
