"""The LLVM code generator on every schedule primitive's output (issue 7).

Each scheduled module is compiled with ``irlab.build(target="llvm")`` and run on random
inputs; the reference is the TIR interpreter on the *unscheduled* workload. The primitive
applications are the ones of the schedule tests (``tests/tir/schedule``: the matrix of every
primitive x {matmul, conv2d, softmax}), imported, not copied; on top of them, CPU-style
composite schedules (tiling + parallel + vectorize + unroll + cache_write + decompose_reduction,
...) and random schedules drawn by ``irlab.testing.tir_strategies``.
"""

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irlab
from irlab.errors import CodegenError
from irlab.testing.tir_strategies import loop_nests, schedules
from irlab.tir import Schedule
from irlab.tir.interpreter import run

# The schedule tests are plain modules of tests/tir/schedule (no packages): import them as
# pytest does (rootdir-relative "prepend" import), so the module objects are shared.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tir", "schedule"))
import test_schedule_matrix as matrix  # noqa: E402
from test_schedule_loops import conv2d, matmul, mm_relu  # noqa: E402

TARGET = "llvm -num-cores=2"


def inputs(func, seed=0):
    """Random float32 arrays for the buffer params; the last (the output) zeroed."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        shape = tuple(int(s.value) for s in func.buffer_map[param].shape)
        arrays.append(rng.standard_normal(shape).astype("float32"))
    arrays[-1][...] = 0
    return arrays


_REFERENCE = {}


def reference(func, key=None):
    """The interpreter's output of ``func`` on ``inputs(func)`` (memoized by ``key``)."""
    if key is not None and key in _REFERENCE:
        return _REFERENCE[key]
    arrays = inputs(func)
    run(func, *arrays)
    if key is not None:
        _REFERENCE[key] = arrays[-1]
    return arrays[-1]


def compiled_output(mod_or_sch, args=None):
    sch_mod = mod_or_sch.mod if isinstance(mod_or_sch, Schedule) else mod_or_sch
    func = sch_mod["main"]
    module = irlab.build(sch_mod, target=TARGET)
    arrays = args if args is not None else inputs(func)
    module["main"](*arrays)
    return arrays[-1], module


def check(func, sch, key=None, rtol=1e-5, atol=1e-5):
    got, module = compiled_output(sch)
    np.testing.assert_allclose(got, reference(func, key), rtol=rtol, atol=atol,
                               err_msg=sch.mod.script())
    return module


# -- (1) every cell of the schedule matrix -------------------------------------------------

def _cells():
    out = []
    for prim in matrix.PRIMITIVES:
        for wl in matrix.WORKLOADS:
            out.append(pytest.param(prim, wl, id=f"{prim}-{wl}"))
    return out


@pytest.mark.parametrize("prim,wl", _cells())
def test_schedule_matrix_cell(prim, wl):
    func = matrix.workload(wl)
    sch = Schedule(func)
    apply, _ = matrix.CELLS[(prim, wl)]
    apply(sch)
    if prim == "bind":
        # GPU thread bindings cannot run on the CPU: a clean CodegenError, no crash
        with pytest.raises(CodegenError, match="GPU thread"):
            irlab.build(sch.mod, target=TARGET)
        return
    module = check(func, sch, key=wl)
    text = module.get_source("ll-raw")
    if prim == "parallel":
        assert "__irlab_parallel_for" in text
    if prim == "vectorize" and wl != "conv2d":  # conv's x loop holds loops: scalarized
        assert "<16 x float>" in text


def test_matrix_covers_every_primitive():
    assert set(matrix.PRIMITIVES) >= {
        "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "compute_inline",
        "reverse_compute_inline", "compute_at", "reverse_compute_at", "decompose_reduction",
        "rfactor", "cache_read", "cache_write", "blockize", "transform_layout"}


# -- composite CPU schedules ---------------------------------------------------------------

