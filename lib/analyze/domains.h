/*
 * domains.h - the OCaml 5 domains of a model's allocations: mt_alloc.domain
 * is an index into a table of domain numbers (mta_domains, in order of
 * first sight), which a byte holds since a trace has at most
 * MT_MAX_DOMAINS of them (the reader refuses more). A model holds one
 * table; the reading thread of a folded model keeps its own and sends it
 * with each batch. Internal to lib/analyze.
 */
#ifndef MTA_DOMAINS_H
#define MTA_DOMAINS_H

#include <stdint.h>

#include "memtrace/analyze.h"

typedef struct mta_domains {
    uint16_t ids[MT_MAX_DOMAINS];  /* domain numbers by index */
    unsigned n, last;              /* how many; the index found last */
} mta_domains;

/* Why a model cannot take another domain. */
#define MTA_DOMAINS_FULL "more than 256 OCaml domains"

/* The index of domain number `domain` in d, added on first sight; -1 when
 * the table is full. (domains.c) */
int mta_domain_add(mta_domains *d, unsigned domain);

/* The same, with the domain of the previous allocation found first (a
 * trace's packets, hence runs of allocations, are each of one domain). */
static inline int mta_domain_index(mta_domains *d, unsigned domain)
{
    if (__builtin_expect(d->n != 0 && d->ids[d->last] == domain, 1))
        return (int)d->last;
    return mta_domain_add(d, domain);
}

/* Is allocation a of domain number `domain`? */
static inline int mta_alloc_in_domain(const mta_domains *d, const mt_alloc *a, unsigned domain)
{
    return a->domain < d->n && d->ids[a->domain] == domain;
}

#endif
