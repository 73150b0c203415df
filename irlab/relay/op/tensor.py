"""Elementwise and broadcast operators: unary math, binary arithmetic and comparisons, cast,
clip, where, broadcast_to and the tensor initializers (zeros/ones/full and their ``_like``s)."""

from __future__ import annotations

import math

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.runtime.dtype import normalize_dtype, to_numpy_dtype
from irlab.ir.expr import RelayExpr
from irlab.ir.op import NOT_APPLICABLE, Op, OpPattern, TYPE_RELATIONS, register_op
from irlab.ir.type import TensorType
from irlab.relay.expr import Constant, const as _const
from irlab.relay.op.layout_rules import binary_broadcast_layout, elemwise_arbitrary_layout
from irlab.relay.op.scale_axis import ScaleAxisRule
from irlab.relay.op.op_common import broadcast_shapes, identity_rel, make_call, out_array


# ---------------------------------------------------------------------------------------------
# attrs
class CastAttrs(Attrs):
    _type_key = "relay.attrs.CastAttrs"
    dtype: str = ""


class ClipAttrs(Attrs):
    _type_key = "relay.attrs.ClipAttrs"
    # No defaults in TVM's ClipAttrs: both bounds always print (``a_min=0f, a_max=6f``).
    a_min: float
    a_max: float


class InitOpAttrs(Attrs):
    _type_key = "relay.attrs.InitOpAttrs"
    shape: tuple = None
    dtype: str = ""


# ---------------------------------------------------------------------------------------------
# unary elementwise
def _erf(x):
    try:
        from scipy.special import erf  # exact to float64 when SciPy is there
    except ImportError:
        return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(np.float64)
    return erf(x)


def _float_only(fn):
    def apply(x):
        return fn(x.astype(np.float64)) if x.dtype.kind in "iub" else fn(x)
    return apply


def _rsqrt(x):
    with np.errstate(divide="ignore"):
        return 1.0 / np.sqrt(x)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _round(x):
    # TVM rounds half away from zero (C's round), numpy rounds half to even. x - trunc(x) is
    # exact, whereas floor(x + 0.5) rounds 0.49999997 up to 1 in float32.
    if x.dtype.kind != "f":
        return x
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


_UNARY = {
    "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "rsqrt": _rsqrt, "sigmoid": _sigmoid, "tanh": np.tanh, "erf": _erf,
    "negative": np.negative, "abs": np.abs, "floor": np.floor, "ceil": np.ceil,
    "round": _round, "trunc": np.trunc, "sign": np.sign, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "atan": np.arctan, "copy": np.copy, "logical_not": np.logical_not,
    # FastMath's targets: approximations in compiled code, so their reference is the exact
    # function (the approximation error belongs to codegen, not to the semantics).
    "fast_exp": np.exp, "fast_tanh": np.tanh, "fast_erf": _erf,
}
_PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}


def _unary_reference(fn):
    def reference(inputs, attrs, out_type):
        with np.errstate(all="ignore"):
            return out_array(fn(inputs[0]), out_type)
    return reference


def _bool_rel(ctx):
    return TensorType(ctx.tensor(0).shape, "bool")


for _name, _fn in _UNARY.items():
    register_op(_name, num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
                type_rel=identity_rel, pattern=OpPattern.ELEMWISE, support_level=3,
                reference=_unary_reference(_fn), description=f"Elementwise {_name}.",
                ).set_attrs(FInferCorrectLayout=elemwise_arbitrary_layout)
for _name, _fn in _PREDICATES.items():
    register_op(_name, num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
                type_rel=_bool_rel, pattern=OpPattern.ELEMWISE, support_level=3,
                reference=_unary_reference(_fn), description=f"Elementwise {_name}.",
                ).set_attrs(FInferCorrectLayout=elemwise_arbitrary_layout)


# FastMath swaps these for their fast approximate versions (same attrs)
for _name in ("exp", "tanh", "erf"):
    Op.get(_name).set_attr("TFastVersion", f"fast_{_name}")


def _unary_maker(name):
    def make(data):
        return make_call(name, [data])
    make.__name__ = name
    make.__doc__ = f"Elementwise ``{name}`` of a tensor."
    return make


exp, log, log2, log10, sqrt, rsqrt, sigmoid, tanh, erf = (
    _unary_maker(n) for n in ("exp", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh",
                              "erf"))
negative, abs, floor, ceil, round, trunc, sign = (  # noqa: A001 - TVM's names
    _unary_maker(n) for n in ("negative", "abs", "floor", "ceil", "round", "trunc", "sign"))
