"""nn.lrn and nn.instance_norm: attrs, relations, patterns and references against the formulas
written as loops."""

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType
from irlab.relay.op.nn import InstanceNormAttrs, LRNAttrs
from irlab.relay.type_relation import TypeRelationError, infer_call_type


def run(call, *arrays):
    params = [relay.var(f"a{i}", shape=a.shape, dtype=str(a.dtype))
              for i, a in enumerate(arrays)]
    func = relay.Function(params, call(*params))
    return relay.create_executor("debug", mod=func).evaluate()(*arrays).numpy()


def test_attrs_and_patterns():
    assert list(LRNAttrs._fields) == ["size", "axis", "bias", "alpha", "beta"]
    assert LRNAttrs().non_default_items() == [] and LRNAttrs().alpha == 1e-4
    assert list(InstanceNormAttrs._fields) == ["axis", "epsilon", "center", "scale"]
    assert Op.get("nn.lrn").pattern == OpPattern.OPAQUE
    assert Op.get("nn.instance_norm").pattern == OpPattern.OPAQUE
    x = relay.var("x")
    assert relay.nn.lrn(x).attrs.alpha == 1e-5  # TVM's Python default differs from C++'s


@pytest.mark.parametrize("size,axis", [(3, 1), (5, 1), (4, 1), (3, 3)])
def test_lrn_reference(size, axis):
    x = np.random.default_rng(size).standard_normal((2, 6, 3, 4)).astype(np.float32)
    out = run(lambda a: relay.nn.lrn(a, size=size, axis=axis, bias=1.5, alpha=0.3, beta=0.6),
              x)
    xm = np.moveaxis(x.astype(np.float64), axis, -1)
    expected = np.empty_like(xm)
    channels = xm.shape[-1]
    for c in range(channels):
        lo, hi = max(0, c - size // 2), min(channels, c - size // 2 + size)
        square_sum = np.square(xm[..., lo:hi]).sum(-1)
        expected[..., c] = xm[..., c] / (1.5 + 0.3 / size * square_sum) ** 0.6
    np.testing.assert_allclose(out, np.moveaxis(expected, -1, axis), rtol=1e-5)


def test_instance_norm_reference_and_relation():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    gamma, beta = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(
        np.float32)
    out = run(lambda a, g, b: relay.nn.instance_norm(a, g, b, epsilon=1e-3), x, gamma, beta)
    for n in range(2):
        for c in range(3):
            plane = x[n, c].astype(np.float64)
            want = (plane - plane.mean()) / np.sqrt(plane.var() + 1e-3) * gamma[c] + beta[c]
            np.testing.assert_allclose(out[n, c], want, rtol=1e-5, atol=1e-6)
    op = Op.get("nn.instance_norm")
    attrs = relay.nn.instance_norm(relay.var("x"), relay.var("g"), relay.var("b")).attrs
    data = TensorType((2, 3, 4, 5), "float32")
    assert infer_call_type(op, [data, TensorType((3,), "float32")] * 1 +
                           [TensorType((3,), "float32")], attrs) == data
    with pytest.raises(TypeRelationError, match=r"gamma must be a float32 vector of shape"):
        infer_call_type(op, [data, TensorType((4,), "float32"), TensorType((3,), "float32")],
                        attrs)


def test_lrn_relation_rejects_bad_axis():
    attrs = relay.nn.lrn(relay.var("x"), axis=4).attrs
    with pytest.raises(TypeRelationError, match="axis=4"):
        infer_call_type(Op.get("nn.lrn"), [TensorType((1, 2, 3, 4), "float32")], attrs)
