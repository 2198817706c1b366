"""memtrace - memtrace traces (.ctf, from C programs or OCaml) in Python.

    import memtrace
    t = memtrace.open("app.ctf")            # several files: aggregated
    t.info                                  # header fields and counts
    df = t.allocations("size:>=4k")         # one row per sampled allocation
    t.top(by="live", at="peak")             # as `memtrace top --json`
    t.curve()                               # live memory over time
    t.diff(memtrace.open("new.ctf"))        # as `memtrace diff --json`

A trace larger than fold_above bytes (memtrace.open(path, fold_above=...),
default FOLD_ABOVE: 128 MiB, the viewer's --fold-above) is not loaded
whole: top(), stats(), curve(), diff() and allocations(filter) read it again,
folded, for each call (memory for its live blocks and distinct stacks, and
for the rows asked for), with the same answers.

Everything is computed by the C analysis library (libmemtrace-analyze.so,
through ctypes): the per-allocation columns are numpy arrays over the C
model's own records, filters are the CLI's (docs/filters.md). docs/python.md
documents every column. The raw frames of a C trace never symbolized are
named as it is read, as the CLI does, when libmemtrace-symbolize.so is
installed beside the analysis library.
"""
import ctypes
import json
import operator
import os
import stat as _stat
import warnings

from . import _lib
from ._version import __version__

__all__ = ["open", "Trace", "MemtraceError", "MemtraceWarning", "__version__"]


class MemtraceError(Exception):
    """A trace that cannot be read, a bad filter, a bad option."""


class MemtraceWarning(UserWarning):
    """Frames of a trace that stay module+0xoffset (the symbolizer library
    missing, a module missing or changed on this machine)."""


_warned_no_namer = False


def _name_notes(info):
    """Warns about what kept raw frames from their names: each module that
    is missing or changed here (once per module), or, once per process, the
    symbolizer library missing when a C trace is read."""
    global _warned_no_namer
    if _lib.namer is None:
        if info.get("word_size") == 8 and not _warned_no_namer:
            _warned_no_namer = True
            warnings.warn("memtrace: raw frames of C traces never symbolized stay "
                          "module+0xoffset: %s (run `memtrace symbolize TRACE`, or install "
                          "the library with `make install`)" % _lib.namer_missing,
                          MemtraceWarning, stacklevel=4)
        return
    for module, trace, kind in _lib.namer.problems():
        if kind == _lib.NAMER_NO_DEBUG:
            warnings.warn("memtrace: frames in %s without a symbol stay module+0xoffset: it "
                          "has no debug information here; install its debug symbols (Debian: "
                          "the -dbgsym package that `find-dbgsym-packages %s` names) or run "
                          "`memtrace symbolize --debuginfod URL %s`" % (module, module, trace),
                          MemtraceWarning, stacklevel=4)
            continue
        why = ("the file there is not the one %s was recorded with (build-id or size "
               "differs: rebuilt, or another machine's)" % trace if kind == _lib.NAMER_CHANGED
               else "no such file on this machine")
        warnings.warn("memtrace: frames in %s stay module+0xoffset: %s; run `memtrace "
                      "symbolize %s` on the machine where it was recorded"
                      % (module, why, trace), MemtraceWarning, stacklevel=4)


def _reading(fn, *args):
    """fn(*args), a call that reads traces, with no debuginfod server asked
    while the namer reads (as the CLI: DEBUGINFOD_URLS is cleared for the
    call, then restored)."""
    saved = os.environ.pop("DEBUGINFOD_URLS", None) if _lib.namer else None
    try:
        return fn(*args)
    finally:
        if saved is not None:
            os.environ["DEBUGINFOD_URLS"] = saved


def _open_model(opener, *args):
    """opener(*args, &warnings, err) through _reading: mt_bind_open_warned
    or mt_bind_open_folded_warned. The opening read's warnings (a damaged
    trace, a block freed twice) become MemtraceWarnings instead of lines on
    the process's stderr, once per open: a folded trace's queries read it
    again without repeating them."""
    said = ctypes.c_void_p()
    model = _reading(opener, *args[:-1], ctypes.byref(said), args[-1])
    for line in (_lib.take_text(said.value) or "").splitlines():
        warnings.warn("memtrace: warning: " + line, MemtraceWarning, stacklevel=4)
    return model


def _regular_size(paths):
    """The bytes of the files at paths together, or None when one is not a
    regular file (a pipe is read once: the whole model)."""
    total = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        if not _stat.S_ISREG(st.st_mode):
            return None
        total += st.st_size
    return total


