"""Elementwise and broadcast ops (irlab/relay/op/tensor.py): registration, type relations and
numpy references. Expectations come from numpy, the math module or exact Python arithmetic."""

import decimal
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irlab import IRModule, relay
from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType
from irlab.relay.type_relation import TypeRelationError, infer_call_type

FAST = settings(max_examples=40, deadline=None)
RNG = np.random.default_rng(2)


def tt(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def out_type(call, *types):
    return infer_call_type(call.op, list(types), call.attrs)


def run(call, *arrays):
    ty = out_type(call, *[tt(a.shape, a.dtype.name) for a in arrays])
    return ty, call.op.reference(list(arrays), call.attrs, ty)


def var(shape=(), dtype="float32", name="x"):
    return relay.var(name, shape=shape, dtype=dtype)


UNARY = ["exp", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "negative",
         "abs", "floor", "ceil", "round", "trunc", "sign", "sin", "cos", "tan", "atan", "copy",
         "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "mod",
          "floor_divide", "floor_mod", "trunc_divide", "trunc_mod", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


# ---------------------------------------------------------------------------------------------
# registration
def test_registration_patterns():
    for name in UNARY + ["isnan", "isinf", "isfinite", "cast", "clip", "zeros", "ones", "full",
                         "zeros_like", "ones_like", "full_like"]:
        assert Op.get(name).pattern == OpPattern.ELEMWISE, name
    for name in BINARY + COMPARE + ["where", "broadcast_to"]:
        assert Op.get(name).pattern == OpPattern.BROADCAST, name
    assert Op.get("cast").attrs_type_key == "relay.attrs.CastAttrs"
    assert Op.get("clip").attrs_type_key == "relay.attrs.ClipAttrs"
    assert Op.get("full").attrs_type_key == "relay.attrs.InitOpAttrs"
    assert relay.ClipAttrs._fields == ("a_min", "a_max")
    assert relay.InitOpAttrs._fields == ("shape", "dtype")
    assert Op.get("where").num_inputs == 3 and Op.get("zeros").num_inputs == 0


# ---------------------------------------------------------------------------------------------
# unary
POSITIVE = {"log", "log2", "log10", "sqrt", "rsqrt"}
MATH = {
    "exp": math.exp, "log": math.log, "log2": math.log2, "log10": math.log10, "sqrt": math.sqrt,
    "rsqrt": lambda v: 1 / math.sqrt(v), "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
    "tanh": math.tanh, "erf": math.erf, "negative": lambda v: -v, "abs": abs,
    "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc,
    "sign": lambda v: (v > 0) - (v < 0), "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "atan": math.atan, "copy": lambda v: v, "logical_not": lambda v: float(not v),
    # half away from zero, computed exactly on the float's decimal value
    "round": lambda v: float(decimal.Decimal(v).quantize(0, decimal.ROUND_HALF_UP)),
}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float(name, dtype):
    values = RNG.uniform(-4, 4, size=(3, 5))
    values[0, :4] = [0.5, -0.5, 2.5, -1.5]  # rounding ties
    values[1, 0] = 0.49999997  # float32 trap for floor(x + 0.5)
    values[1, 1] = 0.0
    if name in POSITIVE:
        values = np.abs(values) + 0.1
    a = values.astype(dtype)
    ty, r = run(getattr(relay, name)(var(a.shape, dtype)), a)
    assert ty == tt(a.shape, dtype) and r.dtype == np.dtype(dtype)
    expected = np.vectorize(lambda v: MATH[name](float(v)))(a).astype(dtype)
    np.testing.assert_allclose(r, expected, rtol=2e-6 if dtype == "float32" else 1e-12,
                               atol=1e-7)


def test_unary_on_integers_keeps_dtype():
    a = np.array([-3, 0, 5], "int32")
    for name, expected in [("negative", [3, 0, -5]), ("abs", [3, 0, 5]), ("sign", [-1, 0, 1]),
                           ("round", [-3, 0, 5]), ("copy", [-3, 0, 5])]:
        ty, r = run(getattr(relay, name)(var((3,), "int32")), a)
        assert ty == tt((3,), "int32") and r.dtype == np.int32
        np.testing.assert_array_equal(r, expected)


def test_predicates():
    a = np.array([np.nan, np.inf, -np.inf, 1.0], "float32")
    for name, expected in [("isnan", [1, 0, 0, 0]), ("isinf", [0, 1, 1, 0]),
                           ("isfinite", [0, 0, 0, 1])]:
        ty, r = run(getattr(relay, name)(var((4,))), a)
        assert ty == tt((4,), "bool")
        np.testing.assert_array_equal(r, np.array(expected, bool))


# ---------------------------------------------------------------------------------------------
# binary
def _trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


INT_EXPECT = {
    "add": lambda x, y: x + y, "subtract": lambda x, y: x - y, "multiply": lambda x, y: x * y,
    "divide": _trunc_div, "trunc_divide": _trunc_div,
    "mod": lambda x, y: x - _trunc_div(x, y) * y,
    "trunc_mod": lambda x, y: x - _trunc_div(x, y) * y,
    "floor_divide": lambda x, y: x // y, "floor_mod": lambda x, y: x % y,
    "maximum": max, "minimum": min, "power": lambda x, y: x ** abs(y),
    "bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
    "bitwise_xor": lambda x, y: x ^ y,
    "equal": lambda x, y: x == y, "not_equal": lambda x, y: x != y, "less": lambda x, y: x < y,
    "less_equal": lambda x, y: x <= y, "greater": lambda x, y: x > y,
    "greater_equal": lambda x, y: x >= y,
}


@pytest.mark.parametrize("name", sorted(INT_EXPECT))
def test_binary_int32_exact(name):
    a = RNG.integers(-20, 20, size=(4, 6)).astype("int32")
    b = RNG.integers(-6, 7, size=(6,)).astype("int32")
    b[b == 0] = 3
    if name == "power":
        a, b = np.clip(a, -5, 5).astype("int32"), np.abs(b).clip(0, 4).astype("int32")
    ty, r = run(getattr(relay, name)(var(a.shape, "int32"), var(b.shape, "int32", "y")), a, b)
    out_dtype = "bool" if name in COMPARE else "int32"
    assert ty == tt((4, 6), out_dtype) and r.dtype == np.dtype(out_dtype)
    expected = [[INT_EXPECT[name](int(x), int(y)) for x, y in zip(row, b)] for row in a]
    np.testing.assert_array_equal(r, np.array(expected).astype(out_dtype))


def test_integer_division_edge_cases():
    a = np.array([-2 ** 31, -7, 7, -7, 7], "int32")
    b = np.array([2, 2, -2, -2, 2], "int32")
    _, r = run(relay.divide(var((5,), "int32"), var((5,), "int32", "y")), a, b)
    np.testing.assert_array_equal(r, [-2 ** 30, -3, -3, 3, 3])
    _, r = run(relay.mod(var((5,), "int32"), var((5,), "int32", "y")), a, b)
    np.testing.assert_array_equal(r, [0, -1, 1, -1, 1])
    u = np.array([200, 7], "uint8")
    _, r = run(relay.divide(var((2,), "uint8"), var((2,), "uint8", "y")), u,
               np.array([3, 2], "uint8"))
    np.testing.assert_array_equal(r, [66, 3])


def test_binary_float():
    a = RNG.uniform(-5, 5, size=(3, 1, 4)).astype("float32")
    b = RNG.uniform(0.5, 3, size=(2, 1)).astype("float32") * np.array([[1], [-1]], "float32")
    a64, b64 = a.astype("float64"), b.astype("float64")
    expected = {
        "add": a64 + b64, "subtract": a64 - b64, "multiply": a64 * b64, "divide": a64 / b64,
        "maximum": np.maximum(a64, b64), "minimum": np.minimum(a64, b64),
        "mod": np.fmod(a64, b64), "floor_divide": np.floor(a64 / b64),
        "floor_mod": a64 - np.floor(a64 / b64) * b64,
        "power": np.abs(a64) ** b64,
    }
    for name, want in expected.items():
        lhs = np.abs(a) if name == "power" else a
        ty, r = run(getattr(relay, name)(var(a.shape), var(b.shape, name="y")), lhs, b)
        assert ty == tt((3, 2, 4)), name
        np.testing.assert_allclose(r, want.astype("float32"), rtol=1e-5, atol=1e-5,
                                   err_msg=name)


def test_logical_on_bool():
    a = np.array([[True, False], [True, True]])
    b = np.array([True, False])
    for name, fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                     ("logical_xor", np.logical_xor)]:
        ty, r = run(getattr(relay, name)(var((2, 2), "bool"), var((2,), "bool", "y")), a, b)
        assert ty == tt((2, 2), "bool")
        np.testing.assert_array_equal(r, fn(a, b))
    _, r = run(relay.logical_not(var((2,), "bool")), b)
    np.testing.assert_array_equal(r, [False, True])


dims = st.integers(1, 4)


@FAST
@given(st.lists(dims, max_size=4), st.data())
def test_broadcast_shapes(shape, data):
    """Each dimension of the other operand is the same, 1, or missing (shorter rank)."""
    other = [data.draw(st.sampled_from([d, 1])) for d in shape]
    other = other[data.draw(st.integers(0, len(other))):]
    if data.draw(st.booleans()):
        shape, other = other, shape
    call = relay.add(var(tuple(shape)), var(tuple(other), name="y"))
    expected = np.broadcast_shapes(tuple(shape), tuple(other))
    assert out_type(call, tt(shape), tt(other)) == tt(expected)
    assert out_type(relay.less(var(), var(name="y")), tt(shape), tt(other)) == tt(expected, "bool")


def test_binary_rejects():
    call = relay.add(var((2, 3)), var((4, 3), name="y"))
    with pytest.raises(TypeRelationError, match=r"\(2, 3\) and \(4, 3\).*dimension 0: 2 vs 4"):
        out_type(call, tt((2, 3)), tt((4, 3)))
    with pytest.raises(TypeRelationError, match="float32 vs int32"):
        out_type(call, tt((2, 3)), tt((2, 3), "int32"))
    with pytest.raises(IrlabError, match="relay.const"):
        relay.add(var(), 1)


# ---------------------------------------------------------------------------------------------
# cast / clip / where
def test_cast_truncates_floats_toward_zero():
    a = np.array([-2.7, -0.5, 0.5, 2.7, 126.9], "float32")
    call = relay.cast(var((5,)), "int8")
    assert call.attrs.dtype == "int8"
    ty, r = run(call, a)
    assert ty == tt((5,), "int8") and r.dtype == np.int8
    np.testing.assert_array_equal(r, [-2, 0, 0, 2, 126])
    ty, r = run(relay.cast(var((5,)), "bool"), np.array([0, -0.0, 0.1, 2, -1], "float32"))
    np.testing.assert_array_equal(r, [False, False, True, True, True])
    ty, r = run(relay.cast(var((3,), "int32"), "float16"), np.array([1, -2, 2049], "int32"))
    assert r.dtype == np.float16
    np.testing.assert_array_equal(r, [1, -2, 2048])  # 2049 is not representable in float16
    ty, r = run(relay.cast(var((2,), "int32"), np.uint8), np.array([257, -1], "int32"))
    assert ty.dtype == "uint8"
    np.testing.assert_array_equal(r, [1, 255])
    assert relay.var("x", shape=(2,)).astype("int64").op.name == "cast"


def test_clip():
    a = RNG.uniform(-10, 10, size=(4, 4)).astype("float32")
    call = relay.clip(var((4, 4)), -1.5, 6)
    assert (call.attrs.a_min, call.attrs.a_max) == (-1.5, 6.0)
    ty, r = run(call, a)
    assert ty == tt((4, 4))
    np.testing.assert_array_equal(r, np.minimum(np.maximum(a, -1.5), 6).astype("float32"))
    ty, r = run(relay.clip(var((3,), "int32"), 0, 6), np.array([-3, 4, 9], "int32"))
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, [0, 4, 6])
    with pytest.raises(IrlabError, match="a_min"):
        relay.clip(var(), 2, 1)


