/*
 * curveacc.h - the live-memory curve accumulator (curveacc.c,
 * mt_curve_acc of memtrace/stream.h) over a window of fixed buckets, for
 * the whole model's curve query (curve.c). Internal.
 */
#ifndef MTA_CURVEACC_H
#define MTA_CURVEACC_H

#include "memtrace/stream.h"

/* n buckets (at least 1) of width microseconds (>= 1) from origin, a
 * width that never doubles: events before origin or past the last bucket
 * count only for the peak and for the value carried into the buckets
 * (mt_query_curve's window [origin, origin + n * width)). Fed and read as
 * mt_curve_acc_new's; NULL when out of memory. */
mt_curve_acc *mta_curve_acc_window(size_t n, mt_timedelta width, mt_timedelta origin);

#endif
