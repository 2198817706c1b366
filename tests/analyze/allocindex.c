/*
 * allocindex.c - unit test of the allocation index (memtrace/stream.h):
 * written from an unfiltered folded read, folded again with a filter it
 * gives the model and the on_fold calls (same allocations, same order,
 * same seq) of a read of the trace with that filter, bit for bit; an
 * index of another trace or model is refused; any byte changed, any cut,
 * and records out of range under a good hash (a forged file) make a fold
 * fail with a message, never succeed or crash.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/load.h"
#include "memtrace/analyze.h"
#include "memtrace/stream.h"
#include "testtrace.h"

static const mt_location locs[6] = {
    {"a.c", "main", 1, 0, 0},  {"a.c", "parse", 2, 0, 0}, {"a.c", "load", 3, 0, 0},
    {"b.c", "cache_put", 4, 0, 0}, {"b.c", "grow", 5, 0, 0}, {"c.c", "leak", 6, 0, 0},
};

static int resolve(void *ctx, mt_location_code code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 0x100 || code >= 0x100 + 6)
        return -1;
    *l = &locs[code - 0x100];
    *n = 1;
    return 0;
}

static uint64_t rnd_state = 0x2545F4914F6CDD1DULL;
static uint64_t rnd(void) { return tt_rnd(&rnd_state); }

/* Allocations on a few stacks, freed soon, late (out of order) or never,
 * some promoted, of every source. */
static int write_trace(const char *path, size_t n)
{
    int fd;
    mt_writer *w = tt_writer_open(path, "index-test", 0.01, resolve, &fd);
    if (!w)
        return -1;
    enum { PEND = 512 };
    mt_obj_id pend[PEND];
    size_t np = 0;
    mt_timestamp t = TT_START;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        t += 1 + (int64_t)(rnd() % 50);
        uint64_t st[4] = {0x100, 0x101 + rnd() % 2, 0x103 + rnd() % 2, 0x105};
        size_t len = 1 + rnd() % 4;
        uint64_t words = 1 + rnd() % 2000;
        mt_obj_id id;
        rc |= mt_writer_put_alloc(w, t, words, 1 + words / 200, (mt_source)(rnd() % 3), st, len,
                                  &id);
        uint64_t r = rnd() % 100;
        if (r < 10)
            rc |= mt_writer_put_promote(w, t + 1, id);
        if (r < 5)
            continue; /* never freed */
        if (np == PEND) { /* free a random pending one */
            size_t k = rnd() % PEND;
            rc |= mt_writer_put_collect(w, t, pend[k]);
            pend[k] = pend[--np];
        }
        pend[np++] = id;
        if (r > 60) { /* most die at once */
            rc |= mt_writer_put_collect(w, t + (int64_t)(rnd() % 3000), pend[--np]);
        }
    }
    rc |= mt_writer_close(w);
    close(fd);
    return rc;
}

/* What on_fold sees: a running hash of every call, and the writer. */
struct seen {
    uint64_t hash, n;
    mt_alloc_index_writer *w;
};

static int on_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    struct seen *s = ctx;
    uint64_t v[8] = {(uint64_t)a->time, (uint64_t)a->collect, (uint64_t)a->promote, a->size,
                     a->n_samples, a->stack, (uint64_t)a->source << 8 | a->carried, seq};
    for (int i = 0; i < 8; i++)
        s->hash = (s->hash ^ v[i]) * 0x100000001b3ULL;
    s->n++;
    if (s->w && mt_alloc_index_writer_add(s->w, a, seq) < 0)
        return -1;
    return 0;
}

/* Writes every allocation to the index as on_fold does, but forges the
 * 100th collected one as k says. */
struct forge {
    mt_alloc_index_writer *w;
    int k;
    uint64_t n;
};

static int forge_fold(void *ctx, const mt_model *m, const mt_alloc *a, uint64_t seq)
{
    (void)m;
    struct forge *g = ctx;
    mt_alloc b = *a;
    if (a->collect != MT_TIME_NEVER && g->n++ == 100) {
        if (g->k == 0)
            b.stack = UINT32_MAX - 1;
        else if (g->k == 1)
            seq = UINT64_MAX / 2;
        else if (g->k == 2)
            b.n_samples = 0;
        else
            b.collect = b.time - 10;
    }
    return mt_alloc_index_writer_add(g->w, &b, seq);
}

