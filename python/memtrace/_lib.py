"""_lib.py - loads libmemtrace-analyze.so and declares the functions of
memtrace/bind.h (and the few of trace.h/analyze.h/present.h the package
calls); loads libmemtrace-symbolize.so beside it when it is there, whose
namer then names the raw frames of traces never symbolized as they are read.

The library is looked for in $MEMTRACE_LIBDIR, then next to a source
checkout (build/ at the repository's root, as `make` leaves it), then where
`make install` put it (_config.LIBDIR), then on the loader's path (Debian's
libmemtrace0, a wheel's user), each by its soname and then its bare name.
The symbolizer is taken from the same place as the analysis library.
"""
import ctypes
import os

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
c_double = ctypes.c_double
c_int = ctypes.c_int
c_uint32_p = ctypes.POINTER(ctypes.c_uint32)
c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_double_p = ctypes.POINTER(ctypes.c_double)
c_err = ctypes.POINTER(ctypes.c_void_p)

from ._version import SOVERSION

NAME = "libmemtrace-analyze.so"
SYMBOLIZE_NAME = "libmemtrace-symbolize.so"
# each library by its soname first (what Debian's libmemtrace0 installs),
# then by the bare name (a build tree, `make install`, libmemtrace-dev)
NAMES = (NAME + "." + SOVERSION, NAME)
HOW = ("install the libmemtrace%s package (apt install ./libmemtrace%s_*.deb, made by `make deb`), "
       "or build and `make install` memtrace from its sources, or set MEMTRACE_LIBDIR to the "
       "directory that holds %s" % (SOVERSION, SOVERSION, NAME))


def _candidates():
    dirs = []
    env = os.environ.get("MEMTRACE_LIBDIR")
    if env:
        dirs.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    dirs.append(os.path.join(here, "..", "..", "build"))
    try:
        from . import _config
        dirs.append(_config.LIBDIR)
    except ImportError:
        pass
    for d in dirs:
        for name in NAMES:
            yield os.path.join(d, name)
    yield from NAMES   # the loader's own path (ldconfig's cache)


def _load():
    """(the library, the path it was loaded from)."""
    errors = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(str(e))
    raise ImportError("memtrace: cannot load %s: %s (%s)"
                      % (NAME, "; ".join(errors) or "not found", HOW))


lib, lib_path = _load()


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


bind_open = _fn("mt_bind_open", c_void_p, ctypes.POINTER(c_char_p), c_size_t, c_err)
bind_open_warned = _fn("mt_bind_open_warned", c_void_p, ctypes.POINTER(c_char_p), c_size_t, c_err,
                       c_err)
model_free = _fn("mt_model_free", None, c_void_p)
info_json = _fn("mt_bind_info_json", c_void_p, c_void_p)
select = _fn("mt_bind_select", c_void_p, c_void_p, c_char_p, c_char_p, c_int, c_err)
sel_free = _fn("mt_bind_sel_free", None, c_void_p)
columns = _fn("mt_bind_columns", c_size_t, c_void_p, c_uint32_p, c_uint32_p, c_uint32_p,
              c_size_t)
stack_text = _fn("mt_bind_stack_text", c_void_p, c_void_p, ctypes.c_uint32)
model_stacks = _fn("mt_bind_model_stacks", c_void_p, c_void_p, c_uint32_p, c_size_t,
                    ctypes.POINTER(c_size_t))
top_json = _fn("mt_bind_top_json", c_void_p, c_void_p, c_char_p, c_size_t, c_size_t, c_err)
stats_json = _fn("mt_bind_stats_json", c_void_p, c_void_p)
diff_json = _fn("mt_bind_diff_json", c_void_p, c_void_p, c_void_p, c_char_p, c_char_p,
                c_double, c_err)
curve = _fn("mt_bind_curve", c_size_t, c_void_p, c_size_t, c_int64_p, c_double_p, c_double_p)
c_paths = ctypes.POINTER(c_char_p)
open_folded_warned = _fn("mt_bind_open_folded_warned", c_void_p, c_paths, c_size_t,
                         ctypes.POINTER(c_int), c_err, c_err)
select_read = _fn("mt_bind_select_read", c_void_p, c_void_p, c_paths, c_size_t, c_char_p,
                  c_char_p, c_int, c_err)
select_diff_read = _fn("mt_bind_select_diff_read", c_void_p, c_void_p, c_paths, c_size_t, c_char_p,
                       c_char_p, c_char_p, c_int, c_err)
curve_read = _fn("mt_bind_curve_read", c_size_t, c_void_p, c_paths, c_size_t, c_char_p, c_size_t,
                 c_int64_p, c_double_p, c_double_p, c_err)
