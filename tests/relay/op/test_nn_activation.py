"""nn.relu, nn.leaky_relu, nn.softmax, nn.log_softmax, nn.dropout: constructors, relations and
references against the formulas."""

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType, TupleType
from irlab.relay.expr import Call, TupleGetItem
from irlab.relay.op.nn import DropoutAttrs, LeakyReluAttrs, SoftmaxAttrs
from irlab.relay.type_relation import TypeRelationError, infer_call_type

X = relay.var("x")


def evaluate(call, x):
    out_type = infer_call_type(call.op, [TensorType(x.shape, str(x.dtype))], call.attrs)
    return out_type, call.op.reference([x], call.attrs, out_type)


def test_patterns_and_attrs():
    patterns = {"nn.relu": OpPattern.ELEMWISE, "nn.leaky_relu": OpPattern.ELEMWISE,
                "nn.softmax": OpPattern.OUT_ELEMWISE_FUSABLE,
                "nn.log_softmax": OpPattern.OUT_ELEMWISE_FUSABLE, "nn.dropout": OpPattern.OPAQUE}
    for name, pattern in patterns.items():
        assert Op.get(name).pattern == pattern
    assert relay.nn.relu(X).attrs is None
    # Python default alpha 0.01 differs from the C++ default 0.25, so it prints.
    assert relay.nn.leaky_relu(X).attrs.non_default_items() == [("alpha", 0.01)]
    assert LeakyReluAttrs().alpha == 0.25 and DropoutAttrs().rate == 0.5
    assert relay.nn.softmax(X).attrs == SoftmaxAttrs(axis=-1)
    assert relay.nn.log_softmax(X, axis=1).attrs.axis == 1
    assert LeakyReluAttrs._type_key == "relay.attrs.LeakyReluAttrs"


def test_dropout_constructors():
    raw = relay.nn.dropout_raw(X, rate=0.3)
    assert isinstance(raw, Call) and raw.op.name == "nn.dropout" and raw.attrs.rate == 0.3
    out = relay.nn.dropout(X)
    assert isinstance(out, TupleGetItem) and out.index == 0
    assert out.tuple_value.op.name == "nn.dropout"


@pytest.mark.parametrize("shape", [(), (4,), (2, 3, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_elementwise_relations(shape, dtype):
    t = TensorType(shape, dtype)
    assert infer_call_type(Op.get("nn.relu"), [t]) == t
    assert infer_call_type(Op.get("nn.leaky_relu"), [t], relay.nn.leaky_relu(X).attrs) == t


def test_leaky_relu_rejects_negative_alpha():
    with pytest.raises(TypeRelationError, match="alpha must be non-negative"):
        infer_call_type(Op.get("nn.leaky_relu"), [TensorType((2,))],
                        relay.nn.leaky_relu(X, -0.1).attrs)


@pytest.mark.parametrize("name", ["nn.softmax", "nn.log_softmax"])
def test_softmax_relation(name):
    t = TensorType((2, 3, 4))
    for axis in (-3, -1, 0, 2):
        assert infer_call_type(Op.get(name), [t], SoftmaxAttrs(axis=axis)) == t
    for axis in (3, -4):
        with pytest.raises(TypeRelationError, match=f"axis={axis} is out of range"):
            infer_call_type(Op.get(name), [t], SoftmaxAttrs(axis=axis))


def test_dropout_relation():
    t = TensorType((2, 5), "float16")
    assert infer_call_type(Op.get("nn.dropout"), [t], DropoutAttrs()) == TupleType([t, t])
    with pytest.raises(TypeRelationError, match=r"rate must be in \[0, 1\)"):
        infer_call_type(Op.get("nn.dropout"), [t], DropoutAttrs(rate=1.5))


def test_relu_and_leaky_relu_references():
    x = np.array([[-2.0, -0.5, 0.0, 0.25, 3.0]], "float32")
    _, got = evaluate(relay.nn.relu(X), x)
    assert got.dtype == np.float32 and got.tolist() == [[0.0, 0.0, 0.0, 0.25, 3.0]]
    _, got = evaluate(relay.nn.leaky_relu(X, alpha=0.25), x)
    assert got.dtype == np.float32 and got.tolist() == [[-0.5, -0.125, 0.0, 0.25, 3.0]]
    _, got = evaluate(relay.nn.relu(X), np.array([-3, 4], "int8"))
    assert got.dtype == np.int8 and got.tolist() == [0, 4]


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_references(axis):
    x = (np.random.default_rng(0).standard_normal((3, 4, 5)) * 30).astype("float32")
    x[0, 0, 0] = 1000.0  # exp(1000) overflows even float64: the reference must shift
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    want = e / e.sum(axis=axis, keepdims=True)
    _, got = evaluate(relay.nn.softmax(X, axis), x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got.sum(axis=axis), 1.0, rtol=1e-5)
    _, got_log = evaluate(relay.nn.log_softmax(X, axis), x)
    assert np.isfinite(got_log).all()
    shifted = x64 - x64.max(axis=axis, keepdims=True)
    want_log = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(got_log, want_log, rtol=1e-5, atol=1e-5)


def test_dropout_reference_is_identity_with_ones_mask():
    x = np.random.default_rng(1).standard_normal((2, 3)).astype("float32")
    out_type, (out, mask) = evaluate(relay.nn.dropout_raw(X, 0.9), x)
    np.testing.assert_array_equal(out, x)
    assert out is not x
    assert mask.dtype == np.float32 and mask.shape == x.shape and (mask == 1).all()
