"""nn.dense / nn.matmul / nn.batch_matmul / nn.bias_add / activations / softmax: TE compute +
CPU schedule, lowered with LowerTE, built with LLVM, against the ops' numpy references."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.relay import expr as R
from irlab.topi.x86.dense import dense_tile

from tests.topi._lower_util import (TARGET, check_op, infer, interpret, lower_function,
                                    random_inputs, run_lowered)


@pytest.mark.parametrize("m,n,k", [(1, 64, 32), (32, 256, 784), (6, 48, 20), (5, 10, 7),
                                   (3, 16, 9), (8, 96, 33)])
def test_dense(m, n, k):
    # float32 accumulation over k terms: absolute error grows like sqrt(k)
    lowered = check_op(lambda a, b: relay.nn.dense(a, b), [(m, k), (n, k)],
                       atol=1e-5 * k ** 0.5)
    packed = dense_tile(m, n, TARGET) is not None
    assert lowered.anchor[0].name == ("dense_pack.x86" if packed else "dense.x86")
    if m <= 2 and k % 8 == 0:  # GEMV: vectorized dot products (rfactor)
        assert "T_dense_rf" in lowered.prim_func.script()


def _pack_nc(w, block):
    n, k = w.shape
    return np.ascontiguousarray(w.reshape(n // block, block, k).transpose(0, 2, 1))


@pytest.mark.parametrize("m,n,k,block", [(32, 256, 784, 64), (6, 48, 20, 16), (8, 96, 33, 32),
                                         (5, 24, 7, 8), (2, 32, 16, 32)])
def test_dense_pack(m, n, k, block):
    """contrib_dense_pack reads the packed weight: no packing stage, same numbers as a dense of
    the unpacked weight (the block dense_tile would choose gets the register tile)."""
    x = relay.var("x", shape=(m, k), dtype="float32")
    w = relay.var("w", shape=(n // block, k, block), dtype="float32")
    func = infer(relay.Function([x, w], relay.nn.contrib_dense_pack(
        x, w, weight_layout=f"NC{block}n")))
    lowered = lower_function(func.with_attr("Primitive", 1), TARGET)
    assert lowered.anchor[0].name == "dense_pack.x86"
    text = lowered.prim_func.script()
    assert "T_dense_pack" not in text
    tile = dense_tile(m, n, TARGET)
    if tile is not None and tile[1] == block:  # e.g. (6, 48, 16), (8, 96, 32) with AVX-512
        assert "T.vectorized" in text and "T.unroll" in text
    a, b = random_inputs([(m, k), (n, k)])
    got = run_lowered(lowered, [a, _pack_nc(b, block)])[0]
    np.testing.assert_allclose(got, a @ b.T, rtol=1e-4, atol=1e-5 * k ** 0.5)


def test_dense_nd_data():
    check_op(lambda a, b: relay.nn.dense(a, b), [(2, 4, 24), (32, 24)])


@pytest.mark.parametrize("ta,tb,sa,sb", [(False, False, (8, 12), (12, 32)),
                                         (True, False, (12, 8), (12, 16)),
                                         (True, True, (12, 4), (20, 12)),
                                         (False, False, (5, 7), (7, 9))])
def test_matmul(ta, tb, sa, sb):
    check_op(lambda a, b: relay.nn.matmul(a, b, transpose_a=ta, transpose_b=tb), [sa, sb])


@pytest.mark.parametrize("ta,tb,sa,sb", [(False, True, (2, 8, 16), (2, 32, 16)),
                                         (False, False, (3, 4, 16), (3, 16, 64)),
                                         (True, False, (2, 16, 4), (1, 16, 32)),
                                         (False, True, (1, 5, 7), (3, 9, 7))])
def test_batch_matmul(ta, tb, sa, sb):
    check_op(lambda a, b: relay.nn.batch_matmul(a, b, transpose_a=ta, transpose_b=tb),
             [sa, sb])


@pytest.mark.parametrize("shape,axis", [((4, 8), 1), ((2, 3, 4, 5), 1), ((2, 3, 4), -1)])
def test_bias_add(shape, axis):
    check_op(lambda a, b: relay.nn.bias_add(a, b, axis=axis), [shape, (shape[axis],)])


@pytest.mark.parametrize("shape", [(7,), (4, 33), (2, 3, 64)])
def test_relu_leaky_relu(shape):
    check_op(lambda a: relay.nn.relu(a), [shape])
    check_op(lambda a: relay.nn.leaky_relu(a, alpha=0.1), [shape])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "fast_softmax"])
@pytest.mark.parametrize("shape,axis", [((4, 10), -1), ((3, 5, 7), 1), ((6,), 0),
                                        ((64, 128), -1)])
def test_softmax(fn, shape, axis):
    op = getattr(relay.nn, fn)
    check_op(lambda a: op(a, axis=axis), [shape])


def test_dropout():
    check_op(lambda a: relay.nn.dropout(a, rate=0.3), [(4, 6)])
    check_op(lambda a: relay.nn.dropout_raw(a, rate=0.3), [(4, 6)])


# -- fused functions as FuseOps makes them ------------------------------------------------------
def _fused_primitives(func):
    mod = irlab.IRModule.from_expr(func)
    mod = relay.transform.InferType()(mod)
    mod = relay.transform.FuseOps(fuse_opt_level=1)(mod)
    mod = relay.transform.InferType()(mod)
    prims = []

    def visit(e):
        if isinstance(e, R.Call):
            if isinstance(e.op, relay.Function):
                prims.append(e.op)
            for a in e.args:
                visit(a)
        elif isinstance(e, R.Tuple):
            for f in e.fields:
                visit(f)
        elif isinstance(e, R.TupleGetItem):
            visit(e.tuple_value)

    visit(mod["main"].body)
    return prims


def _check_primitive(prim, seed=0):
    lowered = lower_function(prim, TARGET)
    shapes = [tuple(int(d) for d in p.checked_type.shape) for p in prim.params]
    arrays = random_inputs(shapes, seed)
    got = run_lowered(lowered, arrays)
    expected = interpret(prim, arrays)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
    return lowered


def _mlp(batch, sizes):
    x = relay.var("x", shape=(batch, sizes[0]), dtype="float32")
    params, h = [x], x
    for i, (fin, fout) in enumerate(zip(sizes, sizes[1:])):
        w = relay.var(f"w{i}", shape=(fout, fin), dtype="float32")
        b = relay.var(f"b{i}", shape=(fout,), dtype="float32")
        params += [w, b]
        h = relay.nn.bias_add(relay.nn.dense(h, w), b)
        if i < len(sizes) - 2:
            h = relay.nn.relu(h)
    return relay.Function(params, relay.nn.softmax(h))


@pytest.mark.parametrize("batch", [1, 32])
def test_fused_mlp(batch):
    prims = _fused_primitives(_mlp(batch, [48, 64, 32, 10]))
    names = [lower_function(p, TARGET).name for p in prims]
    assert any("dense_nn_bias_add_nn_relu" in n for n in names), names
    assert any(n.endswith("fused_nn_softmax") for n in names), names
    for p in prims:
        _check_primitive(p)


def test_fused_batch_matmul_add():
    x = relay.var("x", shape=(2, 8, 32), dtype="float32")
    y = relay.var("y", shape=(2, 64, 32), dtype="float32")
    c = relay.var("c", shape=(64,), dtype="float32")
    func = relay.Function([x, y, c], relay.add(relay.nn.batch_matmul(x, y), c))
    prims = _fused_primitives(func)
    assert len(prims) == 1
    lowered = _check_primitive(prims[0])
    assert lowered.anchor[0].name == "batch_matmul_pack.x86"


def test_cpu_schedule_is_used():
    x = relay.var("x", shape=(64, 512), dtype="float32")
    w = relay.var("w", shape=(512, 512), dtype="float32")
    lowered = lower_function(infer(relay.Function([x, w], relay.nn.dense(x, w)))
                             .with_attr("Primitive", 1), TARGET)
    text = lowered.prim_func.script()
    assert "T.parallel" in text and "T.vectorized" in text
    assert lowered.anchor[0].name == "dense_pack.x86"
    arrays = random_inputs([(64, 512), (512, 512)])
    got = run_lowered(lowered, arrays)[0]
    np.testing.assert_allclose(got, arrays[0] @ arrays[1].T, rtol=1e-4, atol=1e-3)