def test_matmul_tiled_parallel_vectorized():
    """TVM's CPU matmul recipe: tile, parallel outer, cache_write + reverse_compute_at,
    decompose_reduction, vectorize the inner init/update/write-back, unroll."""
    func = mm_relu()
    sch = Schedule(func)
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 8])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    ij = sch.fuse(i0, j0)
    sch.parallel(ij)
    sch.unroll(k1)
    sch.vectorize(j1)
    c = sch.get_block("C")
    sch.reverse_compute_at(c, ij)
    sch.vectorize(sch.get_loops(c)[-1])
    init = sch.decompose_reduction(y, k0)
    sch.vectorize(sch.get_loops(init)[-1])
    module = check(func, sch, key="mm_relu")
    assert "__irlab_parallel_for" in module.get_source("ll-raw")


def test_matmul_cache_write_local_tile():
    func = matmul()
    sch = Schedule(func)
    block = sch.get_block("C")
    cw = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 2])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(cw, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    check(func, sch, key="plain_matmul")


def test_matmul_cache_read_compute_at():
    func = matmul()
    sch = Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    b_shared = sch.cache_read(block, 1, "shared")
    sch.compute_at(b_shared, k)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.vectorize(j1)
    sch.parallel(i)
    check(func, sch, key="plain_matmul")


def test_matmul_rfactor_parallel_vectorized():
    func = matmul()
    sch = Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    k0, k1 = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(k1, 0)
    sch.parallel(sch.get_loops(rf)[0])
    sch.vectorize(sch.get_loops(block)[1])
    check(func, sch, key="plain_matmul", rtol=1e-4, atol=1e-4)


def test_matmul_transform_layout_param_and_intermediate():
    func = mm_relu()
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("Y"), ("write", 0), lambda i, j: (j // 4, i, j % 4))
    sch.vectorize(sch.get_loops(sch.get_block("C"))[1])
    check(func, sch, key="mm_relu")
    # a parameter's layout: B is then passed transposed
    sch = Schedule(matmul())
    sch.transform_layout(sch.get_block("C"), ("read", 1), lambda k, j: (j, k))
    a, b, c = inputs(matmul())
    got, _ = compiled_output(sch, [a, np.ascontiguousarray(b.T), c])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_conv2d_padded_tiled_vectorized():
    func = matrix.workload("conv2d")
    sch = Schedule(func)
    conv = sch.get_block("conv")
    loops = sch.get_loops(conv)
    sch.compute_at(sch.get_block("pad"), loops[2])
    sch.reverse_compute_inline(sch.get_block("relu"))
    sch.parallel(loops[1])
    x0, x1 = sch.split(sch.get_loops(conv)[3], factors=[None, 4])  # uneven: predicate
    sch.reorder(*sch.get_loops(conv)[5:], x1)
    sch.decompose_reduction(conv, sch.get_loops(conv)[4])
    check(func, sch, key="conv2d")


def test_conv2d_unrolled_reductions_fused():
    func = conv2d()
    sch = Schedule(func)
    conv = sch.get_block("conv")
    n, f, y, x, rc, ry, rx = sch.get_loops(conv)
    fused = sch.fuse(n, f, y)
    sch.parallel(fused)
    sch.unroll(ry)
    sch.unroll(rx)
    init = sch.decompose_reduction(conv, rc)
    sch.vectorize(sch.get_loops(init)[-1])
    check(func, sch, key="conv2d_plain")


def test_softmax_parallel_rows_vectorized():
    func = matrix.workload("softmax")
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("ex"))
    sch.reverse_compute_inline(sch.get_block("res"))
    out = sch.get_block("out")
    row = sch.get_loops(out)[0]
    for name in ("sm", "mx"):
        sch.compute_at(sch.get_block(name), row)
    sch.parallel(row)
    sch.vectorize(sch.get_loops(out)[-1])
    check(func, sch, key="softmax")


# -- (2) random programs and random schedules ----------------------------------------------

@st.composite
def scheduled(draw):
    func = draw(loop_nests())
    return draw(schedules(func))


@settings(max_examples=50, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(scheduled())
def test_random_schedules_compile_to_the_same_results(case):
    func = case.func
    log = "\n".join(f"  {d}" + ("" if e is None else f" -> {e}") for d, e, _ in case.log)
    got, _ = compiled_output(case.sch)
    np.testing.assert_allclose(got, reference(func), rtol=1e-5, atol=1e-5,
                               err_msg=log + "\n" + case.sch.mod.script())
