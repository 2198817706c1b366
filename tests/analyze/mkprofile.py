#!/usr/bin/env python3
# mkprofile.py - writes small pprof profiles (profile.proto) by hand, well
# formed or hostile, for tests/analyze/profiles.sh. Usage: mkprofile.py
# KIND OUT; KIND is one of the names in CASES below.
import gzip
import sys


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def vfield(field, v):
    return key(field, 0) + varint(v)


def lfield(field, b):
    return key(field, 2) + varint(len(b)) + b


def packed(field, vals):
    return lfield(field, b"".join(varint(v) for v in vals))


def profile(types, samples, period=None, period_type=None, strings=None, funcs=None, locs=None):
    """types: [(type, unit)]; samples: [([loc ids leaf first], [values])];
    functions f1..f3 named alpha, beta, gamma; location i calls function i."""
    strs = strings or ["", "alpha", "beta", "gamma", "a.c"]
    idx = {s: i for i, s in enumerate(strs)}

    def s(x):
        if x not in idx:
            idx[x] = len(strs)
            strs.append(x)
        return idx[x]

    out = b""
    for t, u in types:
        out += lfield(1, vfield(1, s(t)) + vfield(2, s(u)))
    for ids, vals in samples:
        out += lfield(2, packed(1, ids) + packed(2, vals))
    for i in (locs if locs is not None else [1, 2, 3]):
        out += lfield(4, vfield(1, i) + lfield(4, vfield(1, i) + vfield(2, 10 * i)))
    for i in (funcs if funcs is not None else [1, 2, 3]):
        out += lfield(5, vfield(1, i) + vfield(2, i) + vfield(4, 4))
    if period_type:
        out += lfield(11, vfield(1, s(period_type[0])) + vfield(2, s(period_type[1])))
    if period is not None:
        out += vfield(12, period)
    for x in strs:
        out += lfield(6, x.encode())
    return out


HEAP = [("alloc_objects", "count"), ("alloc_space", "bytes"),
        ("inuse_objects", "count"), ("inuse_space", "bytes")]
SAMPLES = [([1, 3], [10, 1000, 5, 500]), ([2, 3], [1, 4096, 1, 4096])]

def frames_bomb():
    """one location of 5000 lines, 4000 times in one sample: 40 KB that
    would make 20 million frames"""
    loc = vfield(1, 1) + b"".join(lfield(4, vfield(1, 1) + vfield(2, i)) for i in range(5000))
    out = lfield(1, vfield(1, 1) + vfield(2, 2))
    out += lfield(2, packed(1, [1] * 4000) + packed(2, [7]))
    out += lfield(4, loc) + lfield(5, vfield(1, 1) + vfield(2, 3))
    out += lfield(11, vfield(1, 4) + vfield(2, 2)) + vfield(12, 524288)
    for x in ["", "alloc_space", "bytes", "f", "space"]:
        out += lfield(6, x.encode())
    return out


