"""The TIR interpreter on hand-built PrimFuncs, checked against numpy."""


import numpy as np
import pytest

from irlab import tir
from irlab.errors import TIRError
from irlab.tir import IterVar, Range


def _func(buffers, body, scalars=()):
    params = [tir.Var(b.name, "handle") for b in buffers]
    return tir.PrimFunc(params + list(scalars), body,
                        buffer_map=dict(zip(params, buffers)),
                        attrs={"global_symbol": "main", "tir.noalias": True})


def _grid(extents, names, body_fn):
    loops = [tir.Var(n, "int32") for n in names]
    body = body_fn(*loops)
    for var, ext in reversed(list(zip(loops, extents))):
        body = tir.For(var, 0, ext, tir.ForKind.SERIAL, body)
    return body


def _block(name, kinds, extents, values, body_fn, init_fn=None, reads=(), writes=()):
    ivs = [IterVar(Range(0, n), tir.Var("v" + str(i), "int32"),
                   IterVar.DataPar if k == "S" else IterVar.CommReduce)
           for i, (k, n) in enumerate(zip(kinds, extents))]
    vs = [iv.var for iv in ivs]
    block = tir.Block(ivs, reads, writes, name, body_fn(*vs),
                      init=init_fn(*vs) if init_fn else None)
    return tir.BlockRealize(values, True, block)


def mm_relu(n):
    """Seed 001's mm_relu: Y = A @ B with T.init, then C = max(Y, 0); Y is a root alloc."""
    A = tir.decl_buffer((n, n), "float32", "A")
    B = tir.decl_buffer((n, n), "float32", "B")
    C = tir.decl_buffer((n, n), "float32", "C")
    Y = tir.decl_buffer((n, n), "float32", "Y")
    zero = tir.const(0.0, "float32")
    mm = _grid((n, n, n), "ijk", lambda i, j, k: _block(
        "Y", "SSR", (n, n, n), (i, j, k),
        lambda vi, vj, vk: tir.BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init_fn=lambda vi, vj, vk: tir.BufferStore(Y, zero, (vi, vj))))
    relu = _grid((n, n), "ij", lambda i, j: _block(
        "C", "SS", (n, n), (i, j),
        lambda vi, vj: tir.BufferStore(C, tir.max(Y[vi, vj], zero), (vi, vj))))
    root = tir.Block([], [], [], "root", tir.SeqStmt([mm, relu]), alloc_buffers=[Y])
    return _func([A, B, C], tir.BlockRealize([], True, root))


def test_mm_relu_block_form_matches_numpy():
    n = 64
    func = mm_relu(n)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    c = np.full((n, n), 7, "float32")
    tir.run(func, a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_init_runs_only_at_reduction_start():
    # Without init semantics the garbage in Y (zeroed alloc) would not matter; use C directly.
    n = 4
    A = tir.decl_buffer((n, n), "float32", "A")
    C = tir.decl_buffer((n,), "float32", "C")
    body = _grid((n, n), "ik", lambda i, k: _block(
        "S", "SR", (n, n), (i, k),
        lambda vi, vk: tir.BufferStore(C, C[vi] + A[vi, vk], (vi,)),
        init_fn=lambda vi, vk: tir.BufferStore(C, tir.const(100.0, "float32"), (vi,))))
    a = np.arange(16, dtype="float32").reshape(4, 4)
    c = np.zeros(4, "float32")
    tir.run(_func([A, C], body), a, c)
    np.testing.assert_array_equal(c, a.sum(1) + 100)


def test_lowered_loop_nest_with_allocate():
    n = 8
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    tmp_data = tir.Var("tmp", "handle")
    tmp = tir.decl_buffer((n,), "float32", "tmp", data=tmp_data)
    i, j = tir.Var("i"), tir.Var("j")
    fill = tir.For(i, 0, n, tir.ForKind.PARALLEL,
                   tir.BufferStore(tmp, A[i] * tir.const(2.0, "float32"), (i,)))
    use = tir.For(j, 0, n, tir.ForKind.UNROLLED,
                  tir.BufferStore(B, tmp[n - 1 - j] + tir.const(1.0, "float32"), (j,)))
    body = tir.Allocate(tmp_data, "float32", [n], True,
                        tir.DeclBuffer(tmp, tir.SeqStmt([fill, use])))
    a = np.arange(n, dtype="float32")
    b = np.zeros(n, "float32")
    tir.run(_func([A, B], body), a, b)
    np.testing.assert_array_equal(b, a[::-1] * 2 + 1)


def test_vectors_ramp_broadcast():
    n = 16
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    io = tir.Var("io")
    idx = tir.Ramp(io * 4, 1, 4)
    body = tir.For(io, 0, n // 4, tir.ForKind.SERIAL,
                   tir.BufferStore(B, A[idx] * tir.Broadcast(tir.const(3.0, "float32"), 4),
                                   (idx,)))
    assert A[idx].dtype == "float32x4"
    a = np.arange(n, dtype="float32")
    b = np.zeros(n, "float32")
    tir.run(_func([A, B], body), a, b)
    np.testing.assert_array_equal(b, a * 3)


def test_select_and_if_then_else_guard():
    n = 6
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i")
    zero = tir.const(0.0, "float32")
    # if_then_else guards the out-of-bounds A[i - 1] at i == 0; Select would evaluate it.
    shifted = tir.if_then_else(i > 0, A[tir.max(i - 1, 0) * 0 + i - 1], zero)
    value = tir.Select(A[i] > zero, A[i], zero) + shifted
    body = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(B, value, (i,)))
    a = np.array([1, -2, 3, -4, 5, -6], "float32")
    b = np.zeros(n, "float32")
    tir.run(_func([A, B], body), a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0) + np.concatenate([[0], a[:-1]]))
    bad = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(
        B, tir.Select(i > 0, A[i - 1], zero), (i,)))
    with pytest.raises(TIRError, match=r"A\[-1\]"):
        tir.run(_func([A, B], bad), a, b)


