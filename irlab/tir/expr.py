"""TIR scalar/vector expressions (PrimExpr nodes) and their Python operator overloads.

Every PrimExpr has a ``dtype`` string. Leaves (Var, IntImm, FloatImm, StringImm), Cast, Call
and Ramp/Broadcast-style nodes carry it as a field; the other nodes derive it from their
operands when constructed. Operators (``a + b``, ``a < b``...) go through ``irlab.tir.op``,
which applies TVM's dtype matching and constant folding; calling a node class directly
(``Add(a, b)``) builds exactly that node (Python numbers become constants of the other side's
dtype, operand dtypes must then agree).
"""

from __future__ import annotations

import functools
import numbers

from irlab.errors import TIRError
from irlab.runtime.dtype import parse_dtype, normalize_dtype
from irlab.ir.expr import BaseExpr
from irlab.ir.type import PrimType


class PrimExpr(BaseExpr):
    """Base of TIR expressions. Hash is identity; ``bool(expr)`` is refused."""

    def __bool__(self):
        raise TIRError(
            f"cannot use a symbolic TIR expression as a Python bool: {self!r}; "
            "use tir.all / tir.any / tir.Select to combine conditions", self)

    # identity hash in C (object's): expressions are memo keys in every pass, and a Python-level
    # ``__hash__`` doubled the cost of each dict lookup
    __hash__ = object.__hash__

    def astext(self) -> str:
        from irlab.tir.text import expr_to_text

        return expr_to_text(self)

    # -- arithmetic: see irlab.tir.op for the dtype rules --------------------------------
    def __add__(self, other):
        return _op.add(self, other)

    def __radd__(self, other):
        return _op.add(other, self)

    def __sub__(self, other):
        return _op.subtract(self, other)

    def __rsub__(self, other):
        return _op.subtract(other, self)

    def __mul__(self, other):
        return _op.multiply(self, other)

    def __rmul__(self, other):
        return _op.multiply(other, self)

    def __truediv__(self, other):
        return _op.true_divide(self, other)

    def __rtruediv__(self, other):
        return _op.true_divide(other, self)

    def __floordiv__(self, other):
        return _op.floordiv(self, other)

    def __rfloordiv__(self, other):
        return _op.floordiv(other, self)

    def __mod__(self, other):
        return _op.floormod(self, other)

    def __rmod__(self, other):
        return _op.floormod(other, self)

    def __pow__(self, other):
        return _op.pow(self, other)

    def __rpow__(self, other):
        return _op.pow(other, self)

    def __neg__(self):
        return _op.negate(self)

    def __lshift__(self, other):
        return _op.left_shift(self, other)

    def __rlshift__(self, other):
        return _op.left_shift(other, self)

    def __rshift__(self, other):
        return _op.right_shift(self, other)

    def __rrshift__(self, other):
        return _op.right_shift(other, self)

    def __and__(self, other):
        return _op.bitwise_and(self, other)

    def __rand__(self, other):
        return _op.bitwise_and(other, self)

    def __or__(self, other):
        return _op.bitwise_or(self, other)

    def __ror__(self, other):
        return _op.bitwise_or(other, self)

    def __xor__(self, other):
        return _op.bitwise_xor(self, other)

    def __rxor__(self, other):
        return _op.bitwise_xor(other, self)

    def __invert__(self):
        return _op.bitwise_not(self)

    def __lt__(self, other):
        return _op.less(self, other)

    def __le__(self, other):
        return _op.less_equal(self, other)

    def __gt__(self, other):
        return _op.greater(self, other)

    def __ge__(self, other):
        return _op.greater_equal(self, other)

    def __eq__(self, other):
        return EqualOp(self, other)

    def __ne__(self, other):
        return NotEqualOp(self, other)

    def equal(self, other):
        """The EQ node ``self == other`` (TVM's ``PrimExpr.equal``)."""
        return _op.equal(self, other)

    def astype(self, dtype):
        return _op.cast(self, dtype)


class _DerivedDtype(PrimExpr):
    """A node whose dtype is computed from its operands (a slot, not a structural field)."""

    __slots__ = ("dtype",)

    def _set_dtype(self, dtype):
        object.__setattr__(self, "dtype", dtype)


