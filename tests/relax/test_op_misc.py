"""where, argmax/argmin, clip, variance, linear, leakyrelu, gelu_tanh, nn.pad, broadcast_to,
tile, repeat, arange, tril/triu: struct info and legalized numerics."""

import math

import numpy as np
import pytest

from irlab import relax
from irlab.errors import DiagnosticError
from op_testing import check_batches, check_numeric, dims_of, out_sinfo, rand, sym, tensor

R = relax.op


def test_where():
    n = sym("n")
    s = out_sinfo(R.where, [tensor([n, 1], "bool"), tensor([n, 3]), tensor([3])])
    assert dims_of(s) == [n, 3]
    check_batches(R.where, [tensor([n, 1], "bool"), tensor([n, 3]), tensor([3])],
                  lambda b: [rand((b, 1), "bool", 1), rand((b, 3), seed=2), rand((3,), seed=3)],
                  np.where)


@pytest.mark.parametrize("name, fn", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_arg_reductions(name, fn):
    n = sym("n")
    make = getattr(R, name)
    s = out_sinfo(lambda v: make(v, 1), [tensor([n, 5])])
    assert dims_of(s) == [n] and s.dtype == "int64"
    def arrays(b):
        return [rand((b, 5), seed=4)]

    check_batches(lambda v: make(v, 1), [tensor([n, 5])], arrays, lambda x: fn(x, axis=1))
    check_batches(lambda v: make(v, 0, True), [tensor([n, 5])], arrays,
                  lambda x: fn(x, axis=0)[None, :])


def test_clip_variance_linear():
    n = sym("n")
    def arrays(b):
        return [rand((b, 4), seed=5)]

    check_batches(lambda v: R.clip(v, -0.5, 0.5), [tensor([n, 4])], arrays,
                  lambda x: np.clip(x, -0.5, 0.5))
    check_batches(lambda v: R.variance(v, 1, True), [tensor([n, 4])], arrays,
                  lambda x: x.var(axis=1, keepdims=True), atol=1e-6)
    w, b = rand((2, 4), seed=6), rand((2,), seed=7)
    assert dims_of(out_sinfo(R.linear, [tensor([n, 4]), tensor([2, 4]), tensor([2])])) == \
        [n, 2]
    check_batches(R.linear, [tensor([n, 4]), tensor([2, 4]), tensor([2])],
                  lambda k: arrays(k) + [w, b], lambda x, u, c: x @ u.T + c)


def test_leakyrelu_gelu_tanh():
    n = sym("n")
    def arrays(b):
        return [rand((b, 4), seed=8)]

    check_batches(lambda v: R.nn.leakyrelu(v, 0.1), [tensor([n, 4])], arrays,
                  lambda x: np.where(x > 0, x, 0.1 * x))
    check_batches(R.nn.gelu_tanh, [tensor([n, 4])], arrays, lambda x: 0.5 * x * (
        1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))))


def test_pad():
    n = sym("n")
    s = out_sinfo(lambda v: R.nn.pad(v, [0, 0, 1, 2]), [tensor([n, 3])])
    assert dims_of(s) == [n, 6]
    with pytest.raises(DiagnosticError, match="two per dim"):
        out_sinfo(lambda v: R.nn.pad(v, [1, 1]), [tensor([n, 3])])
    check_batches(lambda v: R.nn.pad(v, [1, 0, 1, 2], 1.5), [tensor([n, 3])],
                  lambda b: [rand((b, 3), seed=9)],
                  lambda x: np.pad(x, ((1, 0), (1, 2)), constant_values=1.5))


def test_broadcast_to_tile_repeat():
    n = sym("n")
    x = rand((1, 3), seed=10)
    check_batches(lambda v, _: R.broadcast_to(v, (n, 3)), [tensor([1, 3]), tensor([n])],
                  lambda b: [x, rand((b,))], lambda v, _: np.broadcast_to(v, (_.shape[0], 3)))
    assert dims_of(out_sinfo(lambda v: R.broadcast_to(v, (n, 3)), [tensor([1, 3])])) == [n, 3]
    with pytest.raises(DiagnosticError, match="broadcast"):
        out_sinfo(lambda v: R.broadcast_to(v, (2, 4)), [tensor([1, 3])])
    check_numeric(lambda v: R.broadcast_to(v, (4, 3)), [tensor([1, 3])], [x],
                  np.broadcast_to(x, (4, 3)))
    for shape in ((2, 3), (1, 4)):
        y = rand(shape, seed=11)
        check_numeric(lambda v: R.tile(v, (2, 1)), [tensor(list(shape))], [y],
                      np.tile(y, (2, 1)))
        check_numeric(lambda v: R.repeat(v, 2, 1), [tensor(list(shape))], [y],
                      np.repeat(y, 2, 1))
        check_numeric(lambda v: R.repeat(v, 2), [tensor(list(shape))], [y], np.repeat(y, 2))


def test_arange_tril_triu():
    x = rand((3,), seed=12)
    check_numeric(lambda v: R.add(R.arange(1, 7, 2, "float32"), v), [tensor([3])], [x],
                  np.arange(1, 7, 2).astype("float32") + x)
    n = sym("n")

    def arrays(b):
        return [rand((b, 4, 4), seed=13)]

    check_batches(lambda v: R.triu(v, 1), [tensor([n, 4, 4])], arrays, lambda m: np.triu(m, 1))
    check_batches(R.tril, [tensor([n, 4, 4])], arrays, np.tril)


def test_one_hot_and_cumsum():
    n = sym("n")
    s = out_sinfo(lambda i: R.one_hot(i, 1.0, 0.0, 4), [tensor([n], "int32")])
    assert dims_of(s) == [n, 4] and s.dtype == "float32"
    check_batches(lambda i: R.one_hot(i, 2.0, -1.0, 4, axis=0), [tensor([n], "int32")],
                  lambda b: [np.arange(b, dtype="int32") % 4],
                  lambda i: np.where(np.arange(4)[:, None] == i[None, :], 2.0, -1.0)
                  .astype("float32"))
    check_batches(lambda v: R.cumsum(v, 1), [tensor([n, 5])],
                  lambda b: [rand((b, 5), seed=30)], lambda x: np.cumsum(x, 1))
    check_batches(lambda v: R.cumsum(v, 0, exclusive=True), [tensor([n, 5])],
                  lambda b: [rand((b, 5), seed=31)],
                  lambda x: np.cumsum(x, 0) - x, atol=1e-5)
    check_batches(R.cumsum, [tensor([n, 2])], lambda b: [rand((b, 2), seed=32)],
                  lambda x: np.cumsum(x))
