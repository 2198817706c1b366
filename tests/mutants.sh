#!/bin/sh
# mutants.sh - mutation check of the statistical core, the estimates, the
# exporters and rules users rely on (each of the last killed by a
# known-answer test of its layer): applies each small mutant below to a
# scratch copy of the tree,
# rebuilds, runs the tests that should notice, and reports which mutants
# survive (the tests all passed). Run by hand; takes a few minutes.
#
#   sh tests/mutants.sh [PATTERN[,PATTERN...]]  (mutants whose name holds one; default: all)
#   env: MUTANTS_DIR (scratch copy; default a new temporary directory,
#        removed at the end unless MUTANTS_KEEP=1)
#
# Exit status 0 only if every mutant applied and was killed. A mutant whose
# sed expression no longer matches its file is reported NOT APPLIED: update
# the list when the code changes.
set -u
cd "$(dirname "$0")/.."
only=${1:-}
src=$PWD
dir=${MUTANTS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/memtrace-mutants.XXXXXX")}
mkdir -p "$dir"
# The working tree as it is (uncommitted changes included), without builds.
tar -C "$src" --exclude=./build --exclude=./.git --exclude=node_modules -cf - . | tar -C "$dir" -xf -
cd "$dir" || exit 1
log=$dir/mutant.log

build() { make -s -j2 all tests-build >"$log" 2>&1; }
echo "building the unmutated tree in $dir"
build || { tail -n 20 "$log"; echo "the unmutated tree does not build"; exit 1; }

killed=0 survived=0 broken=0 results=""
# mutant NAME FILE SED-EXPRESSION TESTS...
mutant() {
    name=$1 file=$2 expr=$3; shift 3
    if [ -n "$only" ]; then
        hit=0
        for pat in $(echo "$only" | tr ',' ' '); do
            case $name in *"$pat"*) hit=1 ;; esac
        done
        [ $hit = 1 ] || return 0
    fi
    cp "$file" "$dir/.orig"
    sed "$expr" "$dir/.orig" > "$file"
    if cmp -s "$file" "$dir/.orig"; then
        status="NOT APPLIED"; broken=$((broken + 1))
    elif ! build; then
        status="killed (does not build)"; killed=$((killed + 1))
    elif sh tests/run.sh "$@" >"$log" 2>&1; then
        status="SURVIVED"; survived=$((survived + 1))
    else
        status="killed by $(sed -n 's/^FAIL \([^ ]*\) .*/\1/p' "$log" | tr '\n' ' ')"
        killed=$((killed + 1))
    fi
    cp "$dir/.orig" "$file"
    touch "$file"         # newer than its object: rebuilt for the next mutant
    printf '%-24s %s\n' "$name" "$status"
    results="$results$name: $status
"
}

