/*
 * cache.c - the viewer's memory (see cache.h): selections and answers kept
 * between requests, and the budget that bounds them together with the
 * requests in flight.
 *
 * One lock guards it all; nothing slow runs under it except freeing cache
 * entries. Selections are reference-counted, so that giving memory back
 * never frees one a request is still reading; requests that need a
 * selection or an answer another request is computing wait for it instead
 * of computing it again. When the last request in flight finishes, freed
 * memory is handed back to the system (malloc_trim), so that a burst of
 * heavy requests does not leave the process at its high-water mark.
 */
#include "cache.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ANSWER_MAX_BYTES (16u << 20)   /* larger answers are never kept */
#define SMALL_REQUEST (256u << 10)     /* never waits (e.g. info) */
#define TRIM_AFTER (16u << 20)         /* trim once requests reserved this much */

struct vcache_sel {
    char *key;               /* canonical filter text; NULL: free slot */
    mt_selection *sel;       /* NULL while being built */
    mt_filter *filter;
    void *aux;               /* what the builder kept with it (freed with aux_free) */
    size_t bytes;            /* estimated size, once built (cached ones only) */
    int refs;                /* requests using it (cached entries) */
    int private_;            /* 1: a request's own entry, not in the cache (set once) */
    int building;
    unsigned long last_use;
};

struct answer {
    char *key;               /* endpoint and parameters; NULL: free slot */
    char *body;              /* NULL while pending */
    size_t len;
    int pending;             /* a request is computing it: others wait */
    unsigned long last_use;
};

/* A request waiting for room, in the queue (on its own stack). */
struct vcache_waiter {
    struct vcache_waiter *next;
};

struct vcache {
    const mt_model *model;
    void (*aux_free)(void *);
    size_t budget;           /* SIZE_MAX: none */
    pthread_mutex_t lock;
    pthread_cond_t built;    /* a selection or an answer is ready */
    pthread_cond_t room;     /* a request finished */
    unsigned long clock;
    struct vcache_sel sels[VCACHE_SEL_SLOTS];
    struct answer answers[VCACHE_ANSWER_SLOTS];
    size_t sel_bytes;        /* estimated bytes of the cached selections */
    size_t answer_bytes;     /* bytes of the cached answers */
    size_t reserved;         /* estimates of the requests in flight */
    int running;             /* requests in flight */
    int waiting;             /* requests waiting for room */
    struct vcache_waiter *queue;  /* the waiting requests, first come first */
    size_t since_trim;       /* bytes reserved since the last malloc_trim */
};

vcache *vcache_new(const mt_model *m, size_t budget)
{
    vcache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->model = m;
    c->budget = budget ? budget : SIZE_MAX;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->built, NULL);
    pthread_cond_init(&c->room, &ca);
    pthread_condattr_destroy(&ca);
    return c;
}

static void sel_clear(vcache *c, struct vcache_sel *e)
{
    if (!e->private_)
        c->sel_bytes -= e->bytes;
    free(e->key);
    mt_selection_free(e->sel);
    if (e->aux && c->aux_free)
        c->aux_free(e->aux);
    mt_filter_free(e->filter);
    memset(e, 0, sizeof *e);
}

static void answer_clear(vcache *c, struct answer *r)
{
    if (r->body)
        c->answer_bytes -= r->len + strlen(r->key);
    free(r->key);
    free(r->body);
    memset(r, 0, sizeof *r);
}