static mt_model *read_folded(const char *path, const mt_filter *f, mt_timedelta peak,
                             struct seen *s)
{
    mt_model_options o = {0};
    o.fold = 1;
    o.fold_filter = f;
    o.fold_live_at = MT_TIME_END;
    o.fold_peak_known = f && mt_filter_uses_peak(f);
    o.fold_peak = peak;
    o.on_fold = on_fold;
    o.fold_ctx = s;
    char *err = NULL;
    mt_model *m = mt_model_load(path, &o, &err);
    if (!m)
        fprintf(stderr, "%s: %s\n", path, err ? err : "out of memory");
    free(err);
    return m;
}

struct costs { size_t n; uint64_t hash; };

static int each(void *ctx, mt_node_id node, const mt_cost *c)
{
    struct costs *k = ctx;
    k->hash = (k->hash ^ node) * 0x100000001b3ULL;
    const unsigned char *b = (const unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; i++)
        k->hash = (k->hash ^ b[i]) * 0x100000001b3ULL;
    k->n++;
    return 0;
}

/* The stacks of m under f, their costs bit for bit, hashed. */
static struct costs costs_of(const mt_model *m, const mt_filter *f)
{
    struct costs k = {0, 0xcbf29ce484222325ULL};
    mt_selection *s = mt_select_sites(m, f, MT_TIME_END, NULL, NULL);
    if (s) {
        mt_selection_each_stack(s, each, &k);
        mt_cost t = mt_selection_total(s);
        each(&k, 0, &t);
        mt_selection_free(s);
    } else {
        k.n = (size_t)-1;
    }
    return k;
}

static mt_alloc_index *open_index(const char *path, const mt_alloc_index_id *id, char **why)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *why = strdup("cannot open");
        return NULL;
    }
    return mt_alloc_index_open_fd(fd, id, why);
}

/* Open and fold the index at path: 1 when it succeeds. */
static int folds(const char *path, const mt_alloc_index_id *id, const mt_model *base, char **why)
{
    *why = NULL;
    mt_alloc_index *x = open_index(path, id, why);
    if (!x)
        return 0;
    mt_alloc_index_fold_options o = {0};
    mt_model *m = mt_alloc_index_fold(x, base, &o, why);
    mt_alloc_index_close(x);
    mt_model_free(m);
    return m != NULL;
}

static int copy_file(const char *from, const char *to, size_t cut)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int rc = in && out ? 0 : -1;
    size_t n = 0;
    int c;
    while (rc == 0 && n < cut && (c = getc(in)) != EOF) {
        putc(c, out);
        n++;
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return rc;
}

