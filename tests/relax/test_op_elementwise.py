"""Binary (broadcast), comparison, unary, astype ops: struct info and legalized numerics."""

import numpy as np
import pytest

from irlab import relax
from irlab.errors import DiagnosticError
from op_testing import check_batches, check_numeric, dims_of, out_sinfo, rand, sym, tensor

R = relax.op


def test_broadcast_struct_info_static_and_symbolic():
    n, m = sym("n"), sym("m")
    s = out_sinfo(R.add, [tensor([2, 1, 4]), tensor([3, 1])])
    assert dims_of(s) == [2, 3, 4]
    s = out_sinfo(R.multiply, [tensor([n, 4]), tensor([4])])
    assert dims_of(s) == [n, 4]
    s = out_sinfo(R.add, [tensor([n, 1]), tensor([1, m])])
    assert dims_of(s) == [n, m]
    s = out_sinfo(R.add, [tensor([n]), tensor([m])])  # not provably equal: shape unknown
    assert s.dims is None and s.ndim == 1
    assert out_sinfo(R.less, [tensor([n]), tensor([n])]).dtype == "bool"
    with pytest.raises(DiagnosticError, match="do not broadcast"):
        out_sinfo(R.add, [tensor([2]), tensor([3])])
    with pytest.raises(DiagnosticError, match="dtypes differ"):
        out_sinfo(R.add, [tensor([2]), tensor([2], "int32")])


@pytest.mark.parametrize("name, fn", [("add", np.add), ("subtract", np.subtract),
                                      ("multiply", np.multiply), ("divide", np.divide),
                                      ("maximum", np.maximum), ("power", None)])
@pytest.mark.parametrize("batch", [1, 5])
def test_binary_numeric_symbolic_batch(name, fn, batch):
    n = sym("n")
    a, b = rand((batch, 4), seed=1), rand((4,), seed=2)
    if fn is None:
        a, fn = np.abs(a) + 0.5, np.power
    check_numeric(getattr(R, name), [tensor([n, 4]), tensor([4])], [a, b], fn(a, b))


@pytest.mark.parametrize("name, fn", [("equal", np.equal), ("less", np.less),
                                      ("greater_equal", np.greater_equal)])
def test_comparison_numeric(name, fn):
    n = sym("n")
    check_batches(getattr(R, name), [tensor([n, 4], "int32"), tensor([1, 4], "int32")],
                  lambda b: [rand((b, 4), "int32", 1), rand((1, 4), "int32", 2)], fn)


@pytest.mark.parametrize("name, fn", [("exp", np.exp), ("tanh", np.tanh),
                                      ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
                                      ("negative", np.negative), ("abs", np.abs),
                                      ("square", np.square), ("sqrt", None)])
@pytest.mark.parametrize("shape", [(3,), (2, 5)])
def test_unary_numeric(name, fn, shape):
    x = rand(shape, seed=3)
    if fn is None:
        x, fn = np.abs(x), np.sqrt
    dims = [sym("n")] + list(shape[1:])
    check_numeric(getattr(R, name), [tensor(dims)], [x], fn(x), rtol=1e-4, atol=1e-5)


def test_astype():
    n = sym("n")
    s = out_sinfo(lambda x: R.astype(x, "int32"), [tensor([n, 2])])
    assert s.dtype == "int32" and dims_of(s) == [n, 2]
    check_batches(lambda v: R.astype(v, "int32"), [tensor([n, 2])],
                  lambda b: [rand((b, 2), seed=4) * 10], lambda x: x.astype("int32"))
    assert s.dtype == "int32"
    assert R.isnan(relax.Var("v", tensor([2]))).op.name == "relax.isnan"