void vcache_free(vcache *c)
{
    if (!c)
        return;
    for (int i = 0; i < VCACHE_SEL_SLOTS; i++)
        sel_clear(c, &c->sels[i]);
    for (int i = 0; i < VCACHE_ANSWER_SLOTS; i++)
        answer_clear(c, &c->answers[i]);
    pthread_cond_destroy(&c->built);
    pthread_cond_destroy(&c->room);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void vcache_set_aux_free(vcache *c, void (*aux_free)(void *))
{
    c->aux_free = aux_free;
}

void vcache_set_budget(vcache *c, size_t budget)
{
    pthread_mutex_lock(&c->lock);
    c->budget = budget ? budget : SIZE_MAX;
    pthread_mutex_unlock(&c->lock);
}

size_t vcache_budget(const vcache *c)
{
    return c->budget == SIZE_MAX ? 0 : c->budget;
}

/* What the caches may hold: selections half the budget, answers a quarter;
 * the rest is for the requests in flight. */
static size_t sel_cap(const vcache *c)
{
    return c->budget / 2;
}

static size_t answer_cap(const vcache *c)
{
    return c->budget / 4;
}

/* Estimated bytes of a selection, from its counts: a bit per allocation,
 * a slot and a stack entry (id and cost) per node, and a node map and own
 * nodes when frames are hidden (its trie then differs from the model's). */
static size_t sel_estimate(const mt_model *m, const mt_selection *s)
{
    size_t nodes = mt_selection_n_nodes(s), model_nodes = mt_model_n_nodes(m);
    size_t b = mt_model_n_allocs(m) / 8 + nodes * (4 + 4 + sizeof(mt_cost)) + 256;
    if (nodes != model_nodes)
        b += model_nodes * 4 + nodes * 48;
    return b;
}

/* Under the lock: the least recently used idle entry of either cache. */
static int evict_one(vcache *c, int sels, int answers)
{
    struct vcache_sel *se = NULL;
    struct answer *an = NULL;
    for (int i = 0; sels && i < VCACHE_SEL_SLOTS; i++) {
        struct vcache_sel *e = &c->sels[i];
        if (e->key && e->sel && e->refs == 0 && !e->building &&
            (!se || e->last_use < se->last_use))
            se = e;
    }
    for (int i = 0; answers && i < VCACHE_ANSWER_SLOTS; i++) {
        struct answer *r = &c->answers[i];
        if (r->key && r->body && (!an || r->last_use < an->last_use))
            an = r;
    }
    if (se && (!an || se->last_use <= an->last_use)) {
        sel_clear(c, se);
        return 1;
    }
    if (an) {
        answer_clear(c, an);
        return 1;
    }
    return 0;
}

/* Under the lock: give back idle cache entries until need more bytes fit. */
static int make_room(vcache *c, size_t need)
{
    for (;;) {
        size_t used = c->sel_bytes + c->answer_bytes + c->reserved;
        if (used <= c->budget && need <= c->budget - used)
            return 1;
        if (!evict_one(c, 1, 1))
            return 0;
    }
}

/* ------------------------------------------------------------------ */
/* Selections                                                          */

vcache_sel *vcache_sel_get(vcache *c, mt_filter *f, char *key, vcache_build_fn build,
                           void *ctx, char **err)
{
    *err = NULL;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        struct vcache_sel *hit = NULL;
        for (int i = 0; i < VCACHE_SEL_SLOTS; i++)
            if (c->sels[i].key && !strcmp(c->sels[i].key, key))
                hit = &c->sels[i];
        if (!hit)
            break;
        if (hit->building) {  /* another request is on it: wait */
            pthread_cond_wait(&c->built, &c->lock);
            continue;
        }
        hit->refs++;
        hit->last_use = ++c->clock;
        pthread_mutex_unlock(&c->lock);
        free(key);
        mt_filter_free(f);
        return hit;
    }
    /* a free slot, else the least recently used idle one */
    struct vcache_sel *slot = NULL;
    for (int i = 0; i < VCACHE_SEL_SLOTS; i++) {
        struct vcache_sel *e = &c->sels[i];
        if (!e->key) {
            slot = e;
            break;
        }
        if (e->refs == 0 && !e->building && (!slot || e->last_use < slot->last_use))
            slot = e;
    }
    struct vcache_sel *e = slot;
    if (slot) {
        sel_clear(c, slot);
        slot->key = key;
        slot->filter = f;
        slot->building = 1;
        slot->refs = 1;
        slot->last_use = ++c->clock;
    }
    pthread_mutex_unlock(&c->lock);
    if (!slot) {  /* every slot busy: a private entry for this request */
        e = calloc(1, sizeof *e);
        if (!e) {
            free(key);
            mt_filter_free(f);
            return NULL;
        }
        e->key = key;
        e->filter = f;
        e->private_ = 1;
    }
    /* build outside the lock: other requests go on meanwhile */
    void *aux = NULL;
    size_t aux_bytes = 0;
    mt_selection *sel = build(ctx, f, &aux, &aux_bytes, err);
    if (!slot) {
        e->aux = aux;
        if (!sel) {
            sel_clear(c, e);
            free(e);
            return NULL;
        }
        e->sel = sel;
        return e;
    }
    size_t bytes = sel ? sel_estimate(c->model, sel) + aux_bytes : 0;
    pthread_mutex_lock(&c->lock);
    slot->building = 0;
    slot->aux = aux;
    if (sel) {
        slot->sel = sel;
        slot->bytes = bytes;
        c->sel_bytes += bytes;
        while (c->sel_bytes > sel_cap(c) && evict_one(c, 1, 0)) {
        }
    } else {
        sel_clear(c, slot);  /* waiters retry */
        e = NULL;
    }
    pthread_cond_broadcast(&c->built);
    pthread_mutex_unlock(&c->lock);
    return e;
}

const mt_selection *vcache_sel_selection(const vcache_sel *e)
{
    return e->sel;
}

void *vcache_sel_aux(const vcache_sel *e)
{
    return e->aux;
}

const char *vcache_sel_key(const vcache_sel *e)
{
    return e->key;
}

