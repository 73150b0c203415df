"""TOPI's generic computes on a symbolic batch: one PrimFunc built once, run at two batch
sizes, equal to numpy (the Relax legalizations rely on this)."""

import numpy as np
import pytest

import irlab as tvm
from irlab import te, tir, topi
from irlab.topi.testing import conv2d_nchw_python


def _case(name, batch):
    n = tir.Var("n", "int32")
    rng = np.random.default_rng(batch)
    if name == "broadcast_add":
        a, b = te.placeholder((n, 3), name="a"), te.placeholder((3,), name="b")
        x, y = rng.standard_normal((batch, 3), "float32"), rng.standard_normal(3, "float32")
        return [topi.add(a, b)], [a, b], [x, y], [x + y]
    if name == "matmul":
        a, b = te.placeholder((n, 4), name="a"), te.placeholder((4, 2), name="b")
        x, y = rng.standard_normal((batch, 4), "float32"), rng.standard_normal((4, 2),
                                                                               "float32")
        return [topi.nn.matmul(a, b)], [a, b], [x, y], [x @ y]
    if name == "softmax":
        a = te.placeholder((n, 5), name="a")
        x = rng.standard_normal((batch, 5), "float32")
        e = np.exp(x - x.max(1, keepdims=True))
        return [topi.nn.softmax.softmax(a)], [a], [x], [e / e.sum(1, keepdims=True)]
    if name == "reshape":
        a = te.placeholder((n, 2, 3), name="a")
        x = rng.standard_normal((batch, 2, 3), "float32")
        out = topi.transform.reshape(a, (n, 6))
        return [out], [a], [x], [x.reshape(batch, 6)]
    if name == "take":
        a = te.placeholder((n, 3), name="a")
        idx = te.placeholder((2,), "int32", name="idx")
        x = rng.standard_normal((batch, 3), "float32")
        i = np.array([2, 0], "int32")
        out = topi.transform.take(a, idx, axis=1)
        return [out], [a, idx], [x, i], [x[:, i]]
    if name == "sum_mean":
        a = te.placeholder((n, 4), name="a")
        x = rng.standard_normal((batch, 4), "float32")
        return [topi.reduction.mean(a, axis=0)], [a], [x], [x.mean(0)]
    if name == "conv":
        a = te.placeholder((n, 2, 6, 6), name="a")
        w = te.placeholder((3, 2, 3, 3), name="w")
        x = rng.standard_normal((batch, 2, 6, 6), "float32")
        k = rng.standard_normal((3, 2, 3, 3), "float32")
        return [topi.nn.conv2d.conv2d(a, w, padding=(1, 1))], [a, w], [x, k], [
            conv2d_nchw_python(x, k, 1, 1)]
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["broadcast_add", "matmul", "softmax", "reshape",
                                  "take", "sum_mean", "conv"])
def test_symbolic_batch(name):
    outs, ins, _, _ = _case(name, 1)
    func = te.create_prim_func(list(ins) + list(outs)).with_attr("global_symbol", "f")
    lib = tvm.build(func, target="llvm")
    for batch in (1, 5):
        _, _, arrays, expected = _case(name, batch)
        results = [tvm.nd.array(np.zeros(e.shape, "float32")) for e in expected]
        lib["f"](*[tvm.nd.array(a) for a in arrays], *results)
        for r, e in zip(results, expected):
            np.testing.assert_allclose(r.numpy(), e, rtol=1e-4, atol=1e-5)