class EqualOp:
    """Result of ``a == b`` on PrimExprs: ``bool()`` is identity, ``asobject()`` the EQ node.

    As in TVM, this keeps PrimExprs usable as dict keys while ``a == b`` still builds IR
    wherever an expression is expected.
    """

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __bool__(self):
        return self.a is self.b or _same_constant(self.a, self.b)

    def asobject(self):
        return _op.equal(self.a, self.b)

    def __repr__(self):
        return repr(self.asobject())


class NotEqualOp(EqualOp):
    """Result of ``a != b`` on PrimExprs: ``bool()`` is non-identity."""

    __slots__ = ()

    def __bool__(self):
        return not (self.a is self.b or _same_constant(self.a, self.b))

    def asobject(self):
        return _op.not_equal(self.a, self.b)


def _same_constant(a, b) -> bool:
    """Both integer constants (IntImm or Python int) of the same value: ``A.shape[1] ==
    B.shape[0]`` is True for two 128s, as TVM folds ``IntImm == IntImm`` to a constant."""
    def value(x):
        if isinstance(x, IntImm):
            return x.value
        return x if isinstance(x, int) else None

    va, vb = value(a), value(b)
    return va is not None and vb is not None and va == vb


def convert(value, dtype=None) -> PrimExpr:
    """A PrimExpr from an expression, an EqualOp or a Python/numpy scalar.

    Python ints become ``int32`` (``int64`` when they do not fit), floats ``float32``, bools
    ``bool`` -- TVM's FFI conversion -- unless ``dtype`` is given.
    """
    if isinstance(value, PrimExpr):
        return value
    if type(value).__name__ == "IterVar":  # TVM: an IterVar stands for its variable
        return value.var
    if isinstance(value, EqualOp):
        return value.asobject()
    if isinstance(value, (bool, numbers.Number)) or hasattr(value, "dtype"):
        return _op.const(value, dtype)
    raise TIRError(f"cannot convert {value!r} ({type(value).__name__}) to a TIR expression")


@functools.lru_cache(maxsize=None)
def _int_range(dtype):
    """(lo, hi) of an integer/bool dtype, None for any other (cached: every IntImm asks)."""
    t = parse_dtype(dtype)
    if t.code == "int":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    if t.code == "uint" or t.code == "bool":
        return 0, (1 << t.bits) - 1
    return None


def _check_int_range(dtype, value):
    bounds = _int_range(dtype)
    if bounds is None:
        return
    lo, hi = bounds
    if not lo <= value <= hi:
        raise TIRError(f"literal value {value} does not fit in {dtype} [{lo}, {hi}]")


# -- leaves --------------------------------------------------------------------------------
class Var(PrimExpr):
    """A symbolic variable. Identity matters: two Vars named ``i`` are different variables.

    ``dtype`` is the scalar type (``handle`` for a buffer's data pointer); ``type_annotation``
    a richer type when known (PrimType otherwise).
    """

    _is_variable = True
    name_hint: str
    dtype: str
    type_annotation: object
    span: object

    def __init__(self, name_hint="v", dtype="int32", type_annotation=None, span=None):
        if isinstance(dtype, PrimType):
            type_annotation, dtype = dtype, dtype.dtype
        dtype = normalize_dtype(dtype)
        if type_annotation is None:
            type_annotation = PrimType(dtype)
        super().__init__(str(name_hint), dtype, type_annotation, span)

    @property
    def name(self):
        return self.name_hint


class SizeVar(Var):
    """A variable known to be non-negative (a symbolic shape)."""


class IntImm(PrimExpr):
    """An integer (or bool) constant of a given dtype; the value must fit the dtype."""

    dtype: str
    value: int
    span: object

    def __init__(self, dtype, value, span=None):
        dtype = normalize_dtype(dtype)
        value = int(value)
        _check_int_range(dtype, value)
        super().__init__(dtype, value, span)

    def _structural_key(self):
        return (self.dtype, self.value)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __bool__(self):
        return self.value != 0

    def __float__(self):
        return float(self.value)


class Any(PrimExpr):
    """A dimension whose extent is not known until run time (``?`` in a Relay tensor type,
    TVM's ``tir.Any``/``relay.Any``). Every ``Any`` equals every other: it says "unknown",
    not which unknown."""

    _is_any_dim = True
    dtype: str
    span: object

    def __init__(self, span=None):
        super().__init__("int32", span)

    def _structural_key(self):
        return ("Any",)

    def __eq__(self, other):
        return isinstance(other, Any)

    def __ne__(self, other):
        return not isinstance(other, Any)

    def __hash__(self):
        return hash("tir.Any")

    def astext(self) -> str:
        return "?"

    __str__ = __repr__ = astext


