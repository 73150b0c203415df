"""Reductions: registration, output types over the attribute space, rejections and numpy
references (expected values computed with numpy or plain Python, independently)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irlab import relay
from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType
from irlab.relay.type_relation import TypeRelationError, infer_call_type

FAST = settings(max_examples=40, deadline=None)
RNG = np.random.default_rng(1)
REDUCERS = ["sum", "mean", "max", "min", "prod", "all", "any"]


def tt(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def out_type(call, *types):
    return infer_call_type(call.op, list(types), call.attrs)


def run(call, *arrays):
    ty = out_type(call, *[tt(a.shape, a.dtype.name) for a in arrays])
    return ty, call.op.reference(list(arrays), call.attrs, ty)


def var(shape, dtype="float32"):
    return relay.var("x", shape=shape, dtype=dtype)


def reduced_axes(ndim, axis, exclude):
    """The axes numpy should reduce, derived from the documented meaning of the attrs."""
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    listed = {a % ndim for a in axis}
    return tuple(i for i in range(ndim) if (i not in listed) == exclude)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@st.composite
def reduce_attrs(draw, allow_none=True):
    shape = draw(shapes)
    ndim = len(shape)
    axis = draw(st.one_of(
        st.none() if allow_none else st.nothing(),
        st.integers(-ndim, ndim - 1),
        st.lists(st.integers(-ndim, ndim - 1), max_size=ndim, unique_by=lambda a: a % ndim)))
    exclude = draw(st.booleans()) if axis is not None else False
    return shape, axis, draw(st.booleans()), exclude


def as_list(axis):
    return None if axis is None else [axis] if isinstance(axis, int) else list(axis)


# ---------------------------------------------------------------------------------------------
# registration and attrs
@pytest.mark.parametrize("name", REDUCERS + ["argmax", "argmin", "variance"])
def test_registration(name):
    op = Op.get(name)
    assert op.pattern == OpPattern.COMM_REDUCE
    assert op.support_level == 4
    key = {"argmax": "ArgReduceAttrs", "argmin": "ArgReduceAttrs",
           "variance": "VarianceAttrs"}.get(name, "ReduceAttrs")
    assert op.attrs_type_key == f"relay.attrs.{key}"
    assert op.num_inputs == (2 if name == "variance" else 1)


def test_attrs_fields_in_tvm_order():
    assert relay.ReduceAttrs._fields == ("axis", "keepdims", "exclude")
    assert relay.ArgReduceAttrs._fields == ("axis", "keepdims", "select_last_index", "exclude")
    assert relay.VarianceAttrs._fields == ("axis", "keepdims", "exclude", "unbiased")
    for cls in (relay.ReduceAttrs, relay.ArgReduceAttrs, relay.VarianceAttrs):
        assert all(v in (None, False) for v in cls._defaults.values())
    x = var((2, 3))
    assert relay.sum(x, 1).attrs.axis == (1,)
    assert relay.sum(x, [0, 1]).attrs.axis == (0, 1)
    assert relay.max(x).attrs.non_default_items() == []
    with pytest.raises(IrlabError, match="reduction axis"):
        relay.sum(x, 1.5)


# ---------------------------------------------------------------------------------------------
# output types
@FAST
@given(reduce_attrs(), st.sampled_from(REDUCERS))
def test_reduce_output_type(case, name):
    shape, axis, keepdims, exclude = case
    call = getattr(relay, name)(var(shape, "int32"), axis, keepdims, exclude)
    axes = reduced_axes(len(shape), as_list(axis), exclude)
    expected = np.sum(np.zeros(shape), axis=axes, keepdims=keepdims).shape
    assert out_type(call, tt(shape, "int32")) == tt(expected, "int32")


@FAST
@given(reduce_attrs(), st.sampled_from(["argmax", "argmin"]))
def test_arg_reduce_output_type(case, name):
    shape, axis, keepdims, exclude = case
    call = getattr(relay, name)(var(shape), axis, keepdims, exclude)
    axes = reduced_axes(len(shape), as_list(axis), exclude)
    expected = np.sum(np.zeros(shape), axis=axes, keepdims=keepdims).shape
    assert out_type(call, tt(shape)) == tt(expected, "int32")


def test_scalar_input():
    assert out_type(relay.sum(var(())), tt(())) == tt(())
    ty, r = run(relay.mean(var(())), np.array(3.5, "float32"))
    assert ty == tt(()) and r == np.float32(3.5)


@pytest.mark.parametrize("call, ty, match", [
    (relay.sum(var((2, 3)), 2), tt((2, 3)), r"axis=2 is out of range.*\[-2, 1\]"),
    (relay.mean(var((2, 3)), [-3]), tt((2, 3)), "axis=-3 is out of range"),
    (relay.max(var((2, 3)), [1, -1]), tt((2, 3)), "names axis 1 twice"),
    (relay.min(var((2, 3)), None, exclude=True), tt((2, 3)), "exclude=True needs an explicit"),
    (relay.argmax(var(())), tt(()), "rank >= 1, got a scalar"),
    (relay.argmin(var((2, 3)), 5), tt((2, 3)), "axis=5 is out of range"),
])
def test_reduce_rejects(call, ty, match):
    with pytest.raises(TypeRelationError, match=match):
        out_type(call, ty)


def test_variance_type_and_rejects():
    call = relay.variance(var((2, 3, 4)), [0, 2], keepdims=True)
    mean = call.args[1]
    assert isinstance(mean, relay.Call) and mean.op.name == "mean"
    assert mean.attrs.keepdims and mean.attrs.axis == (0, 2)
    assert out_type(call, tt((2, 3, 4)), tt((1, 3, 1))) == tt((1, 3, 1))
    assert out_type(relay.variance(var((2, 3)), 1, unbiased=True), tt((2, 3)),
                    tt((2, 1))) == tt((2,))
    with pytest.raises(TypeRelationError, match="rank of data"):
        out_type(call, tt((2, 3, 4)), tt((3,)))
    with pytest.raises(TypeRelationError, match=r"does not broadcast.*dimension 1: 2 vs 3"):
        out_type(call, tt((2, 3, 4)), tt((1, 2, 1)))
    with pytest.raises(TypeRelationError, match="scalar"):
        out_type(call, tt(()), tt(()))


# ---------------------------------------------------------------------------------------------
# references
NUMPY = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
         "all": np.all, "any": np.any}


@FAST
@given(reduce_attrs(), st.sampled_from(REDUCERS))
def test_float_reductions_match_numpy(case, name):
    shape, axis, keepdims, exclude = case
    a = RNG.standard_normal(shape).astype("float32")
    if name in ("all", "any"):
        a = a * (RNG.random(shape) < 0.7)  # some exact zeros
    ty, r = run(getattr(relay, name)(var(shape), axis, keepdims, exclude), a)
    axes = reduced_axes(len(shape), as_list(axis), exclude)
    expected = NUMPY[name](a.astype("float64"), axis=axes, keepdims=keepdims)
    assert r.dtype == np.float32 and r.shape == ty.shape == np.shape(expected)
    np.testing.assert_allclose(r, np.asarray(expected, "float32"), rtol=1e-6, atol=1e-6)


def test_integer_sum_wraps_and_mean_truncates():
    big = np.array([2 ** 31 - 1, 1], "int32")
    _, r = run(relay.sum(var((2,), "int32")), big)
    assert r.dtype == np.int32 and r == -2 ** 31  # int32 accumulation, as TVM
    _, r = run(relay.mean(var((2,), "int32")), big)
    assert r == -2 ** 30  # the wrapped int32 sum, then divided
    a = np.array([[-3, -4], [3, 4], [-7, 0]], "int32")
    _, r = run(relay.mean(var((3, 2), "int32"), 1), a)
    np.testing.assert_array_equal(r, [-3, 3, -3])  # -3.5 -> -3, 3.5 -> 3: toward zero
    _, r = run(relay.prod(var((3, 2), "int32"), 0), a)
    np.testing.assert_array_equal(r, [63, 0])
    _, r = run(relay.max(var((3, 2), "int32"), 0, keepdims=True), a)
    np.testing.assert_array_equal(r, [[3, 4]])


def test_bool_all_any():
    a = np.array([[True, False, True], [True, True, True]])
    for name, axis, expected in [("all", 1, [False, True]), ("any", 0, [True, True, True]),
                                 ("all", None, False), ("any", None, True)]:
        ty, r = run(getattr(relay, name)(var((2, 3), "bool"), axis), a)
        assert ty.dtype == "bool" and r.dtype == np.bool_
        np.testing.assert_array_equal(r, expected)


@FAST
@given(shapes, st.data())
def test_argmax_argmin_single_axis(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdims = data.draw(st.booleans())
    a = RNG.integers(0, 3, size=shape).astype("float32")  # plenty of ties
    for name, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        ty, r = run(getattr(relay, name)(var(shape), axis, keepdims), a)
        expected = fn(a, axis=axis, keepdims=keepdims)  # first occurrence on ties
        assert r.dtype == np.int32
        np.testing.assert_array_equal(r, expected)
        ty, r = run(getattr(relay, name)(var(shape), axis, keepdims, select_last_index=True), a)
        flipped = np.flip(a, axis)
        expected = a.shape[axis] - 1 - fn(flipped, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(r, expected)


def test_argmax_over_several_axes_flattens_them():
    a = RNG.standard_normal((2, 3, 4)).astype("float32")
    ty, r = run(relay.argmax(var((2, 3, 4)), [0, 2]), a)
    assert ty == tt((3,), "int32")
    for j in range(3):
        block = a[:, j, :]  # reduced axes 0 and 2, row-major
        assert r[j] == int(np.argmax(block.reshape(-1)))
    ty, r = run(relay.argmin(var((2, 3, 4)), [1], exclude=True), a)
    for j in range(3):
        assert r[j] == int(np.argmin(a[:, j, :].reshape(-1)))
    ty, r = run(relay.argmax(var((2, 3, 4))), a)
    assert ty == tt((), "int32") and r == np.argmax(a)


@FAST
@given(reduce_attrs(allow_none=False), st.booleans())
def test_variance_matches_numpy(case, unbiased):
    shape, axis, keepdims, exclude = case
    axes = reduced_axes(len(shape), as_list(axis), exclude)
    count = math.prod(shape[i] for i in axes)
    if unbiased and count < 2:
        return
    a = RNG.standard_normal(shape).astype("float32")
    call = relay.variance(var(shape), axis, keepdims, exclude, unbiased)
    mean_ty, mean = run(call.args[1], a)
    ty = out_type(call, tt(shape), mean_ty)
    r = call.op.reference([a, mean], call.attrs, ty)
    expected = np.var(a.astype("float64"), axis=axes, keepdims=keepdims, ddof=int(unbiased))
    assert r.shape == ty.shape == np.shape(expected)
    np.testing.assert_allclose(r, expected, rtol=1e-5, atol=1e-6)


def test_variance_with_given_mean():
    a = np.array([[1.0, 3.0], [2.0, 6.0]], "float32")
    m = np.array([[0.0], [4.0]], "float32")
    call = relay.variance(var((2, 2)), 1, with_mean=relay.var("m", shape=(2, 1)))
    ty = out_type(call, tt((2, 2)), tt((2, 1)))
    r = call.op.reference([a, m], call.attrs, ty)
    np.testing.assert_allclose(r, [(1 + 9) / 2, (4 + 4) / 2])


def test_empty_reductions():
    a = np.zeros((2, 0), "float32")
    _, r = run(relay.sum(var((2, 0)), 1), a)
    np.testing.assert_array_equal(r, [0, 0])
    _, r = run(relay.prod(var((2, 0)), 1), a)
    np.testing.assert_array_equal(r, [1, 1])
    _, r = run(relay.max(var((2, 0)), 1), a)
    np.testing.assert_array_equal(r, [np.finfo("float32").min] * 2)


# ---------------------------------------------------------------------------------------------
# composites, through type inference and the reference interpreter
def evaluate(expr, x, a):
    func = relay.Function([x], expr)
    result = relay.create_executor("debug", mod=func).evaluate()(a)
    if isinstance(result, (tuple, list)):
        return [np.asarray(r.numpy()) for r in result]
    return result.numpy()


@pytest.mark.parametrize("axis, keepdims", [(1, False), ([0, 2], True), (None, False)])
def test_std_logsumexp_mean_variance(axis, keepdims):
    a = RNG.standard_normal((2, 3, 4)).astype("float32")
    x = relay.var("x", shape=(2, 3, 4))
    axes = tuple(range(3)) if axis is None else tuple(as_list(axis))
    a64 = a.astype("float64")
    np.testing.assert_allclose(evaluate(relay.std(x, axis, keepdims, unbiased=True), x, a),
                               np.std(a64, axis=axes, keepdims=keepdims, ddof=1), rtol=1e-5)
    expected = np.log(np.sum(np.exp(a64), axis=axes, keepdims=keepdims))
    np.testing.assert_allclose(evaluate(relay.logsumexp(x, axis, keepdims), x, a), expected,
                               rtol=1e-5)
    m, v = evaluate(relay.mean_variance(x, axis, keepdims).astuple(), x, a)
    np.testing.assert_allclose(m, np.mean(a64, axis=axes, keepdims=keepdims), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(v, np.var(a64, axis=axes, keepdims=keepdims), rtol=1e-5)
    m, s = evaluate(relay.mean_std(x, axis, keepdims).astuple(), x, a)
    np.testing.assert_allclose(s, np.std(a64, axis=axes, keepdims=keepdims), rtol=1e-5)