def many_refs(n_samples, depth, distinct):
    """n_samples samples of depth locations each (ids 1..3), every one the
    same stack, or each its own (its outermost ids spell its number)"""
    parts = [lfield(1, vfield(1, i) + vfield(2, i + 1)) for i in (1, 3)]
    same = packed(1, [1 + k % 3 for k in range(depth)])
    head = bytes(1 + k % 3 for k in range(depth - 8))
    for i in range(n_samples):
        ids = same
        if distinct:
            ids = lfield(1, head + bytes(1 + (i // 3 ** k) % 3 for k in range(8)))
        parts.append(lfield(2, ids + packed(2, [1, 100])))
    out = b"".join(parts)
    for i in (1, 2, 3):
        out += lfield(4, vfield(1, i) + lfield(4, vfield(1, i) + vfield(2, 10 * i)))
        out += lfield(5, vfield(1, i) + vfield(2, i) + vfield(4, 4))
    out += lfield(11, vfield(1, 5) + vfield(2, 4)) + vfield(12, 524288)
    for x in ["", "alloc_objects", "count", "alloc_space", "bytes", "space"]:
        out += lfield(6, x.encode())
    return out


def deep_stack():
    """one location repeated 30 million times in one sample's stack"""
    out = lfield(1, vfield(1, 1) + vfield(2, 2))
    out += lfield(2, lfield(1, b"\x01" * 30000000) + packed(2, [7]))
    out += lfield(4, vfield(1, 1)) + vfield(12, 1)
    for x in ["", "alloc_space", "bytes"]:
        out += lfield(6, x.encode())
    return out


MEMTRACE = ["", "alpha", "beta", "gamma", "a.c",
            "memtrace: statistical estimates from 3 samples (sample rate 1 per 64-bit word)"]


CASES = {
    # what a tcmalloc or jemalloc profile in pprof form looks like: no period
    "noperiod": lambda: profile([("space", "bytes")], [([1, 3], [3000]), ([2, 3], [1000])]),
    "inuse_only": lambda: profile(HEAP[2:], [([1, 3], [5, 500])], 524288, ("space", "bytes")),
    "alloc_only": lambda: profile(HEAP[:2], [([1, 3], [5, 500])], 524288, ("space", "bytes")),
    "heap": lambda: profile(HEAP, SAMPLES, 524288, ("space", "bytes")),
    # hostile
    "truncated": lambda: profile(HEAP, SAMPLES, 524288, ("space", "bytes"))[:-7],
    "long_varint": lambda: vfield(12, 1) + key(12, 0) + b"\xff" * 10 + b"\x01",
    "wire_type": lambda: vfield(12, 1) + key(12, 5) + b"\0\0\0\0",
    "group": lambda: vfield(12, 1) + key(2, 3),
    "loc_zero": lambda: profile(HEAP, [([0], [1, 1, 1, 1])], 524288),
    "loc_missing": lambda: profile(HEAP, [([9], [1, 1, 1, 1])], 524288),
    "dup_loc": lambda: profile(HEAP, SAMPLES, 524288, locs=[1, 2, 3, 2]),
    "func_missing": lambda: profile(HEAP, SAMPLES, 524288, funcs=[1, 2]),
    "string_range": lambda: profile(HEAP, SAMPLES, 524288) + lfield(1, vfield(1, 999)),
    "values_count": lambda: profile(HEAP, [([1], [1, 2])], 524288),
    "negative": lambda: profile(HEAP, [([1], [-5, -1 << 62, 1 << 63, 7])], -3, ("space", "bytes")),
    "huge_len": lambda: vfield(12, 1) + key(2, 2) + varint(1 << 62),
    "no_values": lambda: profile(HEAP, [([1], [])], 524288),
    "frames_bomb": frames_bomb,
    "deep_stack": deep_stack,
    # one sample of 30 million values
    "many_values": lambda: gzip.compress(profile(HEAP, [([1, 3], [1] * 30000000)], 524288)),
    # alpha's location has a line of number 0 (unknown)
    "line0": lambda: profile(HEAP, [([1, 3], [10, 1000, 10, 1000])], 524288, ("space", "bytes"),
                             locs=[2, 3]) + lfield(4, vfield(1, 1) + lfield(4, vfield(1, 1))),
    # Go's sampling (512 KiB): alpha mixes one object of 14.5 MB (recorded
    # for sure) with 349,000 strings of 16 B (about 11 recorded); beta is
    # 1000 objects of 1 KiB (about 2 recorded)
    "go_mixed": lambda: profile(HEAP, [([1, 3], [1, 14500000, 1, 14500000]),
                                       ([1, 3], [349000, 5584000, 349000, 5584000]),
                                       ([2, 3], [1000, 1024000, 1000, 1024000])],
                                524288, ("space", "bytes")),
    # memtrace's own output whose samples (bytes / period) pass 2^63 per
    # stack: a sum that wraps would show beta's 0 % share as 100 % noise
    "wrap": lambda: profile(HEAP[:2], [([1, 3], [1, (1 << 63) - 1]), ([1, 3], [1, (1 << 63) - 1]),
                                       ([2, 3], [1, 1000])], 1, ("space", "bytes"),
                            strings=list(MEMTRACE)) + vfield(13, 5),
    # 60 million location references: one stack of 4000 repeated, or
    # 1100 distinct stacks of 4000 (more than the decoder keeps)
    "repeated_stacks": lambda: many_refs(15000, 4000, False),
    "distinct_stacks": lambda: many_refs(1100, 4000, True),
    # 800 stacks of 4000 that differ from their root: 3.2 million nodes
    "distinct_roots": lambda: many_refs(800, 4000, True),
    "cycle": lambda: profile(HEAP, [([1, 2, 1, 2, 1], [1, 2, 3, 4])], 524288),
    "not_memory": lambda: profile([("cpu", "nanoseconds")], [([1], [5])], 10000000,
                                  ("cpu", "nanoseconds")),
}

data = CASES[sys.argv[1]]()
if sys.argv[1] in ("heap", "noperiod", "inuse_only", "alloc_only", "deep_stack", "repeated_stacks", "go_mixed",
                   "distinct_stacks", "distinct_roots"):
    data = gzip.compress(data)
with open(sys.argv[2], "wb") as f:
    f.write(data)
