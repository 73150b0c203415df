"""The LLVM codegen's vector loads at strided and clamped ramps: a stride of 2 to
MAX_LOAD_STRIDE is one masked contiguous load and a shuffle (its tail past the last lane
masked off), a ``max/min``-clamped ramp (a vectorized padding) a branch between the plain
ramp load and a lane-by-lane load; both compute what numpy does, on AVX2 and AVX-512 code."""

import numpy as np
import pytest

import irlab
from irlab import te, tir
from irlab.target.llvm_contract import MAX_LOAD_STRIDE

TARGETS = ["llvm", "llvm -mcpu=znver3"]  # the host's ISA, and AVX2 code (runs on any host here)


def _vectorized(compute_shape, make, inputs, lanes):
    outs = te.compute(compute_shape, make, name="B")
    sch = tir.Schedule(te.create_prim_func(inputs + [outs]).with_attr("global_symbol", "f"))
    loop = sch.get_loops(sch.get_block("B"))[-1]
    _, inner = sch.split(loop, [None, lanes])
    sch.vectorize(inner)
    return sch.mod


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stride,lanes,dtype", [(2, 16, "float32"), (3, 8, "float32"),
                                                (2, 4, "float64"), (4, 8, "int32"),
                                                (2, 3, "float32")])
def test_strided_loads(target, stride, lanes, dtype):
    n = 6 * lanes
    # the last lane read is the buffer's last element: the span's tail must not be read
    size = stride * (n - 1) + 2
    A = te.placeholder((size,), dtype, name="A")
    mod = _vectorized((n,), lambda i: A[i * stride] + A[i * stride + 1], [A], lanes)
    lib = irlab.build(mod, target=target)
    assert stride > MAX_LOAD_STRIDE or "llvm.masked.load" in lib.get_source("ll")
    a = (np.arange(size) * 1.5).astype(dtype)
    b = np.zeros(n, dtype)
    lib["f"](a, b)
    np.testing.assert_array_equal(b, a[0:stride * n:stride] + a[1:stride * n:stride])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stride", [1, 2])
def test_clamped_ramp_loads_at_both_borders(target, stride):
    """``A[min(max(stride * i - 1, 0), n - 1)]``: the first and last vectors clamp some lanes
    (lane by lane), the others read the plain ramp."""
    n, lanes = 40, 8
    size = stride * n - 4  # the last vector runs past the end: clamped there too
    A = te.placeholder((size,), "float32", name="A")

    def clamp(i):
        return A[irlab.tir.op.min(irlab.tir.op.max(stride * i - 1, 0), size - 1)]

    mod = _vectorized((n,), clamp, [A], lanes)
    lib = irlab.build(mod, target=target)
    assert "T.max(T.Ramp(" in lib.get_source("tir")  # the clamped ramp the codegen meets
    a = np.random.default_rng(stride).standard_normal(size).astype("float32")
    b = np.zeros(n, "float32")
    lib["f"](a, b)
    idx = np.clip(stride * np.arange(n) - 1, 0, size - 1)
    np.testing.assert_array_equal(b, a[idx])
