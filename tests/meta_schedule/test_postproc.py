"""The postprocessors, one by one, on small hand-made schedules."""

import numpy as np

from irlab import meta_schedule as ms
from irlab import te
from irlab.tir.schedule import Schedule, ScheduleError

from test_design_space import gemm, outputs


def test_rewrite_reduction_block():
    func = gemm()
    sch = Schedule(func)
    assert ms.postproc.RewriteReductionBlock().apply(sch)
    assert 'T.block("C_init")' in sch.mod.script()
    np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(func), rtol=1e-5)


def test_rewrite_parallel_vectorize_unroll():
    func = gemm(16, 16, 8)
    sch = Schedule(func)
    root = sch.get_block("root")
    sch.annotate(root, "meta_schedule.parallel", 8)
    sch.annotate(root, "meta_schedule.vectorize", 16)
    sch.annotate(root, "meta_schedule.unroll_explicit", 8)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(i, k, j)  # j innermost: the vector loop, one vector of 16 lanes (AVX-512)
    assert ms.postproc.RewriteParallelVectorizeUnroll(lanes=16).apply(sch)
    text = sch.mod.script()
    assert "T.parallel(16)" in text and "T.vectorized(16)" in text and "T.unroll(8)" in text
    assert "meta_schedule" not in text  # the marks are consumed
    np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(func), rtol=1e-5)


def test_disallow_dynamic_loop():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    assert not ms.postproc.DisallowDynamicLoop().apply(Schedule(te.create_prim_func([A, B])))
    assert ms.postproc.DisallowDynamicLoop().apply(Schedule(gemm()))


def test_verify_vectorization():
    sch = Schedule(gemm())
    i, j, k = sch.get_loops(sch.get_block("C"))
    good = sch.copy()
    good.reorder(i, k, j)
    good.vectorize(good.get_loops(good.get_block("C"))[-1])
    for check in (ms.postproc.VerifyVectorization(), ms.postproc.VerifyVectorization(lower=True)):
        assert check.apply(good)
    bad = sch.copy()
    bad.vectorize(bad.get_loops(bad.get_block("C"))[1])  # j, with the k loop inside
    assert not ms.postproc.VerifyVectorization().apply(bad)
    wide = gemm(8, 128, 4)
    wide_sch = Schedule(wide)
    i, j, k = wide_sch.get_loops(wide_sch.get_block("C"))
    wide_sch.reorder(i, k, j)
    wide_sch.vectorize(j)
    assert not ms.postproc.VerifyVectorization(max_lanes=64).apply(wide_sch)


def test_apply_postprocs_rejects_on_schedule_errors():
    class Failing(ms.postproc.Postproc):
        def apply(self, sch):
            raise ScheduleError("cannot")

    sch = Schedule(gemm())
    assert not ms.postproc.apply_postprocs(sch, [Failing()])
    assert sch.trace.insts[-1].kind == "enter_postproc"
    assert [type(p).__name__ for p in ms.postproc.Postproc.create("llvm")] == [
        "DisallowDynamicLoop", "RewriteParallelVectorizeUnroll", "RewriteReductionBlock",
        "VerifyVectorization"]


def test_vector_loop_fuses_only_contiguous_loops():
    # i1, j1 innermost: C[i, j] is contiguous in j only, so fusing i1 too would gather and
    # scatter (TVM's max_fusible); only j1 (stride 1) becomes the vector loop.
    func = gemm(16, 16, 8)
    sch = Schedule(func)
    sch.annotate(sch.get_block("root"), "meta_schedule.vectorize", 64)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [4, 4])
    j0, j1 = sch.split(j, [2, 8])
    sch.reorder(k, i0, j0, i1, j1)
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    text = sch.mod.script()
    assert "T.vectorized(8)" in text and "T.vectorized(32)" not in text
    np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(func), rtol=1e-5)


def test_unroll_counts_every_block_under_a_shared_loop():
    # The copy block of a cache write shares the outer tile loop with the GEMM's nest: its
    # own loops fit the unroll budget, but unrolling the shared loop would copy the whole
    # reduction nest (TVM's auto_max_step counts a loop's whole body).
    func = gemm(16, 16, 8)
    sch = Schedule(func)
    sch.annotate(sch.get_block("root"), "meta_schedule.unroll_explicit", 256)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [4, 4])
    sch.reorder(i0, j, k, i1)
    sch.reverse_compute_at(sch.cache_write(block, 0, "global"), i0)
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    loops = {loop.loop_var.name_hint: loop.kind.name for loop in _loops(sch.mod["main"])}
    assert loops["i_0"] == "SERIAL" and loops["i_1"] == loops["k"] == "UNROLLED", loops
    np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(func), rtol=1e-5)


def _loops(func):
    from irlab.tir import stmt as S
    from irlab.tir.schedule import primitives_getters as G

    return [node for node, _ in G.walk(func.body) if isinstance(node, S.For)]