int main(void)
{
    char dir[] = "/tmp/mt-allocindex.XXXXXX";
    const char *tmp = getenv("MT_TMP");
    char trace[512], index[512], bad[512], other[512];
    if (tmp) {
        snprintf(dir, sizeof dir, "%s", "");
    } else if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *d = tmp ? tmp : dir;
    snprintf(trace, sizeof trace, "%s/ix.ctf", d);
    snprintf(index, sizeof index, "%s/ix.ctf.mtidx", d);
    snprintf(bad, sizeof bad, "%s/bad.mtidx", d);
    snprintf(other, sizeof other, "%s/other.ctf", d);
    if (write_trace(trace, 60000) < 0 || write_trace(other, 1000) < 0) {
        CHECK(0, "test traces written");
        return 1;
    }

    /* the index, written by the unfiltered read */
    mt_alloc_index_id id;
    CHECK(mt_alloc_index_trace_id(trace, &id) == 0, "the trace's identity");
    int fd = open(index, O_RDWR | O_CREAT | O_TRUNC, 0644);
    struct seen all = {0, 0, mt_alloc_index_writer_new(fd)};
    mt_model *base = read_folded(trace, NULL, 0, &all);
    CHECK(base && mt_alloc_index_writer_finish(all.w, base, &id) == 0, "index written (%llu allocations)",
          (unsigned long long)all.n);
    close(fd);
    if (!base)
        return 1;
    struct stat st;
    stat(index, &st);
    printf("(%.1f bytes an allocation)\n", (double)st.st_size / (double)all.n);
    char *why = NULL;
    mt_alloc_index *x = open_index(index, &id, &why);
    CHECK(x && mt_alloc_index_matches(x, base, NULL), "index opened and matching its model (%s)",
          why ? why : "");
    free(why);
    if (!x)
        return 1;

    /* filters: from the index as from the trace, bit for bit */
    static const char *const filters[] = {
        "", "size:>=4k", "lifetime:<1ms", "collect:never", "live:peak", "alloc:0.2s-1s",
        "inside:grow", "!inside:parse+size:<=1k", "hide:main", "live:0.5s", "kind:mmap",
    };
    mt_timedelta peak = mt_model_peak_time(base);
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        char *err = NULL;
        mt_filter *f = mt_filter_parse(filters[i], &err, NULL);
        if (!f) {
            CHECK(0, "filter '%s' parses: %s", filters[i], err);
            free(err);
            continue;
        }
        struct seen a = {0xcbf29ce484222325ULL, 0, NULL}, b = a;
        mt_model *mr = read_folded(trace, f, peak, &a);
        mt_alloc_index_fold_options o = {f, peak, on_fold, &b, NULL, NULL};
        mt_model *mi = mt_alloc_index_fold(x, base, &o, &err);
        struct costs cr = mr ? costs_of(mr, f) : (struct costs){0, 0};
        struct costs ci = mi ? costs_of(mi, f) : (struct costs){0, 1};
        mt_cost sr[3], si[3];
        int src = mr && mi && mt_model_folded_by_source(mr, sr) && mt_model_folded_by_source(mi, si) &&
                  !memcmp(sr, si, sizeof sr);
        CHECK(mr && mi && a.n == b.n && a.hash == b.hash && cr.n == ci.n && cr.hash == ci.hash &&
                  src && cr.n > 0,
              "'%s': from the index as from the trace (%llu allocations folded, %zu stacks)%s%s",
              filters[i], (unsigned long long)b.n, ci.n, err ? ": " : "", err ? err : "");
        free(err);
        mt_model_free(mr);
        mt_model_free(mi);
        mt_filter_free(f);
    }

    /* another trace's model, another trace */
    mt_model *om = read_folded(other, NULL, 0, &(struct seen){0, 0, NULL});
    CHECK(om && !mt_alloc_index_matches(x, om, &why) && why, "another model refused: %s",
          why ? why : "");
    free(why);
    mt_alloc_index_id oid;
    mt_alloc_index_trace_id(other, &oid);
    CHECK(!open_index(index, &oid, &why) && why, "another trace refused: %s", why ? why : "");
    free(why);
    mt_model_free(om);
    mt_alloc_index_close(x);

    /* every cut, at a sample of lengths; a byte changed anywhere */
    size_t size = (size_t)st.st_size, ok = 0, cuts = 0;
    for (size_t cut = 0; cut < size; cut += 1 + cut / 3 + rnd() % 97) {
        copy_file(index, bad, cut);
        ok += folds(bad, &id, base, &why);
        free(why);
        cuts++;
    }
    CHECK(ok == 0, "%zu cuts: none folds", cuts);
    FILE *in = fopen(index, "rb");
    unsigned char *good = malloc(size);
    CHECK(in && good && fread(good, 1, size, in) == size, "index read back");
    if (in)
        fclose(in);
    size_t flips = 0;
    ok = 0;
    int said = 1;
    for (size_t pos = 0; good && pos < size; pos += 1 + rnd() % (size / 300 + 1)) {
        unsigned char *b = malloc(size);
        memcpy(b, good, size);
        b[pos] ^= (unsigned char)(1 + rnd() % 255);
        FILE *o = fopen(bad, "wb");
        fwrite(b, 1, size, o);
        fclose(o);
        free(b);
        ok += folds(bad, &id, base, &why);
        said &= why != NULL;
        free(why);
        flips++;
    }
    CHECK(ok == 0 && said && flips > 200, "%zu bytes changed: none folds, each says why", flips);
    free(good);

    /* forged: records out of range under a good hash and header */
    static const char *const forged[] = {"a node past the trie", "a seq past the allocations",
                                         "no samples", "collected before allocated"};
    for (int k = 0; k < 4; k++) {
        fd = open(bad, O_RDWR | O_CREAT | O_TRUNC, 0644);
        struct forge g = {mt_alloc_index_writer_new(fd), k, 0};
        mt_model_options mo = {0};
        mo.fold = 1;
        mo.fold_live_at = MT_TIME_END;
        mo.on_fold = forge_fold;
        mo.fold_ctx = &g;
        char *err = NULL;
        mt_model *m = mt_model_load(trace, &mo, &err);
        free(err);
        int written = m && mt_alloc_index_writer_finish(g.w, m, &id) == 0;
        close(fd);
        int folded = folds(bad, &id, base, &why);
        CHECK(written && !folded && why && strstr(why, "out of range"), "forged, %s: refused (%s)",
              forged[k], why ? why : "");
        free(why);
        mt_model_free(m);
    }

    mt_model_free(base);
    if (!tmp) {
        unlink(trace);
        unlink(index);
        unlink(bad);
        unlink(other);
        rmdir(dir);
    }
    return failures != 0;
}
