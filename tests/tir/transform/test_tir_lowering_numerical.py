"""Lowering passes keep results: te-built workloads run by the TIR interpreter before and after
each pass of the pipeline (and the whole ``lower``) give the same arrays."""

import numpy as np
import pytest

from irlab import te, tir
from irlab.instrument import IRSnapshot
from irlab.ir.module import IRModule
from irlab.tir import stmt as S
from irlab.tir.functor import StmtExprMutator
from irlab.tir.transform import LowerIntrin, pipeline
from irlab.tir.transform.pipeline import lower, lowering_passes
from irlab.transform import PassContext


# -- workloads -----------------------------------------------------------------------------
def matmul_relu(n=8, m=12, k=16):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    D = te.compute((n, m), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return te.create_prim_func([A, B, D])


def elementwise_chain(n=16, m=8):
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((n, m), lambda i, j: te.exp(C[i, j]) - B[i, j], name="D")
    return te.create_prim_func([A, D])


def conv2d_like(h=10, w=9, ci=2, co=3, kh=3, kw=3):
    X = te.placeholder((ci, h, w), name="X")
    W = te.placeholder((co, ci, kh, kw), name="W")
    P = te.compute((ci, h + 2, w + 2), lambda c, y, x: te.if_then_else(
        te.all(y >= 1, y < h + 1, x >= 1, x < w + 1), X[c, y - 1, x - 1], 0.0), name="pad")
    rc = te.reduce_axis((0, ci), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    Y = te.compute((co, h, w), lambda f, y, x: te.sum(
        P[rc, y + ry, x + rx] * W[f, rc, ry, rx], axis=[rc, ry, rx]), name="conv")
    return te.create_prim_func([X, W, Y])


def softmax_like(n=8, m=16):
    A = te.placeholder((n, m), name="A")
    k1 = te.reduce_axis((0, m), name="k1")
    mx = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    E = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="E")
    k2 = te.reduce_axis((0, m), name="k2")
    s = te.compute((n,), lambda i: te.sum(E[i, k2], axis=k2), name="s")
    out = te.compute((n, m), lambda i, j: E[i, j] / s[i], name="out")
    return te.create_prim_func([A, out])


WORKLOADS = {"matmul_relu": matmul_relu, "elementwise": elementwise_chain,
             "conv2d": conv2d_like, "softmax": softmax_like}


def _inputs(func, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        buf = func.buffer_map[param]
        shape = tuple(int(s.value) for s in buf.shape)
        arrays.append(rng.standard_normal(shape).astype(buf.dtype))
    return arrays


def _run(func, arrays):
    arrays = [a.copy() for a in arrays]
    tir.run(func, *arrays)
    return arrays


class _MarkInnermost(StmtExprMutator):
    """Give every innermost loop (one whose body holds no loop) the kind ``kind``."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def visit_for(self, s):
        new = self._mutate_stmt_children(s)
        inner = []
        tir.post_order_visit(s.body, lambda n: inner.append(n) if isinstance(n, S.For) else 0)
        return new if inner else new.with_fields(kind=self.kind)


def _mark(func, kind):
    return func.with_body(_MarkInnermost(kind).visit_stmt(func.body))


# -- each pass, each workload ----------------------------------------------------------------
@pytest.mark.parametrize("kind", [S.ForKind.SERIAL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_pass_keeps_results(name, kind):
    func = _mark(WORKLOADS[name](), kind)
    arrays = _inputs(func)
    expected = _run(func, arrays)
    mod = IRModule({"main": func})
    # the pipeline, then LowerIntrin (which TVM runs at build time)
    for p in lowering_passes() + [LowerIntrin()]:
        mod = p(mod)
        got = _run(mod["main"], arrays)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=p.info.name)


@pytest.mark.parametrize("seed", range(3))
def test_lower_matmul_relu_against_numpy(seed):
    func = matmul_relu(8, 16, 12)
    a, b, d = _inputs(func, seed)
    lowered = lower(func)["main"]
    tir.run(lowered, a, b, d)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def _kinds(node):
    found = set()
    tir.post_order_visit(node, lambda n: found.add(type(n).__name__))
    return found


def _buffers(node):
    found = []

    def visit(n):
        if isinstance(n, (tir.BufferLoad, tir.BufferStore)):
            found.append(n.buffer)
    tir.post_order_visit(node, visit)
    return found


def test_lower_gives_flat_loops_over_1d_buffers():
    lowered = lower(matmul_relu())["main"]
    kinds = _kinds(lowered.body)
    assert not kinds & {"Block", "BlockRealize"}
    assert {"For", "Allocate", "DeclBuffer", "IfThenElse"} <= kinds
    assert all(len(b.shape) == 1 for b in _buffers(lowered.body))
    # the arguments keep their n-D description; the body aliases their data
    params = {lowered.buffer_map[p].data for p in lowered.params}
    assert params <= {b.data for b in _buffers(lowered.body)} | {None}
    assert all(len(b.shape) == 2 for b in lowered.buffer_map.values())


def test_lower_records_each_pass_under_irsnapshot():
    snap = IRSnapshot()
    with PassContext(instruments=[snap]):
        lower(matmul_relu())
    names = [r.name for r in snap.records]
    expected = [p.info.name for p in lowering_passes()]
    assert names[0] == "tir.lower" and names[1:] == expected
    assert {"tir.LowerInitBlock", "tir.ConvertBlocksToOpaque", "tir.LowerOpaqueBlock",
            "tir.FlattenBuffer", "tir.Simplify", "tir.RemoveNoOp"} <= set(names)
    assert all(r.depth == 1 for r in snap.records[1:])
    changed = {r.name for r in snap.records if r.changed}
    assert {"tir.LowerInitBlock", "tir.LowerOpaqueBlock", "tir.FlattenBuffer"} <= changed


def test_lower_accepts_module_and_respects_disabled_pass():
    mod = IRModule({"main": elementwise_chain()})
    with PassContext(disabled_pass=["tir.FlattenBuffer"]):
        out = lower(mod)["main"]
    assert any(len(b.shape) == 2 for b in _buffers(out.body))
    out = lower(mod)["main"]
    assert all(len(b.shape) == 1 for b in _buffers(out.body))


def test_lower_disable_vectorize_config():
    func = _mark(elementwise_chain(), S.ForKind.VECTORIZED)
    assert "Ramp" in _kinds(lower(func)["main"].body)
    with PassContext(config={"tir.disable_vectorize": True}):
        out = lower(func)["main"]
    assert "Ramp" not in _kinds(out.body)
    assert all(f.kind == S.ForKind.SERIAL for f in _loops(out.body))


def _loops(node):
    found = []
    tir.post_order_visit(node, lambda n: found.append(n) if isinstance(n, S.For) else 0)
    return found


def test_lower_rejects_other_values():
    with pytest.raises(Exception, match="PrimFunc or an IRModule"):
        lower(3)
    assert pipeline.__doc__