def _c_str(value, what, path=False):
    """value (a str, or a path) as the bytes C reads up to its first NUL:
    one inside would cut it silently, so it is refused."""
    b = os.fsencode(value) if path else str(value).encode()
    if b"\0" in b:
        raise ValueError("memtrace: %s holds a NUL byte (C would read it cut short): %r"
                         % (what, value))
    return b


# The most buckets curve() gives: far more than a plot has pixels, and
# 2.4 MB of columns (10^7 took 751 MB).
CURVE_MAX_BUCKETS = 100000

# Traces larger than this (bytes, the files together) are read folded for
# each query instead of loaded whole: the viewer's --fold-above default.
FOLD_ABOVE = 128 << 20


def open(*paths, fold_above=FOLD_ABOVE):
    """The traces at paths as one Trace (several: a process tree or repeated
    runs, aggregated as the CLI does with several FILEs). Files larger than
    fold_above bytes together are not loaded whole (Trace.folded; None:
    never, 0: always when they are regular files)."""
    if len(paths) == 1 and isinstance(paths[0], (list, tuple)):
        paths = tuple(paths[0])
    return Trace(*paths, fold_above=fold_above)


def _np():
    import numpy
    return numpy


def _pd():
    import pandas
    return pandas


class _Selection:
    """A C selection (filter, live time, plumbing cut) freed with the object."""

    def __init__(self, trace, filter, at, sites=True, diff=None):
        err = ctypes.c_void_p()
        self._trace = trace
        ftext = _c_str(filter or "", "the filter")
        attext = _c_str(at or "end", "at") if at is not None else None
        if trace._folded and diff is not None:
            # read again with the sums diff needs of this side: (by, 0 base or 1 new)
            self.ptr = _reading(_lib.select_diff_read, trace._model, trace._arr,
                                len(trace.paths), ftext, attext, _c_str(diff[0], "by"), diff[1],
                                ctypes.byref(err))
        elif trace._folded:
            # read again, folded for this filter and time
            self.ptr = _reading(_lib.select_read, trace._model, trace._arr, len(trace.paths),
                                ftext, attext, 1 if sites else 0, ctypes.byref(err))
        else:
            self.ptr = _lib.select(trace._model, ftext, attext, 1 if sites else 0,
                                   ctypes.byref(err))
        if not self.ptr:
            raise MemtraceError(_lib.take_error(err, "out of memory"))

    def __del__(self):
        if getattr(self, "ptr", None):
            _lib.sel_free(self.ptr)
            self.ptr = None


