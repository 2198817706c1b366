/*
 * clause.h - whether one allocation passes one clause of a filter: the
 * test every route applies (select.c over a whole model's allocations,
 * mta_alloc_passes in filter.c for a fold and a stream), inline where it
 * is called in a loop. Internal.
 */
#ifndef MTA_CLAUSE_H
#define MTA_CLAUSE_H

#include "domains.h"
#include "filter.h"
#include "model.h"
#include "scale.h"

/* inside: the clause's per-node table (inside: clauses), or NULL when the
 * caller applies those itself; live_t: the clause's live time resolved. */
static inline int mta_clause_matches(const mt_model *m, const mta_clause *c, const mt_alloc *a,
                                      const uint8_t *inside, mt_timedelta live_t)
{
    switch (c->kind) {
    case MTA_ALLOC: return a->time >= c->lo && a->time <= c->hi;
    case MTA_LIVE_AT: return mta_is_live(a, live_t);
    case MTA_LIVE_RANGE: return a->time <= c->hi && a->collect > c->lo;
    case MTA_COLLECT: return a->collect != MT_TIME_NEVER && a->collect >= c->lo && a->collect <= c->hi;
    case MTA_COLLECT_NEVER: return a->collect == MT_TIME_NEVER;
    case MTA_SIZE: return (int64_t)a->size >= c->lo && (int64_t)a->size <= c->hi;
    case MTA_LIFETIME: {
        int64_t end = a->collect == MT_TIME_NEVER ? m->end : a->collect;
        int64_t life = end - a->time;
        return life >= c->lo && life <= c->hi;
    }
    case MTA_SOURCE: return (c->sources >> a->source) & 1;
    case MTA_KIND: {
        int k = mta_kind_of(m, a);
        return k >= 0 && ((c->sources >> k) & 1);
    }
    case MTA_VERDICT: return (c->sources >> a->verdict) & 1;
    case MTA_DOMAIN: return mta_alloc_in_domain(&m->domains, a, (unsigned)c->lo);
    case MTA_INSIDE: return inside[a->stack];
    case MTA_HIDE: return 1;
    }
    return 1;
}

#endif