void vcache_sel_release(vcache *c, vcache_sel *e)
{
    if (!e)
        return;
    if (e->private_) {
        sel_clear(c, e);
        free(e);
        return;
    }
    pthread_mutex_lock(&c->lock);
    e->refs--;
    while (c->sel_bytes > sel_cap(c) && evict_one(c, 1, 0)) {
    }
    pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------------ */
/* Answers                                                             */

char *vcache_answer_claim(vcache *c, const char *key, size_t *len, int *claimed)
{
    *claimed = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        struct answer *hit = NULL;
        for (int i = 0; i < VCACHE_ANSWER_SLOTS; i++)
            if (c->answers[i].key && !strcmp(c->answers[i].key, key))
                hit = &c->answers[i];
        if (!hit)
            break;
        if (hit->pending) {
            pthread_cond_wait(&c->built, &c->lock);
            continue;
        }
        char *copy = malloc(hit->len + 1);
        if (copy) {
            memcpy(copy, hit->body, hit->len + 1);
            *len = hit->len;
            hit->last_use = ++c->clock;
        }
        pthread_mutex_unlock(&c->lock);
        return copy;
    }
    struct answer *slot = NULL;
    for (int i = 0; i < VCACHE_ANSWER_SLOTS; i++) {
        struct answer *r = &c->answers[i];
        if (!r->key) {
            slot = r;
            break;
        }
        if (!r->pending && (!slot || r->last_use < slot->last_use))
            slot = r;
    }
    char *k = slot ? strdup(key) : NULL;
    if (k) {
        answer_clear(c, slot);
        slot->key = k;
        slot->pending = 1;
        *claimed = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

void vcache_answer_fill(vcache *c, const char *key, const char *body, size_t len)
{
    size_t cost = len + strlen(key);
    char *b = NULL;
    if (body && len <= ANSWER_MAX_BYTES && cost <= answer_cap(c) / 2 &&
        (b = malloc(len + 1)) != NULL)
        memcpy(b, body, len + 1);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < VCACHE_ANSWER_SLOTS; i++) {
        struct answer *r = &c->answers[i];
        if (r->key && r->pending && !strcmp(r->key, key)) {
            if (b) {
                /* r has no body yet: eviction passes it over */
                while (c->answer_bytes + cost > answer_cap(c) && evict_one(c, 0, 1)) {
                }
                r->pending = 0;
                r->body = b;
                r->len = len;
                r->last_use = ++c->clock;
                c->answer_bytes += cost;
                b = NULL;
            } else {
                answer_clear(c, r);
            }
            break;
        }
    }
    pthread_cond_broadcast(&c->built);
    pthread_mutex_unlock(&c->lock);
    free(b);
}

/* ------------------------------------------------------------------ */
/* Budget                                                              */

/* Under the lock: take the reservation. */
static void admit(vcache *c, size_t estimate)
{
    c->running++;
    c->reserved += estimate;
    c->since_trim += estimate;
}

/* Under the lock: may a request of this size start now? */
static int may_start(vcache *c, size_t estimate)
{
    return make_room(c, estimate) || c->running == 0;
}

/* Requests that wait are served in arrival order: only the first of the
 * queue may start, so that a large request is not passed over forever by
 * smaller ones (it starts at the latest when nothing else runs). */
int vcache_admit(vcache *c, size_t estimate, const char **why)
{
    pthread_mutex_lock(&c->lock);
    if (estimate <= SMALL_REQUEST || (!c->queue && may_start(c, estimate))) {
        admit(c, estimate);
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    if (c->waiting >= VCACHE_MAX_WAITING) {
        pthread_mutex_unlock(&c->lock);
        *why = "too many requests are waiting for memory";
        return -1;
    }
    struct vcache_waiter me = {NULL};
    struct vcache_waiter **tail = &c->queue;
    while (*tail)
        tail = &(*tail)->next;
    *tail = &me;
    c->waiting++;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += VCACHE_WAIT_SECONDS;
    int ok = 0;
    for (;;) {
        if (c->queue == &me && may_start(c, estimate)) {
            ok = 1;
            break;
        }
        if (pthread_cond_timedwait(&c->room, &c->lock, &deadline) == ETIMEDOUT) {
            ok = c->queue == &me && may_start(c, estimate);
            break;
        }
    }
    for (struct vcache_waiter **p = &c->queue; *p; p = &(*p)->next)
        if (*p == &me) {
            *p = me.next;
            break;
        }
    c->waiting--;
    if (ok)
        admit(c, estimate);
    pthread_cond_broadcast(&c->room);  /* the next in the queue may start too */
    pthread_mutex_unlock(&c->lock);
    if (!ok)
        *why = "the requests being answered use the memory budget";
    return ok ? 0 : -1;
}

void vcache_done(vcache *c, size_t estimate)
{
    pthread_mutex_lock(&c->lock);
    c->reserved -= estimate;
    int trim = --c->running == 0 && c->since_trim >= TRIM_AFTER;
    if (trim)
        c->since_trim = 0;
    pthread_cond_broadcast(&c->room);
    pthread_mutex_unlock(&c->lock);
    if (trim)
        malloc_trim(0);  /* hand what the requests freed back to the system */
}