class FloatImm(PrimExpr):
    """A floating-point constant; the value is rounded to the dtype's precision."""

    dtype: str
    value: float
    span: object

    def __init__(self, dtype, value, span=None):
        import numpy as np

        dtype = normalize_dtype(dtype)
        if not parse_dtype(dtype).is_float:
            raise TIRError(f"FloatImm needs a float dtype, got {dtype}")
        if dtype in ("float16", "float32"):
            value = float(np.array(value, dtype=dtype))
        super().__init__(dtype, float(value), span)

    def _structural_key(self):
        return (self.dtype, self.value)

    def __float__(self):
        return self.value


class StringImm(PrimExpr):
    """A string constant (arguments of extern calls, assert messages)."""

    value: str
    span: object

    def __init__(self, value, span=None):
        super().__init__(str(value), span)

    @property
    def dtype(self):
        return "handle"

    def _structural_key(self):
        return self.value

    def __eq__(self, other):
        if isinstance(other, str):
            return self.value == other
        return super().__eq__(other)

    __hash__ = PrimExpr.__hash__


class Cast(PrimExpr):
    """``value`` converted to ``dtype`` (C semantics: float -> int truncates)."""

    dtype: str
    value: PrimExpr
    span: object

    def __init__(self, dtype, value, span=None):
        dtype = normalize_dtype(dtype)
        value = convert(value)
        if parse_dtype(dtype).lanes != parse_dtype(value.dtype).lanes:
            raise TIRError(f"Cast from {value.dtype} to {dtype} changes the number of lanes")
        super().__init__(dtype, value, span)


# -- binary arithmetic ---------------------------------------------------------------------
def _operands(a, b, node_name):
    """Convert Python numbers to the other side's dtype; the two dtypes must then agree."""
    if not isinstance(a, PrimExpr) and isinstance(b, PrimExpr):
        a = convert(a, b.dtype if not isinstance(a, EqualOp) else None)
    if not isinstance(b, PrimExpr):
        a = convert(a)
        b = convert(b, a.dtype if not isinstance(b, EqualOp) else None)
    if a.dtype != b.dtype:
        raise TIRError(f"{node_name} operands have different dtypes: {a.dtype} vs {b.dtype}")
    return a, b


class BinaryOpExpr(_DerivedDtype):
    """Base of the two-operand nodes; both operands have the same dtype."""

    a: PrimExpr
    b: PrimExpr
    span: object

    def __init__(self, a, b, span=None):
        a, b = _operands(a, b, type(self).__name__)
        super().__init__(a, b, span)
        self._set_dtype(self._result_dtype(a.dtype))

    def _result_dtype(self, dtype):
        return dtype


class Add(BinaryOpExpr):
    """``a + b``."""


class Sub(BinaryOpExpr):
    """``a - b``."""


class Mul(BinaryOpExpr):
    """``a * b``."""


class Div(BinaryOpExpr):
    """``a / b``: truncating for integers (C), true division for floats."""


class Mod(BinaryOpExpr):
    """``a % b`` truncating (the sign follows ``a``, as in C)."""


class FloorDiv(BinaryOpExpr):
    """``floor(a / b)``."""


class FloorMod(BinaryOpExpr):
    """``a - floor(a / b) * b`` (the sign follows ``b``)."""


class Min(BinaryOpExpr):
    """``min(a, b)``."""


class Max(BinaryOpExpr):
    """``max(a, b)``."""


class CmpExpr(BinaryOpExpr):
    """Base of comparisons; the result is ``bool`` with the operands' lanes."""

    def _result_dtype(self, dtype):
        lanes = parse_dtype(dtype).lanes
        return "bool" if lanes == 1 else f"boolx{lanes}"


class EQ(CmpExpr):
    """``a == b``."""


class NE(CmpExpr):
    """``a != b``."""


class LT(CmpExpr):
    """``a < b``."""


class LE(CmpExpr):
    """``a <= b``."""


class GT(CmpExpr):
    """``a > b``."""


class GE(CmpExpr):
    """``a >= b``."""


def _check_bool(value, where):
    value = convert(value)
    if parse_dtype(value.dtype).code != "bool":
        raise TIRError(f"{where} needs a bool operand, got {value.dtype}: {value!r}")
    return value


