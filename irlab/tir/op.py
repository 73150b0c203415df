"""TIR operator builders (TVM's dtype matching + constant folding); the intrinsics they
call are defined in ``irlab.tir.intrinsics``.

Dtype rules (TVM ``BinaryOpMatchTypes``, src/tir/op/op.cc): Python ints become ``int32``
(``int64`` if they do not fit) and floats ``float32``, as TVM's FFI converts them; then a
scalar is broadcast against a vector, int meets float -> the float type, two floats or two
ints of one signedness -> the wider, int/uint of equal width -> the uint. So ``i64 + 1`` is
int64, ``f16 + 1`` float16, ``i8 + 1`` int32 and ``f16 + 1.0`` float32, exactly as in TVM.
Bitwise operators and shifts are the exception: a Python int takes the other side's dtype.

Constant folding follows TVM's ``TryConstFold``: constant operands fold (integers wrap to the
dtype's width) and the identities ``x + 0``, ``x - 0``, ``x * 1``, ``x * 0``, ``0 * x``,
``x / 1``, ``x // 1``, ``x % 1`` and ``true && x`` simplify; nothing else does.
"""

from __future__ import annotations

import builtins
import math
import numbers

from irlab.errors import TIRError
from irlab.runtime.dtype import parse_dtype, normalize_dtype
from irlab.tir import expr as _e
# the intrinsics are defined in irlab.tir.intrinsics; these names stay importable from here
from irlab.tir.intrinsics import (INTRINSICS, OPAQUE_BUILTINS, intrinsic_name,  # noqa: F401
                                  register_intrinsic)

# -- constants -------------------------------------------------------------------------
def const(value, dtype=None, span=None):
    """A constant (IntImm/FloatImm; a Broadcast for a vector dtype). Without a dtype: bool ->
    ``bool``, int -> ``int32`` (``int64`` when large), float -> ``float32``."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, numbers.Integral):
            dtype = "int32" if -(2 ** 31) <= int(value) < 2 ** 31 else "int64"
        elif isinstance(value, numbers.Real):
            dtype = "float32"
        elif hasattr(value, "dtype"):  # numpy scalar
            dtype = normalize_dtype(value.dtype)
        else:
            raise TIRError(f"cannot make a TIR constant of {value!r}")
    t = parse_dtype(dtype)
    if t.lanes > 1:
        return _e.Broadcast(const(value, str(t.element_of())), t.lanes)
    if t.is_float:
        return _e.FloatImm(normalize_dtype(t), float(value), span)
    if isinstance(value, float) and not float(value).is_integer():
        raise TIRError(f"cannot make a {t} constant of the non-integer {value!r}")
    return _e.IntImm(normalize_dtype(t), int(value), span)


def _wrap(value, dtype):
    t = parse_dtype(dtype)
    if t.code == "bool":
        return int(bool(value))
    if t.code not in ("int", "uint"):
        return value
    value &= (1 << t.bits) - 1
    if t.code == "int" and value >= 1 << (t.bits - 1):
        value -= 1 << t.bits
    return value


def _fold_const(value, dtype):
    if parse_dtype(dtype).is_float:
        return _e.FloatImm(dtype, value)
    return _e.IntImm(dtype, _wrap(int(value), dtype))


def cast(value, dtype, span=None):
    """``value`` as ``dtype``: a no-op when equal, constants fold, scalars broadcast."""
    value = _e.convert(value)
    dtype = normalize_dtype(dtype)
    if value.dtype == dtype:
        return value
    t, vt = parse_dtype(dtype), parse_dtype(value.dtype)
    if isinstance(value, (_e.IntImm, _e.FloatImm)) and t.lanes == 1:
        if t.is_float:
            return _e.FloatImm(dtype, float(value.value))
        return _e.IntImm(dtype, _wrap(int(value.value), dtype))  # C truncation toward zero
    if vt.lanes == 1 and t.lanes > 1:
        return _e.Broadcast(cast(value, str(t.element_of())), t.lanes)
    return _e.Cast(dtype, value, span)


def _match_types(a, b):
    """TVM's BinaryOpMatchTypes on two PrimExprs (after Python-number conversion)."""
    a, b = _e.convert(a), _e.convert(b)
    if a.dtype == b.dtype:
        return a, b
    la, lb = parse_dtype(a.dtype), parse_dtype(b.dtype)
    if la.lanes == 1 and lb.lanes != 1:
        a = _e.Broadcast(a, lb.lanes)
    elif lb.lanes == 1 and la.lanes != 1:
        b = _e.Broadcast(b, la.lanes)
    elif la.lanes != lb.lanes:
        raise TIRError(f"cannot match types {a.dtype} vs {b.dtype}")
    if a.dtype == b.dtype:
        return a, b
    ta, tb = parse_dtype(a.dtype), parse_dtype(b.dtype)
    if ta.is_float and tb.is_float:
        return (cast(a, b.dtype), b) if ta.bits < tb.bits else (a, cast(b, a.dtype))
    if not ta.is_float and tb.is_float:
        return cast(a, b.dtype), b
    if ta.is_float and not tb.is_float:
        return a, cast(b, a.dtype)
    ints = ("int", "uint", "bool")
    if ta.code in ints and tb.code in ints:
        if ta.bits != tb.bits:
            return (cast(a, b.dtype), b) if ta.bits < tb.bits else (a, cast(b, a.dtype))
        return (a, cast(b, a.dtype)) if ta.code == "uint" else (cast(a, b.dtype), b)
    raise TIRError(f"cannot match types {a.dtype} vs {b.dtype}")


