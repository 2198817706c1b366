#!/bin/sh
# recorder_share.sh - everything the recorder costs inside real programs,
# kernel time included, by perf's CPU samples with call chains: gcc -O1 -c
# of a generated C file and a Python workload, each under `memtrace run`
# with `perf record -g`, ROUNDS runs each, medians and ranges.
#
#   sh bench/recorder_share.sh [BUILD]   ROUNDS (3), FREQ (1999),
#                                         PROGS ("gcc python"), LINES (1000)
#   KEEP=DIR keeps each run's `perf script` text there.
#   LIBS="A.so B.so..." compares builds of libmemtrace.so (MEMTRACE_LIB), one
#   run of each per round and program, interleaved; rows and medians are
#   then per program and library (gcc#1, gcc#2...). Copy each library to a
#   directory of its own first.
#
# Per run, over the samples of the program's processes (every process but
# the memtrace CLI; for gcc that is gcc, cc1 and as):
#   self      the sample's own function in libmemtrace.so or libunwind
#   children  a frame of libmemtrace.so or libunwind anywhere in its chain,
#             or a thread the recorder started: adds the kernel's work for
#             the recorder's system calls (/proc reads, sleeps, writes,
#             mmap) and the C library it calls. The wrappers tail-jump to
#             the program's allocator, so the allocator's own work is not
#             counted.
#   memtrace  the memtrace CLI's samples (naming after the run), over all
#             samples of the run
# and children split into parts:
#   wrappers  the chain's only recorder frames are malloc-family wrappers
#   sampling  the rest on the program's threads: sampler, unwinding, the
#             sampled-block table, the queue (and a sampled block's free)
#   startend  start and end of the recording on the program's threads
#             (constructor, opening the trace, the last flush and readings)
#   writer    the recorder's threads, split into rss (the TRACE.rss
#             readings: statm, status, smaps, mallinfo2), attach (the
#             module tick), encode (queue drain, the codec's writer, module
#             codes, flushes and the trace's write(2)) and wake (the rest:
#             the thread's wakeups, its sleep call, the scheduler, its lock)
#   tsamples  the samples in the run's traces (memtrace info), and us_each
#             the sampling part per sample: its share of the program's CPU
#             (perf samples / FREQ) over tsamples, in microseconds
# Frame-pointer chains lose the caller of a C library function; the
# recorder is built with frame pointers, so the chain picks up again at
# the recorder's next frame. Needs perf (Debian: linux-perf).
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
B=${1:-build}
ROUNDS=${ROUNDS:-3} FREQ=${FREQ:-1999} PROGS=${PROGS:-gcc python} LINES=${LINES:-1000}
MT=$PWD/$B/memtrace
bench_need "$B" "cli libs" "$MT" "$B/libmemtrace.so"
command -v perf >/dev/null 2>&1 || { echo "recorder_share: perf missing (apt-get install linux-perf)" >&2; exit 2; }
bench_scratch memtrace-recorder-share; W=$tmp
XDG_CACHE_HOME=$W/cache; export XDG_CACHE_HOME; unset MEMTRACE_NAME_CACHE   # the run's own name cache
sh bench/gen_c.sh "$LINES" >"$W/big.c"
cp bench/py_workload.py "$W/"
PY=/usr/bin/python3; [ -x $PY ] || PY=$(command -v python3)

# perf script's text (comm pid/tid, then one frame a line: ip sym (dso))
# to one row: total self children memtrace wrappers sampling startend
# writer encode rss attach wake
classify() {
    awk '
    function flush(   i, f, sym, dso, rec, wrapper_only, part, chain) {
        if (comm == "") return
        if (comm == "memtrace" || comm ~ /^perf/) { all++; if (comm == "memtrace") mt++; comm = ""; return }
        all++; prog++
        rec = 0; wrapper_only = 1; chain = " "
        for (i = 1; i <= nf; i++) {
            sym = fs[i]; dso = fd[i]
            chain = chain sym " "
            if (dso ~ /libmemtrace\.so|libunwind/) {
                rec = 1
                if (!(dso ~ /libmemtrace\.so/ && sym ~ WRAP)) wrapper_only = 0
            }
        }
        if (nf && fd[1] ~ /libmemtrace\.so|libunwind/) self++
        if (chain ~ / memtrace_thread_start /) {
            ch++; wr++
            if (chain ~ / (mtr_rss_[a-z_]*|ledger|sample|mtr_smaps_[a-z_]*|mtr_allocstats_[a-z_]*|mallinfo2|mtr_proc_[a-z_]*|show_smap|proc_pid_status|statm_rss|peak_rss) /) rs++
            else if (chain ~ / mtr_attach_tick /) at++
            else if (chain ~ / (mtr_queue_drain|mtr_tr_put_record|mtr_tr_pump|mtr_tr_write_until[.a-z0-9]*|mtr_tr_write_trace|mt_writer_[a-z_]*|put_alloc|flush_at|mtr_modules_[a-z_]*|mtr_tr_rotate|ksys_write) /) en++
            else sl++
        } else if (rec) {
            ch++
            if (chain ~ / (memtrace_stop_tracing|memtrace_start_tracing|mtr_tr_open_trace|mtr_tr_close[a-z_]*|mtr_tracer_[a-z_]*exit[a-z_]*|mtr_init[a-z_]*) /) se++
            else if (wrapper_only) wp++
            else sp++
        }
        comm = ""; nf = 0
    }
    BEGIN { WRAP = "^(malloc|free|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|malloc_usable_size|free_sized|free_aligned_sized|_Znw[a-zA-Z_]*|_Zna[a-zA-Z_]*|_Zdl[a-zA-Z_]*|_Zda[a-zA-Z_]*)$" }
    /^[^ \t]/ { flush(); comm = $1; nf = 0; next }
    /^[ \t]+[0-9a-f]+ / { nf++; fs[nf] = $2; d = $NF; gsub(/[()]/, "", d); fd[nf] = d; next }
    END { flush()
          if (!prog) { print "recorder_share: no samples of the program (perf record failed?)" > "/dev/stderr"; exit 1 }
          p = 100 / prog
          printf "%d %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", prog, self * p, ch * p,
                 100 * mt / all, wp * p, sp * p, se * p, wr * p, en * p, rs * p, at * p, sl * p }'
}

