"""create_prim_func: block structure as TVM builds it, and results checked with the interpreter."""

import numpy as np
import pytest

from irlab import IRModule, te, tir
from irlab.errors import TIRError
from irlab.ir.structural import assert_structural_equal, structural_equal
from irlab.tir.interpreter import run

RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _blocks(func):
    out = []

    def visit(s):
        if isinstance(s, tir.BlockRealize):
            out.append(s.block)
            visit(s.block.body)
        elif isinstance(s, tir.SeqStmt):
            for x in s.seq:
                visit(x)
        elif isinstance(s, (tir.For, tir.LetStmt, tir.IfThenElse)):
            visit(s.body if not isinstance(s, tir.IfThenElse) else s.then_case)

    visit(func.body)
    return {b.name_hint: b for b in out}


def _mm_relu_te(n):
    A = te.placeholder((n, n), dtype="float32", name="A")
    B = te.placeholder((n, n), dtype="float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    Y = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((n, n), lambda i, j: te.max(Y[i, j], 0.0), name="C")
    return A, B, C


def _mm_relu_by_hand(n):
    """Seed 001's mm_relu as TVM's create_prim_func writes it, built from TIR nodes."""
    A = tir.decl_buffer((n, n), "float32", "A")
    B = tir.decl_buffer((n, n), "float32", "B")
    C = tir.decl_buffer((n, n), "float32", "C")
    Y = tir.decl_buffer((n, n), "float32", "Y")
    params = [tir.Var("var_A", "handle"), tir.Var("var_B", "handle"), tir.Var("var_C", "handle")]

    def pt(buf, *idx):
        return tir.BufferRegion(buf, [tir.Range.from_min_extent(i, 1) for i in idx])

    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    vi, vj, vk = tir.Var("v_i"), tir.Var("v_j"), tir.Var("v_k")
    ivs = [tir.IterVar(tir.Range(0, n), vi, tir.IterVar.DataPar),
           tir.IterVar(tir.Range(0, n), vj, tir.IterVar.DataPar),
           tir.IterVar(tir.Range(0, n), vk, tir.IterVar.CommReduce)]
    y_block = tir.Block(
        ivs, [pt(A, vi, vk), pt(B, vk, vj)], [pt(Y, vi, vj)], "Y",
        tir.BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], [vi, vj]),
        init=tir.BufferStore(Y, tir.const(0.0, "float32"), [vi, vj]))
    y_nest = tir.For(i, 0, n, body=tir.For(j, 0, n, body=tir.For(
        k, 0, n, body=tir.BlockRealize([i, j, k], True, y_block))))
    i2, j2, ci, cj = tir.Var("i"), tir.Var("j"), tir.Var("v_i"), tir.Var("v_j")
    c_block = tir.Block(
        [tir.IterVar(tir.Range(0, n), ci, 0), tir.IterVar(tir.Range(0, n), cj, 0)],
        [pt(Y, ci, cj)], [pt(C, ci, cj)], "C",
        tir.BufferStore(C, tir.max(Y[ci, cj], tir.const(0.0, "float32")), [ci, cj]))
    c_nest = tir.For(i2, 0, n, body=tir.For(j2, 0, n, body=tir.BlockRealize(
        [i2, j2], True, c_block)))
    root = tir.Block([], [], [], "root", tir.SeqStmt([y_nest, c_nest]), alloc_buffers=[Y])
    return tir.PrimFunc(params, tir.BlockRealize([], True, root), None,
                        {params[0]: A, params[1]: B, params[2]: C},
                        {"global_symbol": "main", "tir.noalias": True})


