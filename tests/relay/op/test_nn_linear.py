"""nn.dense, nn.matmul, nn.batch_matmul: constructors, relations (with weight inference from
units), rejections, and references against np.matmul."""

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import IncompleteType, TensorType
from irlab.relay.op.nn import BatchMatmulAttrs, DenseAttrs, MatmulAttrs
from irlab.relay.type_relation import solve_relation as solve
from irlab.relay.type_relation import TypeRelationError, infer_call_type

A, B = relay.var("a"), relay.var("b")


def evaluate(call, *arrays):
    op = call.op
    out_type = infer_call_type(op, [TensorType(a.shape, str(a.dtype)) for a in arrays],
                               call.attrs)
    result = op.reference(list(arrays), call.attrs, out_type)
    assert result.dtype == np.dtype(out_type.dtype) and result.shape == out_type.shape
    return out_type, result


# ---------------------------------------------------------------------------------------------
# attrs / constructors
def test_attrs_fields_and_printing_defaults():
    assert list(DenseAttrs._fields) == ["units", "out_dtype"]
    assert list(MatmulAttrs._fields) == ["units", "out_dtype", "transpose_a", "transpose_b"]
    assert list(BatchMatmulAttrs._fields) == ["out_dtype", "transpose_a", "transpose_b"]
    # units has no default in TVM: it always prints, even unset.
    assert relay.nn.dense(A, B).attrs.non_default_items() == [("units", None)]
    assert relay.nn.dense(A, B, units=3).attrs.units == 3
    # batch_matmul's C++ default is transpose_b=False, the constructor's True: it prints.
    assert relay.nn.batch_matmul(A, B).attrs.non_default_items() == [("transpose_b", True)]
    assert relay.nn.batch_matmul(A, B, transpose_b=False).attrs.non_default_items() == []


def test_matmul_nt_builds_dense_like_tvm():
    call = relay.nn.matmul(A, B, units=4, transpose_b=True)
    assert call.op.name == "nn.dense" and call.attrs.units == 4
    call = relay.nn.matmul(A, B, transpose_a=True)
    assert call.op.name == "nn.matmul" and call.attrs.transpose_a and not call.attrs.transpose_b


def test_registration():
    for name, args, level in [("nn.dense", ["data", "weight"], 1),
                              ("nn.matmul", ["tensor_a", "tensor_b"], 1),
                              ("nn.batch_matmul", ["x", "y"], 10)]:
        op = Op.get(name)
        assert [a.name for a in op.arguments] == args and op.support_level == level
        assert op.pattern == OpPattern.OUT_ELEMWISE_FUSABLE


# ---------------------------------------------------------------------------------------------
# relations
@pytest.mark.parametrize("data_shape", [(5,), (3, 5), (2, 3, 5), (2, 1, 4, 5)])
def test_dense_shapes(data_shape):
    out = infer_call_type(Op.get("nn.dense"), [TensorType(data_shape), TensorType((7, 5))],
                          relay.nn.dense(A, B).attrs)
    assert out == TensorType(data_shape[:-1] + (7,))


def test_dense_infers_weight_from_units():
    attrs = relay.nn.dense(A, B, units=6, out_dtype="float32").attrs
    out, (_, weight) = solve(Op.get("nn.dense"), [TensorType((2, 3, 4), "float16"),
                                                  IncompleteType()], attrs)
    assert weight == TensorType((6, 4), "float16")
    assert out == TensorType((2, 3, 6), "float32")


def test_dense_rejections():
    op = Op.get("nn.dense")
    with pytest.raises(TypeRelationError,
                       match=r"inner dimensions differ: data has 5 features \(shape \(3, 5\)\) "
                             r"but weight expects 4 \(shape \(7, 4\)"):
        infer_call_type(op, [TensorType((3, 5)), TensorType((7, 4))], relay.nn.dense(A, B).attrs)
    with pytest.raises(TypeRelationError, match="units=8 but weight has 7 units"):
        infer_call_type(op, [TensorType((3, 5)), TensorType((7, 5))],
                        relay.nn.dense(A, B, units=8).attrs)
    with pytest.raises(TypeRelationError, match="weight must be 2-D"):
        infer_call_type(op, [TensorType((3, 5)), TensorType((1, 7, 5))],
                        relay.nn.dense(A, B).attrs)
    with pytest.raises(TypeRelationError, match="units must be >= 1"):
        infer_call_type(op, [TensorType((3, 5)), TensorType((7, 5))],
                        relay.nn.dense(A, B, units=0).attrs)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_matmul_shapes(ta, tb, batch):
    m, k, n = 3, 4, 5
    a_shape = batch + ((k, m) if ta else (m, k))
    b_shape = (n, k) if tb else (k, n)
    call = relay.nn.matmul(A, B, transpose_a=ta, transpose_b=tb)
    out = infer_call_type(call.op, [TensorType(a_shape), TensorType(b_shape)], call.attrs)
    assert out.shape == batch + (m, n)