def _const_value(x):
    return x.value if isinstance(x, (_e.IntImm, _e.FloatImm)) else None


def _is(x, v):
    return isinstance(x, (_e.IntImm, _e.FloatImm)) and x.value == v


# -- arithmetic builders ---------------------------------------------------------------
def add(a, b, span=None):
    a, b = _match_types(a, b)
    ca, cb = _const_value(a), _const_value(b)
    if ca is not None and cb is not None:
        return _fold_const(ca + cb, a.dtype)
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    return _e.Add(a, b, span)


def subtract(a, b, span=None):
    a, b = _match_types(a, b)
    ca, cb = _const_value(a), _const_value(b)
    if ca is not None and cb is not None:
        return _fold_const(ca - cb, a.dtype)
    if _is(b, 0):
        return a
    return _e.Sub(a, b, span)


def multiply(a, b, span=None):
    a, b = _match_types(a, b)
    ca, cb = _const_value(a), _const_value(b)
    if ca is not None and cb is not None:
        return _fold_const(ca * cb, a.dtype)
    if _is(a, 1):
        return b
    if _is(b, 1):
        return a
    if _is(a, 0) and not _is_float(b):  # a float x * 0 is NaN when x is NaN or inf
        return a
    if _is(b, 0) and not _is_float(a):
        return b
    return _e.Mul(a, b, span)


def _is_float(x):
    return parse_dtype(x.dtype).is_float


def _check_nonzero(b):
    if _is(b, 0) and not parse_dtype(b.dtype).is_float:
        raise TIRError("division by the constant zero")


def _div_like(node, fold, one_result):
    def build(a, b, span=None):
        a, b = _match_types(a, b)
        _check_nonzero(b)
        ca, cb = _const_value(a), _const_value(b)
        if ca is not None and cb is not None and cb != 0:
            return _fold_const(fold(ca, cb, parse_dtype(a.dtype).is_float), a.dtype)
        if _is(b, 1):
            return one_result(a)
        if _is(a, 0) and not parse_dtype(a.dtype).is_float:
            return a
        return node(a, b, span)

    return build


def _truncdiv_value(x, y, is_float):
    if is_float:
        return x / y
    q = builtins.abs(x) // builtins.abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _truncmod_value(x, y, is_float):
    if is_float:
        return math.fmod(x, y)
    return x - _truncdiv_value(x, y, False) * y


def _floordiv_value(x, y, is_float):
    return math.floor(x / y) if is_float else x // y


def _floormod_value(x, y, is_float):
    return x - math.floor(x / y) * y if is_float else x % y


def _zero_like(a):
    return _fold_const(0, a.dtype)


