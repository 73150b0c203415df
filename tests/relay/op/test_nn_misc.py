"""nn.bias_add, nn.batch_flatten, nn.pad (and the relay.nn namespace as a whole)."""

import numpy as np
import pytest

from irlab import relay
from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import IncompleteType, TensorType
from irlab.relay.expr import Constant
from irlab.relay.op import nn
from irlab.relay.op.nn import BiasAddAttrs, PadAttrs
from irlab.relay.type_relation import solve_relation as solve
from irlab.relay.type_relation import TypeRelationError, infer_call_type

X, B = relay.var("x"), relay.var("b")


def evaluate(call, *arrays):
    out_type = infer_call_type(call.op, [TensorType(a.shape, str(a.dtype)) for a in arrays],
                               call.attrs)
    result = call.op.reference(list(arrays), call.attrs, out_type)
    assert result.dtype == np.dtype(out_type.dtype) and result.shape == out_type.shape
    return result


def test_namespace_exports_every_op_and_attrs():
    expected = {"conv2d", "dense", "matmul", "batch_matmul", "max_pool2d", "avg_pool2d",
                "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d",
                "adaptive_max_pool2d", "batch_norm", "layer_norm", "bias_add", "relu",
                "leaky_relu", "softmax", "log_softmax", "dropout", "dropout_raw",
                "batch_flatten", "pad"}
    assert expected <= set(nn.__all__)
    for name in nn.__all__:
        assert getattr(relay.nn, name) is getattr(nn, name)
        if name.endswith("Attrs"):
            assert getattr(nn, name)._type_key == "relay.attrs." + name
    for name in expected - {"dropout_raw"}:
        Op.get("nn." + name)  # every constructor has its registered op


def test_registration():
    assert Op.get("nn.bias_add").pattern == OpPattern.BROADCAST
    assert Op.get("nn.batch_flatten").pattern == OpPattern.INJECTIVE
    assert Op.get("nn.pad").pattern == OpPattern.INJECTIVE
    assert [a.name for a in Op.get("nn.pad").arguments] == ["data", "pad_val"]
    assert [a.name for a in Op.get("nn.bias_add").arguments] == ["data", "bias"]


# ---------------------------------------------------------------------------------------------
# bias_add
@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((2, 3), -1), ((2, 4, 5, 3), 3),
                                        ((6,), 0), ((2, 3, 4), -2)])
def test_bias_add_relation_and_reference(shape, axis):
    op = Op.get("nn.bias_add")
    attrs = relay.nn.bias_add(X, B, axis=axis).attrs
    data = TensorType(shape, "float16")
    out, (_, bias) = solve(op, [data, IncompleteType()], attrs)
    assert out == data and bias == TensorType((shape[axis],), "float16")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype("float32")
    b = rng.standard_normal(shape[axis]).astype("float32")
    view = [1] * len(shape)
    view[axis] = shape[axis]
    np.testing.assert_array_equal(evaluate(relay.nn.bias_add(X, B, axis), x, b),
                                  x + b.reshape(view))


def test_bias_add_rejections():
    op, attrs = Op.get("nn.bias_add"), BiasAddAttrs()
    with pytest.raises(TypeRelationError, match=r"bias must have shape \(3,\) \(axis 1 of data "
                                                r"shape \(2, 3\)\), got shape \(2,\)"):
        infer_call_type(op, [TensorType((2, 3)), TensorType((2,))], attrs)
    with pytest.raises(TypeRelationError, match="axis=2 is out of range"):
        infer_call_type(op, [TensorType((2, 3)), TensorType((3,))], BiasAddAttrs(axis=2))
    with pytest.raises(TypeRelationError, match="bias must have the data's dtype"):
        infer_call_type(op, [TensorType((2, 3)), TensorType((3,), "int32")], attrs)


# ---------------------------------------------------------------------------------------------
# batch_flatten
@pytest.mark.parametrize("shape", [(2,), (2, 3), (2, 3, 4), (1, 2, 3, 4, 5), (3, 0, 2)])
def test_batch_flatten(shape):
    op = Op.get("nn.batch_flatten")
    rest = int(np.prod(shape[1:]))
    assert infer_call_type(op, [TensorType(shape, "int8")]) == TensorType((shape[0], rest),
                                                                          "int8")
    x = np.arange(np.prod(shape)).reshape(shape).astype("int8")
    np.testing.assert_array_equal(evaluate(relay.nn.batch_flatten(X), x),
                                  x.reshape(shape[0], rest))


