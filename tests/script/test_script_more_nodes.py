"""TVMScript round trips for the node kinds the other script tests do not build: AttrStmt,
thread-bound loops, DeclBuffer views and symbolic buffer shapes."""

import numpy as np

import irlab
from irlab import tir
from irlab.ir import assert_structural_equal
from irlab.tir import expr as E
from irlab.tir import stmt as S


def _roundtrip(func):
    text = func.script()
    again = irlab.script.from_source(text)
    again = again["main"] if hasattr(again, "functions") else again
    assert_structural_equal(again, func)
    assert again.script() == text
    return again


def test_attr_stmt_and_thread_binding():
    a = tir.Var("a", "handle")
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i", "int32")
    thread = S.IterVar(tir.Range(0, 8), tir.Var("threadIdx.x", "int32"), S.IterVar.ThreadIndex,
                       "threadIdx.x")
    loop = S.For(i, 0, 8, S.ForKind.THREAD_BINDING,
                 S.BufferStore(A, E.FloatImm("float32", 1.0), [i]), thread_binding=thread)
    body = S.AttrStmt(A.data, "pragma_note", E.IntImm("int32", 1), loop)
    _roundtrip(tir.PrimFunc([a], body, buffer_map={a: A}))


def test_decl_buffer_view_runs_and_roundtrips():
    a = tir.Var("a", "handle")
    A = tir.decl_buffer((2, 4), "float32", "A")
    flat = tir.decl_buffer((8,), "float32", "A_flat", data=A.data)
    i = tir.Var("i", "int32")
    store = S.BufferStore(flat, E.Cast("float32", i), [i])
    body = S.DeclBuffer(flat, S.For(i, 0, 8, S.ForKind.SERIAL, store))
    func = _roundtrip(tir.PrimFunc([a], body, buffer_map={a: A}))
    out = np.zeros((2, 4), "float32")
    tir.run(func, out)
    np.testing.assert_array_equal(out.reshape(-1), np.arange(8))


def test_symbolic_shape_buffer():
    a = tir.Var("a", "handle")
    n = tir.Var("n", "int32")
    A = tir.decl_buffer((n,), "float32", "A")
    i = tir.Var("i", "int32")
    body = S.For(i, 0, n, S.ForKind.SERIAL,
                 S.BufferStore(A, A[i] * E.FloatImm("float32", 2.0), [i]))
    func = _roundtrip(tir.PrimFunc([a], body, buffer_map={a: A}))
    x = np.arange(5, dtype="float32")
    tir.run(func, x)
    np.testing.assert_array_equal(x, np.arange(5) * 2)


def test_variables_bound_nowhere_are_declared():
    """A variable the body uses that nothing binds prints as ``a = T.int32()`` (TVMScript's
    declaration), so the text parses back to the same function."""
    a, b = E.Var("a", "int32"), E.Var("flag", "bool")
    body = S.SeqStmt([S.Evaluate(a + 1), S.Evaluate(E.EQ(b, E.IntImm("bool", 0)))])
    func = tir.PrimFunc([], body)
    text = func.script()
    assert "a = T.int32()" in text and "flag = T.bool()" in text
    again = irlab.script.from_source(text)
    assert_structural_equal(again, func, map_free_vars=True)
    assert again.script() == text