div = _div_like(_e.Div, _truncdiv_value, lambda a: a)
truncdiv = div
truncmod = _div_like(_e.Mod, _truncmod_value, _zero_like)
floordiv = _div_like(_e.FloorDiv, _floordiv_value, lambda a: a)
floormod = _div_like(_e.FloorMod, _floormod_value, _zero_like)
indexdiv, indexmod = floordiv, floormod


def true_divide(a, b, span=None):
    """Python ``/``: refused on two integers (as TVM: say truncdiv or floordiv), else Div."""
    a_int = _is_int_like(a)
    if a_int and _is_int_like(b):
        raise TIRError("integer `/` is ambiguous in TIR: use tir.truncdiv / tir.floordiv "
                       "(or `//`), tir.truncmod / tir.floormod (or `%`)")
    return div(a, b, span)


def _is_int_like(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Integral):
        return True
    return isinstance(x, _e.PrimExpr) and parse_dtype(x.dtype).code == "int"


def min(a, b, span=None):  # noqa: A001  (TVM's name)
    """The smaller of ``a`` and ``b``; a float NaN in either propagates (``np.minimum``)."""
    a, b = _match_types(a, b)
    ca, cb = _const_value(a), _const_value(b)
    if ca is not None and cb is not None:
        return _fold_const(ca if ca <= cb or ca != ca else cb, a.dtype)
    return _e.Min(a, b, span)


def max(a, b, span=None):  # noqa: A001
    """The larger of ``a`` and ``b``; a float NaN in either propagates (``np.maximum``;
    TVM's compiled max returns ``b`` when ``a`` is NaN)."""
    a, b = _match_types(a, b)
    ca, cb = _const_value(a), _const_value(b)
    if ca is not None and cb is not None:
        return _fold_const(ca if ca >= cb or ca != ca else cb, a.dtype)
    return _e.Max(a, b, span)


def never_nan(e) -> bool:
    """True when ``e`` is a number or a broadcast number other than NaN: a NaN-propagating
    min/max against it needs no NaN test on its side (codegens put it first: ``0 > x ? 0 : x``
    is relu in one ``maxps``)."""
    if isinstance(e, _e.Broadcast):
        e = e.value
    return isinstance(e, (_e.IntImm, _e.FloatImm)) and e.value == e.value


def negate(a, span=None):
    a = _e.convert(a)
    if isinstance(a, (_e.IntImm, _e.FloatImm)):
        return _fold_const(-a.value, a.dtype)
    return _e.Sub(_zero_like(a) if parse_dtype(a.dtype).lanes == 1
                  else _e.Broadcast(_fold_const(0, str(parse_dtype(a.dtype).element_of())),
                                    parse_dtype(a.dtype).lanes), a, span)


def _compare(node, fold):
    def build(a, b, span=None):
        a, b = _match_types(a, b)
        ca, cb = _const_value(a), _const_value(b)
        if ca is not None and cb is not None:
            return _e.IntImm("bool", int(fold(ca, cb)))
        return node(a, b, span)

    return build


equal = _compare(_e.EQ, lambda x, y: x == y)
not_equal = _compare(_e.NE, lambda x, y: x != y)
less = _compare(_e.LT, lambda x, y: x < y)
less_equal = _compare(_e.LE, lambda x, y: x <= y)
greater = _compare(_e.GT, lambda x, y: x > y)
greater_equal = _compare(_e.GE, lambda x, y: x >= y)


def logical_and(a, b, span=None):
    a, b = _e.convert(a), _e.convert(b)
    if isinstance(a, _e.IntImm) and a.dtype == "bool":
        return b if a.value else a
    if isinstance(b, _e.IntImm) and b.dtype == "bool":
        return a if b.value else b
    return _e.And(a, b, span)


def logical_or(a, b, span=None):
    a, b = _e.convert(a), _e.convert(b)
    if isinstance(a, _e.IntImm) and a.dtype == "bool":
        return a if a.value else b
    if isinstance(b, _e.IntImm) and b.dtype == "bool":
        return b if b.value else a
    return _e.Or(a, b, span)