def test_where():
    cond = np.array([[True], [False]])
    x = np.arange(6, dtype="float32").reshape(1, 2, 3)
    y = np.array(-1.0, "float32")
    call = relay.where(var((2, 1), "bool", "c"), var((1, 2, 3)), var((), name="y"))
    ty, r = run(call, cond, x, y)
    assert ty == tt((1, 2, 3))
    np.testing.assert_array_equal(r, [[[0, 1, 2], [-1, -1, -1]]])
    # a non-zero integer condition counts as true
    ty, r = run(relay.where(var((3,), "int32", "c"), var((3,)), var((3,), name="y")),
                np.array([0, 2, -1], "int32"), np.ones(3, "float32"), np.zeros(3, "float32"))
    np.testing.assert_array_equal(r, [0, 1, 1])
    with pytest.raises(TypeRelationError, match="same dtype: float32 vs int32"):
        out_type(call, tt((2, 1), "bool"), tt((2, 1)), tt((2, 1), "int32"))
    with pytest.raises(TypeRelationError, match="condition must be bool.*float32"):
        out_type(call, tt((2, 1)), tt((2, 1)), tt((2, 1)))
    with pytest.raises(TypeRelationError, match="cannot be broadcast"):
        out_type(call, tt((2,), "bool"), tt((3,)), tt((3,)))


