/*
 * filter.c - parser of the filter language (docs/filters.md) into
 * mt_filter, and its canonical printer. Clauses are separated by
 * whitespace; every error names the column of the problem. Whether one
 * allocation passes a filter's allocation-level clauses (mta_alloc_passes,
 * by clause.h) for the folds and streams.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clause.h"
#include "filter.h"
#include "units.h"

#define OPEN_LO INT64_MIN
#define OPEN_HI (INT64_MAX - 3)  /* below MT_TIME_PEAK/END/NEVER */

typedef struct parser {
    const char *text;
    size_t pos;
    char *err;
    size_t err_pos;
} parser;

static int fail(parser *p, size_t pos, const char *fmt, ...)
{
    if (p->err)
        return -1;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = strlen(msg) + 64;
    p->err = malloc(len);
    if (p->err)
        snprintf(p->err, len, "filter: column %zu: %s", pos + 1, msg);
    p->err_pos = pos;
    return -1;
}

/* ----------------------------------------------------------- quantities */

/* Parse one quantity from s[0..len) at column pos, in the one grammar of
 * sizes and durations (lib/common/units.h; a bare time is in seconds). */
static int quantity(parser *p, const char *s, size_t len, size_t pos, int is_time, int64_t *out)
{
    uint64_t v;
    size_t at = 0;
    int rc = mt_units_parse_n(s, len, is_time ? mt_time_units : mt_size_units,
                              is_time ? MT_US_PER_S : 1, &v, &at);
    if (rc == MT_UNITS_NO_NUMBER)
        return fail(p, pos, "expected a %s (e.g. %s) but found '%.*s'", is_time ? "time" : "size",
                    is_time ? "3s, 250ms" : "4k, 1M", (int)(len ? len : 1), len ? s : " ");
    if (rc == MT_UNITS_TOO_LARGE)
        return fail(p, pos, "%s '%.*s' is too large", is_time ? "time" : "size", (int)len, s);
    if (rc == MT_UNITS_BAD_UNIT)
        return fail(p, pos + at, "unknown unit '%.*s' in %s '%.*s' (use %s)", (int)(len - at),
                    s + at, is_time ? "time" : "size", (int)len, s,
                    is_time ? "us, ms, s, m, h" : "B, k, M, G, T");
    *out = (int64_t)v;
    return 0;
}

/* RANGE: A-B, A-, -B, >=A, >A, <=B, <B, or A. */
static int range(parser *p, const char *s, size_t len, size_t pos, int is_time, int64_t *lo,
                 int64_t *hi)
{
    *lo = is_time ? OPEN_LO : 0;
    *hi = OPEN_HI;
    if (len == 0)
        return fail(p, pos, "missing %s range after ':' (e.g. %s)", is_time ? "time" : "size",
                    is_time ? "1s-3s, >=250ms" : "4k-1M, >=64");
    int64_t v;
    if (s[0] == '>' || s[0] == '<') {
        int eq = len > 1 && s[1] == '=';
        size_t skip = 1 + (size_t)eq;
        if (quantity(p, s + skip, len - skip, pos + skip, is_time, &v) < 0)
            return -1;
        if (s[0] == '>')
            *lo = eq ? v : v + 1;
        else
            *hi = eq ? v : v - 1;
        return 0;
    }
    const char *dash = memchr(s, '-', len);
    if (!dash) {
        if (quantity(p, s, len, pos, is_time, &v) < 0)
            return -1;
        *lo = *hi = v;
        return 0;
    }
    size_t a = (size_t)(dash - s);
    if (a == 0 && len == 1)
        return fail(p, pos, "a range needs at least one end ('-' alone)");
    if (a > 0 && quantity(p, s, a, pos, is_time, lo) < 0)
        return -1;
    if (a + 1 < len && quantity(p, dash + 1, len - a - 1, pos + a + 1, is_time, hi) < 0)
        return -1;
    if (*lo > *hi)
        return fail(p, pos, "empty range '%.*s': its start is after its end", (int)len, s);
    return 0;
}

/* --------------------------------------------------------------- patterns */

/* Compiles pat->text with PCRE2 under the bounds of filter.h; on error
 * names the column (start is the opening '/'). */
