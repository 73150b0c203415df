"""Shape manipulation, indexing, reductions and creation ops: struct info (static and
symbolic) and legalized numerics."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.errors import DiagnosticError
from op_testing import check_batches, check_numeric, dims_of, out_sinfo, rand, sym, tensor

R = relax.op


def test_reshape_symbolic_proven_equal():
    n, m = sym("n"), sym("m")
    s = out_sinfo(lambda x: R.reshape(x, (n * m,)), [tensor([n, m])])
    assert tvm.ir.structural_equal(s.dims[0], n * m)
    s = out_sinfo(lambda x: R.reshape(x, (-1, 2)), [tensor([n, 4])])
    assert tvm.arith.Analyzer().can_prove_equal(s.dims[0], n * 2)
    s = out_sinfo(lambda x: R.reshape(x, (3, -1)), [tensor([2, 6])])
    assert dims_of(s) == [3, 4]
    with pytest.raises(DiagnosticError, match="cannot reshape"):
        out_sinfo(lambda x: R.reshape(x, (5,)), [tensor([2, 3])])


@pytest.mark.parametrize("batch", [1, 3])
def test_reshape_flatten_numeric(batch):
    n = sym("n")
    x = rand((batch, 2, 3), seed=1)
    check_numeric(lambda v: R.reshape(v, (n, 6)), [tensor([n, 2, 3])], [x],
                  x.reshape(batch, 6))
    check_numeric(lambda v: R.reshape(v, (-1, 3)), [tensor([n, 2, 3])], [x], x.reshape(-1, 3))
    check_numeric(R.flatten, [tensor([n, 2, 3])], [x], x.reshape(-1))


def test_permute_dims():
    n = sym("n")
    assert dims_of(out_sinfo(lambda v: R.permute_dims(v, [1, 0, 2]),
                             [tensor([n, 2, 3])])) == [2, n, 3]
    check_batches(lambda v: R.permute_dims(v, [2, 0, 1]), [tensor([n, 2, 3])],
                  lambda b: [rand((b, 2, 3), seed=2)], lambda x: x.transpose(2, 0, 1))
    check_batches(R.permute_dims, [tensor([n, 2, 3])], lambda b: [rand((b, 2, 3), seed=2)],
                  lambda x: x.transpose())


def test_concat_and_split():
    n = sym("n")
    s = out_sinfo(lambda a, b: R.concat([a, b], axis=0), [tensor([n, 3]), tensor([2, 3])])
    assert tvm.arith.Analyzer().can_prove_equal(s.dims[0], n + 2)
    with pytest.raises(DiagnosticError, match="dim 1 differs"):
        out_sinfo(lambda a, b: R.concat([a, b], axis=0), [tensor([1, 3]), tensor([2, 4])])
    check_batches(lambda u, v: R.concat([u, v], axis=0), [tensor([n, 3]), tensor([2, 3])],
                  lambda b: [rand((b, 3), seed=3), rand((2, 3), seed=4)],
                  lambda u, v: np.concatenate([u, v]))
    check_batches(lambda u, v: R.concat([u, v], axis=1), [tensor([n, 3]), tensor([n, 1])],
                  lambda b: [rand((b, 3), seed=3), rand((b, 1), seed=4)],
                  lambda u, v: np.concatenate([u, v], axis=1))
    x = rand((6, 4), seed=5)
    parts = out_sinfo(lambda v: R.split(v, 3, axis=0), [tensor([6, 4])])
    assert [dims_of(f) for f in parts.fields] == [[2, 4]] * 3
    check_batches(lambda v: R.split(v, [1, 3], axis=1), [tensor([n, 4])],
                  lambda b: [rand((b, 4), seed=5)], lambda v: tuple(np.split(v, [1, 3], axis=1)))
    check_numeric(lambda v: R.split(v, 2, axis=0), [tensor([6, 4])], [x],
                  tuple(np.split(x, 2, axis=0)))


def test_squeeze_expand_dims():
    n = sym("n")
    assert dims_of(out_sinfo(R.squeeze, [tensor([n, 1, 3, 1])])) == [n, 3]
    assert dims_of(out_sinfo(lambda v: R.expand_dims(v, [0, 3]), [tensor([n, 2])])) == \
        [1, n, 2, 1]
    with pytest.raises(DiagnosticError, match="not of size 1"):
        out_sinfo(lambda v: R.squeeze(v, 1), [tensor([2, 3])])
    check_batches(lambda v: R.squeeze(v, [1]), [tensor([n, 1, 3])],
                  lambda b: [rand((b, 1, 3), seed=6)], lambda x: x.squeeze(1))
    check_batches(lambda v: R.expand_dims(v, -1), [tensor([n, 1, 3])],
                  lambda b: [rand((b, 1, 3), seed=6)], lambda x: x[..., None])


def test_strided_slice():
    n = sym("n")
    s = out_sinfo(lambda v: R.strided_slice(v, [1], [1], [100], [2]), [tensor([2, 7])])
    assert dims_of(s) == [2, 3]
    s = out_sinfo(lambda v: R.strided_slice(v, [0], [1], [3]), [tensor([n, 4])])
    assert s.ndim == 2
    x = rand((5, 7), seed=7)
    check_numeric(lambda v: R.strided_slice(v, [1, 0], [1, -3], [6, 100], [2, 1]),
                  [tensor([5, 7])], [x], x[-3:100, 1:6:2])
    check_batches(lambda v: R.strided_slice(v, [0, 1], [1, 0], [3, -2]), [tensor([n, 7])],
                  lambda b: [rand((b, 7), seed=7)], lambda v: v[1:3, 0:-2], batches=(2, 6))


def test_take():
    n = sym("n")
    s = out_sinfo(lambda a, i: R.take(a, i, axis=1), [tensor([n, 5]), tensor([3], "int64")])
    assert dims_of(s) == [n, 3]
    idx = np.array([4, 0, 2], "int64")
    check_batches(lambda a, i: R.take(a, i, axis=1), [tensor([n, 5]), tensor([3], "int64")],
                  lambda b: [rand((b, 5), seed=8), idx], lambda a, i: a[:, i])
    emb = rand((10, 3), seed=9)
    ids = np.array([[1, 9], [0, 3]], "int32")
    check_numeric(lambda a, i: R.take(a, i, axis=0), [tensor([10, 3]), tensor([2, 2], "int32")],
                  [emb, ids], emb[ids])


@pytest.mark.parametrize("name, fn", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                      ("min", np.min)])
@pytest.mark.parametrize("axis, keepdims", [(None, False), ((1,), True), ((0, 2), False)])
def test_reductions(name, fn, axis, keepdims):
    n = sym("n")
    make = getattr(R, name)
    s = out_sinfo(lambda v: make(v, axis, keepdims), [tensor([n, 4, 2])])
    assert s.ndim == np.ndim(fn(rand((3, 4, 2)), axis=axis, keepdims=keepdims))
    check_batches(lambda v: make(v, axis, keepdims), [tensor([n, 4, 2])],
                  lambda b: [rand((b, 4, 2), seed=10)],
                  lambda x: np.asarray(fn(x, axis=axis, keepdims=keepdims), "float32"))


def test_creation():
    n = sym("n")
    s = out_sinfo(lambda v: R.zeros(relax.ShapeExpr([n, 3]), "int32"), [tensor([n])])
    assert dims_of(s) == [n, 3] and s.dtype == "int32"
    def arrays(b):
        return [rand((b,), seed=11)]

    check_batches(lambda v: R.ones(relax.ShapeExpr([n, 3]), "float32"), [tensor([n])], arrays,
                  lambda x: np.ones((len(x), 3), "float32"))
    check_batches(lambda v: R.full(relax.ShapeExpr([2, n]), relax.const(2.5)), [tensor([n])],
                  arrays, lambda x: np.full((2, len(x)), 2.5, "float32"))
    check_batches(R.zeros_like, [tensor([n])], arrays, np.zeros_like)
    check_batches(lambda v: R.full_like(v, 7.0), [tensor([n])], arrays,
                  lambda x: np.full(len(x), 7, "float32"))