# ---------------------------------------------------------------------------------------------
# initializers and broadcast_to
def test_zeros_ones_full():
    for maker, value in ((relay.zeros, 0), (relay.ones, 1)):
        call = maker((2, 3), "int64")
        ty = out_type(call)
        assert ty == tt((2, 3), "int64")
        r = call.op.reference([], call.attrs, ty)
        assert r.dtype == np.int64
        np.testing.assert_array_equal(r, np.full((2, 3), value))
    call = relay.full(relay.const(2.5), (3,), "float16")
    ty = out_type(call, tt(()))
    assert ty == tt((3,), "float16")
    np.testing.assert_array_equal(call.op.reference([np.array(2.5, "float32")], call.attrs, ty),
                                  np.full(3, 2.5, "float16"))
    # without a dtype, full takes the fill value's dtype
    call = relay.full(relay.var("v", shape=(), dtype="int32"), (2, 2))
    assert out_type(call, tt((), "int32")) == tt((2, 2), "int32")
    with pytest.raises(TypeRelationError, match=r"fill_value must be a scalar, got shape \(2,\)"):
        out_type(call, tt((2,), "int32"))
    with pytest.raises(IrlabError, match="negative dimension"):
        relay.zeros((2, -1))


def test_like_initializers():
    a = RNG.standard_normal((2, 3)).astype("float32")
    for name, value in (("zeros_like", 0), ("ones_like", 1)):
        ty, r = run(getattr(relay, name)(var((2, 3))), a)
        assert ty == tt((2, 3))
        np.testing.assert_array_equal(r, np.full((2, 3), value, "float32"))
    call = relay.full_like(var((2, 3), "int32"), relay.const(7))
    ty = out_type(call, tt((2, 3), "int32"), tt((), "int32"))
    assert ty == tt((2, 3), "int32")
    r = call.op.reference([np.zeros((2, 3), "int32"), np.array(7, "int32")], call.attrs, ty)
    np.testing.assert_array_equal(r, np.full((2, 3), 7))
    with pytest.raises(TypeRelationError, match="scalar"):
        out_type(call, tt((2, 3), "int32"), tt((1,), "int32"))


