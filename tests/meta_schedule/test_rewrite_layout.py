"""ms.postproc.RewriteLayout: weights (``layout_free_buffers``) laid out in the tiled read
order, the copy dropped when the weight is a constant (RemoveWeightLayoutRewriteBlock),
and the Relay build transforming the constant once; numerics checked every time."""

import numpy as np

import irlab as tvm
from irlab import meta_schedule as ms
from irlab import te, topi
from irlab.meta_schedule.arg_info import ArgInfo
from irlab.meta_schedule.postproc import RewriteLayout, apply_postprocs, create_default
from irlab.tir.schedule import Schedule
from irlab.tir.schedule.primitives_layout import IndexMap
from irlab.tir.transform.remove_weight_layout_rewrite_block import (
    remove_weight_layout_rewrite_block)

from ms_workloads import interpret, mlp, run_graph
from test_design_space import inputs

TARGET = "llvm -mcpu=haswell -num-cores=2"


def dense(m=8, n=64, k=32):
    a = te.placeholder((m, k), name="A")
    w = te.placeholder((n, k), name="W")
    return te.create_prim_func([a, w, topi.nn.dense(a, w)])


def tiled_dense(func):
    """j split 4 x 2 x 8 and k 8 x 4, in the order j0 k0 i j1 k1 j2."""
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("T_dense"))
    j0, j1, j2 = sch.split(j, [4, 2, 8])
    k0, k1 = sch.split(k, [8, 4])
    sch.reorder(j0, k0, i, j1, k1, j2)
    sch.enter_postproc()
    return sch


def build_and_run(func, arrays):
    rt = tvm.build(tvm.IRModule({"main": func}), target=TARGET)
    nds = [tvm.nd.array(a) for a in arrays]
    rt["main"](*nds)
    return nds[-1].numpy()


def test_topi_marks_weights_layout_free():
    assert dense().attrs["layout_free_buffers"] == (1,)
    d = te.placeholder((1, 8, 6, 6), name="data")
    w = te.placeholder((16, 8, 3, 3), name="weight")
    conv = te.create_prim_func([d, w, topi.nn.conv2d.conv2d(d, w, (1, 1), (1, 1))])
    assert conv.attrs["layout_free_buffers"] == (1,)


def test_rewrite_layout_follows_the_tiles_and_keeps_numerics():
    func = dense()
    sch = tiled_dense(func)
    assert RewriteLayout().apply(sch)
    text = sch.mod.script()
    assert "meta_schedule.layout_rewrite_preproc" in text
    assert "W_global = T.alloc_buffer((4, 8, 2, 4, 8))" in text  # j0 k0 j1 k1 j2
    arrays = inputs(func)
    want = arrays[0].astype("float64") @ arrays[1].T.astype("float64")
    np.testing.assert_allclose(build_and_run(sch.mod["main"], arrays), want, rtol=1e-4)
    # the trace replays: the rewrite is ordinary instructions
    again = Schedule(func)
    sch.trace.apply_to_schedule(again, remove_postproc=False)
    assert tvm.ir.structural_equal(again.mod, sch.mod)


def test_remove_weight_layout_rewrite_block_takes_the_laid_out_weight():
    func = dense()
    sch = tiled_dense(func)
    RewriteLayout().apply(sch)
    stripped, maps = remove_weight_layout_rewrite_block(sch.mod["main"])
    assert list(maps) == [1]
    weight = stripped.buffer_map[stripped.params[1]]
    assert tuple(int(s) for s in weight.shape) == (4, 8, 2, 4, 8)
    assert "layout_rewrite_preproc" not in stripped.script()
    arrays = inputs(func)
    laid_out = [arrays[0], maps[1].map_ndarray(arrays[1]), arrays[2]]
    want = arrays[0].astype("float64") @ arrays[1].T.astype("float64")
    np.testing.assert_allclose(build_and_run(stripped, laid_out), want, rtol=1e-4)
    assert remove_weight_layout_rewrite_block(func) == (func, {})