static int compile_regex(parser *p, size_t start, mta_pattern *pat)
{
    size_t len = strlen(pat->text);
    if (len > MTA_RE_MAX_PATTERN)
        return fail(p, start + 1, "regular expression too long (%zu bytes, at most %d)", len,
                    MTA_RE_MAX_PATTERN);
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc)
        return fail(p, start, "out of memory");
    pcre2_set_parens_nest_limit(cc, 50);
    int code = 0;
    PCRE2_SIZE off = 0;
    /* Bytes, not UTF-8: names in a trace need not be valid UTF-8 (a
     * pattern's (*UTF) would turn them into match errors, so it is refused,
     * as (*UCP)), and multi-byte characters still match as literal byte
     * sequences. \C is refused too: it has no use on bytes. */
    pat->re = pcre2_compile((PCRE2_SPTR)pat->text, len,
                           PCRE2_NEVER_BACKSLASH_C | PCRE2_NEVER_UTF | PCRE2_NEVER_UCP, &code,
                           &off, cc);
    pcre2_compile_context_free(cc);
    if (!pat->re) {
        PCRE2_UCHAR msg[200];
        if (pcre2_get_error_message(code, msg, sizeof msg) < 0)
            snprintf((char *)msg, sizeof msg, "error %d", code);
        return fail(p, start + 1 + off, "bad regular expression: %s", (const char *)msg);
    }
    size_t size = 0;
    if (pcre2_pattern_info(pat->re, PCRE2_INFO_SIZE, &size) == 0 && size > MTA_RE_MAX_COMPILED) {
        pcre2_code_free(pat->re);
        pat->re = NULL;
        return fail(p, start + 1, "regular expression too big once compiled (%zu bytes, at most %d)",
                    size, MTA_RE_MAX_COMPILED);
    }
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int match_error(char **err, const mta_pattern *p, const char *what)
{
    if (err) {
        size_t len = strlen(p->text) + strlen(what) + 120;
        *err = malloc(len);
        if (*err)
            snprintf(*err, len, "filter: regular expression /%s/ %s (docs/filters.md)", p->text,
                     what);
    }
    return -1;
}

int mta_pattern_match_funcs(const mta_pattern *p, const mt_func *funcs, size_t n,
                            uint8_t *out, char **err)
{
    if (err)
        *err = NULL;
    if (!p->is_regex) {
        for (size_t i = 0; i < n; i++)
            out[i] = strstr(funcs[i].name, p->text) != NULL;
        return 0;
    }
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!mc || !md) {
        pcre2_match_context_free(mc);
        pcre2_match_data_free(md);
        return match_error(err, p, "could not run: out of memory");
    }
    pcre2_set_match_limit(mc, MTA_RE_MATCH_LIMIT);
    pcre2_set_depth_limit(mc, MTA_RE_DEPTH_LIMIT);
    pcre2_set_heap_limit(mc, MTA_RE_HEAP_KIB);
    double deadline = now_seconds() + MTA_RE_TOTAL_SECONDS;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int r = pcre2_match(p->re, (PCRE2_SPTR)funcs[i].name, PCRE2_ZERO_TERMINATED, 0, 0, md, mc);
        if (r >= 0) {
            out[i] = 1;
        } else if (r == PCRE2_ERROR_NOMATCH) {
            out[i] = 0;
        } else {
            char what[200];
            if (r == PCRE2_ERROR_MATCHLIMIT)
                snprintf(what, sizeof what, "needs more than %d backtracking steps on a name",
                         MTA_RE_MATCH_LIMIT);
            else if (r == PCRE2_ERROR_DEPTHLIMIT)
                snprintf(what, sizeof what, "backtracks deeper than %d on a name",
                         MTA_RE_DEPTH_LIMIT);
            else if (r == PCRE2_ERROR_HEAPLIMIT || r == PCRE2_ERROR_NOMEMORY)
                snprintf(what, sizeof what, "needs more than %d KiB of memory on a name",
                         MTA_RE_HEAP_KIB);
            else
                snprintf(what, sizeof what, "failed (PCRE2 error %d)", r);
            rc = match_error(err, p, what);
        }
        if ((i & 255) == 255 && rc == 0 && now_seconds() > deadline) {
            char what[100];
            snprintf(what, sizeof what, "takes more than %d s over the trace's function names",
                     MTA_RE_TOTAL_SECONDS);
            rc = match_error(err, p, what);
        }
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    return rc;
}