sin, cos, tan, atan, copy, logical_not = (
    _unary_maker(n) for n in ("sin", "cos", "tan", "atan", "copy", "logical_not"))
isnan, isinf, isfinite = (_unary_maker(n) for n in ("isnan", "isinf", "isfinite"))
fast_exp, fast_tanh, fast_erf = (_unary_maker(n) for n in ("fast_exp", "fast_tanh", "fast_erf"))


# ---------------------------------------------------------------------------------------------
# binary broadcast
def _trunc_divide(a, b):
    if a.dtype.kind in "iu":
        # floor quotient, moved toward zero when inexact with operands of opposite signs
        # (np.abs(INT_MIN) overflows, so no absolute values).
        with np.errstate(all="ignore"):
            safe = np.where(b == 0, 1, b).astype(b.dtype)
            q = np.floor_divide(a, safe)
            fix = ((a - q * safe) != 0) & ((a < 0) != (safe < 0))
            return np.where(b == 0, 0, q + fix.astype(q.dtype))
    return np.true_divide(a, b)


def _trunc_mod(a, b):
    if a.dtype.kind in "iu":
        return np.where(b == 0, 0, a - _trunc_divide(a, b) * b)
    return np.fmod(a, b)


def _floor_divide(a, b):
    if a.dtype.kind in "iu":
        return np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b)))
    return np.floor(a / b)


def _floor_mod(a, b):
    if a.dtype.kind in "iu":
        return np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b)))
    return a - np.floor(a / b) * b


_ARITHMETIC = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": _trunc_divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "mod": _trunc_mod,
    "floor_divide": _floor_divide, "floor_mod": _floor_mod, "trunc_divide": _trunc_divide,
    "trunc_mod": _trunc_mod, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift, "right_shift": np.right_shift,
}
_COMPARISON = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}


def _broadcast_rel(out_dtype=None):
    def rel(ctx):
        lhs, rhs = ctx.tensor(0, "lhs"), ctx.tensor(1, "rhs")
        ctx.expect(lhs.dtype == rhs.dtype,
                   f"data types of lhs and rhs differ: {lhs.dtype} vs {rhs.dtype}")
        shape = broadcast_shapes(lhs.shape, rhs.shape, ctx)
        return TensorType(shape, out_dtype or lhs.dtype)
    return rel


TYPE_RELATIONS["Identity"] = identity_rel
TYPE_RELATIONS["Broadcast"] = _broadcast_rel()
TYPE_RELATIONS["BroadcastComp"] = _broadcast_rel("bool")


def _binary_reference(fn):
    def reference(inputs, attrs, out_type):
        with np.errstate(all="ignore"):
            return out_array(fn(inputs[0], inputs[1]), out_type)
    return reference


for _name, _fn in _ARITHMETIC.items():
    register_op(_name, num_inputs=2,
                arguments=[("lhs", "Tensor", "The left hand side tensor."),
                           ("rhs", "Tensor", "The right hand side tensor.")],
                type_rel=_broadcast_rel(), pattern=OpPattern.BROADCAST, support_level=1,
                reference=_binary_reference(_fn), description=f"Broadcasting {_name}.",
                ).set_attrs(FInferCorrectLayout=binary_broadcast_layout)
# x op y == y op x: pattern rewrites (SimplifyExpr) try both operand orders
for _name in ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or",
              "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"):
    Op.get(_name).set_attr("TCommutative", True)
# how a per-channel scale crosses them (FoldScaleAxis)
Op.get("add").set_attr("TScaleAxisRule", ScaleAxisRule.ADDITIVE)
Op.get("subtract").set_attr("TScaleAxisRule", ScaleAxisRule.ADDITIVE)
Op.get("multiply").set_attr("TScaleAxisRule", ScaleAxisRule.SCALE)
for _name, _fn in _COMPARISON.items():
    register_op(_name, num_inputs=2,
                arguments=[("lhs", "Tensor", "The left hand side tensor."),
                           ("rhs", "Tensor", "The right hand side tensor.")],
                type_rel=_broadcast_rel("bool"), pattern=OpPattern.BROADCAST, support_level=4,
                reference=_binary_reference(_fn), description=f"Broadcasting {_name}.",
                ).set_attrs(FInferCorrectLayout=binary_broadcast_layout)


def _binary_maker(name):
    def make(lhs, rhs):
        return make_call(name, [lhs, rhs])
    make.__name__ = name
    make.__doc__ = f"Broadcasting ``{name}`` of two tensors."
    return make


add, subtract, multiply, divide, power, maximum, minimum, mod = (
    _binary_maker(n) for n in ("add", "subtract", "multiply", "divide", "power", "maximum",
                               "minimum", "mod"))
