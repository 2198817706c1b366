/*
 * hist.c - mt_query_stats and mt_query_histogram on a whole model: the
 * selection's allocations, in the model's order, fed to the stats
 * accumulator (statsacc.c, mt_stats_acc), which owns every figure; the
 * filtered peak, a figure of the curve, from mt_query_curve.
 */
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "statsacc.h"

/* An accumulator of the figures want (MTA_STATS_*) holding the
 * selection's allocations; NULL when out of memory. */
static mt_stats_acc *selection_acc(const mt_selection *s, unsigned want)
{
    const mt_model *m = s->m;
    mt_stats_acc *acc = mta_stats_acc_new_for(s->live_at, want);
    if (!acc)
        return NULL;
    size_t n = mta_n_allocs(m);
    const mt_alloc *v = m->whole->allocs.v;
    for (size_t i = 0; i < n; i++)
        if (mta_selection_has(s, i) && mt_stats_acc_add(acc, m, &v[i]) < 0) {
            mt_stats_acc_free(acc);
            return NULL;
        }
    return acc;
}

mt_histogram *mt_query_histogram(const mt_selection *s, mt_hist_kind kind)
{
    mt_stats_acc *acc = selection_acc(s, kind == MT_HIST_SIZE ? MTA_STATS_SIZE : MTA_STATS_LIFE);
    mt_histogram *h = NULL;
    mt_stats st;
    if (acc && mt_stats_acc_finish(acc, s->m, &st, kind == MT_HIST_SIZE ? &h : NULL,
                                   kind == MT_HIST_SIZE ? NULL : &h) < 0)
        h = NULL;
    mt_stats_acc_free(acc);
    return h;
}

void mt_query_stats(const mt_selection *s, mt_stats *o)
{
    const mt_model *m = s->m;
    mt_stats_acc *acc = selection_acc(s, MTA_STATS_TOTALS | MTA_STATS_LIST);
    if (acc)
        mta_stats_acc_median(acc);
    if (!acc || mt_stats_acc_finish(acc, m, o, NULL, NULL) < 0) {
        /* out of memory: the model's own facts alone */
        mt_stats_acc_free(acc);
        acc = mta_stats_acc_new_for(s->live_at, 0);
        if (!acc || mt_stats_acc_finish(acc, m, o, NULL, NULL) < 0)
            memset(o, 0, sizeof *o);
        mt_stats_acc_free(acc);
        return;
    }
    mt_stats_acc_free(acc);
    if (o->total.allocs == mta_n_allocs(m))
        return;   /* everything is selected: the model's own peak */
    mt_curve *c = mt_query_curve(s, 0, m->end + 1, 1);
    if (c) {
        o->peak_filtered = c->peak_filtered_est;
        o->peak_filtered_bytes = c->peak_filtered_est.bytes;
        o->peak_filtered_time = c->peak_filtered_time;
        mt_curve_free(c);
    }
}
