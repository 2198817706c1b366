# expect.awk - independent expectations computed from `memtrace dump` text
# (the reference dump format), for checking the engine's numbers.
#   awk -v what=totals -f expect.awk DUMP   -> key=value lines
#   awk -v what=sites  -f expect.awk DUMP   -> "samples<TAB>function<TAB>file<TAB>line"
# One sample stands for word_size/8/sample_rate bytes, and for
# 1/sample_rate/words objects of its size (words = len, plus the header
# word of OCaml heap blocks, at least 1).
/^info sample_rate=/ { split($2, a, "="); rate = a[2] + 0 }
/^info word_size=/   { split($2, a, "="); word = a[2] + 0 }
/^ev / {
    t = $2 + 0
    if (t != last_t) { flush_peak(); last_t = t }
    if ($3 == "alloc") {
        finish_alloc()
        for (i = 4; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "id") id = kv[2]
            else if (kv[1] == "nsamples") ns = kv[2] + 0
            else if (kv[1] == "len") len = kv[2] + 0
            else if (kv[1] == "src") src = kv[2]
        }
        words = len + (src == "External" ? 0 : 1); if (words < 1) words = 1
        objs[id] = ns / words; total_objs += ns / words; live_objs += ns / words
        samples[id] = ns; alive[id] = 1
        total += ns; allocs++; live += ns
        site = "\t\t0"   # empty backtrace
        pending = 1
    } else {
        finish_alloc()
        split($4, kv, "="); oid = kv[2]
        if ($3 == "collect" && (oid in alive)) {
            live -= samples[oid]; delete alive[oid]; collected += samples[oid]
            live_objs -= objs[oid]
        }
    }
    next
}
/^  bt / {
    # innermost location: the last bt line of the allocation
    if ($4 == "?") { site = "0x" substr($3, 3) "\t\t0" }
    else {
        loc = $4; name = $5
        for (i = 6; i <= NF; i++) name = name " " $i
        n = split(loc, p, ":")
        file = p[1]; for (i = 2; i <= n - 2; i++) file = file ":" p[i]
        site = name "\t" file "\t" p[n - 1]
    }
    next
}
function finish_alloc() { if (pending) { site_samples[site] += ns; pending = 0 } }
function flush_peak() { if (live > peak) { peak = live; peak_t = last_t } }
END {
    finish_alloc(); flush_peak()
    bps = word / 8 / rate
    if (what == "sites") {
        for (s in site_samples) printf "%.0f\t%s\n", site_samples[s], s
    } else {
        printf "allocs=%d\nsamples=%.0f\nbps=%.17g\nalloc_bytes=%.0f\n", allocs, total, bps, total * bps
        printf "live_end_samples=%.0f\nlive_end_bytes=%.0f\n", live, live * bps
        printf "alloc_objects=%.0f\nlive_end_objects=%.0f\n", total_objs / rate, live_objs / rate
        printf "peak_bytes=%.0f\npeak_time=%d\n", peak * bps, peak_t
    }
}
