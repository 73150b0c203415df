"""where, argmax/argmin, clip, variance, linear, leakyrelu, gelu_tanh, nn.pad, broadcast_to,
tile, repeat, arange, tril/triu: struct info and legalized numerics."""

import math

import numpy as np
import pytest

from irlab import relax
from irlab.errors import DiagnosticError
from op_testing import check_numeric, dims_of, out_sinfo, rand, sym, tensor

R = relax.op


def test_where():
    n = sym("n")
    s = out_sinfo(R.where, [tensor([n, 1], "bool"), tensor([n, 3]), tensor([3])])
    assert dims_of(s) == [n, 3]
    c = rand((4, 1), "bool", 1)
    x, y = rand((4, 3), seed=2), rand((3,), seed=3)
    check_numeric(R.where, [tensor([n, 1], "bool"), tensor([n, 3]), tensor([3])], [c, x, y],
                  np.where(c, x, y))


@pytest.mark.parametrize("name, fn", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_arg_reductions(name, fn):
    n = sym("n")
    make = getattr(R, name)
    s = out_sinfo(lambda v: make(v, 1), [tensor([n, 5])])
    assert dims_of(s) == [n] and s.dtype == "int64"
    x = rand((3, 5), seed=4)
    check_numeric(lambda v: make(v, 1), [tensor([n, 5])], [x], fn(x, axis=1))
    check_numeric(lambda v: make(v, 0, True), [tensor([n, 5])], [x],
                  fn(x, axis=0)[None, :])


def test_clip_variance_linear():
    n = sym("n")
    x = rand((3, 4), seed=5)
    check_numeric(lambda v: R.clip(v, -0.5, 0.5), [tensor([n, 4])], [x], np.clip(x, -0.5, 0.5))
    check_numeric(lambda v: R.variance(v, 1, True), [tensor([n, 4])], [x],
                  x.var(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    w, b = rand((2, 4), seed=6), rand((2,), seed=7)
    assert dims_of(out_sinfo(R.linear, [tensor([n, 4]), tensor([2, 4]), tensor([2])])) == \
        [n, 2]
    check_numeric(R.linear, [tensor([n, 4]), tensor([2, 4]), tensor([2])], [x, w, b],
                  x @ w.T + b, rtol=1e-5, atol=1e-5)


def test_leakyrelu_gelu_tanh():
    n = sym("n")
    x = rand((3, 4), seed=8)
    check_numeric(lambda v: R.nn.leakyrelu(v, 0.1), [tensor([n, 4])], [x],
                  np.where(x > 0, x, 0.1 * x))
    ref = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    check_numeric(R.nn.gelu_tanh, [tensor([n, 4])], [x], ref, rtol=1e-5, atol=1e-5)


def test_pad():
    n = sym("n")
    s = out_sinfo(lambda v: R.nn.pad(v, [0, 0, 1, 2]), [tensor([n, 3])])
    assert dims_of(s) == [n, 6]
    with pytest.raises(DiagnosticError, match="two per dim"):
        out_sinfo(lambda v: R.nn.pad(v, [1, 1]), [tensor([n, 3])])
    x = rand((2, 3), seed=9)
    check_numeric(lambda v: R.nn.pad(v, [0, 0, 1, 2], 1.5), [tensor([n, 3])], [x],
                  np.pad(x, ((0, 0), (1, 2)), constant_values=1.5))


def test_broadcast_to_tile_repeat():
    n = sym("n")
    x = rand((1, 3), seed=10)
    assert dims_of(out_sinfo(lambda v: R.broadcast_to(v, (n, 3)), [tensor([1, 3])])) == [n, 3]
    with pytest.raises(DiagnosticError, match="broadcast"):
        out_sinfo(lambda v: R.broadcast_to(v, (2, 4)), [tensor([1, 3])])
    check_numeric(lambda v: R.broadcast_to(v, (4, 3)), [tensor([1, 3])], [x],
                  np.broadcast_to(x, (4, 3)))
    y = rand((2, 3), seed=11)
    check_numeric(lambda v: R.tile(v, (2, 1)), [tensor([2, 3])], [y], np.tile(y, (2, 1)))
    check_numeric(lambda v: R.repeat(v, 2, 1), [tensor([2, 3])], [y], np.repeat(y, 2, 1))
    check_numeric(lambda v: R.repeat(v, 2), [tensor([2, 3])], [y], np.repeat(y, 2))


def test_arange_tril_triu():
    x = rand((3,), seed=12)
    check_numeric(lambda v: R.add(R.arange(1, 7, 2, "float32"), v), [tensor([3])], [x],
                  np.arange(1, 7, 2).astype("float32") + x)
    m = rand((2, 4, 4), seed=13)
    check_numeric(lambda v: R.triu(v, 1), [tensor([2, 4, 4])], [m], np.triu(m, 1))
    check_numeric(R.tril, [tensor([2, 4, 4])], [m], np.tril(m))
