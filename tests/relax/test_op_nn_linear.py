"""matmul and the activations / softmax / dropout: struct info and legalized numerics."""

import numpy as np
import pytest

from irlab import relax
from irlab.errors import DiagnosticError
from op_testing import check_numeric, dims_of, out_sinfo, rand, sym, tensor

R = relax.op


def test_matmul_struct_info():
    n, b = sym("n"), sym("b")
    assert dims_of(out_sinfo(R.matmul, [tensor([n, 8]), tensor([8, 5])])) == [n, 5]
    assert dims_of(out_sinfo(R.matmul, [tensor([b, 1, 3, 4]), tensor([6, 4, 2])])) == \
        [b, 6, 3, 2]
    assert dims_of(out_sinfo(R.matmul, [tensor([4]), tensor([4, 2])])) == [2]
    assert dims_of(out_sinfo(R.matmul, [tensor([3, 4]), tensor([4])])) == [3]
    assert out_sinfo(R.matmul, [tensor([4]), tensor([4])]).ndim == 0
    assert out_sinfo(lambda a, c: R.matmul(a, c, "float64"),
                     [tensor([2, 4]), tensor([4, 2])]).dtype == "float64"
    with pytest.raises(DiagnosticError, match="reduction dims differ"):
        out_sinfo(R.matmul, [tensor([2, 3]), tensor([4, 2])])


@pytest.mark.parametrize("shapes", [((3, 8), (8, 5)), ((2, 3, 8), (2, 8, 5)),
                                    ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4, 3)), ((3, 4), (4,))])
def test_matmul_numeric(shapes):
    sa, sb = shapes
    a, b = rand(sa, seed=1), rand(sb, seed=2)
    check_numeric(R.matmul, [tensor(list(sa)), tensor(list(sb))], [a, b], np.matmul(a, b),
                  rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 6])
def test_matmul_symbolic_batch(batch):
    n = sym("n")
    a, b = rand((batch, 8), seed=1), rand((8, 5), seed=2)
    check_numeric(R.matmul, [tensor([n, 8]), tensor([8, 5])], [a, b], a @ b,
                  rtol=1e-4, atol=1e-4)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _gelu(x):
    from math import erf, sqrt
    return 0.5 * x * (1 + np.vectorize(erf)(x / sqrt(2)))


@pytest.mark.parametrize("make, ref", [
    (R.nn.relu, lambda x: np.maximum(x, 0)),
    (R.nn.gelu, _gelu),
    (R.nn.silu, lambda x: x / (1 + np.exp(-x))),
    (R.nn.softmax, lambda x: _softmax(x, -1)),
    (lambda x: R.nn.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    (R.nn.log_softmax, lambda x: np.log(_softmax(x, -1))),
])
@pytest.mark.parametrize("batch", [1, 4])
def test_activation_numeric(make, ref, batch):
    n = sym("n")
    x = rand((batch, 6), seed=5)
    check_numeric(make, [tensor([n, 6])], [x], ref(x).astype("float32"), rtol=1e-4, atol=1e-5)


def test_activation_struct_info():
    n = sym("n")
    assert dims_of(out_sinfo(R.nn.relu, [tensor([n, 3])])) == [n, 3]
    with pytest.raises(DiagnosticError, match="axis 2 is out of range"):
        out_sinfo(lambda x: R.nn.softmax(x, 2), [tensor([n, 3])])
    drop = out_sinfo(R.nn.dropout, [tensor([n, 3])])
    assert isinstance(drop, relax.TupleStructInfo) and len(drop.fields) == 2


def test_dropout_is_identity_at_inference():
    x = rand((2, 3), seed=6)
    check_numeric(lambda v: relax.TupleGetItem(R.nn.dropout(v, 0.3), 0), [tensor([2, 3])],
                  [x], x)
