/*
 * kind.c - what made an allocation, as reports and filters name it.
 *
 * The trace format's allocation source says it. In C traces (word size 8)
 * the recorder writes External for the malloc family and Major for
 * anonymous memory the program mapped itself (mmap, mremap growth): "malloc"
 * and "mmap". OCaml traces keep their sources' names (minor, major,
 * external); the kind: filter clause matches malloc = External there too,
 * and mmap nothing. See docs/format.md.
 */
#include "filter.h"
#include "model.h"

const char *const mta_kind_names[MTA_NKINDS] = {"malloc", "mmap"};

static int is_c_trace(const mt_model *m)
{
    return m->info.word_size == 8;
}

int mta_kind_of(const mt_model *m, const mt_alloc *a)
{
    if (a->source == MT_SOURCE_EXTERNAL)
        return MTA_KIND_MALLOC;
    if (a->source == MT_SOURCE_MAJOR && is_c_trace(m))
        return MTA_KIND_MMAP;
    return -1;
}

const char *mt_source_kind_name(const mt_model *m, unsigned source)
{
    static const char *const ocaml[3] = {"minor", "major", "external"};
    if (is_c_trace(m) && source == MT_SOURCE_EXTERNAL)
        return "malloc";
    if (is_c_trace(m) && source == MT_SOURCE_MAJOR)
        return "mmap";
    return source < 3 ? ocaml[source] : "external";
}

const char *mt_alloc_kind_name(const mt_model *m, const mt_alloc *a)
{
    return mt_source_kind_name(m, a->source);
}