S=tests/record/sampling.c
# --- sampling: each byte sampled with probability rate, counts Binomial
mutant malloc0-is-0-bytes lib/record/interpose.c 's/size_t bytes = size + (size == 0);/size_t bytes = size;/' $S tests/record/defaults.sh
mutant malloc0-slow-path lib/record/sampler.c 's/uint64_t bytes = size ? size : 1;/uint64_t bytes = size;/' $S
mutant gap-exponential lib/record/draw.c 's|return -1.0 / log1p(-p);|return 1.0 / p;|' $S
mutant gap-ceil lib/record/draw.c 's|double x = floor(-log(|double x = ceil(-log(|' $S
mutant gap-not-uniform lib/record/draw.h 's|(mtr_random(state) >> 11) + 1) \* 0x1.0p-53|(mtr_random(state) >> 12) + 1) * 0x1.0p-53|' $S
mutant first-byte-uncounted lib/record/sampler.c 's|uint64_t rest = bytes - c, n = 1, next;|uint64_t rest = bytes - c, n = 0, next;|' $S
mutant overshoot-dropped lib/record/sampler.c 's|next = e - rest;|next = e;|' $S
mutant count-is-the-mean lib/record/sampler.c 's|n += mtr_binomial(&t->rng, rest, eng.rate);|n += (uint64_t)((double)rest * eng.rate);|' $S
mutant no-symmetry lib/record/draw.c 's|return n - mtr_binomial(state, n, 1.0 - p);|return mtr_binomial(state, n, 1.0 - p);|' $S
mutant small-np-walk-off lib/record/draw.c 's|if (g > left)|if (g >= left)|' $S
mutant btrs-center lib/record/draw.c 's|double c = dn \* p + 0.5;|double c = dn * p + 1.5;|' $S
mutant btrs-squeeze lib/record/draw.c 's|if (us >= 0.07 \&\& v <= v_r)|if (us >= 0.01 \&\& v <= v_r)|' $S
mutant btrs-accept-loose lib/record/draw.c 's|if (v <= bound)|if (v <= bound + 0.3)|' $S
mutant btrs-scale lib/record/draw.c 's|double spq = sqrt(dn \* p \* q);|double spq = 1.2 * sqrt(dn * p * q);|' $S
mutant pvalloc-unrounded lib/record/interpose.c 's|mtr_sample_new(mtr_real.pvalloc(size), rounded ? rounded : page, MT_ALLOC_ALIGNED)|mtr_sample_new(mtr_real.pvalloc(size), size, MT_ALLOC_ALIGNED)|' $S
mutant calloc-one-element lib/record/interpose.c '/^API void \*calloc/,/^}/s|return calloc_sample(n, m, size);|return calloc_sample(n, m, m);|' $S
mutant fp-main-not-complete lib/record/unwind.c 's|n >= 2 \&\& out\[n - 1\] >= libc_text_lo|n >= 2 \&\& out[n - 1] < libc_text_lo|' tests/record/unwind.sh
CFI="tests/record/cfi_rules.c tests/record/cfi.sh"
mutant cfi-ra-offset lib/record/cfi.h 's|uintptr_t ra_at = cfa - 8;|uintptr_t ra_at = cfa - 16;|' $CFI
mutant cfi-no-bounds lib/record/cfi.h 's|if (ra_at - lo > span)|if (0)|' $CFI
mutant cfi-rbp-slot lib/record/cfi.h 's|uintptr_t at = cfa - 8 \* (uintptr_t)mtr_cfi_rbp_slot(r);|uintptr_t at = cfa - 8 * (uintptr_t)mtr_cfi_rbp_slot(r) + 8;|' $CFI
mutant cfi-advance-inclusive lib/record/cfi.c 's|if (delta > pc - \*loc)|if (delta >= pc - *loc)|' $CFI
mutant cfi-restore-state-nothing lib/record/cfi.c 's|\*s = saved\[--depth\];|(void)saved[--depth];|' $CFI
mutant cfi-signal-fast lib/record/cfi.c 's|if (c->signal \|\| s->cfa_expr|if ((c->signal \&\& 0) \|\| s->cfa_expr|' $CFI
mutant cfi-walk-skips-frame lib/record/cfiwalk.c 's|        out\[n++\] = pc;|        if (n != 2) out[n++] = pc; else out[n++] = 0;|' $CFI
mutant cfi-no-flush lib/record/exec.c 's|    mtr_cfi_flush();|    (void)0;|' $CFI
mutant reload-no-unloaded lib/record/exec.c 's|    mtr_modules_unloaded();|    (void)0;|' tests/record/reload.sh
mutant reload-no-retire lib/record/modules.c 's|            s->marks\[i\].count++;|            (void)0;|' tests/record/reload.sh
mutant cxx-always-direct lib/record/interpose.c 's|if (__builtin_expect(cxx_direct, 1))|if (1)|' tests/record/forwarding_preload.sh
mutant start-not-armed lib/record/sampler.c '/^int mt_memprof_start/,/^}/s|        t->countdown = draw_gap(t);|        (void)draw_gap(t);|' $S
mutant free-not-reported lib/record/sampler.c '/^static void tracker_free/,/^}/s|        eng.tracker.free(eng.tracker.ctx, (void \*)token);|        (void)token;|' $S tests/record/sampler.c
mutant header-rate lib/record/tracer_file.c 's|info.sample_rate = mtr_tr.rate;|info.sample_rate = mtr_tr.rate * 2;|' tests/record/defaults.sh tests/record/accuracy.sh
# --- estimates
mutant rse-k-plus-1 lib/analyze/model.c 's|return k ? 1.0 / sqrt((double)k) : 1.0;|return k ? 1.0 / sqrt((double)k + 1) : 1.0;|' tests/analyze tests/present/reports.sh
mutant rse-text-k-plus-1 lib/present/top.c 's|snprintf(b2, sizeof b2, "%.0f%%%s", 100 \* rse, mt_rse_mark(rse));|snprintf(b2, sizeof b2, "%.0f%%%s", 10 * rse, mt_rse_mark(rse));|' tests/present/reports.sh
mutant bytes-per-sample lib/analyze/scale.c 's|s.bytes_per_sample = info->sample_rate > 0 ? s.word_bytes / info->sample_rate : 0;|s.bytes_per_sample = info->sample_rate > 0 ? 8 / info->sample_rate : 0;|' tests/analyze tests/present/recorder.sh
mutant objects-no-header lib/analyze/scale.h 's|        words += 1;|        words += 0;|' tests/analyze tests/present/pprof.sh
mutant live-at-collect lib/analyze/scale.h 's|return a->time <= t \&\& a->collect > t;|return a->time <= t \&\& a->collect >= t;|' tests/analyze tests/present/reports.sh
mutant repeat-any-length lib/analyze/buildread.c 's|ev->domain == b->same_dom \&\& len == b->same_len \&\& |ev->domain == b->same_dom \&\& |' tests/analyze/repeats.c
mutant repeat-queue-prefix lib/analyze/buildread.c 's|e->ev.common_prefix = same ? len : 0;|(void)same;|' tests/analyze/repeats.c
PK="tests/analyze/peak_interval.c tests/analyze/peak_estimate.c"
mutant peak-interval-90 lib/analyze/peak.c 's|#define PEAK_LEVEL 0.95 |#define PEAK_LEVEL 0.90 |' $PK
mutant peak-no-end-floor lib/analyze/peak.c 's|    if (lo < lo_end)|    if (0)|' $PK
mutant peak-spikes-one-reading lib/analyze/peak.c 's|        if (P > 0 \&\& R / P > m)|        if (0)|' $PK
mutant peak-check-no-end lib/analyze/peak.c 's|    if (e < v)|    if (0)|' $PK
mutant peak-hi-max-selected lib/analyze/peak.c 's|    out->hi = count_upper(P, rate, z) \* bps;|    out->hi = (count_upper(P, rate, z) - sd * max_quantile(0.5, n)) * bps;|' $PK
mutant live-count-var-alloc lib/analyze/select.c 's|v = c->live_objects, var = c->live_objects_var;|v = c->live_objects, var = c->alloc_objects_var;|' tests/analyze/live_count_error.c tests/analyze/count_error.c
mutant figpass-fold-unfiltered lib/analyze/figpass.c 's|        rq.filter = r->rq->filter;|        rq.filter = NULL;|; s|        r->prefiltered = !mt_filter_uses_stacks(rq.filter);|        r->prefiltered = 0;|' tests/analyze/figures.c
mutant figures-scan-any-end lib/analyze/figures.c 's|res.end == end|res.end + end >= end|g' tests/analyze/figures.c
# --- exporters
mutant pprof-no-filenames lib/present/pprof.c 's|str_index(&w->strs, fn\[f\].filename)|str_index(\&w->strs, "")|' tests/present/pprof.sh
mutant pprof-inuse-objects-0 lib/present/pprof.c 's|(uint64_t)llround(c->live_objects)|0|' tests/present/pprof.sh
mutant pprof-alloc-space-live lib/present/pprof.c 's|(uint64_t)llround(c->alloc_bytes)|(uint64_t)llround(c->live_bytes)|' tests/present/pprof.sh
mutant folded-weights-floor lib/present/stacks.c 's|long long w = llround(mt_cost_get(\&nd->self, weight));|long long w = (long long)(mt_cost_get(\&nd->self, weight) / 2);|' tests/present/reports.sh
# --- attach
mutant attach-restore-swapped lib/record/attach.c 's|if (__atomic_load_n(s->at, __ATOMIC_ACQUIRE) == s->ours)|if (__atomic_load_n(s->at, __ATOMIC_ACQUIRE) != s->ours)|' tests/record/attach_nopie.sh
mutant attach-mprotect-not-redirected lib/record/attach.c 's|"mremap", "mprotect",|"mremap",|' tests/record/attach_reserve.sh
mutant ledger-guard-any-size lib/record/smaps.c 's|&& v->hi - v->lo <= GUARD_MAX;|;|' tests/record/rss_ledger.sh
mutant ledger-no-reading-at-new-rss lib/record/rss.c 's|rss > rs.ledger_rss_max + rs.ledger_rss_max / 16 && now_us|0 \&\& now_us|' tests/record/rss_ledger.sh
mutant ledger-mimalloc-uncapped lib/analyze/ledger.c 's|if (rd->anon >= 0 && commit > (double)rd->anon - maps)|if (0)|' tests/record/rss_ledger.sh
mutant attach-call-segv-blocked lib/inject/attach_call.c 's/uint64_t during = ~(SIGBIT(SIGSEGV) | SIGBIT(SIGBUS)/uint64_t during = ~(SIGBIT(SIGBUS)/' tests/record/attach_signals.sh
mutant fatal-remove-to-sig-dfl lib/record/fatal.c 's|        mtr_sig_restore(fatal_signals\[i\], \&saved\[i\]);|        signal(fatal_signals[i], SIG_DFL);|' tests/record/attach_signals.sh
mutant attach-borrows-in-handler lib/inject/attach_call.c 's|^    return found;$|    return 0;|' tests/record/attach_safepoint.sh
mutant mathfn-log-series-short lib/record/mathfn.c 's|    p = p \* z2 + 1.0 / 5;|    p = p * z2 + 1.0 / 4;|' tests/record/mathfn.c
mutant attach-thread-gone-is-process-gone lib/inject/attach_call.c 's/(errno == ESRCH \&\& process_gone(pid))/errno == ESRCH/' tests/record/attach_churn.sh
mutant attach-running-only-when-none-waits lib/inject/attach_call.c 's/if (!ok \&\& c\[i\].rank == RANK_RUNNING/if (!ok \&\& c[0].rank == RANK_RUNNING/' tests/record/attach_churn.sh
mutant attach-allocator-by-dlsym lib/record/real.c 's|: mtr_global_definition(name);|: dlsym(RTLD_DEFAULT, name);|' tests/record/attach_nopie.sh
# --- what users rely on, each killed by a known-answer test of its layer
mutant leaks-no-holm lib/analyze/leaks.c 's|        mt_holm(p, m, p);|        (void)0;|' tests/analyze/leaks_suspects.c
mutant leaks-given-back-swapped lib/analyze/leaks.c 's|e->live_end >= 0.5 \* e->live_high;|e->live_high >= 0.5 * e->live_end;|' tests/analyze/leaks_suspects.c
mutant leaks-given-back-inverted lib/analyze/leaks.c 's|e->live_end >= 0.5 \* e->live_high;|0.5 * e->live_end >= e->live_high;|' tests/analyze/leaks_suspects.c
mutant leakfold-no-merge lib/analyze/leakfold.c 's|                e\[w - 1\].samples += e\[j\].samples;|                (void)0;|' tests/analyze/leaks_fold.c
mutant leakfold-no-beyond lib/analyze/leakfold.c 's|            nd->beyond += n;|            (void)0;|' tests/analyze/leaks_fold.c
mutant leakfold-unit-skipped lib/analyze/leakfold.c 's|    if (jf > ja \&\& put(f, node, K_UNIT|    if (jf > ja + 1 \&\& put(f, node, K_UNIT|' tests/analyze/leaks_fold.c
mutant leakscan-no-red-zone lib/record/leakscan.c 's|return best - RED_ZONE > m->lo ? best - RED_ZONE : m->lo;|return best;|' tests/record/red_zone.c tests/record/leaks.sh
mutant safefile-others-fifo lib/common/safefile.c 's|(S_ISFIFO(st.st_mode) \&\& st.st_uid == geteuid())|S_ISFIFO(st.st_mode)|' tests/common/safefile.c
mutant utf8-last-byte-unchecked lib/common/utf8.h 's|for (size_t i = 2; i < need; i++)|for (size_t i = 2; i + 1 < need; i++)|' tests/present/escape.c
mutant python-nostack-last-site python/memtrace/__init__.py 's|codes = np.where(none, len(distinct), codes)|codes = np.where(none, len(distinct) - 1, codes)|' tests/python/nostack.sh
mutant vint-signed-32 lib/trace/buf.h 's|if (v <= 0x7FFFFFFF) {|if (v <= 0xFFFFFFFF) {|' tests/trace/vint.c
mutant temporary-1ms-included lib/analyze/scale.h 's|a->collect - a->time < MT_TEMPORARY_US|a->collect - a->time <= MT_TEMPORARY_US|' tests/analyze/temporary.c
mutant top-caller-share-of-total lib/present/top.c 's|v > 0 ? 100 \* cv / v : 0, "", "", name);|total > 0 ? 100 * cv / total : 0, "", "", name);|' tests/present/top_callers.c
mutant pprof-duration-us lib/present/pprof.c 's|mt_pb_uint(&w->out, 10, ((uint64_t)mt_model_end(m) - (uint64_t)w->from) \* 1000);|mt_pb_uint(\&w->out, 10, (uint64_t)mt_model_end(m) - (uint64_t)w->from);|' tests/present/pprof.sh
mutant carried-allocated lib/analyze/select.c 's|if (!a->carried) {   /\* (carried|if (1) {   /* (carried|' tests/analyze/carried_costs.c
mutant carried-allocated-folded lib/analyze/fold.c 's|if (__builtin_expect(!a->carried, 1)) {|if (1) {|' tests/analyze/carried_costs.c
mutant peak-last-of-ties lib/analyze/alloctab.c 's|        if (live > peak) {|        if (live >= peak) {|' tests/analyze/peak_time.c
mutant peak-last-of-ties-sorted lib/analyze/alloctab.c 's|if (t->live_after\[k\] > \*samples) {|if (t->live_after[k] >= *samples) {|' tests/analyze/peak_time.c
mutant peak-last-of-ties-folded lib/analyze/buildfold.c 's|        if (b->live > m->peak_samples) {|        if (b->live >= m->peak_samples) {|' tests/analyze/peak_time.c
mutant realloc-sampled-once lib/record/sampler.c 's|    return mtr_sample_new(q, size, MT_ALLOC_REALLOC);|    mtr_enter(); finish_sample(t, q, size, 1, MT_ALLOC_REALLOC); return q;|' tests/record/sampling.c
# --- the filter in front of the table of sampled blocks (known answers: tests/record/sampler.c's test_filter)
mutant filter-bit-never-cleared lib/record/sampled.c 's|    if (c == 1) {|    if (0) {|' tests/record/sampler.c
mutant filter-line-never-set lib/record/sampled.c 's|    if (!(lines \& line))|    if (0)|' tests/record/sampler.c
mutant free-marked-uncounted lib/record/interpose.c 's|    mtr_tls.marked++;   /\* mt_memprof_free_marked \*/||' tests/record/sampler.c
mutant queue-half-never-wakes lib/record/queue.c 's|            \*half = prod.head + pad + words - t > RING_WORDS / 2;|            *half = 0;|' tests/record/queue.c
mutant queue-sleep-ignores-stop lib/record/queue.c 's|    if (__atomic_load_n(stop, __ATOMIC_SEQ_CST))|    if (stop == NULL)|' tests/record/queue.c
# --- pprof profiles as input: Go's sampling error
mutant go-count-var-no-1-over-p lib/analyze/profile.c 's|\*nvar = p > 0 ? n \* q / p : 0;|*nvar = p > 0 ? n * q : 0;|' tests/analyze/profiles_input.sh
mutant go-bytes-var-no-1-over-p lib/analyze/profile.c 's|double v = p > 0 ? bytes \* s \* q / p : bytes \* bytes;|double v = p > 0 ? bytes * s * q : bytes * bytes;|' tests/analyze/profiles_input.sh
# --- the commands' option driver: a value below its kind's bound is refused
mutant options-count-no-lower-bound programs/options.c 's/|| v < o->lo ||/||/' tests/programs/options.sh
mutant options-size-no-lower-bound programs/options.c 's/ || (double)bytes < o->lo)/)/' tests/programs/options.sh
# run's command is never parsed; ctl's --wait has a bound
mutant options-first-parses-all programs/options.c "s/shorts\[ns++\] = '+';/(void)0;/" tests/programs/options.sh
mutant options-seconds-no-bound programs/options.c 's/ || (double)us > o->hi \* 1e6)/)/' tests/programs/options.sh
mutant namecache-no-checksum lib/symbolize/namecache.c 's|(uInt)(size - 4)) != want)|(uInt)(size - 4)) != want \&\& 0)|' tests/record/symbolize_cache.sh
mutant namecache-trusts-anyone lib/symbolize/namecache.c 's|return st->st_uid == geteuid() \&\& !(st->st_mode \& 022);|return 1;|' tests/record/symbolize_cache.sh
mutant debugcache-no-checksum lib/symbolize/debugcache.c 's|(uint32_t)t\[11\] << 24))|(uint32_t)t[11] << 24) \&\& 0)|' tests/record/symbolize_debugcopy.sh
mutant debugcache-any-build-id lib/symbolize/debugcache.c 's#return same ? NULL#return same || 1 ? NULL#' tests/record/symbolize_debugcopy.sh
mutant namecache-trusts-any-parent lib/symbolize/namecache.c 's|    if (others_write(st) \&\& !(st->st_mode \& S_ISVTX))|    if (0)|' tests/record/cache_hostile.sh
mutant namecache-follows-any-link lib/symbolize/namecache.c 's|else if (link \&\& st.st_uid != geteuid() \&\& st.st_uid != 0)|else if (0)|' tests/record/cache_hostile.sh
mutant namecache-keeps-dead-temporaries lib/symbolize/namecache.c 's|        if (stale_temporary(e->d_name)) {|        if (0 \&\& stale_temporary(e->d_name)) {|' tests/record/symbolize_debugcopy.sh
mutant namecache-symtab-file-despite-dwarf lib/symbolize/names.c 's|mts_dwarf_has_dwarf(nm->dwarf, m->path) == 0) {|mts_dwarf_has_dwarf(nm->dwarf, m->path) >= 0) {|' tests/record/symbolize_cache.sh
mutant namecache-symtab-file-despite-server lib/symbolize/names.c 's|if (rc == 0 \&\& !nm->url \&\& |if (rc == 0 \&\& |' tests/record/symbolize_cache.sh
mutant namecache-symtab-unnamed-unsaid lib/symbolize/names.c 's|        if (k == 0 \&\& m->cache > 0 \&\& m->from == MTS_NAMES_SYMTAB)|        if (0)|' tests/record/symbolize_cache.sh
mutant rotation-closes-before-opening lib/record/tracer_file.c 's|    int old = mtr_tr.fd;|    int old = mtr_tr.fd; close(old);|' tests/record/rotate.sh
mutant ownheap-fork-child-locked lib/record/ownheap.c 's|    heap.lock = 0;   /\* the child.s only thread is the one that held it \*/||' tests/record/ownheap.c
mutant ownheap-no-reuse lib/record/ownheap.c 's|    heap.free_list\[k\] = b;|    (void)b;|' tests/record/ownheap.c
mutant elfrel-no-glob-dat lib/common/elfrel.h 's|type != R_X86_64_JUMP_SLOT \&\& type != R_X86_64_GLOB_DAT|type != R_X86_64_JUMP_SLOT|' tests/common/elfrel.c
mutant elfrel-put-no-mprotect lib/common/elfrel.h 's|    if (prot \& PROT_WRITE) {|    if (1) {|' tests/common/elfrel.c
mutant build-warning-dropped lib/analyze/build.c 's|    mt_warn(b->opts ? b->opts->on_warning : NULL, b->opts ? b->opts->warning_ctx : NULL, msg);|    (void)msg;|' tests/analyze/warnings.sh
mutant merge-warning-to-stderr lib/analyze/merge.c 's|mt_warn(ro->on_warning, ro->warning_ctx, g->warn.msg\[i\]);|mt_warn(NULL, ro->warning_ctx, g->warn.msg[i]);|' tests/analyze/warnings.sh
mutant run-traces-anyones programs/run_traces.c 's|    if (st.st_uid != owner) {|    if (st.st_uid != owner \&\& 0) {|' tests/programs/run_traces.c
mutant empty-siblings-unsorted programs/report.c 's|        qsort(t, k, sizeof \*t, run_trace_cmp_bytes);||' tests/programs/report.sh

echo
echo "$killed killed, $survived survived, $broken not applied"
if [ "${MUTANTS_KEEP:-0}" = 1 ]; then echo "scratch tree kept in $dir"
elif [ -z "${MUTANTS_DIR:-}" ]; then rm -rf "$dir"; fi
[ "$survived" = 0 ] && [ "$broken" = 0 ]