@pytest.mark.parametrize("shape, target", [((3,), (2, 3)), ((2, 1), (2, 4)), ((), (3, 1)),
                                           ((1, 1), (1, 1))])
def test_broadcast_to(shape, target):
    a = RNG.standard_normal(shape).astype("float32")
    ty, r = run(relay.broadcast_to(var(shape), target), a)
    assert ty == tt(target)
    np.testing.assert_array_equal(r, np.broadcast_to(a, target))


@pytest.mark.parametrize("shape, target", [((3,), (2, 4)), ((2, 3), (3,)), ((2,), (2, 1))])
def test_broadcast_to_rejects(shape, target):
    with pytest.raises(TypeRelationError, match="broadcast"):
        out_type(relay.broadcast_to(var(shape), target), tt(shape))


# ---------------------------------------------------------------------------------------------
# end to end
def test_elementwise_chain_end_to_end():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(3,))
    z = relay.where(relay.greater(x, y), relay.clip(x * y, -1, 1), relay.negative(x))
    func = relay.Function([x, y], relay.cast(z + relay.const(0.5), "int32"))
    a = RNG.uniform(-2, 2, size=(2, 3)).astype("float32")
    b = RNG.uniform(-2, 2, size=(3,)).astype("float32")
    got = relay.create_executor("debug", mod=func).evaluate()(a, b).numpy()
    want = np.trunc(np.where(a > b, np.clip(a * b, -1, 1), -a) + np.float32(0.5))
    np.testing.assert_array_equal(got, want.astype("int32"))


@pytest.mark.parametrize("name, expect", [("left_shift", lambda x, y: x << y),
                                          ("right_shift", lambda x, y: x >> y)])
def test_shifts_interpreted_and_compiled(name, expect):
    a = RNG.integers(-100, 100, size=(3, 4)).astype("int32")
    b = RNG.integers(0, 8, size=(4,)).astype("int32")
    x, y = var(a.shape, "int32"), var(b.shape, "int32", "y")
    func = relay.Function([x, y], getattr(relay, name)(x, y))
    for kind in ("debug", "graph"):
        out = relay.create_executor(kind, mod=IRModule.from_expr(func),
                                    target="llvm").evaluate()(a, b)
        np.testing.assert_array_equal(out.numpy(), expect(a, b))