class Trace:
    """One trace, or several aggregated. Load once, query many times; a
    big one (folded) is read again for each query."""

    def __init__(self, *paths, fold_above=FOLD_ABOVE):
        self._model = None
        self._folded = False
        if not paths:
            raise MemtraceError("memtrace.open: no trace given")
        self.paths = [os.fspath(p) for p in paths]
        self._arr = (ctypes.c_char_p * len(self.paths))(
            *[_c_str(p, "the path", True) for p in self.paths])
        err = ctypes.c_void_p()
        size = _regular_size(self.paths) if fold_above is not None else None
        if size is not None and size > fold_above:
            folded = ctypes.c_int()
            self._model = _open_model(_lib.open_folded_warned, self._arr, len(self.paths),
                                      ctypes.byref(folded), ctypes.byref(err))
            self._folded = bool(folded.value)
        else:
            self._model = _open_model(_lib.bind_open_warned, self._arr, len(self.paths),
                                      ctypes.byref(err))
        if not self._model:
            raise MemtraceError(_lib.take_error(err, "cannot read " + ", ".join(self.paths)))
        self._info = json.loads(_lib.take_text(_lib.info_json(self._model)))
        _name_notes(self._info)

    @property
    def folded(self):
        """True when the trace is not loaded whole: each query reads it
        again, folded (open's fold_above)."""
        return self._folded

    def close(self):
        """Frees the model now (it is freed with the object otherwise)."""
        if getattr(self, "_model", None):
            _lib.model_free(self._model)
            self._model = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<memtrace.Trace %s: %d allocations>" % (
            ", ".join(self.paths), self._info.get("allocations", 0))

    def _check(self):
        if not self._model:
            raise MemtraceError("the trace is closed")

    @property
    def info(self):
        """Header fields and event counts: version, sample_rate, word_size,
        executable, host, pid, start_time_us, context, end_us,
        bytes_per_sample, allocations, promotions, collections."""
        return dict(self._info)

    # ------------------------------------------------------------ allocations
    @staticmethod
    def _alloc_records(address, n):
        """n mt_alloc records at address as a numpy structured array (no
        copy)."""
        np = _np()
        offs = (ctypes.c_size_t * 8)()
        size = _lib.alloc_offsets(offs, 8)
        names = ["time", "collect", "size", "n_samples", "stack", "source", "carried", "domain"]
        types = ["<i8", "<i8", "<u8", "<u8", "<u4", "u1", "u1", "u1"]
        dt = np.dtype({"names": names, "formats": types, "offsets": list(offs),
                       "itemsize": size})
        if n == 0:
            return np.zeros(0, dtype=dt)
        buf = (ctypes.c_char * (n * size)).from_address(address)
        return np.frombuffer(buf, dtype=dt, count=n)

    def _records(self):
        """mt_model_allocs() as a numpy structured array (no copy)."""
        return self._alloc_records(_lib.allocs(self._model), _lib.n_allocs(self._model))

    @staticmethod
    def _domain_numbers(model):
        """The model's domain numbers by mt_alloc.domain index (numpy)."""
        np = _np()
        out = (ctypes.c_uint * _lib.MAX_DOMAINS)()
        n = _lib.model_domains(model, out, _lib.MAX_DOMAINS)
        return np.array(out[:max(n, 1)], dtype=np.uint16)

    @staticmethod
    def _site_names(frames, model):
        """Display names of frame ids of model (as top prints them)."""
        out = []
        buf = ctypes.create_string_buffer(4096)
        for f in frames:
            if f == 0xFFFFFFFF:
                out.append("(no stack)")
            else:
                _lib.format_frame_as(buf, len(buf), model, int(f), 0)
                out.append(buf.value.decode("utf-8", "replace"))
        return out

    def allocations(self, filter=None, at=None):
        """A pandas DataFrame, one row per sampled allocation that passes the
        filter (the CLI's syntax), in file order:

        time (s), size (bytes), samples, bytes (the estimate it stands for),
        free_time (s, NaN when never freed), lifetime (s, NaN when never
        freed), freed, kind (malloc/mmap, or the OCaml source), site (as top
        names it), stack ("outer;...;inner" function names), carried, domain
        (the OCaml 5 domain number; 0 for C traces and formats before v3).
        `at` sets the time live: filters measure at (default end). A
        folded trace is read again for the rows that pass alone."""
        self._check()
        np = _np()
        if self._folded:
            return self._allocations_read(filter, at)
        sel = _Selection(self, filter, at)
        n = _lib.columns(sel.ptr, None, None, None, 0)
        idx = np.empty(n, dtype=np.uint32)
        site = np.empty(n, dtype=np.uint32)
        stack = np.empty(n, dtype=np.uint32)
        p = lambda a: a.ctypes.data_as(_lib.c_uint32_p)
        _lib.columns(sel.ptr, p(idx), p(site), p(stack), n)
        allrec = self._records()
        whole = n == len(allrec)   # every allocation selected: idx is 0..n-1
        col = lambda name: np.ascontiguousarray(allrec[name]) if whole else allrec[name][idx]
        return self._frame(col, site, self._model)

    def _allocations_read(self, filter, at):
        """allocations() of a folded trace: the rows that pass, read again."""
        np = _np()
        err = ctypes.c_void_p()
        rows = _reading(_lib.rows_read, self._arr, len(self.paths),
                        _c_str(filter or "", "the filter"),
                        _c_str(at or "end", "at") if at is not None else None, ctypes.byref(err))
        if not rows:
            raise MemtraceError(_lib.take_error(err, "out of memory"))
        try:
            n = _lib.rows_n(rows)
            recs = self._alloc_records(_lib.rows_allocs(rows), n)
            site = (np.frombuffer((ctypes.c_uint32 * n).from_address(_lib.rows_sites(rows)),
                                  dtype=np.uint32).copy() if n else np.zeros(0, np.uint32))
            # copies: the rows are freed below
            return self._frame(lambda name: np.array(recs[name]), site, _lib.rows_model(rows))
        finally:
            _lib.rows_free(rows)

    def _frame(self, col, site, model):
        """The allocations() DataFrame from its columns (col(name) of the
        mt_alloc fields, site frame ids), named by model."""
        np, pd = _np(), _pd()
        collect = col("collect")
        freed = collect != np.iinfo(np.int64).max
        t = col("time") * 1e-6
        free_t = np.where(freed, collect * 1e-6, np.nan)
        samples = col("n_samples")
        bps = _lib.bytes_per_sample(model)
        usite, site_code = _dense_codes(np, site)
        source = col("source")
        usrc, src_code = _dense_codes(np, source)
        kinds = [_lib.source_kind_name(model, int(v)).decode() for v in usrc]
        df = pd.DataFrame({
            "time": t,
            "size": col("size"),
            "samples": samples,
            "bytes": samples * bps,
            "free_time": free_t,
            "lifetime": free_t - t,
            "freed": freed,
            "kind": _categorical(pd, src_code, kinds),
            "site": _categorical(pd, site_code, self._site_names(usite, model)),
            "stack": col("stack"),
            "carried": col("carried").astype(bool),
            "domain": self._domain_numbers(model)[col("domain")],
        }, copy=False)
        return df

    def stacks(self, ids):
        """The stacks of allocations() ids as "outer;...;inner" function
        names (whole stacks, allocation plumbing included): a pandas Series
        indexed like ids. Each distinct stack is written once, in C."""
        self._check()
        np, pd = _np(), _pd()
        index = ids.index if isinstance(ids, pd.Series) else None
        if isinstance(ids, pd.Index):
            index = ids
        raw_ids = np.asarray(ids)
        if raw_ids.ndim != 1:
            raise TypeError("stacks: ids are a list, array or Series of stack ids "
                            "(allocations()[\"stack\"]), not %s" % type(ids).__name__)
        if len(raw_ids) and (raw_ids.dtype.kind not in "iu" or raw_ids.min() < 0 or
                             raw_ids.max() > 0xFFFFFFFF):
            raise ValueError("stacks: ids are stack ids from allocations()[\"stack\"] "
                             "(integers from 0 to 2^32 - 1)")
        arr = np.ascontiguousarray(raw_ids.astype(np.uint32))
        uniq, inv = np.unique(arr, return_inverse=True)
        length = ctypes.c_size_t()
        ptr = _lib.model_stacks(self._model, uniq.ctypes.data_as(_lib.c_uint32_p), len(uniq),
                                ctypes.byref(length))
        if not ptr and len(uniq):
            raise MemtraceError("out of memory")
        try:
            raw = ctypes.string_at(ptr, length.value) if ptr else b""
        finally:
            _lib.free(ptr)
        texts = raw.decode("utf-8", "replace").split("\0")[:len(uniq)]
        return pd.Series(pd.Categorical.from_codes(inv, categories=_unique(texts))
                         if len(set(texts)) == len(texts) else [texts[i] for i in inv],
                         index=index)

    # ---------------------------------------------------------------- reports
    def top(self, by="alloc", filter=None, at=None, limit=0, callers=3):
        """The allocation sites as `memtrace top --json` gives them, one row
        per site: site (as top prints it), function, file, line, short,
        value, share, rse, the cost's figures (alloc_bytes, live_bytes, ...
        and their _se), n_callers. `at` implies by="live" unless by is given
        explicitly otherwise (as the CLI)."""
        self._check()
        pd = _pd()
        if at is not None and by == "alloc":
            by = "live"
        sel = _Selection(self, filter, at)
        err = ctypes.c_void_p()
        text = _lib.take_text(_lib.top_json(sel.ptr, _c_str(by, "by"), int(limit), int(callers),
                                            ctypes.byref(err)))
        if text is None:
            raise MemtraceError(_lib.take_error(err, "out of memory"))
        d = json.loads(text)
        rows = []
        for s in d["sites"]:
            fn = s["site"]
            name = fn["function"]
            if fn["file"]:
                name += " (%s%s)" % (fn["file"], ":%d" % fn["line"] if fn["line"] else "")
            row = {"site": name, "function": fn["function"], "file": fn["file"],
                   "line": fn["line"], "short": s.get("short"), "value": s["value"],
                   "share": s["share"], "rse": s["rse"]}
            row.update(s["cost"])
            row["n_callers"] = s.get("n_callers", 0)
            rows.append(row)
        df = pd.DataFrame(rows, columns=None if rows else ["site", "value", "share", "rse"])
        df.attrs["total"] = d.get("total")
        df.attrs["metric"] = d.get("metric")
        return df

    def stats(self, filter=None, at=None):
        """`memtrace stats --json` of the allocations passing the filter, as a
        dict. A folded trace is read again for it."""
        self._check()
        if self._folded:
            err = ctypes.c_void_p()
            text = _lib.take_text(_reading(
                _lib.stats_read, self._model, self._arr, len(self.paths),
                _c_str(filter or "", "the filter"),
                _c_str(at or "end", "at") if at is not None else None, ctypes.byref(err)))
            if text is None:
                raise MemtraceError(_lib.take_error(err, "out of memory"))
            return json.loads(text)
        sel = _Selection(self, filter, at)
        return json.loads(_lib.take_text(_lib.stats_json(sel.ptr)))

    def curve(self, n=500, filter=None):
        """Live memory over time in n buckets: time (s, bucket start), total
        (highest estimated live bytes of all allocations in the bucket) and
        filtered (of those passing the filter)."""
        self._check()
        np, pd = _np(), _pd()
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError("curve: n is a number of buckets (an int), not %s"
                            % type(n).__name__) from None
        if not 1 <= n <= CURVE_MAX_BUCKETS:
            raise ValueError("curve: n is a number of buckets from 1 to %d, not %d"
                             % (CURVE_MAX_BUCKETS, n))
        t = np.zeros(n, dtype=np.int64)
        tot = np.zeros(n, dtype=np.float64)
        fil = np.zeros(n, dtype=np.float64)
        cols = (t.ctypes.data_as(_lib.c_int64_p), tot.ctypes.data_as(_lib.c_double_p),
                fil.ctypes.data_as(_lib.c_double_p))
        if self._folded:
            err = ctypes.c_void_p()
            k = _reading(_lib.curve_read, self._model, self._arr, len(self.paths),
                         _c_str(filter or "", "the filter"), n, *cols, ctypes.byref(err))
            if not k:
                raise MemtraceError(_lib.take_error(err, "out of memory"))
        else:
            sel = _Selection(self, filter, None)
            k = _lib.curve(sel.ptr, n, *cols)
        return pd.DataFrame({"time": t[:k] / 1e6, "total": tot[:k], "filtered": fil[:k]})

    def diff(self, other, by="alloc", key="site", filter=None, at=None, alpha=0.05):
        """What changed from this trace (base) to other (new), as
        `memtrace diff --json`: one row per entry with base, new, delta, se,
        z, p, p_adj, significant. Significance is Holm-corrected. A folded
        trace is read again for it."""
        self._check()
        other._check()
        pd = _pd()
        if at is not None and by == "alloc":
            by = "live"
        a = _Selection(self, filter, at, diff=(by, 0))
        b = _Selection(other, filter, at, diff=(by, 1))
        err = ctypes.c_void_p()
        text = _lib.take_text(_lib.diff_json(a.ptr, b.ptr, _c_str(by, "by"), _c_str(key, "key"),
                                             float(alpha), ctypes.byref(err)))
        if text is None:
            raise MemtraceError(_lib.take_error(err, "out of memory"))
        d = json.loads(text)
        entries = d.get("entries", [])
        df = pd.DataFrame(entries)
        df.attrs.update({k: v for k, v in d.items() if k != "entries"})
        return df


