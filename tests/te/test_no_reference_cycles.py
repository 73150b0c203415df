"""The compiler's hot helpers leave no reference cycles behind: relay.build runs with the
cyclic collector paused, so a cycle would keep what it holds (memo tables, expressions) alive
until the build ends, and then cost a collection."""

import gc

from irlab import te, tir
from irlab.arith import Analyzer


def _garbage_left_by(fn):
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        fn()
        return gc.collect()
    finally:
        if was_enabled:
            gc.enable()


def test_simplify_renaming_a_cached_result_leaves_no_cycle():
    def simplify_twice():
        for name in ("i", "k"):  # the second finds the first's result and renames it
            an = Analyzer()
            v = tir.Var(name)
            an.bind(v, tir.Range(8))
            an.simplify((v * 4 + 3) // 4 + (v * 4 + 3) % 4)

    simplify_twice()  # warm the shared cache, the rule tables and the imports
    assert _garbage_left_by(simplify_twice) == 0


def test_create_prim_func_leaves_no_cycle():
    # (a TE graph is a cycle of its own, tensor <-> operation: built outside the count)
    A = te.placeholder((16, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    B = te.compute((16,), lambda i: te.sum(A[i, k] * 2.0, axis=k), name="B")
    C = te.compute((16,), lambda i: B[i] + 1.0, name="C")
    te.create_prim_func([A, C])
    assert _garbage_left_by(lambda: te.create_prim_func([A, C])) == 0