def test_batch_flatten_rejects_scalars():
    with pytest.raises(TypeRelationError, match="rank >= 1"):
        infer_call_type(Op.get("nn.batch_flatten"), [TensorType(())])


# ---------------------------------------------------------------------------------------------
# pad
def test_pad_constructor():
    call = relay.nn.pad(X, [[0, 0], [1, 2]])
    value = call.args[1]
    assert isinstance(value, Constant) and value.data.numpy().dtype == np.int32
    assert call.attrs.pad_width == ((0, 0), (1, 2)) and call.attrs.pad_mode == "constant"
    assert call.attrs.non_default_items() == [("pad_width", ((0, 0), (1, 2)))]
    assert list(PadAttrs._fields) == ["pad_width", "pad_mode"]
    assert relay.nn.pad(X, ((1, 1),), pad_value=B).args[1] is B
    width = relay.const(np.array([[1, 0], [0, 2]]))
    assert relay.nn.pad(X, width, 1.5).attrs.pad_width == ((1, 0), (0, 2))
    with pytest.raises(IrlabError, match="pad_mode"):
        relay.nn.pad(X, ((1, 1),), pad_mode="wrap")
    with pytest.raises(IrlabError, match="pairs"):
        relay.nn.pad(X, (1, 1))


def source(i, n, mode):
    """The data index read by output position i (relative to the data's start)."""
    if 0 <= i < n:
        return i
    if mode == "edge":  # repeat the border cell
        return min(max(i, 0), n - 1)
    return -i if i < 0 else 2 * (n - 1) - i  # reflect: mirror without repeating the border


@pytest.mark.parametrize("width", [((0, 0), (1, 2)), ((3, 0), (0, 0)), ((1, 1), (2, 2))])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_relation_and_reference(width, mode):
    x = np.arange(12, dtype="float32").reshape(4, 3)
    call = relay.nn.pad(X, width, pad_value=relay.const(-7.0), pad_mode=mode)
    expected_shape = tuple(d + a + b for d, (a, b) in zip(x.shape, width))
    out_type = infer_call_type(call.op, [TensorType(x.shape), TensorType(())], call.attrs)
    assert out_type == TensorType(expected_shape)
    got = call.op.reference([x, np.array(-7.0, "float32")], call.attrs, out_type)
    if mode == "constant":
        want = np.full(expected_shape, -7.0, "float32")
        want[width[0][0]:width[0][0] + 4, width[1][0]:width[1][0] + 3] = x
    else:
        rows = [source(i - width[0][0], 4, mode) for i in range(expected_shape[0])]
        cols = [source(j - width[1][0], 3, mode) for j in range(expected_shape[1])]
        want = x[np.ix_(rows, cols)]
    np.testing.assert_array_equal(got, want)


def test_pad_value_cast_to_data_dtype():
    x = np.ones((2,), "int32")
    call = relay.nn.pad(X, ((1, 1),), pad_value=2.7)
    out_type = infer_call_type(call.op, [TensorType((2,), "int32"), TensorType(())], call.attrs)
    got = call.op.reference([x, np.array(2.7, "float32")], call.attrs, out_type)
    assert got.dtype == np.int32 and got.tolist() == [2, 1, 1, 2]


@pytest.mark.parametrize("data,value,width,mode,message", [
    ((2, 3), (), ((1, 1),), "constant", "pad_width has 1 entries but data has rank 2"),
    ((2, 3), (1,), ((1, 1), (0, 0)), "constant", "pad_value must be a scalar"),
    ((2, 3), (), ((1, -1), (0, 0)), "constant", r"pad_width\[0\] must be a pair of non-negative"),
    ((2, 3), (), ((0, 0), (3, 0)), "reflect", "reflect padding of axis 1 must be smaller than"),
    ((2, 3), (), ((0, 0), (1, 0)), "wrap", "pad_mode must be one of"),
])
def test_pad_rejections(data, value, width, mode, message):
    attrs = PadAttrs(pad_width=width, pad_mode=mode)
    with pytest.raises(TypeRelationError, match=message):
        infer_call_type(Op.get("nn.pad"), [TensorType(data), TensorType(value)], attrs)
