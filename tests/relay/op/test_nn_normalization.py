"""nn.batch_norm and nn.layer_norm: constructors (batch_norm's TupleWrapper), relations with
parameter inference, rejections, and references against the normalization formulas."""

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import IncompleteType, TensorType, TupleType
from irlab.relay.expr import TupleGetItem, TupleWrapper
from irlab.relay.op.nn import BatchNormAttrs, LayerNormAttrs
from irlab.relay.type_relation import solve_relation as solve
from irlab.relay.type_relation import TypeRelationError, infer_call_type

V = [relay.var(n) for n in ("data", "gamma", "beta", "mean", "var")]
BN, LN = Op.get("nn.batch_norm"), Op.get("nn.layer_norm")


def bn_attrs(**kwargs):
    return relay.nn.batch_norm(*V, **kwargs).astuple().attrs


def ln_attrs(**kwargs):
    return relay.nn.layer_norm(*V[:3], **kwargs).attrs


def test_constructors_and_attrs():
    bn = relay.nn.batch_norm(*V)
    assert isinstance(bn, TupleWrapper) and len(bn) == 3
    assert bn.astuple().op is BN and isinstance(bn[0], TupleGetItem) and bn[0].index == 0
    assert list(BatchNormAttrs._fields) == ["axis", "epsilon", "center", "scale"]
    assert list(LayerNormAttrs._fields) == ["axis", "epsilon", "center", "scale"]
    assert bn_attrs().non_default_items() == []
    assert bn_attrs(axis=3, epsilon=2e-5, scale=False).non_default_items() == [
        ("axis", 3), ("epsilon", 2e-5), ("scale", False)]
    assert ln_attrs().axis == -1 and ln_attrs(center=False).non_default_items() == [
        ("center", False)]
    assert BN.pattern == OpPattern.OUT_ELEMWISE_FUSABLE and LN.pattern == OpPattern.OPAQUE
    assert [a.name for a in BN.arguments] == ["data", "gamma", "beta", "moving_mean",
                                              "moving_var"]
    assert [a.name for a in LN.arguments] == ["data", "gamma", "beta"]


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((2, 4, 5, 3), 3), ((2, 4, 5, 3), -1),
                                        ((7,), 0), ((6, 2), -2)])
def test_batch_norm_relation_infers_parameters(shape, axis):
    data = TensorType(shape, "float16")
    out, solved = solve(BN, [data] + [IncompleteType() for _ in range(4)], bn_attrs(axis=axis))
    vec = TensorType((shape[axis],), "float16")
    assert out == TupleType([data, vec, vec])
    assert solved[1:] == [vec] * 4


def test_batch_norm_relation_known_parameters():
    vec = TensorType((3,))
    out = infer_call_type(BN, [TensorType((2, 3, 4))] + [vec] * 4, bn_attrs())
    assert out == TupleType([TensorType((2, 3, 4)), vec, vec])


@pytest.mark.parametrize("args,attrs,message", [
    ([(2, 3, 4), (4,), (3,), (3,), (3,)], {}, r"gamma must have shape \(3,\) \(axis 1 of data "
                                              r"shape \(2, 3, 4\)\), got shape \(4,\)"),
    ([(2, 3, 4), (3,), (3,), (3,), (3, 1)], {}, "moving_var must have shape"),
    ([(2, 3, 4)] + [(3,)] * 4, {"axis": 3}, "axis=3 is out of range for a tensor of rank 3"),
    ([(2, 3, 4)] + [(3,)] * 4, {"axis": -4}, "axis=-4 is out of range"),
    ([(2, 3, 4)] + [(3,)] * 4, {"epsilon": -1.0}, "epsilon must be non-negative"),
])
def test_batch_norm_rejections(args, attrs, message):
    with pytest.raises(TypeRelationError, match=message):
        infer_call_type(BN, [TensorType(s) for s in args], bn_attrs(**attrs))


def test_batch_norm_rejects_parameter_dtype():
    types = [TensorType((2, 3))] + [TensorType((3,), "float16")] + [TensorType((3,))] * 3
    with pytest.raises(TypeRelationError, match="gamma must have the data's dtype float32"):
        infer_call_type(BN, types, bn_attrs())


@pytest.mark.parametrize("shape,axis", [((2, 3, 8), -1), ((2, 3, 8), 1), ((5,), 0)])
def test_layer_norm_relation(shape, axis):
    data = TensorType(shape)
    out, solved = solve(LN, [data, IncompleteType(), IncompleteType()], ln_attrs(axis=axis))
    assert out == data and solved[1:] == [TensorType((shape[axis],))] * 2
    with pytest.raises(TypeRelationError, match="beta must have shape"):
        infer_call_type(LN, [data, TensorType((shape[axis],)), TensorType((shape[axis] + 1,))],
                        ln_attrs(axis=axis))
    with pytest.raises(TypeRelationError, match="out of range"):
        infer_call_type(LN, [data] + [TensorType((1,))] * 2, ln_attrs(axis=len(shape)))


@pytest.mark.parametrize("axis,center,scale", [(1, True, True), (3, True, False),
                                               (-1, False, True), (0, False, False)])
def test_batch_norm_reference(axis, center, scale):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    c = x.shape[axis]
    gamma, beta, mean = (rng.standard_normal(c).astype("float32") for _ in range(3))
    var = rng.uniform(0.5, 2.0, c).astype("float32")
    attrs = bn_attrs(axis=axis, epsilon=1e-3, center=center, scale=scale)
    out_type = infer_call_type(BN, [TensorType(a.shape) for a in (x, gamma, beta, mean, var)],
                               attrs)
    out, got_mean, got_var = BN.reference([x, gamma, beta, mean, var], attrs, out_type)
    shape = [1, 1, 1, 1]
    shape[axis] = c
    want = (x.astype(np.float64) - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-3)
    if scale:
        want = want * gamma.reshape(shape)
    if center:
        want = want + beta.reshape(shape)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_mean, mean)
    np.testing.assert_array_equal(got_var, var)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("center,scale", [(True, True), (False, False)])
def test_layer_norm_reference(axis, center, scale):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 4, 6)) * 5 + 2).astype("float32")
    c = x.shape[axis]
    gamma, beta = rng.standard_normal(c).astype("float32"), rng.standard_normal(c).astype(
        "float32")
    attrs = ln_attrs(axis=axis, epsilon=1e-5, center=center, scale=scale)
    out_type = infer_call_type(LN, [TensorType(a.shape) for a in (x, gamma, beta)], attrs)
    got = LN.reference([x, gamma, beta], attrs, out_type)
    moved = np.moveaxis(x.astype(np.float64), axis, -1)
    mu = moved.mean(axis=-1, keepdims=True)
    sigma2 = ((moved - mu) ** 2).mean(axis=-1, keepdims=True)
    want = (moved - mu) / np.sqrt(sigma2 + 1e-5)
    if scale:
        want = want * gamma
    if center:
        want = want + beta
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.moveaxis(want, -1, axis), rtol=1e-5, atol=1e-5)
