/*
 * domains.c - the table of a model's OCaml 5 domains (domains.h) and its
 * public view, mt_model_domains.
 */
#include <stddef.h>

#include "model.h"

/* The domain takes mt_alloc's last padding byte: the record must not grow. */
_Static_assert(offsetof(mt_alloc, domain) + 1 == sizeof(mt_alloc) &&
                   sizeof(mt_alloc) == offsetof(mt_alloc, verdict) + 2,
               "mt_alloc.domain fits in the padding");
_Static_assert(MT_MAX_DOMAINS <= 256, "a domain index fits in a byte");

int mta_domain_add(mta_domains *d, unsigned domain)
{
    for (unsigned i = 0; i < d->n; i++)
        if (d->ids[i] == domain) {
            d->last = i;
            return (int)i;
        }
    if (d->n == MT_MAX_DOMAINS || domain > UINT16_MAX)
        return -1;
    d->ids[d->n] = (uint16_t)domain;
    d->last = d->n;
    return (int)d->n++;
}

size_t mt_model_domains(const mt_model *m, unsigned *out, size_t cap)
{
    for (size_t i = 0; i < m->domains.n && i < cap; i++)
        out[i] = m->domains.ids[i];
    return m->domains.n;
}
