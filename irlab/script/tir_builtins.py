"""The ``T`` namespace of TVMScript (``from irlab.script import tir as T``).

Expression builders (``T.max``, ``T.exp``, ``T.float32(0)``, ``T.Cast``...) are ordinary
functions returning PrimExprs. Statement-level names (``T.grid``, ``T.block``, ``T.axis.remap``,
``T.reads``...) are markers: the parser recognises them by identity, and calling one outside a
``@T.prim_func`` raises a clear error.
"""

from __future__ import annotations

import math

import numpy as np

from irlab.errors import ParseError, TIRError
from irlab.tir import expr as _e
from irlab.tir import op as _op
from irlab.tir.intrinsics import INTRINSICS


class BufferRequest:
    """What ``T.decl_buffer(...)``/``T.Buffer(...)`` return when a helper function the parser
    calls (``offset = my_decl([4], data=ptr)``) uses them: the parser declares the buffer."""

    def __init__(self, kind, args, kwargs):
        self.kind, self.args, self.kwargs = kind, args, kwargs


# Set by the parser while it evaluates a call to a plain Python function in a statement.
CAPTURE_BUFFERS = [False]


class _Marker:
    """A statement-level TVMScript name; only meaningful inside a parsed function."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        if CAPTURE_BUFFERS[0] and self.name == "decl_buffer":
            return BufferRequest(self.name, args, kwargs)
        raise ParseError(f"T.{self.name} can only be used inside a @T.prim_func")

    def __getitem__(self, item):  # ``T.Buffer[...]`` outside a function
        raise ParseError(f"T.{self.name}[...] can only be used inside a @T.prim_func")

    def __repr__(self):
        return f"T.{self.name}"


MARKERS: dict[str, _Marker] = {}


def _marker(name):
    MARKERS[name] = _Marker(name)
    return MARKERS[name]


class _BufferMarker(_Marker):
    """``T.Buffer``: Python evaluates parameter annotations when the ``def`` runs, before the
    decorator parses them, so here it must quietly return a placeholder."""

    def __call__(self, *args, **kwargs):
        if CAPTURE_BUFFERS[0]:
            return BufferRequest(self.name, args, kwargs)
        return self

    def __getitem__(self, item):
        return self


# -- declarations and statements (handled by the parser) ---------------------------------
Buffer = MARKERS["Buffer"] = _BufferMarker("Buffer")
match_buffer = _marker("match_buffer")
alloc_buffer = _marker("alloc_buffer")
decl_buffer = _marker("decl_buffer")
allocate = _marker("allocate")
allocate_const = _marker("allocate_const")
grid = _marker("grid")
serial = _marker("serial")
parallel = _marker("parallel")
vectorized = _marker("vectorized")
unroll = _marker("unroll")
thread_binding = _marker("thread_binding")
block = _marker("block")
reads = _marker("reads")
writes = _marker("writes")
init = _marker("init")
where = _marker("where")
block_attr = _marker("block_attr")
func_attr = _marker("func_attr")
evaluate = _marker("evaluate")
attr = _marker("attr")
Assert = _marker("Assert")
let = _marker("let")
LetStmt = _marker("LetStmt")
env_thread = _marker("env_thread")
comm_reducer = _marker("comm_reducer")
launch_thread = _marker("launch_thread")


class _HandleMarker(_Marker):
    """``T.handle``: an opaque pointer. ``T.handle("float32", "global")`` (TVM's pointer-type
    annotation) is accepted as plain ``T.handle``: irlab's variables carry no pointee type."""

    dtype = "handle"

    def __call__(self, dtype=None, storage_scope=None):
        if dtype is not None and not isinstance(dtype, str):
            raise ParseError(f"T.handle(dtype, storage_scope): the dtype must be a string, got "
                             f"{dtype!r}")
        return self


handle = MARKERS["handle"] = _HandleMarker("handle")


class _Axis:
    """``T.axis.spatial/reduce/remap`` (and the ``S``/``R`` short names)."""

    spatial = S = _marker("axis.spatial")
    reduce = R = _marker("axis.reduce")
    scan = _marker("axis.scan")
    opaque = _marker("axis.opaque")
    remap = _marker("axis.remap")