def logical_not(a, span=None):
    a = _e.convert(a)
    if isinstance(a, _e.IntImm) and a.dtype == "bool":
        return _e.IntImm("bool", 1 - a.value)
    return _e.Not(a, span)


def all(*conds, span=None):  # noqa: A001
    """The conjunction of the conditions (TVM's ``tir.all``)."""
    if not conds:
        raise TIRError("tir.all needs at least one condition")
    result = _e.convert(conds[0])
    for cond in conds[1:]:
        result = logical_and(result, cond, span)
    return result


def any(*conds, span=None):  # noqa: A001
    """The disjunction of the conditions (TVM's ``tir.any``)."""
    if not conds:
        raise TIRError("tir.any needs at least one condition")
    result = _e.convert(conds[0])
    for cond in conds[1:]:
        result = logical_or(result, cond, span)
    return result


# -- bitwise: a Python int takes the other side's dtype ---------------------------------
def _bit_operands(a, b, name):
    if isinstance(a, numbers.Integral) and isinstance(b, _e.PrimExpr):
        a = const(a, b.dtype)
    if isinstance(b, numbers.Integral) and isinstance(a, _e.PrimExpr):
        b = const(b, a.dtype)
    a, b = _match_types(a, b)
    if parse_dtype(a.dtype).code not in ("int", "uint", "bool"):
        raise TIRError(f"{name} needs integer operands, got {a.dtype}")
    return a, b


def _bit_op(name, fold):
    def build(a, b, span=None):
        a, b = _bit_operands(a, b, name)
        ca, cb = _const_value(a), _const_value(b)
        if ca is not None and cb is not None:
            return _fold_const(fold(ca, cb), a.dtype)
        return _e.Call(a.dtype, "tir." + name, (a, b), span)

    return build


left_shift = _bit_op("shift_left", lambda x, y: x << y)
right_shift = _bit_op("shift_right", lambda x, y: x >> y)
bitwise_and = _bit_op("bitwise_and", lambda x, y: x & y)
bitwise_or = _bit_op("bitwise_or", lambda x, y: x | y)
bitwise_xor = _bit_op("bitwise_xor", lambda x, y: x ^ y)


def bitwise_not(a, span=None):
    a = _e.convert(a)
    if parse_dtype(a.dtype).code not in ("int", "uint", "bool"):
        raise TIRError(f"bitwise_not needs an integer operand, got {a.dtype}")
    return _e.Call(a.dtype, "tir.bitwise_not", (a,), span)


def popcount(x, span=None):
    """The number of set bits of the integer ``x`` (``tir.popcount``, of ``x``'s dtype)."""
    x = _integer_operand(x, "popcount")
    return _e.Call(x.dtype, "tir.popcount", (x,), span)


def clz(x, span=None):
    """The number of leading zero bits of the integer ``x`` in its width, as int32 (TVM's
    ``tir.clz``; irlab defines ``clz(0)`` as the width)."""
    x = _integer_operand(x, "clz")
    return _e.Call(str(parse_dtype("int32").with_lanes(parse_dtype(x.dtype).lanes)), "tir.clz",
                   (x,), span)


def _integer_operand(x, name):
    x = _e.convert(x)
    if parse_dtype(x.dtype).code not in ("int", "uint"):
        raise TIRError(f"{name} needs an integer operand, got {x.dtype}")
    return x


# -- math intrinsics -------------------------------------------------------------------
# ``exp``, ``tanh``, ``atan2``, ``isnan``... are not written here: each intrinsic record with a
# numpy reference gives its builder (``Intrinsic.builder``), installed at the end of this
# module and found by ``__getattr__`` when registered later. The builders below add
# semantics of their own (integers, type matching, folding) and take precedence.
def _rounding(name):
    def build(x, span=None):
        x = _e.convert(x)
        if not parse_dtype(x.dtype).is_float:  # TVM: rounding an integer is the identity
            return x
        return INTRINSICS["tir." + name](x, span=span)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = INTRINSICS["tir." + name].describe() + " An integer is returned as is."
    return build


floor = _rounding("floor")
ceil = _rounding("ceil")
round = _rounding("round")  # noqa: A001