floor_divide, floor_mod, trunc_divide, trunc_mod = (
    _binary_maker(n) for n in ("floor_divide", "floor_mod", "trunc_divide", "trunc_mod"))
logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor = (
    _binary_maker(n) for n in ("logical_and", "logical_or", "logical_xor", "bitwise_and",
                               "bitwise_or", "bitwise_xor"))
left_shift, right_shift = (_binary_maker(n) for n in ("left_shift", "right_shift"))
equal, not_equal, less, less_equal, greater, greater_equal = (
    _binary_maker(n) for n in ("equal", "not_equal", "less", "less_equal", "greater",
                               "greater_equal"))


# ---------------------------------------------------------------------------------------------
# cast and clip
def _cast_rel(ctx):
    data = ctx.tensor(0)
    ctx.expect(bool(ctx.attrs.dtype), "cast needs a target dtype")
    return TensorType(data.shape, ctx.attrs.dtype)


def _cast_reference(inputs, attrs, out_type):
    x = inputs[0]
    target = to_numpy_dtype(out_type.dtype)
    if x.dtype.kind == "f" and target.kind in "iu":
        x = np.trunc(x)  # C-style conversion: toward zero
    with np.errstate(all="ignore"):
        return x.astype(target)


register_op("cast", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=CastAttrs, type_rel=_cast_rel, pattern=OpPattern.ELEMWISE,
            support_level=3, reference=_cast_reference, description="Cast to another dtype.",
            ).set_attrs(FInferCorrectLayout=elemwise_arbitrary_layout)


def cast(data, dtype):
    """Cast ``data`` to ``dtype``."""
    return make_call("cast", [data], CastAttrs(dtype=normalize_dtype(dtype)))


def _clip_reference(inputs, attrs, out_type):
    return out_array(np.clip(inputs[0], attrs.a_min, attrs.a_max), out_type)


register_op("clip", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=ClipAttrs, type_rel=identity_rel, pattern=OpPattern.ELEMWISE,
            support_level=3, reference=_clip_reference,
            description="Clip values into [a_min, a_max].",
            ).set_attrs(FInferCorrectLayout=elemwise_arbitrary_layout)


def clip(a, a_min, a_max):
    """Clip the values of ``a`` into ``[a_min, a_max]`` (ReLU6 is ``clip(x, 0, 6)``); NaN stays
    NaN, as in ``np.clip`` (TVM's compiled clip returns a bound: docs/semantics.md)."""
    if a_min > a_max:
        raise IrlabError(f"clip: a_min ({a_min}) is greater than a_max ({a_max})")
    return make_call("clip", [a], ClipAttrs(a_min=float(a_min), a_max=float(a_max)))


# ---------------------------------------------------------------------------------------------
# where
def _where_rel(ctx):
    cond = ctx.tensor(0, "condition")
    x, y = ctx.tensor(1, "x"), ctx.tensor(2, "y")
    ctx.expect(x.dtype == y.dtype, f"x and y must have the same dtype: {x.dtype} vs {y.dtype}")
    ctx.expect(cond.dtype == "bool" or cond.dtype.startswith(("int", "uint")),
               f"condition must be bool (or an integer type), got {cond.dtype}")
    shape = broadcast_shapes(broadcast_shapes(cond.shape, x.shape, ctx), y.shape, ctx)
    return TensorType(shape, x.dtype)


def _where_reference(inputs, attrs, out_type):
    return out_array(np.where(inputs[0].astype(bool), inputs[1], inputs[2]), out_type)