axis = _Axis()


def prim_func(fn=None, *, private=False):
    """Decorator: parse the decorated Python function as TIR and return the PrimFunc."""
    from irlab.script.parser import parse_function

    if fn is None:
        return lambda f: parse_function(f)
    return parse_function(fn)


# -- dtypes: ``T.float32(1)`` is a constant, ``T.int32()`` a new variable ---------------
class _DType:
    """A dtype name usable as a constant builder, an annotation and a var declaration."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, value=None, is_size_var=False):
        if value is None:  # ``n = T.int32()`` declares a variable (named by the parser)
            return (_e.SizeVar if is_size_var else _e.Var)("v", self.dtype)
        if isinstance(value, _e.PrimExpr):
            return _op.cast(value, self.dtype)
        if isinstance(value, str):  # T.float32("inf")
            value = float(value)
        if self.dtype in ("float16", "float32") and isinstance(value, float) and \
                math.isfinite(value) and not _fits(value, self.dtype):
            raise TIRError(f"T.{self.dtype}({value!r}): {value!r} is out of the range of "
                           f"{self.dtype} (T.{self.dtype}(\"inf\") is infinity)")
        return _op.const(value, self.dtype)

    def __repr__(self):
        return f"T.{self.dtype}"


def _fits(value: float, dtype: str) -> bool:
    """Whether a finite ``value`` stays finite once rounded to ``dtype``."""
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.array(value, dtype=dtype)))


DTYPES = {}
for _name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "bfloat16"):
    DTYPES[_name] = _DType(_name)
    globals()[_name] = DTYPES[_name]
for _name in ("int32", "int64", "float16", "float32", "float64"):
    for _lanes in (2, 4, 8, 16):
        DTYPES[f"{_name}x{_lanes}"] = _DType(f"{_name}x{_lanes}")
        globals()[f"{_name}x{_lanes}"] = DTYPES[f"{_name}x{_lanes}"]
DTYPES["boolean"] = boolean = DTYPES["bool"]  # TVMScript's other spelling of T.bool


# -- expression builders ----------------------------------------------------------------
def Cast(dtype, value):  # noqa: N802  (TVMScript's name)
    """``T.Cast("float32", x)``: always a Cast node (no folding), as printed."""
    return _e.Cast(dtype, value)


def cast(value, dtype):
    """``T.cast(x, "int32")``: ``x`` as ``dtype`` (``x`` itself when it already is)."""
    value = _e.convert(value)
    return value if value.dtype == str(dtype) else _e.Cast(str(dtype), value)


def assume(cond=None):
    """``T.assume(cond)``: a fact the simplifier may use; evaluates to nothing."""
    return _e.Call("bool", "tir.assume", (_e.convert(True if cond is None else cond),))


def ret(value):
    """``T.ret(x)``: return ``x`` from the function."""
    value = _e.convert(value)
    return _e.Call(value.dtype, "tir.ret", (value,))


def Select(cond, t, f):  # noqa: N802
    return _e.Select(cond, t, f)


def Ramp(base, stride, lanes):  # noqa: N802
    return _e.Ramp(base, stride, lanes)


ramp = Ramp  # TVMScript's lower-case spellings


def Broadcast(value, lanes):  # noqa: N802
    return _e.Broadcast(value, lanes)


broadcast = Broadcast


def Shuffle(vectors, indices):  # noqa: N802
    return _e.Shuffle(vectors, indices)


def Let(value, where=None, *, var=None, body=None):  # noqa: N802
    """``T.Let(body, where={v: value})`` (TVM's printed form of a Let expression)."""
    if where is not None:
        (var, val), = where.items()
        return _e.Let(var, _e.convert(val, var.dtype), value)
    return _e.Let(var, _e.convert(value, var.dtype), body)


def _void(dtype):
    return dtype or "void"  # TVM spells a call with no result ``dtype=""``


def call_intrin(*args, dtype=None):
    """``T.call_intrin(dtype, name, *args)``, or TVM's ``T.call_intrin(name, *args, dtype=)``."""
    if dtype is not None:
        args = (dtype,) + args
    return _e.Call(_void(args[0]), args[1], args[2:])


def call_extern(*args, dtype=None):
    """``T.call_extern(dtype, name, *args)``, or TVM's ``T.call_extern(name, *args, dtype=)``."""
    if dtype is not None:
        args = (dtype,) + args
    return _op.call_extern(_void(args[0]), *args[1:])


def call_packed(*args):
    return _op.call_packed(*args)


def if_then_else(cond, t, f, dtype=None):
    """``cond ? t : f``; TVM's scripts also pass the result ``dtype`` (it must agree)."""
    result = _op.if_then_else(cond, t, f)
    if dtype is not None and result.dtype != dtype:
        return _op.cast(result, dtype)
    return result


def max(a, b):  # noqa: A001
    return _op.max(a, b)


def min(a, b):  # noqa: A001
    return _op.min(a, b)


def floordiv(a, b):
    return _e.FloorDiv(a, b)


def floormod(a, b):
    return _e.FloorMod(a, b)


def Div(a, b):  # noqa: N802  (how the printer shows an integer truncating division)
    return _e.Div(a, b)


def truncdiv(a, b):
    return _e.Div(a, b)


def truncmod(a, b):
    return _e.Mod(a, b)


def abs(x):  # noqa: A001
    return _op.fabs(x)


def max_value(dtype):
    return _op.max_value(dtype)


def min_value(dtype):
    return _op.min_value(dtype)


def reinterpret(*args, dtype=None):
    """``T.reinterpret("handle", v)`` (TVM v0.13) or ``T.reinterpret(v, dtype="handle")``
    (older scripts): the bits of ``v`` read as ``dtype``."""
    value = None
    if len(args) == 2 and dtype is None:
        dtype, value = args
    elif len(args) == 1:
        value = args[0]
    if not isinstance(dtype, str) or value is None:
        raise TIRError("T.reinterpret takes a dtype string and a value, e.g. "
                       "T.reinterpret(\"handle\", T.uint64(0))")
    return _e.Call(dtype, "tir.reinterpret", (_e.convert(value),))


def likely(x, dtype="bool"):
    return _e.Call(dtype, "tir.likely", (x,))


def fma(a, b, c):
    return _op.fma(a, b, c)


def pow(a, b):  # noqa: A001
    return _op.pow(a, b)


def _intrinsic(record):
    """``T.<name>(*args, dtype=None)`` of an intrinsic record (TVM's scripts may name the
    result dtype: ``T.sqrt(x, dtype="float32")``)."""
    def build(*args, dtype=None):
        return record(*args, dtype=dtype)

    build.__name__ = build.__qualname__ = record.short_name
    build.__doc__ = record.describe()
    return build


def __getattr__(name):
    """``T.<name>`` of an intrinsic registered after this module was imported."""
    record = INTRINSICS.get("tir." + name)
    if record is None or not record.has_builder:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _intrinsic(record)


def _opaque(name, default_dtype):
    def build(*args, dtype=default_dtype):
        return _e.Call(dtype, "tir." + name, tuple(_e.convert(a) if not isinstance(a, str)
                                                    else a for a in args))

    build.__name__ = name
    return build


# TVM's lowered-code and accelerator builtins: irlab parses and prints them as opaque calls
# (``T.call_intrin``) so TVM scripts that mention them load; irlab does not execute them.
for _name, _dtype in _op.OPAQUE_BUILTINS.items():
    if _name not in globals():
        globals()[_name] = _opaque(_name, _dtype)


# ``T.exp``, ``T.atan2``, ``T.isnan``, ``T.popcount``...: every intrinsic with a builder
# (``Intrinsic.has_builder``) that is not written above. Which ones print as ``T.<name>`` is
# the record's ``tvmscript`` flag (the rest print as ``T.call_intrin``).
for _record in list(INTRINSICS.values()):
    if _record.has_builder and _record.short_name not in globals():
        globals()[_record.short_name] = _intrinsic(_record)


def tvm_call_packed(*args, dtype="int32"):
    """TVM's lowered spelling of ``T.call_packed``."""
    return _e.Call(dtype, "tir.tvm_call_packed", args)
