/*
 * domains.h - the OCaml 5 domains of a model's allocations: mt_alloc.domain
 * is an index into the model's table of domain numbers (mt_model.domain_ids,
 * in order of first sight), which a byte holds since a trace has at most
 * MT_MAX_DOMAINS of them (the reader refuses more). Internal to lib/analyze.
 */
#ifndef MTA_DOMAINS_H
#define MTA_DOMAINS_H

#include "model.h"

/* Why a model cannot take another domain. */
#define MTA_DOMAINS_FULL "more than 256 OCaml domains"

/* The index of domain number `domain` in m's table, added on first sight;
 * -1 when the table is full. (domains.c) */
int mta_domain_add(mt_model *m, unsigned domain);

/* The same, with the domain of the previous allocation found first (a
 * trace's packets, hence runs of allocations, are each of one domain). */
static inline int mta_domain_index(mt_model *m, unsigned domain)
{
    if (__builtin_expect(m->n_domains != 0 && m->domain_ids[m->domain_last] == domain, 1))
        return (int)m->domain_last;
    return mta_domain_add(m, domain);
}

/* Is allocation a of domain number `domain`? */
static inline int mta_alloc_in_domain(const mt_model *m, const mt_alloc *a, unsigned domain)
{
    return a->domain < m->n_domains && m->domain_ids[a->domain] == domain;
}

#endif