def fabs(x, span=None):
    """``|x|`` (``tir.fabs`` on floats; a Select on integers, as TVM's ``abs``)."""
    x = _e.convert(x)
    if parse_dtype(x.dtype).is_float:
        return _e.Call(x.dtype, "tir.fabs", (x,), span)
    if parse_dtype(x.dtype).code == "uint":
        return x
    return _e.Select(greater_equal(x, 0), x, negate(x))


abs = fabs  # noqa: A001


def pow(x, y, span=None):  # noqa: A001
    """``x ** y`` (``tir.pow``; both sides are matched to one float type)."""
    x, y = _match_types(x, y)
    if not parse_dtype(x.dtype).is_float:
        raise TIRError(f"pow needs float operands, got {x.dtype}")
    return _e.Call(x.dtype, "tir.pow", (x, y), span)


power = pow


def fma(a, b, c, span=None):
    """``a * b + c`` as one intrinsic (TVM's ``tir.fma``)."""
    a, b = _match_types(a, b)
    a, c = _match_types(a, c)
    return _e.Call(a.dtype, "tir.fma", (a, b, c), span)


def if_then_else(cond, t, f, span=None):
    """``cond ? t : f`` where only the taken branch is evaluated (guards an access)."""
    cond = _e.convert(cond)
    if parse_dtype(cond.dtype).code != "bool":
        raise TIRError(f"if_then_else needs a bool condition, got {cond.dtype}")
    t, f = _match_types(t, f)
    if isinstance(cond, _e.IntImm):
        return t if cond.value else f
    return _e.Call(t.dtype, "tir.if_then_else", (cond, t, f), span)


def _limits(dtype):
    t = parse_dtype(dtype)
    if t.code == "int":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    if t.code in ("uint", "bool"):
        return 0, (1 << t.bits) - 1
    if t.is_float:
        import numpy as np

        info = np.finfo(f"float{t.bits}")
        return float(info.min), float(info.max)
    raise TIRError(f"no value range for {dtype}")


def max_value(dtype, span=None):
    """The largest finite value of ``dtype``."""
    return const(_limits(dtype)[1], dtype, span)


def min_value(dtype, span=None):
    """The smallest finite value of ``dtype``."""
    return const(_limits(dtype)[0], dtype, span)


def call_intrin(dtype, op_name, *args, span=None):
    """A Call of a registered intrinsic."""
    return _e.Call(dtype, op_name, args, span)


def call_extern(dtype, func_name, *args, span=None):
    """A call of an external C function (``tir.call_extern``, name first)."""
    return _e.Call(dtype, "tir.call_extern", (func_name,) + args, span)


def call_packed(*args, span=None):
    """A call of a packed function by name (``tir.tvm_call_packed``), returning int32."""
    return _e.Call("int32", "tir.tvm_call_packed", args, span)


def infinity(dtype):
    return const(float("inf"), dtype)


def max_identity(dtype):
    """What ``max`` starts from: -inf for floats (so the max of all -inf is -inf, as numpy and
    onnxruntime; TVM starts from the lowest finite value), else the lowest value."""
    return const(float("-inf"), dtype) if parse_dtype(dtype).is_float else min_value(dtype)


def min_identity(dtype):
    """What ``min`` starts from: +inf for floats, else the highest value."""
    return const(float("inf"), dtype) if parse_dtype(dtype).is_float else max_value(dtype)


# -- the intrinsics' own builders ---------------------------------------------------------
def intrinsic_builders() -> dict:
    """``{short name: builder}`` of every intrinsic with one (``Intrinsic.has_builder``):
    what ``tir``, ``te`` and this module export as ``tir.<name>``."""
    return {r.short_name: globals().get(r.short_name) or r.builder()
            for r in INTRINSICS.values() if r.has_builder}


def __getattr__(name):
    """``tir.op.<name>`` of an intrinsic registered after this module was imported."""
    record = INTRINSICS.get("tir." + name)
    if record is None or not record.has_builder:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return record.builder()


for _name, _build in intrinsic_builders().items():
    globals().setdefault(_name, _build)
