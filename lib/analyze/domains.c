/*
 * domains.c - the table of a model's OCaml 5 domains (domains.h) and its
 * public view, mt_model_domains.
 */
#include <stddef.h>

#include "domains.h"

/* The domain takes mt_alloc's last padding byte: the record must not grow. */
_Static_assert(offsetof(mt_alloc, domain) + 1 == sizeof(mt_alloc) &&
                   sizeof(mt_alloc) == offsetof(mt_alloc, verdict) + 2,
               "mt_alloc.domain fits in the padding");
_Static_assert(MT_MAX_DOMAINS <= 256, "a domain index fits in a byte");

int mta_domain_add(mt_model *m, unsigned domain)
{
    for (unsigned i = 0; i < m->n_domains; i++)
        if (m->domain_ids[i] == domain) {
            m->domain_last = i;
            return (int)i;
        }
    if (m->n_domains == MT_MAX_DOMAINS || domain > UINT16_MAX)
        return -1;
    m->domain_ids[m->n_domains] = (uint16_t)domain;
    m->domain_last = m->n_domains;
    return (int)m->n_domains++;
}

size_t mt_model_domains(const mt_model *m, unsigned *out, size_t cap)
{
    for (size_t i = 0; i < m->n_domains && i < cap; i++)
        out[i] = m->domain_ids[i];
    return m->n_domains;
}
