/*
 * json.h - a small JSON text builder for the viewer's API answers.
 *
 * Commas are inserted automatically: begin/end nest objects and arrays, key()
 * names the next value inside an object. Memory errors are sticky: the
 * builder keeps going and vj_finish() returns NULL.
 */
#ifndef MT_VIEWER_JSON_H
#define MT_VIEWER_JSON_H

#include <stddef.h>
#include <stdint.h>

#define VJ_MAX_DEPTH 64

typedef struct vjson {
    char *buf;
    size_t len, cap;
    int failed;
    int depth;
    unsigned char has_item[VJ_MAX_DEPTH]; /* per level: something written already */
    int after_key;                        /* a key was just written */
} vjson;

void vj_init(vjson *j);
void vj_free(vjson *j);
/* The finished text (malloc'd, NUL-terminated), or NULL if memory ran out.
 * *len receives its length. The builder is reset. */
char *vj_finish(vjson *j, size_t *len);

void vj_obj(vjson *j);
void vj_arr(vjson *j);
void vj_end_obj(vjson *j);
void vj_end_arr(vjson *j);
void vj_key(vjson *j, const char *key);
void vj_str(vjson *j, const char *s);            /* NULL -> null */
void vj_strn(vjson *j, const char *s, size_t n);
void vj_int(vjson *j, int64_t v);
void vj_uint(vjson *j, uint64_t v);
void vj_num(vjson *j, double v);                 /* non-finite -> null */
void vj_bool(vjson *j, int v);
void vj_null(vjson *j);
void vj_raw(vjson *j, const char *text);         /* a pre-formatted value */
/* A cost as the reports write it (mt_json_cost: the one encoder). */
struct mt_cost;
void vj_cost(vjson *j, const struct mt_cost *c);

/* Shorthands for "key": value inside an object. */
void vj_kstr(vjson *j, const char *k, const char *s);
void vj_kint(vjson *j, const char *k, int64_t v);
void vj_kuint(vjson *j, const char *k, uint64_t v);
void vj_knum(vjson *j, const char *k, double v);
/* "k": [v[0], ..., v[n-1]] */
void vj_knums(vjson *j, const char *k, const double *v, size_t n);
void vj_kbool(vjson *j, const char *k, int v);

#endif
