/*
 * record_opts.c - the recorder's options of 'run' and 'attach'
 * (record_opts.h), each value checked by recconf.h's parser or the one
 * size grammar, each error in the option driver's form.
 */
#include <stdint.h>
#include <stdio.h>

#include "recconf.h"
#include "record_opts.h"
#include "units.h"

int record_opt_interval(void *ctx, const char *arg, const char *opt)
{
    record_opts *r = ctx;
    uint64_t v;
    if (mt_units_size(arg, &v) != MT_UNITS_OK || v < 1) {
        fprintf(stderr, "memtrace %s: %s %s: expected a size of at least 1 byte, such as 512k "
                        "or 1MiB\n", r->cmd, opt, arg);
        return 2;
    }
    r->rate = 1.0 / (double)v;
    r->given |= 1;
    return 0;
}

int record_opt_rate(void *ctx, const char *arg, const char *opt)
{
    record_opts *r = ctx;
    if (mt_recconf_rate(arg, &r->rate) != 0) {
        fprintf(stderr, "memtrace %s: %s %s: expected a probability per byte in (0, 1], such "
                        "as 0.0001\n", r->cmd, opt, arg);
        return 2;
    }
    r->given |= 2;
    return 0;
}

int record_opt_depth(void *ctx, const char *arg, const char *opt)
{
    record_opts *r = ctx;
    if (mt_recconf_depth(arg, &r->depth) != 0) {
        fprintf(stderr, "memtrace %s: %s %s: expected a number of frames 1..%d\n", r->cmd, opt,
                arg, MT_RECCONF_DEPTH_MAX);
        return 2;
    }
    return 0;
}

int record_opt_unwind(void *ctx, const char *arg, const char *opt)
{
    record_opts *r = ctx;
    int mode = mt_recconf_unwind(arg);
    if (mode < 0) {
        fprintf(stderr, "memtrace %s: %s %s: use fp, dwarf or auto\n", r->cmd, opt, arg);
        return 2;
    }
    r->unwind = mode;
    return 0;
}

int record_opts_check(const record_opts *r)
{
    if (r->given == 3) {
        fprintf(stderr, "memtrace %s: give --interval or --rate, not both\n", r->cmd);
        return 2;
    }
    return 0;
}