stats_read = _fn("mt_bind_stats_read", c_void_p, c_void_p, c_paths, c_size_t, c_char_p, c_char_p,
                 c_err)
rows_read = _fn("mt_bind_rows_read", c_void_p, c_paths, c_size_t, c_char_p, c_char_p, c_err)
rows_n = _fn("mt_bind_rows_n", c_size_t, c_void_p)
rows_allocs = _fn("mt_bind_rows_allocs", c_void_p, c_void_p)
rows_sites = _fn("mt_bind_rows_sites", c_void_p, c_void_p)
rows_model = _fn("mt_bind_rows_model", c_void_p, c_void_p)
rows_free = _fn("mt_bind_rows_free", None, c_void_p)
free = _fn("mt_bind_free", None, c_void_p)
alloc_offsets = _fn("mt_bind_alloc_offsets", c_size_t, ctypes.POINTER(c_size_t), c_size_t)
model_domains = _fn("mt_model_domains", c_size_t, c_void_p, ctypes.POINTER(ctypes.c_uint), c_size_t)
MAX_DOMAINS = 256   # MT_MAX_DOMAINS
n_allocs = _fn("mt_model_n_allocs", c_size_t, c_void_p)
allocs = _fn("mt_model_allocs", c_void_p, c_void_p)
bytes_per_sample = _fn("mt_model_bytes_per_sample", c_double, c_void_p)
model_end = _fn("mt_model_end", ctypes.c_int64, c_void_p)
source_kind_name = _fn("mt_source_kind_name", c_char_p, c_void_p, ctypes.c_uint)
format_frame_as = _fn("mt_format_frame_as", None, c_char_p, c_size_t, c_void_p, ctypes.c_uint32,
                      c_int)
set_namer = _fn("mt_reader_set_namer", None, c_void_p, c_void_p)


class NamerProblem(ctypes.Structure):
    """mt_namer_problem (memtrace/symbolize.h)."""
    _fields_ = [("module", c_char_p), ("trace", c_char_p), ("why", c_int)]


NAMER_MISSING, NAMER_CHANGED, NAMER_NO_DEBUG = 1, 2, 3   # mt_namer_why


class Namer:
    """libmemtrace-symbolize.so's namer (memtrace/symbolize.h), set as the
    namer of every reader the analysis library opens from then on: checked
    modules only (build-id, else size, as recorded), local files only."""

    def __init__(self, sym):
        self._next_problem = sym.mt_namer_next_problem
        self._next_problem.restype = c_int
        self._next_problem.argtypes = [c_void_p, ctypes.POINTER(NamerProblem)]
        new = sym.mt_namer_new
        new.restype = c_void_p
        new.argtypes = [c_void_p]
        self.ptr = new(None)
        if not self.ptr:
            raise OSError("out of memory")
        # the analysis library calls mt_namer_name(ptr, ...) for each code
        # with a raw frame (trace.h, mt_reader_set_namer); both stay loaded
        # for the life of the process
        set_namer(ctypes.cast(sym.mt_namer_name, c_void_p), self.ptr)

    def problems(self):
        """(module, trace, why) of each module whose frames stayed raw
        that was not returned before; why is NAMER_MISSING, NAMER_CHANGED
        or NAMER_NO_DEBUG (stripped, its debug symbols not here)."""
        out = []
        p = NamerProblem()
        while self._next_problem(self.ptr, ctypes.byref(p)):
            out.append((p.module.decode("utf-8", "replace"), p.trace.decode("utf-8", "replace"),
                        p.why))
        return out


def _load_namer():
    """(the Namer, None), or (None, why not) when libmemtrace-symbolize.so
    is not beside the analysis library or cannot be loaded."""
    where = os.path.dirname(lib_path)
    names = (SYMBOLIZE_NAME + "." + SOVERSION, SYMBOLIZE_NAME)
    paths = [os.path.join(where, n) for n in names] if where else list(names)
    path = next((p for p in paths if not where or os.path.exists(p)), None)
    if path is None:
        return None, "%s is not installed beside %s" % (SYMBOLIZE_NAME, lib_path)
    try:
        return Namer(ctypes.CDLL(path)), None
    except (OSError, AttributeError) as e:
        return None, "cannot load %s: %s" % (path, e)


namer, namer_missing = _load_namer()


def take_text(ptr):
    """The malloc'd C string at ptr as a Python str; frees it."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        free(ptr)


def take_error(err, default):
    """The malloc'd message in err (a c_void_p), freed; default if none."""
    if not err.value:
        return default
    return take_text(err.value)
