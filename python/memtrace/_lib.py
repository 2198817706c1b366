"""_lib.py - loads libmemtrace-analyze.so and declares the functions of
memtrace/bind.h (and the few of analyze.h/present.h the package calls).

The library is looked for in $MEMTRACE_LIBDIR, then next to a source
checkout (build/ at the repository's root, as `make` leaves it), then where
`make install` put it (_config.LIBDIR), then on the loader's path.
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

NAME = "libmemtrace-analyze.so"


def _candidates():
    env = os.environ.get("MEMTRACE_LIBDIR")
    if env:
        yield os.path.join(env, NAME)
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", NAME)
    try:
        from . import _config
        yield os.path.join(_config.LIBDIR, NAME)
    except ImportError:
        pass
    yield NAME


def _load():
    errors = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError(
        "memtrace: cannot load %s (build it with `make`, or set MEMTRACE_LIBDIR): %s"
        % (NAME, "; ".join(errors) or "not found"))


lib = _load()


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


bind_open = _fn("mt_bind_open", c_void_p, ctypes.POINTER(c_char_p), c_size_t, c_err)
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
free = _fn("mt_bind_free", None, c_void_p)
alloc_layout = _fn("mt_bind_alloc_layout", c_size_t, ctypes.POINTER(c_size_t))
n_allocs = _fn("mt_model_n_allocs", c_size_t, c_void_p)
allocs = _fn("mt_model_allocs", c_void_p, c_void_p)
bytes_per_sample = _fn("mt_model_bytes_per_sample", c_double, c_void_p)
model_end = _fn("mt_model_end", ctypes.c_int64, c_void_p)
source_kind_name = _fn("mt_source_kind_name", c_char_p, c_void_p, ctypes.c_uint)
format_frame_as = _fn("mt_format_frame_as", None, c_char_p, c_size_t, c_void_p, ctypes.c_uint32,
                      c_int)


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