def test_int32_wraparound_and_division_semantics():
    A = tir.decl_buffer((6,), "int32", "A")
    x = tir.Var("x", "int32")
    big = tir.const(2 ** 31 - 1, "int32")
    stores = [tir.BufferStore(A, x + big, (0,)),
              tir.BufferStore(A, tir.truncdiv(x - 8, 3), (1,)),
              tir.BufferStore(A, tir.truncmod(x - 8, 3), (2,)),
              tir.BufferStore(A, (x - 8) // 3, (3,)),
              tir.BufferStore(A, (x - 8) % 3, (4,)),
              tir.BufferStore(A, tir.Cast("int32", tir.Cast("float32", x) * -1.75), (5,))]
    a = np.zeros(6, "int32")
    tir.run(_func([A], tir.SeqStmt(stores), scalars=[x]), a, 1)
    assert a.tolist() == [-(2 ** 31), -2, -1, -3, 2, -1]


def test_float32_stays_float32():
    A = tir.decl_buffer((1,), "float32", "A")
    one = tir.const(1.0, "float32")
    tiny = tir.const(1e-8, "float32")
    body = tir.BufferStore(A, (A[0] + tiny) - one, (0,))
    a = np.ones(1, "float32")
    tir.run(_func([A], body), a)
    assert a[0] == 0.0  # in float64 this would be 1e-8


def test_intrinsics():
    A = tir.decl_buffer((4,), "float32", "A")
    B = tir.decl_buffer((4,), "float32", "B")
    i = tir.Var("i")
    x = A[i]
    value = tir.exp(x) + tir.sqrt(tir.fabs(x)) + tir.tanh(x) + tir.sigmoid(x) + tir.erf(x)
    body = tir.For(i, 0, 4, 0, tir.BufferStore(B, tir.fma(value, x, x), (i,)))
    a = np.array([0.5, -1.0, 2.0, 0.0], "float32")
    b = np.zeros(4, "float32")
    tir.run(_func([A, B], body), a, b)
    import math
    v = np.exp(a) + np.sqrt(np.abs(a)) + np.tanh(a) + 1 / (1 + np.exp(-a)) + np.array(
        [math.erf(t) for t in a])
    np.testing.assert_allclose(b, v * a + a, rtol=1e-5)


def test_bad_inputs_are_named():
    func = mm_relu(4)
    a = np.zeros((4, 4), "float32")
    with pytest.raises(TIRError, match="buffer B: expected dtype float32"):
        tir.run(func, a, a.astype("float64"), a)
    with pytest.raises(TIRError, match="buffer C: expected shape"):
        tir.run(func, a, a, np.zeros((4, 5), "float32"))
    with pytest.raises(TIRError, match="takes 3 arguments"):
        tir.run(func, a, a)


def test_out_of_bounds_store_is_an_error_not_a_wraparound():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    body = tir.For(i, 0, 5, 0, tir.BufferStore(A, tir.const(1.0, "float32"), (i,)))
    a = np.zeros(4, "float32")
    with pytest.raises(TIRError, match=r"out-of-bounds access A\[4\]"):
        tir.run(_func([A], body), a)


def test_symbolic_shape_and_assert_and_while():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "int32", "A")
    i = tir.Var("i")
    body = tir.For(i, 0, n, 0, tir.BufferStore(A, i * i, (i,)))
    a = np.zeros(5, "int32")
    tir.run(_func([A], body), a)
    assert a.tolist() == [0, 1, 4, 9, 16]
    failing = tir.AssertStmt(n > 10, "n must exceed 10", tir.Evaluate(0))
    with pytest.raises(TIRError, match="n must exceed 10"):
        tir.run(_func([A], failing), a)
    # while with a counter stored in a 1-element buffer
    C = tir.decl_buffer((1,), "int32", "C")
    loop = tir.While(C[0] < 10, tir.BufferStore(C, C[0] + 3, (0,)))
    c = np.zeros(1, "int32")
    tir.run(_func([C], loop), c)
    assert c[0] == 12


def test_let_stmt_and_let_expr():
    A = tir.decl_buffer((1,), "int32", "A")
    x, y = tir.Var("x"), tir.Var("y")
    body = tir.LetStmt(x, 5, tir.BufferStore(A, tir.Let(y, x * 2, y + x), (0,)))
    a = np.zeros(1, "int32")
    tir.run(_func([A], body), a)
    assert a[0] == 15
