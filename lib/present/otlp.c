/*
 * otlp.c - writes a selection as an OpenTelemetry profiles request
 * (opentelemetry.proto.collector.profiles.v1development
 * ExportProfilesServiceRequest, gzipped), what OTLP/HTTP's
 * POST /v1development/profiles takes: one resource, one scope named
 * "memory", four profiles (inuse_space/bytes, inuse_objects/count,
 * alloc_space/bytes, alloc_objects/count) sharing one dictionary whose
 * every table starts with its zero value. Values are estimates (unsampled),
 * the period is the bytes one sample stands for. Each frame is a location
 * of its own (an inlined call is a location too), all in one mapping, the
 * executable, which carries the GNU build-id attribute when one is given.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "memtrace/present.h"
#include "protowire.h"

typedef struct otlp {
    const mt_model *m;
    mt_pb_strtab strs;
    mt_pb dict_loc, dict_stack, tmp, tmp2;
    uint32_t *loc_of_frame;     /* frame -> location index (0: none yet) */
    uint32_t *fn_of_func;       /* func -> function index (0: none yet) */
    uint32_t *funcs;            /* function index - 1 -> func */
    size_t n_locs, n_funcs;
    /* stacks: location sequences, interned */
    uint32_t *stack_locs;       /* all sequences, one after another */
    size_t n_stack_locs, cap_stack_locs;
    size_t *stack_start;        /* stack index - 1 -> offset; one past: length via next */
    size_t n_stacks, cap_stacks;
    uint32_t *stack_slots;      /* index, 0 empty */
    size_t stack_mask;
    uint32_t *cur;              /* the current sequence */
    size_t cur_cap;
    /* the samples of each profile: (stack, value) pairs */
    mt_pb samples[4];
    const mt_selection *sel;
    int alloc_side;             /* filling alloc_* (1) or inuse_* (0) */
    char **short_names;
    int full_names, failed;
} otlp;

static uint64_t seq_hash(const uint32_t *v, size_t n)
{
    uint64_t h = 1469598103934665603ULL ^ n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ v[i]) * 1099511628211ULL;
    return h;
}

static size_t stack_len(const otlp *o, size_t k)
{
    size_t end = k + 1 < o->n_stacks ? o->stack_start[k + 1] : o->n_stack_locs;
    return end - o->stack_start[k];
}

/* the stack_table index of o->cur[0..n) (1-based: 0 is the zero Stack) */
static uint32_t stack_index(otlp *o, size_t n)
{
    if ((o->n_stacks + 1) * 2 > o->stack_mask + 1) {
        size_t cap = o->stack_mask ? (o->stack_mask + 1) * 2 : 1024;
        uint32_t *ns = calloc(cap, sizeof *ns);
        if (!ns)
            return o->failed = 1, 0;
        for (size_t k = 0; k < o->n_stacks; k++) {
            size_t j = seq_hash(o->stack_locs + o->stack_start[k], stack_len(o, k)) & (cap - 1);
            while (ns[j])
                j = (j + 1) & (cap - 1);
            ns[j] = (uint32_t)k + 1;
        }
        free(o->stack_slots);
        o->stack_slots = ns;
        o->stack_mask = cap - 1;
    }
    size_t j = seq_hash(o->cur, n) & o->stack_mask;
    while (o->stack_slots[j]) {
        size_t k = o->stack_slots[j] - 1;
        if (stack_len(o, k) == n && !memcmp(o->stack_locs + o->stack_start[k], o->cur,
                                            n * sizeof *o->cur))
            return (uint32_t)k + 1;
        j = (j + 1) & o->stack_mask;
    }
    if (o->n_stacks == o->cap_stacks) {
        size_t c = o->cap_stacks ? o->cap_stacks * 2 : 256;
        size_t *nv = realloc(o->stack_start, c * sizeof *nv);
        if (!nv)
            return o->failed = 1, 0;
        o->stack_start = nv;
        o->cap_stacks = c;
    }
    if (o->n_stack_locs + n > o->cap_stack_locs) {
        size_t c = o->cap_stack_locs ? o->cap_stack_locs : 1024;
        while (c < o->n_stack_locs + n)
            c *= 2;
        uint32_t *nv = realloc(o->stack_locs, c * sizeof *nv);
        if (!nv)
            return o->failed = 1, 0;
        o->stack_locs = nv;
        o->cap_stack_locs = c;
    }
    memcpy(o->stack_locs + o->n_stack_locs, o->cur, n * sizeof *o->cur);
    o->stack_start[o->n_stacks] = o->n_stack_locs;
    o->n_stack_locs += n;
    o->stack_slots[j] = (uint32_t)++o->n_stacks;
    /* its Stack message, leaf first as pprof's */
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return o->failed = 1, 0;
    for (size_t i = 0; i < n; i++)
        v[i] = o->cur[i];
    mt_pb_packed(&o->tmp2, 1, v, n, &o->tmp);
    free(v);
    mt_pb_msg(&o->dict_stack, 7, &o->tmp2);
    return (uint32_t)o->n_stacks;
}

