"""TE computes + the CPU reduce schedule of the reductions (issue 8): sum, mean, max, min,
prod, all, any, argmax, argmin, variance over several axes / keepdims / exclude, lowered with
``lower_function`` for ``llvm``, compiled and compared with the ops' numpy references."""

import os
import sys

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.relay.backend.te_compiler import lower_function
from irlab.target import Target

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_topi_transform import assert_same, check_op, rand, run_compiled  # noqa: E402

F32, I32 = "float32", "int32"

CASES = [
    ((4, 5), None, False, False), ((4, 5), (1,), True, False), ((3, 4, 5), (0, 2), False, False),
    ((3, 4, 5), (1,), False, True), ((3, 4, 5), (-1,), True, False), ((6, 7), (0,), False, False),
    ((2, 3, 4), (0, 1, 2), True, False),
]


def _positive(rng, shape, dtype):
    # positive floats keep the float32 accumulations within rtol 1e-5 of the float64 reference
    return rand(rng, shape, dtype, 1, 3) if dtype.startswith("float") else rand(rng, shape, dtype)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape,axis,keepdims,exclude", CASES)
# integers for sum/max/mean (wrapping, truncating division), floats for all
def test_basic_reduce(name, shape, axis, keepdims, exclude):
    fn = getattr(relay, name)
    rng = np.random.default_rng(hash((name, shape, axis)) % 1000)
    for dtype in (F32, I32) if name in ("sum", "max", "mean") else (F32,):
        check_op(lambda x: fn(x, axis, keepdims, exclude), [(shape, dtype)],
                 values=[_positive(rng, shape, dtype)])


@pytest.mark.parametrize("shape,axis,keepdims,exclude", CASES[:4])
def test_prod(shape, axis, keepdims, exclude):
    rng = np.random.default_rng(1)
    check_op(lambda x: relay.prod(x, axis, keepdims, exclude), [(shape, F32)],
             values=[rand(rng, shape, F32, 0.5, 1.5)])
    check_op(lambda x: relay.prod(x, axis, keepdims, exclude), [(shape, I32)],
             values=[rand(rng, shape, I32, -3, 3)])


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("shape,axis,keepdims,exclude", CASES[:5])
def test_logical(name, shape, axis, keepdims, exclude):
    rng = np.random.default_rng(2)
    fn = getattr(relay, name)
    x = rng.random(shape) < (0.85 if name == "all" else 0.15)
    check_op(lambda v: fn(v, axis, keepdims, exclude), [(shape, "bool")], values=[x])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis,keepdims,exclude,last", [
    ((4, 5), None, False, False, False), ((4, 5), (1,), True, False, False),
    ((3, 4, 5), (0, 2), False, False, True), ((3, 4, 5), (1,), False, True, False),
    ((6, 7), (0,), False, False, True),
])
def test_arg_reduce(name, shape, axis, keepdims, exclude, last):
    rng = np.random.default_rng(3)
    fn = getattr(relay, name)
    for dtype in (F32, I32):
        # few distinct values: ties exercise first / last index selection
        x = rng.integers(-3, 4, shape).astype(dtype)
        check_op(lambda v: fn(v, axis, keepdims, exclude, last), [(shape, dtype)], values=[x])


@pytest.mark.parametrize("shape,axis,keepdims,exclude,unbiased", [
    ((4, 5), None, False, False, False), ((4, 5), (1,), True, False, True),
    ((3, 4, 5), (0, 2), False, False, False), ((3, 4, 5), (1,), False, True, True),
])
def test_variance(shape, axis, keepdims, exclude, unbiased):
    rng = np.random.default_rng(4)
    x = rand(rng, shape, F32, 1, 3)
    axes = tuple(range(len(shape))) if axis is None else axis
    if exclude:
        axes = tuple(k for k in range(len(shape)) if k not in axis)
    m = x.astype(np.float64).mean(axis=axes, keepdims=True).astype(np.float32)
    check_op(lambda v, mu: relay.variance(v, axis, keepdims, exclude, unbiased, with_mean=mu),
             [(shape, F32), (m.shape, F32)], values=[x, m])


def test_variance_int():
    rng = np.random.default_rng(5)
    x = rand(rng, (3, 6), I32)
    m = np.array([[1], [-2], [0]], "int32")
    check_op(lambda v, mu: relay.variance(v, (1,), False, False, False, with_mean=mu),
             [((3, 6), I32), ((3, 1), I32)], values=[x, m])


# -- fused chains, schedules --------------------------------------------------------------------

def test_fused_exp_sum_divide():
    """softmax-like: exp inlined into the reduction, the division an epilogue stage."""
    rng = np.random.default_rng(6)
    x = relay.var("x", shape=(8, 16), dtype="float32")
    body = relay.divide(relay.sum(relay.exp(x), axis=1, keepdims=True), relay.const(2.0))
    a = rand(rng, (8, 16), F32, -1, 1)
    outs, _ = run_compiled(relay.Function([x], body), [a])
    assert_same(outs[0], np.exp(a.astype(np.float64)).sum(1, keepdims=True) / 2)


def test_fused_reshape_mean_variance():
    rng = np.random.default_rng(7)
    x = relay.var("x", shape=(4, 24), dtype="float32")
    r = relay.reshape(x, (4, 6, 4))
    body = relay.variance(r, (1,), False, False, False, with_mean=relay.mean(r, 1, True))
    a = rand(rng, (4, 24), F32, 1, 3)
    # mean and variance in one function: the mean is a (non-anchor) reduction stage
    outs, _ = run_compiled(relay.Function([x], body), [a])
    assert_same(outs[0], a.astype(np.float64).reshape(4, 6, 4).var(axis=1))


@pytest.mark.parametrize("shape,axis,dtype", [((256, 96), (1,), F32), ((300, 64), (0,), F32),
                                              ((64, 40, 12), (0, 2), I32)])
def test_large_reduce_schedule(shape, axis, dtype):
    """Large enough to parallelize; axis 0 takes the vectorized-spatial path."""
    rng = np.random.default_rng(8)
    check_op(lambda x: relay.sum(x, axis), [(shape, dtype)],
             values=[_positive(rng, shape, dtype)])
    check_op(lambda x: relay.max(x, axis), [(shape, dtype)],
             values=[_positive(rng, shape, dtype)])


def test_cpu_schedule_shapes_loops():
    from irlab.tir import stmt as S

    x = relay.var("x", shape=(300, 64), dtype="float32")
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x], relay.sum(x, 0))))
    lowered = lower_function(mod["main"].with_attr("Primitive", 1), Target("llvm"))
    kinds = []

    def visit(s):
        if isinstance(s, S.For):
            kinds.append(s.kind)
        for name in getattr(s, "_fields", ()):
            v = getattr(s, name)
            for c in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(c, S.Stmt):
                    visit(c)

    visit(lowered.prim_func.body)
    assert S.ForKind.VECTORIZED in kinds and S.ForKind.PARALLEL in kinds, kinds
