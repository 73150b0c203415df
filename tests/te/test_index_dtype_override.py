"""``te.create_prim_func(..., index_dtype_override="int64")``: int64 indices everywhere, the
same results as the int32 function."""

import numpy as np
import pytest

from irlab import te
from irlab.errors import TIRError
from irlab.tir import stmt as S
from irlab.tir.functor import post_order_visit
from irlab.tir.interpreter import run as run_prim_func


def _matmul_padded():
    k = te.reduce_axis((0, 8), "k")
    A = te.placeholder((6, 8), name="A")
    B = te.placeholder((8, 5), name="B")
    C = te.compute((6, 5), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C",
                   attrs={"layout_free_placeholders": [B]})
    D = te.compute((6, 5), lambda i, j: te.if_then_else(j >= 1, C[i, j], C[i, j] * 2) +
                   te.const(1, "float32") * (i % 3).astype("float32"), name="D",
                   attrs={"layout_free_placeholders": [C]})
    return [A, B, D]


def test_int64_indices_compute_what_int32_ones_do():
    f32 = te.create_prim_func(_matmul_padded())
    f64 = te.create_prim_func(_matmul_padded(), index_dtype_override="int64")
    dtypes = set()

    def collect(n):
        if isinstance(n, S.For):
            dtypes.update((n.loop_var.dtype, n.extent.dtype))
        elif isinstance(n, S.Block):
            dtypes.update(iv.var.dtype for iv in n.iter_vars)
            dtypes.update(d.dtype for b in n.alloc_buffers for d in b.shape)
        elif isinstance(n, S.BufferStore):
            dtypes.update(i.dtype for i in n.indices)

    post_order_visit(f64.body, collect)
    assert dtypes == {"int64"}
    assert {d.dtype for b in f64.buffer_map.values() for d in b.shape} == {"int64"}
    block_d = f64.body.block.body.seq[1].body.body.block
    (buf,) = dict(block_d.annotations)["layout_free_placeholders"]
    assert buf is f64.body.block.alloc_buffers[0]  # the annotation names the int64 buffer
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 8), "float32"), rng.standard_normal((8, 5), "float32")
    out32, out64 = np.zeros((6, 5), "float32"), np.zeros((6, 5), "float32")
    run_prim_func(f32, a, b, out32)
    run_prim_func(f64, a, b, out64)
    np.testing.assert_allclose(out64, out32, rtol=1e-6)
    expected = np.where(np.arange(5) >= 1, a @ b, 2 * (a @ b)) + (np.arange(6) % 3)[:, None]
    np.testing.assert_allclose(out64, expected, rtol=1e-5, atol=1e-5)


def test_other_index_dtypes_are_refused():
    with pytest.raises(TIRError, match="int32 or int64"):
        te.create_prim_func(_matmul_padded(), index_dtype_override="int16")