static uint32_t function_index(otlp *o, mt_func_id f)
{
    if (!o->fn_of_func[f]) {
        o->funcs[o->n_funcs] = f;
        o->fn_of_func[f] = (uint32_t)++o->n_funcs;
    }
    return o->fn_of_func[f];
}

static uint32_t location_index(otlp *o, mt_frame_id f)
{
    if (!o->loc_of_frame[f]) {
        const mt_frame *fr = mt_model_frames(o->m) + f;
        mt_pb_uint(&o->tmp, 1, function_index(o, fr->func));
        mt_pb_uint(&o->tmp, 2, fr->line);
        mt_pb_uint(&o->tmp2, 1, 1);                  /* mapping 1: the executable */
        mt_pb_msg(&o->tmp2, 3, &o->tmp);
        uint64_t native = 2;                         /* profile.frame.type=native */
        mt_pb_packed(&o->tmp2, 4, &native, 1, &o->tmp);
        mt_pb_msg(&o->dict_loc, 2, &o->tmp2);
        o->loc_of_frame[f] = (uint32_t)++o->n_locs;
    }
    return o->loc_of_frame[f];
}

static void add_sample(mt_pb *p, uint32_t stack, double v, mt_pb *tmp)
{
    uint64_t x = (uint64_t)llround(v);
    if (!x)
        return;
    mt_pb_uint(tmp, 1, stack);
    mt_pb_packed(tmp, 4, &x, 1, tmp + 1);
    mt_pb_msg(p, 2, tmp);
}

static int put_stack(void *ctx, mt_node_id node, const mt_cost *c)
{
    otlp *o = ctx;
    const mt_node *nodes = mt_selection_nodes(o->sel);
    size_t depth = nodes[node].depth, k = 0;
    if (depth > o->cur_cap) {
        uint32_t *nc = realloc(o->cur, depth * sizeof *nc);
        if (!nc)
            return o->failed = 1;
        o->cur = nc;
        o->cur_cap = depth;
    }
    for (mt_node_id n = node; n && k < depth; n = nodes[n].parent)
        o->cur[k++] = location_index(o, nodes[n].frame);   /* leaf first */
    uint32_t st = stack_index(o, k);
    mt_pb t[2] = { o->tmp, o->tmp2 };
    if (o->alloc_side) {
        add_sample(&o->samples[2], st, c->alloc_bytes, t);
        add_sample(&o->samples[3], st, c->alloc_objects, t);
    } else {
        add_sample(&o->samples[0], st, c->live_bytes, t);
        add_sample(&o->samples[1], st, c->live_objects, t);
    }
    o->tmp = t[0];
    o->tmp2 = t[1];
    return o->failed;
}

/* a KeyValue (common.proto) with a string or an int value */
static void key_value(mt_pb *p, unsigned field, const char *key, const char *sval, long long ival,
                      mt_pb *t1, mt_pb *t2)
{
    mt_pb_utf8(t1, 1, key);
    if (sval)
        mt_pb_utf8(t2, 1, sval);
    else
        mt_pb_uint_always(t2, 3, (uint64_t)ival);
    mt_pb_msg(t1, 2, t2);
    mt_pb_msg(p, field, t1);
}

static void value_type(otlp *o, mt_pb *p, unsigned field, const char *type, const char *unit)
{
    mt_pb_uint(&o->tmp, 1, mt_pb_str_index(&o->strs, type));
    mt_pb_uint(&o->tmp, 2, mt_pb_str_index(&o->strs, unit));
    mt_pb_msg(p, field, &o->tmp);
}