def test_seed_vector_add():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    mod = IRModule({"main": func})
    assert mod["main"] is func
    assert [p.name_hint for p in func.params] == ["var_A", "var_B"]
    assert [b.name for b in func.buffer_map.values()] == ["A", "B"]
    assert func.attrs["global_symbol"] == "main" and func.attrs["tir.noalias"]
    loop = func.body.block.body
    assert isinstance(loop, tir.For) and loop.loop_var.name_hint == "i0"
    block = loop.body.block
    assert block.name_hint == "B" and [iv.var.name_hint for iv in block.iter_vars] == ["v_i0"]
    assert loop.body.iter_values[0] is loop.loop_var
    a, b = _rand(8), np.zeros(8, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_mm_relu_structure_matches_hand_built():
    func = te.create_prim_func(list(_mm_relu_te(16)))
    assert_structural_equal(func, _mm_relu_by_hand(16))
    blocks = _blocks(func)
    assert list(blocks) == ["root", "Y", "C"]
    assert [b.name for b in blocks["root"].alloc_buffers] == ["Y"]
    assert blocks["Y"].init is not None and blocks["C"].init is None
    assert [r.buffer.name for r in blocks["Y"].reads] == ["A", "B"]
    assert [w.buffer.name for w in blocks["Y"].writes] == ["Y"]


def test_structural_check_can_fail():
    # A different reduction (max instead of sum) must not compare equal to the hand-built one.
    n = 16
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    Y = te.compute((n, n), lambda i, j: te.max(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((n, n), lambda i, j: te.max(Y[i, j], 0.0), name="C")
    assert not structural_equal(te.create_prim_func([A, B, C]), _mm_relu_by_hand(n))


def test_mm_relu_numeric():
    A, B, C = _mm_relu_te(16)
    func = te.create_prim_func([A, B, C])
    a, b, c = _rand(16, 16), _rand(16, 16), np.zeros((16, 16), "float32")
    run(func, a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_multiple_outputs():
    A = te.placeholder((6, 4), name="A")
    B0, B1 = te.compute((6, 4), lambda i, j: [A[i, j] + 1.0, A[i, j] * 2.0], name="B")
    assert (B0.name, B1.name) == ("B.v0", "B.v1") and B0.op is B1.op
    func = te.create_prim_func([A, B0, B1])
    blocks = _blocks(func)
    assert list(blocks) == ["root", "B.v0", "B.v1"]
    # Each block defines its own block vars.
    assert blocks["B.v0"].iter_vars[0].var is not blocks["B.v1"].iter_vars[0].var
    a = _rand(6, 4)
    b0, b1 = np.zeros_like(a), np.zeros_like(a)
    run(func, a, b0, b1)
    np.testing.assert_array_equal(b0, a + 1)
    np.testing.assert_array_equal(b1, a * 2)


def test_varargs_names():
    A = te.placeholder((2, 3, 4), name="A")
    B = te.compute((2, 3, 4), lambda n, *rest: A[(n,) + rest] * 3.0, name="B",
                   varargs_names=["h", "w"])
    assert [iv.var.name_hint for iv in B.op.axis] == ["n", "h", "w"]
    func = te.create_prim_func([A, B])
    assert [iv.var.name_hint for iv in _blocks(func)["B"].iter_vars] == ["v_n", "v_h", "v_w"]
    a, b = _rand(2, 3, 4), np.zeros((2, 3, 4), "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, a * 3)
    with pytest.raises(TIRError, match="varargs"):
        te.compute((2, 3, 4), lambda n, *rest: A[(n,) + rest], varargs_names=["h"])


@pytest.mark.parametrize("reducer,ref", [(te.max, np.max), (te.min, np.min), (te.sum, np.sum)])
def test_reductions(reducer, ref):
    A = te.placeholder((5, 7), name="A")
    k = te.reduce_axis((0, 7), name="k")
    B = te.compute((5,), lambda i: reducer(A[i, k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    a, b = _rand(5, 7), np.zeros(5, "float32")
    run(func, a, b)
    np.testing.assert_allclose(b, ref(a, axis=1), rtol=1e-6)


# irlab's IterVar does not convert to its var inside arithmetic yet (TVM's does): the tests
# write ``k.var`` where an expression needs the reduce variable.


def test_comm_reducer_product_and_where():
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), name="prod")
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    B = te.compute((4,), lambda i: prod(A[i, k], axis=k), name="B")
    # where=: only even k take part.
    C = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, where=te.floormod(k.var, 2) == 0),
                   name="C")
    func = te.create_prim_func([A, B, C])
    a = _rand(4, 6)
    b, c = np.zeros(4, "float32"), np.zeros(4, "float32")
    run(func, a, b, c)
    np.testing.assert_allclose(b, np.prod(a, axis=1), rtol=1e-5)
    np.testing.assert_allclose(c, a[:, ::2].sum(axis=1), rtol=1e-5)
    cblock = _blocks(func)["C"]
    assert isinstance(cblock.body, tir.IfThenElse)


def test_argmax_two_value_reducer():
    def fcombine(x, y):
        lhs = te.if_then_else(x[1] >= y[1], x[0], y[0])
        rhs = te.if_then_else(x[1] >= y[1], x[1], y[1])
        return lhs, rhs

    def fidentity(t0, t1):
        return te.const(-1, t0), te.min_value(t1)

    argmax = te.comm_reducer(fcombine, fidentity, name="argmax")
    A = te.placeholder((3, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    idx, val = te.compute((3,), lambda i: argmax((k.var, A[i, k]), axis=k), name="R")
    func = te.create_prim_func([A, idx, val])
    assert list(_blocks(func)) == ["root", "R"]
    a = _rand(3, 8)
    out_i, out_v = np.zeros(3, "int32"), np.zeros(3, "float32")
    run(func, a, out_i, out_v)
    np.testing.assert_array_equal(out_i, a.argmax(axis=1))
    np.testing.assert_array_equal(out_v, a.max(axis=1))


def test_conv2d_with_padding():
    n, c, h, w, f, r = 1, 2, 6, 6, 3, 3
    data = te.placeholder((n, c, h, w), name="data")
    weight = te.placeholder((f, c, r, r), name="weight")
    pad = te.compute((n, c, h + 2, w + 2), lambda b, ci, y, x: te.if_then_else(
        te.all(y >= 1, y < h + 1, x >= 1, x < w + 1), data[b, ci, y - 1, x - 1], 0.0),
        name="pad")
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, r), name="ry")
    rx = te.reduce_axis((0, r), name="rx")
    out = te.compute((n, f, h, w), lambda b, fo, y, x: te.sum(
        pad[b, rc, y + ry.var, x + rx.var] * weight[fo, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv")
    func = te.create_prim_func([data, weight, out])
    blocks = _blocks(func)
    assert [b.name for b in blocks["root"].alloc_buffers] == ["pad"]
    assert [iv.iter_type for iv in blocks["conv"].iter_vars] == [0] * 4 + [2] * 3
    d, wt = _rand(n, c, h, w), _rand(f, c, r, r)
    o = np.zeros((n, f, h, w), "float32")
    run(func, d, wt, o)
    padded = np.pad(d, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros_like(o)
    for y in range(h):
        for x in range(w):
            ref[:, :, y, x] = np.einsum("ncij,fcij->nf", padded[:, :, y:y + r, x:x + r], wt)
    np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-5)


def test_softmax():
    m, n = 4, 10
    A = te.placeholder((m, n), name="A")
    k1 = te.reduce_axis((0, n), name="k")
    mx = te.compute((m,), lambda i: te.max(A[i, k1], axis=k1), name="maxelem")
    ex = te.compute((m, n), lambda i, j: te.exp(A[i, j] - mx[i]), name="exp")
    k2 = te.reduce_axis((0, n), name="k")
    sm = te.compute((m,), lambda i: te.sum(ex[i, k2], axis=k2), name="expsum")
    out = te.compute((m, n), lambda i, j: ex[i, j] / sm[i], name="softmax")
    func = te.create_prim_func([A, out])
    blocks = _blocks(func)
    assert list(blocks) == ["root", "maxelem", "exp", "expsum", "softmax"]
    assert [b.name for b in blocks["root"].alloc_buffers] == ["maxelem", "exp", "expsum"]
    assert [r.buffer.name for r in blocks["exp"].reads] == ["A", "maxelem"]
    a, o = _rand(m, n), np.zeros((m, n), "float32")
    run(func, a, o)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_region_union_of_shifted_reads():
    A = te.placeholder((10,), name="A")
    B = te.compute((8,), lambda i: A[i] + A[i + 2], name="B")
    func = te.create_prim_func([A, B])
    (read,) = _blocks(func)["B"].reads
    assert read.region[0].extent.value == 3
    a, b = _rand(10), np.zeros(8, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, a[:8] + a[2:])


def test_duplicate_block_names_are_made_unique():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="T")
    C = te.compute((4,), lambda i: B[i] * 2.0, name="T")
    func = te.create_prim_func([A, C])
    assert list(_blocks(func)) == ["root", "T", "T_1"]


def test_prefix_sum_with_where():
    n = 6
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n), name="k")
    P = te.compute((n,), lambda i: te.sum(A[k], axis=k, where=k.var <= i), name="P")
    func = te.create_prim_func([A, P])
    a, p = _rand(n), np.zeros(n, "float32")
    run(func, a, p)
    np.testing.assert_allclose(p, np.cumsum(a), rtol=1e-5)


def test_reduce_domain_depending_on_spatial_axis():
    # k's domain uses i: TVM puts k's loop inside an outer block "P_l1" over i.
    n = 6
    A = te.placeholder((n,), name="A")

    def fcompute(i):
        k = te.reduce_axis((0, i + 1), name="k")
        return te.sum(A[k], axis=k)

    P = te.compute((n,), fcompute, name="P")
    func = te.create_prim_func([A, P])
    blocks = _blocks(func)
    assert list(blocks) == ["root", "P_l1", "P"]
    assert blocks["P_l1"].init is None and blocks["P"].init is not None
    a, p = _rand(n), np.zeros(n, "float32")
    run(func, a, p)
    np.testing.assert_allclose(p, np.cumsum(a), rtol=1e-5)


def test_placeholder_must_be_an_argument():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(TIRError, match="not a function argument"):
        te.create_prim_func([B])


def test_symbolic_shape():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    func = te.create_prim_func([A, B])
    a, b = _rand(5), np.zeros(5, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, a * 2)
