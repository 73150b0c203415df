"""ForceNarrowIndexToInt32: int64 shapes, loops, constants and casts become int32; the
function computes the same (TIR interpreter and compiled code), int64 data is refused."""

import numpy as np
import pytest

import irlab as tvm
from irlab import tir
from irlab.errors import IrlabError
from irlab.ir import IRModule
from irlab.script import tir as T
from irlab.tir.functor import post_order_visit
from irlab.tir.transform import ForceNarrowIndexToInt32
from irlab.tir.transform.force_narrow_index import (force_narrow_index_to_int32,
                                                    has_int64_index)


@T.prim_func
def shift_rows(a: T.handle, b: T.handle):
    """B[i, j] = A[i, (j + 1) % m] * float(i) + 2, with int64 dims, loops and constants."""
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n, m), "float32")
    tmp = T.alloc_buffer((n, m), "float32")
    for i, j in T.grid(n, m):
        with T.block("shift"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = A[vi, T.floormod(vj + T.int64(1), m)] * T.Cast("float32", vi)
    for i, j in T.grid(n, m):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = tmp[vi, vj] + T.float32(2)


def _dtypes(func) -> set:
    """The dtypes of the integer variables and constants of ``func``."""
    found = set()

    def record(node):
        if isinstance(node, (tir.Var, tir.IntImm)) and node.dtype.startswith("int"):
            found.add(node.dtype)

    for buffer in func.buffer_map.values():
        for dim in buffer.shape:
            post_order_visit(dim, record)
    post_order_visit(func.body, record)
    return found


def _expected(a):
    return np.roll(a, -1, axis=1) * np.arange(a.shape[0], dtype="float32")[:, None] + 2


def test_int64_indices_become_int32():
    assert has_int64_index(shift_rows)
    narrowed = force_narrow_index_to_int32(shift_rows)
    assert _dtypes(shift_rows) == {"int64"}
    assert _dtypes(narrowed) == {"int32"}
    assert not has_int64_index(narrowed)
    assert force_narrow_index_to_int32(narrowed) is narrowed  # nothing left to do
    text = narrowed.script()
    assert "T.int64" not in text and "n = T.int32()" in text


@pytest.mark.parametrize("shape", [(3, 5), (1, 1), (4, 2)])
def test_narrowed_function_computes_the_same(shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype("float32")
    narrowed = force_narrow_index_to_int32(shift_rows)
    for func in (shift_rows, narrowed):
        b = np.zeros(shape, "float32")
        tir.run(func, a, b)
        np.testing.assert_allclose(b, _expected(a), rtol=1e-6)
    lib = tvm.build(narrowed.with_attr("global_symbol", "shift_rows"), target="llvm")
    b = tvm.nd.array(np.zeros(shape, "float32"))
    lib["shift_rows"](tvm.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), _expected(a), rtol=1e-6)


def test_pass_form_narrows_every_prim_func():
    mod = IRModule({"shift_rows": shift_rows})
    new = ForceNarrowIndexToInt32()(mod)
    assert _dtypes(new["shift_rows"]) == {"int32"}
    assert ForceNarrowIndexToInt32()(new) is new  # unchanged module, same object


def test_int64_data_is_refused():
    @T.prim_func
    def copy_int64(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "int64")
        B = T.match_buffer(b, (n,), "int64")
        for i in range(n):
            with T.block("copy"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + T.int64(1)

    with pytest.raises(IrlabError, match="int64 buffer A"):
        force_narrow_index_to_int32(copy_int64)


def test_constant_out_of_int32_is_refused():
    @T.prim_func
    def big(a: T.handle):
        A = T.match_buffer(a, (T.int64(4),), "float32")
        for i in range(T.int64(4)):
            with T.block("big"):
                vi = T.axis.spatial(T.int64(4), i)
                A[vi] = T.Cast("float32", vi + T.int64(2 ** 40))

    with pytest.raises(IrlabError, match="1099511627776"):
        force_narrow_index_to_int32(big)


def test_int64_data_with_int32_indices_is_left_alone():
    """``take``'s kernel: int64 index *values* read from a buffer, int32 loops and shapes."""
    @T.prim_func
    def gather(a: T.handle, i: T.handle, b: T.handle):
        A = T.match_buffer(a, (8,), "float32")
        Idx = T.match_buffer(i, (3,), "int64")
        B = T.match_buffer(b, (3,), "float32")
        for j in range(3):
            with T.block("B"):
                vj = T.axis.spatial(3, j)
                B[vj] = A[T.Cast("int32", T.max(Idx[vj], T.int64(0)))]

    assert not has_int64_index(gather)
    assert force_narrow_index_to_int32(gather) is gather