static int encode(otlp *o, const mt_selection *inuse, const mt_otlp_options *opt, mt_pb *req)
{
    const mt_model *m = o->m;
    const mt_trace_info *info = mt_model_info(m);
    const mt_func *fn = mt_model_funcs(m);
    size_t nf = mt_model_n_funcs(m), nfr = mt_model_n_frames(m);
    o->loc_of_frame = calloc(nfr + 1, sizeof *o->loc_of_frame);
    o->fn_of_func = calloc(nf + 1, sizeof *o->fn_of_func);
    o->funcs = calloc(nf + 1, sizeof *o->funcs);
    o->short_names = calloc(nf + 1, sizeof *o->short_names);
    if (!o->loc_of_frame || !o->fn_of_func || !o->funcs || !o->short_names)
        return -1;
    mt_pb_str_index(&o->strs, "");
    /* the zero values at index 0 */
    mt_pb_bytes(&o->dict_loc, 2, NULL, 0);
    mt_pb_bytes(&o->dict_stack, 7, NULL, 0);
    o->sel = inuse;
    o->alloc_side = 0;
    if (mt_selection_each_stack(inuse, put_stack, o) || o->failed)
        return -1;
    o->sel = opt && opt->alloc ? opt->alloc : inuse;
    o->alloc_side = 1;
    if (mt_selection_each_stack(o->sel, put_stack, o) || o->failed)
        return -1;

    mt_pb dict = { 0 }, t3 = { 0 };
    /* mapping_table: zero, the executable */
    const char *exe = opt && opt->executable_name ? opt->executable_name
                    : info->executable_name ? info->executable_name : "";
    mt_pb_bytes(&dict, 1, NULL, 0);
    mt_pb_uint(&o->tmp2, 4, mt_pb_str_index(&o->strs, exe));
    int has_build_id = opt && opt->build_id_hex && opt->build_id_hex[0];
    if (has_build_id) {
        uint64_t a = 1;
        mt_pb_packed(&o->tmp2, 5, &a, 1, &o->tmp);
    }
    mt_pb_msg(&dict, 1, &o->tmp2);
    if (o->dict_loc.oom)
        dict.oom = 1;
    mt_pb_need(&dict, o->dict_loc.n);
    if (!dict.oom) {
        memcpy(dict.b + dict.n, o->dict_loc.b, o->dict_loc.n);
        dict.n += o->dict_loc.n;
    }
    /* function_table: zero, then in first-use order */
    mt_pb_bytes(&dict, 3, NULL, 0);
    for (size_t i = 0; i < o->n_funcs; i++) {
        mt_func_id f = o->funcs[i];
        uint64_t name = mt_pb_str_index(&o->strs, fn[f].name), shown = name;
        if (!(opt && opt->full_names)) {
            char buf[1024];
            mt_display_name(buf, sizeof buf, fn[f].name, 0);
            if (strcmp(buf, fn[f].name)) {
                if (!(o->short_names[f] = strdup(buf)))
                    return -1;
                shown = mt_pb_str_index(&o->strs, o->short_names[f]);
            }
        }
        mt_pb_uint(&o->tmp, 1, shown);
        mt_pb_uint(&o->tmp, 2, name);
        mt_pb_uint(&o->tmp, 3, mt_pb_str_index(&o->strs, fn[f].filename ? fn[f].filename : ""));
        mt_pb_msg(&dict, 3, &o->tmp);
    }
    /* link_table: the zero link only */
    mt_pb_bytes(&dict, 4, NULL, 0);
    /* attribute_table: zero, the build-id, profile.frame.type */
    mt_pb_bytes(&dict, 6, NULL, 0);
    {
        uint64_t k = mt_pb_str_index(&o->strs, "process.executable.build_id.gnu");
        mt_pb_uint(&o->tmp2, 1, k);
        mt_pb_utf8(&t3, 1, has_build_id ? opt->build_id_hex : "");
        mt_pb_msg(&o->tmp2, 2, &t3);
        mt_pb_msg(&dict, 6, &o->tmp2);
        mt_pb_uint(&o->tmp2, 1, mt_pb_str_index(&o->strs, "profile.frame.type"));
        mt_pb_utf8(&t3, 1, "native");
        mt_pb_msg(&o->tmp2, 2, &t3);
        mt_pb_msg(&dict, 6, &o->tmp2);
    }
    if (o->dict_stack.oom)
        dict.oom = 1;
    mt_pb_need(&dict, o->dict_stack.n);
    if (!dict.oom) {
        memcpy(dict.b + dict.n, o->dict_stack.b, o->dict_stack.n);
        dict.n += o->dict_stack.n;
    }

    /* the four profiles */
    static const char *const types[4][2] = {
        { "inuse_space", "bytes" }, { "inuse_objects", "count" },
        { "alloc_space", "bytes" }, { "alloc_objects", "count" },
    };
    mt_pb scope = { 0 }, prof = { 0 };
    mt_pb_utf8(&o->tmp, 1, "memory");
    mt_pb_msg(&scope, 1, &o->tmp);
    uint64_t t0 = opt ? opt->start_unix_nano : 0, t1 = opt ? opt->end_unix_nano : 0;
    if (!t0 && !t1) {
        t0 = (uint64_t)info->start_time * 1000;
        t1 = t0 + (uint64_t)mt_model_end(m) * 1000;
    }
    for (int i = 0; i < 4; i++) {
        value_type(o, &prof, 1, types[i][0], types[i][1]);
        if (o->samples[i].oom)
            prof.oom = 1;
        mt_pb_need(&prof, o->samples[i].n);
        if (!prof.oom) {
            memcpy(prof.b + prof.n, o->samples[i].b, o->samples[i].n);
            prof.n += o->samples[i].n;
        }
        mt_pb_fixed64(&prof, 3, t0);
        mt_pb_uint(&prof, 4, t1 > t0 ? t1 - t0 : 0);
        value_type(o, &prof, 5, "space", "bytes");
        mt_pb_uint(&prof, 6, (uint64_t)llround(mt_model_bytes_per_sample(m)));
        mt_pb_msg(&scope, 2, &prof);
    }
    /* the resource */
    mt_pb res = { 0 }, rp = { 0 };
    const char *svc = opt && opt->service_name ? opt->service_name : exe;
    key_value(&res, 1, "service.name", svc, 0, &o->tmp, &o->tmp2);
    long long pid = opt && opt->pid ? opt->pid : (long long)info->pid;
    key_value(&res, 1, "process.pid", NULL, pid, &o->tmp, &o->tmp2);
    key_value(&res, 1, "process.executable.name", exe, 0, &o->tmp, &o->tmp2);
    for (size_t i = 0; opt && i < opt->n_attributes; i++)
        key_value(&res, 1, opt->attribute_names[i], opt->attribute_values[i], 0, &o->tmp,
                  &o->tmp2);
    mt_pb_msg(&rp, 1, &res);
    mt_pb_msg(&rp, 2, &scope);
    mt_pb_msg(req, 1, &rp);
    /* the string table last: every index is taken by now */
    for (size_t i = 0; i < o->strs.n; i++)
        mt_pb_utf8(&dict, 5, o->strs.v[i]);
    mt_pb_msg(req, 2, &dict);
    int bad = o->strs.oom || req->oom;
    mt_pb_free(&dict);
    mt_pb_free(&t3);
    mt_pb_free(&scope);
    mt_pb_free(&prof);
    mt_pb_free(&res);
    mt_pb_free(&rp);
    return bad ? -1 : 0;
}

