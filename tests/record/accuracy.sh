#!/bin/sh
# accuracy.sh - estimates from a trace against the truth: a program with
# known allocation sites (small and large blocks, calloc, realloc chains,
# freed and live blocks) runs under the recorder at a 4 KiB interval; per
# site, estimated bytes allocated (n_samples / rate) and estimated bytes live
# at exit must be within 5 standard deviations (sqrt(interval * true bytes))
# of the truth, and exactly 0 live for sites that freed everything.
. tests/record/progs/lib.sh
skip_under_tsan
interval=4096
preload "$T/sites.ctf" "$(awk "BEGIN { printf \"%.17g\", 1 / $interval }")" "$PROGS/sites" >"$T/truth.txt" || fail "sites ran"
summary "$T/sites.ctf" >"$T/est.txt" || fail "trace readable"
check "5 sites reported" test "$(grep -c '^TRUTH' "$T/truth.txt")" = 5
awk -v R=$interval '
    $1 == "TRUTH" { ta[$2] = $3; tl[$2] = $4; n++ }
    $1 == "SITE"  { ea[$2] = $3; el[$2] = $4 }
    END {
        for (s in ta) {
            sd = sqrt(R * ta[s]); d = ea[s] - ta[s]; if (d < 0) d = -d
            printf "%s: %s %s allocated %d, estimated %d (%.1f sd)\n", (d <= 5 * sd ? "PASS" : "FAIL"), s, "bytes", ta[s], ea[s], d / sd
            if (tl[s] == 0) {
                printf "%s: %s live at exit estimated %d, truth 0 (must be exactly 0)\n", (el[s] == 0 ? "PASS" : "FAIL"), s, el[s]
            } else {
                sd = sqrt(R * tl[s]); d = el[s] - tl[s]; if (d < 0) d = -d
                printf "%s: %s live at exit %d, estimated %d (%.1f sd)\n", (d <= 5 * sd ? "PASS" : "FAIL"), s, tl[s], el[s], d / sd
            }
        }
    }' "$T/truth.txt" "$T/est.txt"
finish