class And(_DerivedDtype):
    """Logical ``a && b`` on bools."""

    a: PrimExpr
    b: PrimExpr
    span: object

    def __init__(self, a, b, span=None):
        a, b = _check_bool(a, "And"), _check_bool(b, "And")
        super().__init__(a, b, span)
        self._set_dtype(a.dtype)


class Or(And):
    """Logical ``a || b`` on bools."""


class Not(_DerivedDtype):
    """Logical ``!a`` on a bool."""

    a: PrimExpr
    span: object

    def __init__(self, a, span=None):
        a = _check_bool(a, "Not")
        super().__init__(a, span)
        self._set_dtype(a.dtype)


class Select(_DerivedDtype):
    """``condition ? true_value : false_value``; both values are evaluated (no short-circuit;
    use ``if_then_else`` for a guarded access)."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    span: object

    def __init__(self, condition, true_value, false_value, span=None):
        condition = _check_bool(condition, "Select")
        true_value, false_value = _operands(true_value, false_value, "Select")
        super().__init__(condition, true_value, false_value, span)
        self._set_dtype(true_value.dtype)


class BufferLoad(_DerivedDtype):
    """``buffer[indices]``; a Ramp index loads a vector of the buffer's element type."""

    buffer: object
    indices: tuple
    span: object

    def __init__(self, buffer, indices, span=None):
        indices = tuple(convert(i) for i in indices)
        super().__init__(buffer, indices, span)
        lanes = 1
        for index in indices:
            lanes = max(lanes, parse_dtype(index.dtype).lanes)
        base = parse_dtype(buffer.dtype)
        self._set_dtype(str(base.with_lanes(base.lanes * lanes)))


class Ramp(_DerivedDtype):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int
    span: object

    def __init__(self, base, stride, lanes, span=None):
        base, stride = _operands(base, stride, "Ramp")
        lanes = int(lanes)
        if lanes <= 1:
            raise TIRError(f"Ramp needs more than one lane, got {lanes}")
        super().__init__(base, stride, lanes, span)
        self._set_dtype(str(parse_dtype(base.dtype).with_lanes(lanes)))


class Broadcast(_DerivedDtype):
    """The vector of ``lanes`` copies of the scalar ``value``."""

    value: PrimExpr
    lanes: int
    span: object

    def __init__(self, value, lanes, span=None):
        value = convert(value)
        lanes = int(lanes)
        if parse_dtype(value.dtype).lanes != 1:
            raise TIRError(f"Broadcast needs a scalar, got {value.dtype}")
        super().__init__(value, lanes, span)
        self._set_dtype(str(parse_dtype(value.dtype).with_lanes(lanes)))


class Shuffle(_DerivedDtype):
    """Lanes picked by ``indices`` from the concatenation of the ``vectors``."""

    vectors: tuple
    indices: tuple
    span: object

    def __init__(self, vectors, indices, span=None):
        vectors = tuple(convert(v) for v in vectors)
        indices = tuple(convert(i) for i in indices)
        super().__init__(vectors, indices, span)
        base = parse_dtype(vectors[0].dtype).element_of()
        self._set_dtype(str(base.with_lanes(len(indices))))


class Let(_DerivedDtype):
    """``let var = value in body`` as an expression; ``var`` is bound here."""

    _bind_fields = ("var",)
    var: Var
    value: PrimExpr
    body: PrimExpr
    span: object

    def __init__(self, var, value, body, span=None):
        value, body = convert(value), convert(body)
        if var.dtype != value.dtype:
            raise TIRError(f"Let binds {var.name_hint}: {var.dtype} to a {value.dtype} value")
        super().__init__(var, value, body, span)
        self._set_dtype(body.dtype)


class Call(PrimExpr):
    """A call of the intrinsic ``op`` (a registered name such as ``tir.exp``, see
    ``irlab.tir.op``) returning ``dtype``."""

    dtype: str
    op: str
    args: tuple
    span: object

    def __init__(self, dtype, op, args, span=None):
        from irlab.tir.op import intrinsic_name

        dtype = normalize_dtype(dtype)
        args = tuple(a if isinstance(a, (PrimExpr, str)) or not _is_exprlike(a) else convert(a)
                     for a in args)
        args = tuple(StringImm(a) if isinstance(a, str) else a for a in args)
        super().__init__(dtype, intrinsic_name(op), args, span)


def _is_exprlike(value):
    return isinstance(value, (EqualOp, bool, numbers.Number))


from irlab.tir import op as _op  # noqa: E402  (the operators above need the builders)