def test_rewrite_layout_leaves_untiled_and_fused_nests():
    func = dense()
    sch = Schedule(func)
    sch.enter_postproc()
    RewriteLayout().apply(sch)  # loops already in the weight's order: nothing to do
    assert "_global" not in sch.mod.script()
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("T_dense"))
    sch.reorder(j, i, k)
    sch.fuse(j, i)  # the weight's index is no longer affine in the loops
    sch.enter_postproc()
    RewriteLayout().apply(sch)
    assert "_global" not in sch.mod.script()


def test_index_map_map_ndarray():
    x = np.arange(24).reshape(4, 6)
    y = IndexMap("lambda i, j: (j // 2, i, j % 2)").map_ndarray(x)
    assert y.shape == (3, 4, 2)
    assert y[1, 3, 0] == x[3, 2] and y[2, 0, 1] == x[0, 5]


def test_conv_design_space_with_rewrite_layout():
    """Every design space of a conv, postprocessed with RewriteLayout first, reads a
    laid-out weight; the first computes the same as the bare conv (one build: LLVM on
    unrolled nests is the slow part)."""
    d = te.placeholder((1, 8, 6, 6), name="data")
    w = te.placeholder((16, 8, 3, 3), name="weight")
    func = te.create_prim_func([d, w, topi.nn.conv2d.conv2d(d, w, (1, 1), (1, 1))])
    mod = tvm.IRModule({"main": func})
    postprocs = [RewriteLayout()] + create_default()
    ctx = ms.TuneContext(mod, target=TARGET, task_name="conv", rand_state=1,
                         space_generator=ms.space_generator.PostOrderApply(
                             postprocs=postprocs))
    spaces = ctx.space_generator.generate_design_space(mod)
    assert all(apply_postprocs(sch, ctx.space_generator.postprocs) for sch in spaces)
    assert all("layout_rewrite_preproc" in sch.mod.script() for sch in spaces)
    arrays = inputs(func)
    want = build_and_run(func, [a.copy() for a in arrays])
    np.testing.assert_allclose(build_and_run(spaces[0].mod["main"], arrays), want,
                               rtol=1e-4, atol=1e-4)


def test_compile_relay_lays_out_constant_weights_once():
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params)
    last = next(t for t in tasks if "relu" not in t.task_name)
    sch = Schedule(last.mod)
    i, j, k = sch.get_loops(sch.get_block("T_dense"))
    j0, j1 = sch.split(j, [2, 8])
    k0, k1 = sch.split(k, [16, 4])
    sch.reorder(j0, k0, i, k1, j1)
    sch.enter_postproc()
    RewriteLayout().apply(sch)
    db = ms.database.MemoryDatabase()
    db.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, db.commit_workload(last.mod), [1e-6], "llvm",
        ArgInfo.from_entry_func(last.mod)))
    x = np.random.default_rng(1).uniform(-1, 1, (4, 32)).astype("float32")
    tuned = ms.relay_integration.compile_relay(db, mod, "llvm", params)
    assert any(lf.name.endswith("_weights_laid_out") for lf in tuned.lowered)
    shapes = [v.shape for v in tuned.get_params().values()]
    assert (2, 16, 4, 8, 1) in shapes  # the constant, transformed at build time
    np.testing.assert_allclose(run_graph(tuned, {"x": x}), interpret(mod, params, x),
                               rtol=1e-5, atol=1e-5)


def test_workload_key_ignores_the_layout_free_hint():
    func = dense()
    plain = func.without_attr("layout_free_buffers")
    db = ms.database.MemoryDatabase()
    sch = Schedule(plain)
    db.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, db.commit_workload(plain), [1e-6], "llvm",
        ArgInfo.from_prim_func(plain)))
    assert db.query_tuning_record(func, "llvm") is not None  # a database made before