def test_matmul_infers_tensor_b_from_units():
    call = relay.nn.matmul(A, B, units=9, transpose_a=True)
    out, (_, b) = solve(call.op, [TensorType((4, 3)), IncompleteType()], call.attrs)
    assert b == TensorType((4, 9)) and out.shape == (3, 9)


def test_matmul_rejection():
    call = relay.nn.matmul(A, B)
    with pytest.raises(TypeRelationError, match="inner dimensions differ: tensor_a has 4"):
        infer_call_type(call.op, [TensorType((3, 4)), TensorType((5, 6))], call.attrs)


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("xb,yb", [(3, 3), (1, 3), (3, 1)])
def test_batch_matmul_shapes(ta, tb, xb, yb):
    m, k, n = 2, 5, 4
    x_shape = (xb,) + ((k, m) if ta else (m, k))
    y_shape = (yb,) + ((n, k) if tb else (k, n))
    call = relay.nn.batch_matmul(A, B, transpose_a=ta, transpose_b=tb, out_dtype="float64")
    out = infer_call_type(call.op, [TensorType(x_shape), TensorType(y_shape)], call.attrs)
    assert out == TensorType((max(xb, yb), m, n), "float64")


@pytest.mark.parametrize("x,y,message", [
    ((2, 3, 4), (3, 5, 4), "batch dimensions differ: x has 2"),
    ((2, 3, 4), (2, 5, 3), "reduction dimensions differ: x has 4"),
    ((3, 4), (2, 5, 4), "3-D x"),
    ((2, 3, 4), (5, 4), "3-D y")])
def test_batch_matmul_rejections(x, y, message):
    call = relay.nn.batch_matmul(A, B)
    with pytest.raises(TypeRelationError, match=message):
        infer_call_type(call.op, [TensorType(x), TensorType(y)], call.attrs)


# ---------------------------------------------------------------------------------------------
# references
def test_dense_reference():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5)).astype("float32")
    w = rng.standard_normal((4, 5)).astype("float32")
    _, got = evaluate(relay.nn.dense(A, B), x, w)
    want = np.einsum("abk,nk->abn", x.astype(np.float64), w.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_dense_reference_integer_out_dtype():
    x = np.full((1, 300), 100, "int8")
    w = np.full((2, 300), 100, "int8")
    out_type, got = evaluate(relay.nn.dense(A, B, out_dtype="int32"), x, w)
    assert out_type.dtype == "int32" and got.tolist() == [[3_000_000, 3_000_000]]


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (True, True)])
def test_matmul_reference(ta, tb):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 3) if ta else (2, 3, 4)).astype("float32")
    b = rng.standard_normal((5, 4) if tb else (4, 5)).astype("float32")
    _, got = evaluate(relay.nn.matmul(A, B, transpose_a=ta, transpose_b=tb), a, b)
    a_ = np.swapaxes(a, -1, -2) if ta else a
    b_ = b.T if tb else b
    np.testing.assert_allclose(got, a_ @ b_, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("xb,yb", [(3, 3), (1, 3), (3, 1)])
def test_batch_matmul_reference(ta, tb, xb, yb):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((xb, 4, 2) if ta else (xb, 2, 4)).astype("float32")
    y = rng.standard_normal((yb, 3, 4) if tb else (yb, 4, 3)).astype("float32")
    _, got = evaluate(relay.nn.batch_matmul(A, B, transpose_a=ta, transpose_b=tb), x, y)
    want = np.empty((max(xb, yb), 2, 3))
    for i in range(max(xb, yb)):
        xi = x[i if xb > 1 else 0]
        yi = y[i if yb > 1 else 0]
        want[i] = (xi.T if ta else xi) @ (yi.T if tb else yi)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
