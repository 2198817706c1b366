/*
 * scale.c - mt_scale (analyze.h): a trace's sample rate and word size and
 * the estimates of one allocation at that scale; the model's estimators
 * (mt_alloc_bytes, mt_alloc_objects) are these at the model's scale.
 */
#include "check.h"
#include "model.h"
#include "scale.h"

mt_scale mt_scale_of(const mt_trace_info *info)
{
    mt_scale s;
    s.sample_rate = info->sample_rate;
    s.word_bytes = info->word_size / 8.0;
    s.inv_word_bytes = s.word_bytes > 0 ? 1 / s.word_bytes : 0;
    s.inv_rate = info->sample_rate > 0 ? 1 / info->sample_rate : 0;
    s.bytes_per_sample = info->sample_rate > 0 ? s.word_bytes / info->sample_rate : 0;
    MT_ASSERT(s.bytes_per_sample >= 0 && s.inv_rate >= 0);   /* estimates never go negative */
    return s;
}

double mt_scale_alloc_bytes(const mt_scale *s, const mt_alloc *a)
{
    return (double)a->n_samples * s->bytes_per_sample;
}

double mt_scale_alloc_objects(const mt_scale *s, const mt_alloc *a)
{
    return mta_alloc_objects(s, a);
}

double mt_scale_alloc_objects_var(const mt_scale *s, const mt_alloc *a)
{
    return mta_objects_var(s, a, mta_alloc_objects(s, a));
}

void mt_scale_peak(const mt_scale *s, mt_peak *p)
{
    mt_peak_scale(p, s->bytes_per_sample);
}

const mt_scale *mt_model_scale(const mt_model *m) { return &m->scale; }

double mt_model_bytes_per_sample(const mt_model *m) { return m->scale.bytes_per_sample; }

double mt_alloc_bytes(const mt_model *m, const mt_alloc *a)
{
    return mt_scale_alloc_bytes(&m->scale, a);
}

double mt_alloc_objects(const mt_model *m, const mt_alloc *a)
{
    return mta_alloc_objects(&m->scale, a);
}
