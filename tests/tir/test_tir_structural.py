"""Structural equality/hash of TIR: loop vars, block vars, buffers mapped at their definitions."""

from irlab import tir
from irlab.ir.structural import structural_equal, structural_hash


def _copy_func(n, name_suffix="", value=1.0):
    A = tir.decl_buffer((n,), "float32", "A" + name_suffix)
    i = tir.Var("i" + name_suffix)
    p = tir.Var("a" + name_suffix, "handle")
    body = tir.For(i, 0, n, 0, tir.BufferStore(A, A[i] + tir.const(value, "float32"), (i,)))
    return tir.PrimFunc([p], body, buffer_map={p: A})


def test_renamed_loop_vars_and_buffers_are_equal():
    f, g = _copy_func(8), _copy_func(8, "_other")
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)
    assert not structural_equal(f, _copy_func(8, value=2.0))
    assert not structural_equal(f, _copy_func(9))


def test_free_vars_compare_by_identity():
    i, j = tir.Var("i"), tir.Var("i")
    assert structural_equal(i + 1, i + 1)
    assert not structural_equal(i + 1, j + 1)
    assert structural_equal(i + 1, j + 1, map_free_vars=True)


def test_block_form_equal_to_rebuilt_copy():
    from tests.tir.test_tir_interpreter import mm_relu

    f, g = mm_relu(16), mm_relu(16)
    assert structural_equal(f, g) and structural_hash(f) == structural_hash(g)
    assert not structural_equal(f, mm_relu(8))


def test_loop_var_mapping_must_be_consistent():
    A = tir.decl_buffer((4, 4), "float32", "A")
    p = tir.Var("a", "handle")
    i, j = tir.Var("i"), tir.Var("j")

    def nest(first, second):
        return tir.PrimFunc([p], tir.For(i, 0, 4, 0, tir.For(j, 0, 4, 0, tir.BufferStore(
            A, tir.const(0.0, "float32"), (first, second)))), buffer_map={p: A})

    assert structural_equal(nest(i, j), nest(i, j))
    assert not structural_equal(nest(i, j), nest(j, i))


def test_renamed_blocks_are_equal():
    """As in TVM, a block's name is a label: renaming it keeps the structure (and hash)."""
    from irlab.tir import Schedule
    from irlab import te

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    func = te.create_prim_func([A, B])
    renamed = te.create_prim_func([A, te.compute((4,), lambda i: A[i] * 2.0, name="other")])
    assert Schedule(func).get_block("B") is not None
    assert structural_equal(func, renamed)
    assert structural_hash(func) == structural_hash(renamed)
    doubled = te.create_prim_func([A, te.compute((4,), lambda i: A[i] * 3.0, name="B")])
    assert not structural_equal(func, doubled)