def _dense_codes(np, values):
    """(distinct values in increasing order, the code of each value): what
    np.unique(..., return_inverse=True) gives, by a lookup table instead of
    a sort (values are frame ids or sources: small integers, except the
    MT_NO_FRAME marker)."""
    values = np.asarray(values)
    if len(values) == 0:
        return values[:0], np.zeros(0, dtype=np.int64)
    none = values == np.iinfo(values.dtype).max if values.dtype.kind == "u" else None
    has_none = none is not None and bool(none.any())
    v = np.where(none, 0, values).astype(np.int64) if has_none else values.astype(np.int64)
    used = np.zeros(int(v.max()) + 1, dtype=bool)
    used[v[~none] if has_none else v] = True
    distinct = np.flatnonzero(used)
    table = np.full(len(used), -1, dtype=np.int64)
    table[distinct] = np.arange(len(distinct))
    codes = table[v]
    if has_none:
        # the marker sorts last, as np.unique puts the largest value last
        codes = np.where(none, len(distinct), codes)
        distinct = np.append(distinct, np.iinfo(values.dtype).max)
    return distinct.astype(values.dtype), codes


def _unique(names):
    return list(names)


def _categorical(pd, codes, names):
    """A Categorical from codes into names; names that print alike (two
    frames of one line, two stacks of the same functions) are one category."""
    np = _np()
    cats, where = [], {}
    remap = np.empty(len(names), dtype=np.int64)
    for i, n in enumerate(names):
        if n not in where:
            where[n] = len(cats)
            cats.append(n)
        remap[i] = where[n]
    return pd.Categorical.from_codes(remap[codes] if len(codes) else codes, categories=cats)