/* gzip of in (malloc'd) */
static unsigned char *gzip_bytes(const uint8_t *in, size_t n, int level, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    unsigned char *out = malloc(cap);
    if (!out) {
        deflateEnd(&z);
        return NULL;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

int mt_otlp_request(const mt_selection *inuse, const mt_otlp_options *opt, unsigned char **out,
                    size_t *len, char **err)
{
    otlp o;
    memset(&o, 0, sizeof o);
    o.m = mt_selection_model(inuse);
    mt_pb req = { 0 };
    int rc = encode(&o, inuse, opt, &req);
    *out = NULL;
    if (rc == 0 && req.n > 0xffffffffu)
        rc = -1;
    if (rc == 0) {
        int level = opt && opt->level >= 1 && opt->level <= 9 ? opt->level : 6;
        if (!(*out = gzip_bytes(req.b, req.n, level, len)))
            rc = -1;
    }
    if (rc < 0 && err)
        *err = strdup("out of memory");
    mt_pb_free(&req);
    mt_pb_free(&o.dict_loc);
    mt_pb_free(&o.dict_stack);
    mt_pb_free(&o.tmp);
    mt_pb_free(&o.tmp2);
    for (int i = 0; i < 4; i++)
        mt_pb_free(&o.samples[i]);
    mt_pb_strtab_free(&o.strs);
    if (o.short_names)
        for (size_t f = 0; f < mt_model_n_funcs(o.m); f++)
            free(o.short_names[f]);
    free(o.short_names);
    free(o.loc_of_frame);
    free(o.fn_of_func);
    free(o.funcs);
    free(o.stack_locs);
    free(o.stack_start);
    free(o.stack_slots);
    free(o.cur);
    return rc;
}