cmd_of() {
    case $1 in
        gcc) echo "gcc -O1 -c $W/big.c -o $W/big.o" ;;
        python) echo "$PY $W/py_workload.py 120" ;;
        *) echo "recorder_share: unknown program $1" >&2; exit 2 ;;
    esac
}

libs=
for l in ${LIBS:-}; do
    [ -r "$l" ] || { echo "recorder_share: $l: no such library" >&2; exit 2; }
    libs="$libs $(cd "$(dirname "$l")" && pwd)/$(basename "$l")"   # absolute: the runs cd
done
variants=
for p in $PROGS; do
    if [ -z "$libs" ]; then variants="$variants $p"
    else i=0; for l in $libs; do i=$((i + 1)); variants="$variants $p#$i"; done; fi
done
for r in $(seq "$ROUNDS"); do
    for v in $variants; do
        p=${v%%#*} lib=
        [ "$p" = "$v" ] || lib=$(echo $libs | cut -d' ' -f"${v#*#}")
        rm -f "$W"/t.ctf*
        # shellcheck disable=SC2046
        (cd "$W" && ${lib:+env MEMTRACE_LIB="$lib"} $RUN perf record -q -g -F "$FREQ" -o "$W/perf.data" -- \
            "$MT" run -o "$W/t.ctf" -- $(cmd_of "$p") >/dev/null 2>&1) ||
            { echo "recorder_share: $v: the run failed" >&2; exit 1; }
        perf script -i "$W/perf.data" -F comm,pid,tid,ip,sym,dso 2>/dev/null >"$W/script.txt"
        [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$W/script.txt" "$KEEP/$v.$r.txt"
        row=$(classify <"$W/script.txt") || exit 1
        # the traces' samples (memtrace info), for the sampling part's
        # cost per sample: share x the program's CPU (its perf samples at
        # FREQ) / samples, in microseconds
        ns=0
        for f in "$W"/t.ctf*; do
            case $f in *.rss | *.leaks) continue ;; esac
            k=$("$MT" info "$f" 2>/dev/null | sed -n 's/^samples: *\([0-9]*\).*/\1/p')
            ns=$((ns + ${k:-0}))
        done
        us=$(echo "$row" | awk -v n="$ns" -v f="$FREQ" '{ printf "%.2f", n ? $6 / 100 * $1 / f * 1e6 / n : 0 }')
        echo "$r $v $row $ns $us"
    done
done | tee "$W/rows" | awk '{ printf "round %d %-6s samples %6d  self %.2f %%  children %.2f %%  memtrace %.2f %%  | wrappers %.2f sampling %.2f startend %.2f writer %.2f (encode %.2f rss %.2f attach %.2f wake %.2f) | trace samples %d, sampling %.2f us each\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 }'

names="samples self children memtrace wrappers sampling startend writer encode rss attach wake tsamples us_each"
[ -z "$libs" ] || { i=0; for l in $libs; do i=$((i + 1)); echo "library $i: $l"; done; }
for p in $variants; do
    echo "$p: median (range) over $ROUNDS runs, % of the program's samples (memtrace: of all)"
    c=3
    for n in $names; do
        m=$(column "$c" "$p" "$W/rows" | median)
        rg=$(column "$c" "$p" "$W/rows" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
        printf "  %-9s %s (%s)\n" "$n" "$m" "$rg"
        c=$((c + 1))
    done
done