static int pattern(parser *p, mta_pattern *pat)
{
    const char *t = p->text;
    size_t start = p->pos;
    char quote = t[p->pos];
    if (quote == '"' || quote == '/') {
        size_t i = p->pos + 1, cap = 16, n = 0;
        char *buf = malloc(cap);
        if (!buf)
            return fail(p, start, "out of memory");
        for (;;) {
            char c = t[i];
            if (c == 0) {
                free(buf);
                return fail(p, start, "unterminated %s (missing closing %c)",
                            quote == '"' ? "quoted string" : "regular expression", quote);
            }
            if (c == quote) {
                i++;
                break;
            }
            if (c == '\\' && (t[i + 1] == quote || (quote == '"' && t[i + 1] == '\\'))) {
                c = t[i + 1];
                i++;
            }
            if (n + 2 > cap) {
                char *nb = realloc(buf, cap *= 2);
                if (!nb) {
                    free(buf);
                    return fail(p, start, "out of memory");
                }
                buf = nb;
            }
            buf[n++] = c;
            i++;
        }
        buf[n] = 0;
        if (t[i] && !isspace((unsigned char)t[i])) {
            free(buf);
            return fail(p, i, "expected a space after the closing %c", quote);
        }
        p->pos = i;
        pat->text = buf;
        pat->is_regex = quote == '/';
    } else {
        size_t i = p->pos;
        while (t[i] && !isspace((unsigned char)t[i]))
            i++;
        if (i == p->pos)
            return fail(p, start, "missing function name after ':' (a word, \"a string\" or /regex/)");
        pat->text = strndup(t + p->pos, i - p->pos);
        if (!pat->text)
            return fail(p, start, "out of memory");
        pat->is_regex = 0;
        p->pos = i;
    }
    if (pat->text[0] == 0) {
        free(pat->text);
        pat->text = NULL;
        return fail(p, start, "empty pattern");
    }
    if (pat->is_regex && compile_regex(p, start, pat) < 0) {
        free(pat->text);
        pat->text = NULL;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- clauses */

static const char *const keys[] = {"alloc", "live", "collect", "size", "lifetime",
                                   "source", "inside", "hide", "kind", "verdict", "domain", NULL};

static int clause(parser *p, mta_clause *c)
{
    const char *t = p->text;
    size_t start = p->pos;
    memset(c, 0, sizeof *c);
    if (t[p->pos] == '!') {
        c->neg = 1;
        p->pos++;
    }
    size_t kstart = p->pos;
    while (isalpha((unsigned char)t[p->pos]) || t[p->pos] == '_')
        p->pos++;
    size_t klen = p->pos - kstart;
    char key[16];
    snprintf(key, sizeof key, "%.*s", (int)(klen < 15 ? klen : 15), t + kstart);
    if (t[p->pos] != ':') {
        size_t e = p->pos;
        while (t[e] && !isspace((unsigned char)t[e]))
            e++;
        if (klen && !t[p->pos])
            return fail(p, kstart, "'%s' needs ':' and a value (e.g. %s:...)", key, key);
        return fail(p, start, "expected a clause like 'size:>=4k' but found '%.*s' "
                    "(clauses: alloc, live, collect, size, lifetime, source, kind, verdict, domain, inside, hide)",
                    (int)(e - start), t + start);
    }
    p->pos++; /* ':' */
    int k;
    for (k = 0; keys[k]; k++)
        if (strlen(keys[k]) == klen && strncmp(keys[k], t + kstart, klen) == 0)
            break;
    /* a few aliases */
    if (!keys[k]) {
        if (klen == 9 && !strncmp(t + kstart, "allocated", 9)) k = 0;
        else if (klen == 9 && !strncmp(t + kstart, "collected", 9)) k = 2;
        else
            return fail(p, kstart, "unknown clause '%s' (use alloc, live, collect, size, "
                        "lifetime, source, kind, verdict, domain, inside, hide)", key);
    }
    if (k == 7 && c->neg)
        return fail(p, start, "'hide' cannot be negated");
    if (k == 6 || k == 7) {
        c->kind = k == 6 ? MTA_INSIDE : MTA_HIDE;
        return pattern(p, &c->pat);
    }
    size_t vstart = p->pos;
    while (t[p->pos] && !isspace((unsigned char)t[p->pos]))
        p->pos++;
    const char *v = t + vstart;
    size_t vlen = p->pos - vstart;
    switch (k) {
    case 0:
        c->kind = MTA_ALLOC;
        return range(p, v, vlen, vstart, 1, &c->lo, &c->hi);
    case 1:
        if (vlen == 4 && !strncmp(v, "peak", 4)) {
            c->kind = MTA_LIVE_AT;
            c->lo = MT_TIME_PEAK;
            return 0;
        }
        if (vlen == 3 && !strncmp(v, "end", 3)) {
            c->kind = MTA_LIVE_AT;
            c->lo = MT_TIME_END;
            return 0;
        }
        if (range(p, v, vlen, vstart, 1, &c->lo, &c->hi) < 0)
            return -1;
        c->kind = c->lo == c->hi ? MTA_LIVE_AT : MTA_LIVE_RANGE;
        return 0;
    case 2:
        if (vlen == 5 && !strncmp(v, "never", 5)) {
            c->kind = MTA_COLLECT_NEVER;
            return 0;
        }
        c->kind = MTA_COLLECT;
        return range(p, v, vlen, vstart, 1, &c->lo, &c->hi);
    case 3:
        c->kind = MTA_SIZE;
        return range(p, v, vlen, vstart, 0, &c->lo, &c->hi);
    case 4:
        c->kind = MTA_LIFETIME;
        return range(p, v, vlen, vstart, 1, &c->lo, &c->hi);
    case 5: {
        c->kind = MTA_SOURCE;
        size_t i = 0;
        if (!vlen)
            return fail(p, vstart, "missing source after ':' (minor, major, external)");
        while (i < vlen) {
            size_t j = i;
            while (j < vlen && v[j] != ',')
                j++;
            static const char *const names[] = {"minor", "major", "external"};
            int s;
            for (s = 0; s < 3; s++)
                if (strlen(names[s]) == j - i && !strncasecmp(names[s], v + i, j - i))
                    break;
            if (s == 3)
                return fail(p, vstart + i, "unknown source '%.*s' (use minor, major, external)",
                            (int)(j - i), v + i);
            c->sources |= 1u << s;
            i = j + 1;
        }
        return 0;
    }
    case 8: {
        c->kind = MTA_KIND;
        size_t i = 0;
        if (!vlen)
            return fail(p, vstart, "missing kind after ':' (malloc, mmap)");
        while (i < vlen) {
            size_t j = i;
            while (j < vlen && v[j] != ',')
                j++;
            int s;
            for (s = 0; s < MTA_NKINDS; s++)
                if (strlen(mta_kind_names[s]) == j - i &&
                    !strncasecmp(mta_kind_names[s], v + i, j - i))
                    break;
            if (s == MTA_NKINDS)
                return fail(p, vstart + i, "unknown kind '%.*s' (use malloc, mmap)",
                            (int)(j - i), v + i);
            c->sources |= 1u << s;
            i = j + 1;
        }
        return 0;
    }
    case 9: {
        c->kind = MTA_VERDICT;
        size_t i = 0;
        if (!vlen)
            return fail(p, vstart, "missing verdict after ':' (lost, reachable)");
        while (i < vlen) {
            size_t j = i;
            while (j < vlen && v[j] != ',')
                j++;
            if (j - i == 4 && !strncasecmp(v + i, "lost", 4))
                c->sources |= 1u << MT_VERDICT_LOST;
            else if (j - i == 9 && !strncasecmp(v + i, "reachable", 9))
                c->sources |= 1u << MT_VERDICT_REACHABLE;
            else
                return fail(p, vstart + i, "unknown verdict '%.*s' (use lost, reachable)",
                            (int)(j - i), v + i);
            i = j + 1;
        }
        return 0;
    }
    case 10: {
        /* a domain number as the trace gives it: 0 .. 65535 */
        c->kind = MTA_DOMAIN;
        size_t i = 0;
        while (i < vlen && i < 6 && isdigit((unsigned char)v[i]))
            c->lo = c->lo * 10 + (v[i++] - '0');
        if (!vlen || i < vlen || c->lo > 65535)
            return fail(p, vstart, "expected a domain number (0 to 65535) after 'domain:' but "
                        "found '%.*s'", (int)vlen, v);
        c->hi = c->lo;
        return 0;
    }
    }
    return fail(p, kstart, "internal error");
}

static void clause_free(mta_clause *c)
{
    if (c->pat.text) {
        if (c->pat.re)
            pcre2_code_free(c->pat.re);
        free(c->pat.text);
    }
}

mt_filter *mt_filter_parse(const char *text, char **err, size_t *err_pos)
{
    if (err)
        *err = NULL;
    mt_filter *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    parser p = {text ? text : "", 0, NULL, 0};
    size_t cap = 0;
    for (;;) {
        while (isspace((unsigned char)p.text[p.pos]))
            p.pos++;
        if (!p.text[p.pos])
            break;
        if (f->n == cap) {
            mta_clause *nc = realloc(f->c, (cap = cap ? cap * 2 : 4) * sizeof *nc);
            if (!nc) {
                fail(&p, p.pos, "out of memory");
                break;
            }
            f->c = nc;
        }
        if (clause(&p, &f->c[f->n]) < 0) {
            clause_free(&f->c[f->n]);
            break;
        }
        f->n++;
        if (p.text[p.pos] && !isspace((unsigned char)p.text[p.pos])) {
            fail(&p, p.pos, "expected a space before the next clause");
            break;
        }
    }
    if (p.err) {
        if (err)
            *err = p.err;
        else
            free(p.err);
        if (err_pos)
            *err_pos = p.err_pos;
        mt_filter_free(f);
        return NULL;
    }
    return f;
}

void mt_filter_free(mt_filter *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        clause_free(&f->c[i]);
    free(f->c);
    free(f);
}

/* ---------------------------------------------------------------- printer */

static void put_time(char *buf, size_t cap, int64_t us)
{
    if (us % 1000000 == 0)
        snprintf(buf, cap, "%llds", (long long)(us / 1000000));
    else if (us % 1000 == 0)
        snprintf(buf, cap, "%lldms", (long long)(us / 1000));
    else
        snprintf(buf, cap, "%lldus", (long long)us);
}

static void put_size(char *buf, size_t cap, int64_t b)
{
    static const char *const u[] = {"", "k", "M", "G", "T"};
    int i = 0;
    while (i < 4 && b != 0 && b % 1024 == 0) {
        b /= 1024;
        i++;
    }
    snprintf(buf, cap, "%lld%s", (long long)b, u[i]);
}

static void put_range(FILE *o, int64_t lo, int64_t hi, int is_time)
{
    char a[40], b[40];
    int64_t open_lo = is_time ? OPEN_LO : 0;
    (is_time ? put_time : put_size)(a, sizeof a, lo);
    (is_time ? put_time : put_size)(b, sizeof b, hi);
    if (lo == hi)
        fprintf(o, "%s", a);
    else if (hi == OPEN_HI) /* first: "size:0-" is open at both ends */
        fprintf(o, ">=%s", a);
    else if (lo == open_lo && hi < 0) { /* "<0" (nothing): "<=-1" would not parse */
        (is_time ? put_time : put_size)(b, sizeof b, 0);
        fprintf(o, "<%s", b);
    } else if (lo == open_lo)
        fprintf(o, "<=%s", b);
    else
        fprintf(o, "%s-%s", a, b);
}

char *mt_filter_to_string(const mt_filter *f)
{
    char *out = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&out, &len);
    if (!o)
        return NULL;
    for (size_t i = 0; f && i < f->n; i++) {
        const mta_clause *c = &f->c[i];
        if (i)
            fputc(' ', o);
        if (c->neg)
            fputc('!', o);
        switch (c->kind) {
        case MTA_ALLOC: fputs("alloc:", o); put_range(o, c->lo, c->hi, 1); break;
        case MTA_LIVE_AT:
            fputs("live:", o);
            if (c->lo == MT_TIME_PEAK) fputs("peak", o);
            else if (c->lo == MT_TIME_END) fputs("end", o);
            else put_range(o, c->lo, c->lo, 1);
            break;
        case MTA_LIVE_RANGE: fputs("live:", o); put_range(o, c->lo, c->hi, 1); break;
        case MTA_COLLECT: fputs("collect:", o); put_range(o, c->lo, c->hi, 1); break;
        case MTA_COLLECT_NEVER: fputs("collect:never", o); break;
        case MTA_SIZE: fputs("size:", o); put_range(o, c->lo, c->hi, 0); break;
        case MTA_LIFETIME: fputs("lifetime:", o); put_range(o, c->lo, c->hi, 1); break;
        case MTA_SOURCE: {
            static const char *const names[] = {"minor", "major", "external"};
            fputs("source:", o);
            int first = 1;
            for (int s = 0; s < 3; s++)
                if (c->sources & (1u << s)) {
                    fprintf(o, "%s%s", first ? "" : ",", names[s]);
                    first = 0;
                }
            break;
        }
        case MTA_KIND: {
            fputs("kind:", o);
            int first = 1;
            for (int s = 0; s < MTA_NKINDS; s++)
                if (c->sources & (1u << s)) {
                    fprintf(o, "%s%s", first ? "" : ",", mta_kind_names[s]);
                    first = 0;
                }
            break;
        }
        case MTA_VERDICT:
            fprintf(o, "verdict:%s%s%s", c->sources & (1u << MT_VERDICT_LOST) ? "lost" : "",
                    c->sources == ((1u << MT_VERDICT_LOST) | (1u << MT_VERDICT_REACHABLE)) ? "," : "",
                    c->sources & (1u << MT_VERDICT_REACHABLE) ? "reachable" : "");
            break;
        case MTA_DOMAIN: fprintf(o, "domain:%lld", (long long)c->lo); break;
        case MTA_INSIDE:
        case MTA_HIDE: {
            fputs(c->kind == MTA_INSIDE ? "inside:" : "hide:", o);
            int plain = !c->pat.is_regex && c->pat.text[0] != '"' && c->pat.text[0] != '/' &&
                        c->pat.text[0] != '\\';
            for (const char *s = c->pat.text; plain && *s; s++)
                if (isspace((unsigned char)*s))
                    plain = 0;
            if (plain) {
                fputs(c->pat.text, o);
            } else {
                char q = c->pat.is_regex ? '/' : '"';
                fputc(q, o);
                for (const char *s = c->pat.text; *s; s++) {
                    if (*s == q || (q == '"' && *s == '\\'))
                        fputc('\\', o);
                    fputc(*s, o);
                }
                fputc(q, o);
            }
            break;
        }
        }
    }
    fclose(o);
    return out;
}

int mt_parse_time(const char *text, mt_timedelta *out, char **err)
{
    if (err)
        *err = NULL;
    if (!strcmp(text, "peak")) {
        *out = MT_TIME_PEAK;
        return 0;
    }
    if (!strcmp(text, "end")) {
        *out = MT_TIME_END;
        return 0;
    }
    parser p = {text, 0, NULL, 0};
    int64_t v;
    if (quantity(&p, text, strlen(text), 0, 1, &v) < 0) {
        if (err) {
            /* "filter: column N: " is not helpful for a lone option value */
            const char *msg = p.err ? strstr(p.err, ": ") : NULL;
            msg = msg ? strstr(msg + 2, ": ") : NULL;
            *err = strdup(msg ? msg + 2 : "bad time");
        }
        free(p.err);
        return -1;
    }
    *out = v;
    return 0;
}

int mt_filter_uses_stacks(const mt_filter *f)
{
    for (size_t i = 0; f && i < f->n; i++)
        if (f->c[i].kind == MTA_INSIDE || f->c[i].kind == MTA_HIDE)
            return 1;
    return 0;
}

int mt_filter_uses_peak(const mt_filter *f)
{
    for (size_t i = 0; f && i < f->n; i++)
        if (f->c[i].kind == MTA_LIVE_AT && f->c[i].lo == MT_TIME_PEAK)
            return 1;
    return 0;
}

int mta_alloc_passes(const mt_model *m, const mt_filter *f, const mt_alloc *a,
                     const mt_timedelta *live_t)
{
    for (size_t k = 0; k < f->n; k++)
        if (f->c[k].kind != MTA_INSIDE &&
            mta_clause_matches(m, &f->c[k], a, NULL, live_t[k]) == f->c[k].neg)
            return 0;
    return 1;
}