register_op("where", num_inputs=3,
            arguments=[("condition", "Tensor", "The condition."),
                       ("x", "Tensor", "Values where the condition holds."),
                       ("y", "Tensor", "Values elsewhere.")],
            type_rel=_where_rel, pattern=OpPattern.BROADCAST, support_level=4,
            reference=_where_reference, description="Select x where condition, else y.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def where(condition, x, y):
    """Elementwise ``x if condition else y``, broadcasting all three."""
    return make_call("where", [condition, x, y])


# ---------------------------------------------------------------------------------------------
# initializers and broadcast_to
def _check_shape(shape, what):
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise IrlabError(f"{what}: shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise IrlabError(f"{what}: shape has a negative dimension: {dims}")
    return dims


def _init_rel(ctx):
    return TensorType(ctx.attrs.shape, ctx.attrs.dtype)


def _full_rel(ctx):
    fill = ctx.tensor(0, "fill_value")
    ctx.expect(fill.shape == (), f"fill_value must be a scalar, got shape {fill.shape}")
    return TensorType(ctx.attrs.shape, ctx.attrs.dtype or fill.dtype)


def _like_rel(ctx):
    return ctx.tensor(0)


def _full_like_rel(ctx):
    data, fill = ctx.tensor(0, "data"), ctx.tensor(1, "fill_value")
    ctx.expect(fill.shape == (), f"fill_value must be a scalar, got shape {fill.shape}")
    return data


def _broadcast_to_rel(ctx):
    data = ctx.tensor(0)
    target = ctx.attrs.shape
    out = broadcast_shapes(data.shape, target, ctx)
    ctx.expect(out == tuple(target),
               f"cannot broadcast shape {data.shape} to {tuple(target)}")
    return TensorType(out, data.dtype)


def _filled(value):
    def reference(inputs, attrs, out_type):
        return np.full(out_type.shape, value, dtype=to_numpy_dtype(out_type.dtype))
    return reference


def _full_reference(inputs, attrs, out_type):
    return np.full(out_type.shape, inputs[-1], dtype=to_numpy_dtype(out_type.dtype))


def _broadcast_to_reference(inputs, attrs, out_type):
    return np.broadcast_to(inputs[0], out_type.shape).copy()


_DATA = [("data", "Tensor", "The input tensor.")]
register_op("zeros", num_inputs=0, attrs_type=InitOpAttrs, type_rel=_init_rel,
            pattern=OpPattern.ELEMWISE, support_level=3, reference=_filled(0),
            description="A tensor of zeros.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE, TGenerator=True)
register_op("ones", num_inputs=0, attrs_type=InitOpAttrs, type_rel=_init_rel,
            pattern=OpPattern.ELEMWISE, support_level=3, reference=_filled(1),
            description="A tensor of ones.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE, TGenerator=True)
register_op("full", num_inputs=1, arguments=[("fill_value", "double", "The fill value.")],
            attrs_type=InitOpAttrs, type_rel=_full_rel, pattern=OpPattern.ELEMWISE,
            support_level=3, reference=_full_reference, description="A filled tensor.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE, TGenerator=True)
register_op("zeros_like", num_inputs=1, arguments=_DATA, type_rel=_like_rel,
            pattern=OpPattern.ELEMWISE, support_level=3, reference=_filled(0),
            description="Zeros shaped like the input.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE, TGenerator=True)
register_op("ones_like", num_inputs=1, arguments=_DATA, type_rel=_like_rel,
            pattern=OpPattern.ELEMWISE, support_level=3, reference=_filled(1),
            description="Ones shaped like the input.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE, TGenerator=True)
register_op("full_like", num_inputs=2,
            arguments=_DATA + [("fill_value", "double", "The fill value.")],
            type_rel=_full_like_rel, pattern=OpPattern.ELEMWISE, support_level=3,
            reference=_full_reference, description="A filled tensor shaped like the input.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE, TGenerator=True)
register_op("broadcast_to", num_inputs=1, arguments=_DATA, attrs_type=InitOpAttrs,
            type_rel=_broadcast_to_rel, pattern=OpPattern.BROADCAST, support_level=4,
            reference=_broadcast_to_reference, description="Broadcast to a shape.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def zeros(shape, dtype="float32"):
    return make_call("zeros", [], InitOpAttrs(shape=_check_shape(shape, "zeros"),
                                              dtype=normalize_dtype(dtype)))


def ones(shape, dtype="float32"):
    return make_call("ones", [], InitOpAttrs(shape=_check_shape(shape, "ones"),
                                             dtype=normalize_dtype(dtype)))


def full(fill_value, shape=(), dtype=""):
    """A tensor of ``shape`` filled with ``fill_value`` (an expression or a number)."""
    if not isinstance(fill_value, RelayExpr):
        fill_value = _const(fill_value, dtype or None)
    return make_call("full", [fill_value], InitOpAttrs(
        shape=_check_shape(shape, "full"), dtype=normalize_dtype(dtype) if dtype else ""))


def zeros_like(data):
    return make_call("zeros_like", [data])


def ones_like(data):
    return make_call("ones_like", [data])


def full_like(data, fill_value):
    if not isinstance(fill_value, RelayExpr):
        fill_value = _const(fill_value)
    return make_call("full_like", [data, fill_value])


def broadcast_to(data, shape):
    """Broadcast ``data`` to ``shape`` (numpy rules); a constant shape tensor is read as the
    static shape, as TVM does."""
    if isinstance(shape, Constant):
        shape = shape.data.numpy().tolist()
    return make_call("broadcast_to", [data], InitOpAttrs(shape=_check_shape(shape,
                                                                            "broadcast_to")))



# ---------------------------------------------------------------------------------------------
# TE computes (LowerTE): TOPI's elementwise and broadcast operators, injective strategy
def _register_computes():
    from irlab import topi
    from irlab.relay.op.strategy.generic import register_injective

    aliases = {"copy": "identity", "fast_exp": "exp", "fast_tanh": "tanh", "fast_erf": "erf"}
    for name in (*_UNARY, *_PREDICATES):
        fn = getattr(topi, aliases.get(name, name))
        register_injective(name, lambda attrs, inputs, out_type, fn=fn: [fn(inputs[0])])
    for name in (*_ARITHMETIC, *_COMPARISON):
        fn = getattr(topi, name)
        register_injective(name, lambda attrs, inputs, out_type, fn=fn: [fn(*inputs)])
    register_injective("cast", lambda attrs, inputs, out_type: [
        topi.cast(inputs[0], out_type.dtype)])
    register_injective("clip", lambda attrs, inputs, out_type: [
        topi.clip(inputs[0], attrs.a_min, attrs.a_max)])


_register_computes()

# ---------------------------------------------------------------------------------------------
# shape_of and ndarray_size: what a tensor's static shape says, as a tensor
class ShapeOfAttrs(Attrs):
    _type_key = "relay.attrs.ShapeOfAttrs"
    dtype: str = "int32"


class NdarraySizeAttrs(Attrs):
    _type_key = "relay.attrs.NdarraySizeAttrs"
    dtype: str = "int32"


def _shape_of_rel(ctx):
    return TensorType((len(ctx.tensor(0).shape),), ctx.attrs.dtype)


def _ndarray_size_rel(ctx):
    ctx.tensor(0)
    return TensorType((), ctx.attrs.dtype)


def _shape_value(shape, attrs):
    return np.array(shape, dtype=to_numpy_dtype(attrs.dtype)).reshape(len(shape))


def _size_value(shape, attrs):
    return np.array(math.prod(int(d) for d in shape), dtype=to_numpy_dtype(attrs.dtype))


register_op("shape_of", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=ShapeOfAttrs, type_rel=_shape_of_rel, pattern=OpPattern.OPAQUE,
            support_level=10, description="The shape of a tensor, as a 1-D tensor.",
            reference=lambda inputs, attrs, out_type: _shape_value(inputs[0].shape, attrs),
            ).set_attrs(FFoldFromShape=_shape_value)
register_op("ndarray_size", num_inputs=1, arguments=[("data", "Tensor", "The input tensor.")],
            attrs_type=NdarraySizeAttrs, type_rel=_ndarray_size_rel, pattern=OpPattern.OPAQUE,
            support_level=10, description="The number of elements of a tensor, as a scalar.",
            reference=lambda inputs, attrs, out_type: _size_value(inputs[0].shape, attrs),
            ).set_attrs(FFoldFromShape=_size_value)


def _register_shape_computes():
    from irlab import te, tir
    from irlab.relay.op.strategy.generic import register_injective

    def shape_compute(attrs, inputs, out_type):
        dims = [tir.const(int(d), attrs.dtype) for d in inputs[0].shape]

        def element(i):
            value = dims[-1]
            for k in range(len(dims) - 2, -1, -1):  # a select chain over the static dims
                value = tir.Select(i == k, dims[k], value)
            return value
        return [te.compute(out_type.shape, element, name="T_shape_of")]

    def size_compute(attrs, inputs, out_type):
        size = math.prod(int(d) for d in inputs[0].shape)
        return [te.compute((), lambda: tir.const(size, attrs.dtype), name="T_ndarray_size")]

    register_injective("shape_of", shape_compute)
    register_injective("ndarray_size", size_compute)


_register_shape_computes()
for _name in ("shape_of", "ndarray_size"):
    Op.get(_name).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def shape_of(data, dtype="int32"):
    """The shape of ``data`` as a 1-D tensor of ``dtype``."""
    return make_call("shape_of", [data], ShapeOfAttrs(dtype=normalize_dtype(dtype)))


def ndarray_size(data, dtype="int32"):
    """The number of elements of ``data`` as a scalar of ``dtype``."""
    return make_call("ndarray_size", [data], NdarraySizeAttrs(dtype=normalize_dtype(dtype)))


__all__ = [
    "CastAttrs", "ClipAttrs", "InitOpAttrs", "ShapeOfAttrs", "NdarraySizeAttrs",
    "shape_of", "ndarray_size",
    *_UNARY, *_PREDICATES, *_ARITHMETIC, *_COMPARISON,
    "cast", "clip", "where", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
    "broadcast_to",
]
