/*
 * bindsel.h - what bind.c and bindfold.c share of the binding
 * (memtrace/bind.h): the selection bundle, the error text maker and the
 * one way an opening read gives its warnings back as text.
 */
#ifndef MT_PRESENT_BINDSEL_H
#define MT_PRESENT_BINDSEL_H

#include "memtrace/bind.h"

struct mt_bind_sel {
    const mt_model *m;
    mt_model *own;           /* the model read for this selection alone, or NULL */
    mt_filter *f;
    mt_plumbing *p;
    mt_selection *s;
    mt_timedelta at;
    char *filter_text;
    struct mt_diff_fold *fold;   /* the sums diff needs of a folded read, or NULL */
};

/* The measure named as --by takes it ("alloc", "live", ...), or -1. */
int mta_bind_metric(const char *by);
/* "what: detail" (or "what"), malloc'd; NULL when out of memory. */
char *mta_bind_msg(const char *what, const char *detail);
/* A read of n traces that opens a model (arg: its own), its warnings
 * to warn (NULL: stderr as "memtrace: warning: ..."). NULL with *err. */
typedef mt_model *(*mta_bind_opener)(const char *const *paths, size_t n, void *arg,
                                     mt_warning_fn warn, void *warn_ctx, char **err);
/* opener's model with its warnings in *warnings, one line each in the order
 * they came (malloc'd; NULL when none), as the _warned openers give them.
 * n == 0: "no trace given". */
mt_model *mta_bind_warned(mta_bind_opener opener, const char *const *paths, size_t n, void *arg,
                          char **warnings, char **err);
/* A query's filter and time ("end", "peak", "2.5s"; NULL: end) parsed:
 * 0, or -1 with *err (a bad filter says where). */
int mta_bind_parse(const char *filter, const char *at, mt_filter **f, mt_timedelta *t, char **err);
/* The selection of m by f (taken, freed with the selection or on failure;
 * NULL: everything; a folded model's own filter object) with its text,
 * live at at. NULL with *err on failure. */
mt_bind_sel *mta_bind_select_with(const mt_model *m, mt_filter *f, const char *filter,
                                  mt_timedelta at, int sites, char **err);

#endif
