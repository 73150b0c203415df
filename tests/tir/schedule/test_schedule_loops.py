"""Schedule getters, split/fuse/reorder, annotations and traces."""

import numpy as np
import pytest

from irlab import te, tir
from irlab.ir.structural import structural_equal
from irlab.tir import Schedule, ScheduleError
from irlab.tir.interpreter import run

N = 16


def matmul():
    A = te.placeholder((N, N), name="A")
    B = te.placeholder((N, N), name="B")
    k = te.reduce_axis((0, N), name="k")
    C = te.compute((N, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def conv2d():
    data = te.placeholder((1, 2, 8, 8), name="data")
    weight = te.placeholder((3, 2, 3, 3), name="weight")
    rc = te.reduce_axis((0, 2), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    out = te.compute(
        (1, 3, 6, 6),
        lambda n, f, y, x: te.sum(data[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx],
                                  axis=[rc, ry, rx]), name="conv")
    return te.create_prim_func([data, weight, out])


def mm_relu():
    A = te.placeholder((N, N), name="A")
    B = te.placeholder((N, N), name="B")
    k = te.reduce_axis((0, N), name="k")
    Y = te.compute((N, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((N, N), lambda i, j: te.max(Y[i, j], tir.const(0, "float32")), name="C")
    return te.create_prim_func([A, B, C])


def outputs(func, seed=0):
    """Run ``func`` on fixed random inputs; the last parameter is the output."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        buf = func.buffer_map[param]
        shape = tuple(int(s.value) for s in buf.shape)
        arrays.append(rng.standard_normal(shape).astype("float32"))
    arrays[-1][...] = 0
    run(func, *arrays)
    return arrays[-1]


def check_same(before, sch):
    np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(before), rtol=1e-5,
                               atol=1e-5)


def check_replay(before, sch):
    replay = Schedule(before)
    sch.trace.apply_to_schedule(replay, remove_postproc=False)
    assert structural_equal(replay.mod["main"], sch.mod["main"])


def check_fails(sch, fn, match=None):
    """``fn`` raises ScheduleError and leaves the module and the (non-getter) trace as is."""
    before = sch.mod["main"]
    n = len([i for i in sch.trace.insts if not i.kind.startswith("get_")])
    with pytest.raises(ScheduleError, match=match):
        fn()
    assert sch.mod["main"] is before
    assert len([i for i in sch.trace.insts if not i.kind.startswith("get_")]) == n


def test_getters():
    sch = Schedule(mm_relu().with_attr("global_symbol", "mm_relu"))
    y = sch.get_block("Y")
    c = sch.get_block("C", func_name="main")
    assert [lp.var.name_hint for lp in sch.get_loops(y)] == ["i", "j", "k"]
    assert [b.name for b in sch.get_producers(c)] == ["Y"]
    assert [b.name for b in sch.get_consumers(y)] == ["C"]
    assert sch.get_consumers(c) == [] and sch.get_producers(y) == []
    root = sch.get_block("root")
    assert [b.name for b in sch.get_child_blocks(root)] == ["Y", "C"]
    i = sch.get_loops(c)[0]
    assert [b.name for b in sch.get_child_blocks(i)] == ["C"]
    assert isinstance(sch.get(i), tir.For) and sch.get(y).name_hint == "Y"
    with pytest.raises(ScheduleError, match="cannot find a block named 'Z'"):
        sch.get_block("Z")
    assert str(sch.trace).splitlines()[:4] == [
        "# from tvm import tir",
        "def apply_trace(sch: tir.Schedule) -> None:",
        '  b0 = sch.get_block(name="Y", func_name="main")',
        '  b1 = sch.get_block(name="C", func_name="main")']


def test_empty_trace_prints_pass():
    assert str(Schedule(matmul()).trace).endswith("-> None:\n  pass")


@pytest.mark.parametrize("make", [matmul, conv2d])
def test_split_fuse_reorder(make):
    func = make()
    sch = Schedule(func)
    block = sch.get_block(func.body.block.body.block.name_hint
                          if False else ("C" if make is matmul else "conv"))
    loops = sch.get_loops(block)
    a, b = sch.split(loops[1], factors=[None, 4])
    c, d, e = sch.split(loops[0], factors=[3, None, 2], preserve_unit_iters=False)
    sch.reorder(b, c, a)
    check_same(func, sch)
    fused = sch.fuse(b, d)
    sch.parallel(e if make is conv2d else fused)
    check_same(func, sch)
    check_replay(func, sch)


def test_split_text_and_trace():
    func = matmul()
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    text = sch.mod.script()
    assert "for i, j_0, k, j_1 in T.grid(16, 4, 16, 4):" in text
    assert "v_j = T.axis.spatial(16, j_0 * 4 + j_1)" in text
    assert str(sch.trace).splitlines()[2:] == [
        '  b0 = sch.get_block(name="C", func_name="main")',
        "  l1, l2, l3 = sch.get_loops(block=b0)",
        "  l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True)",
        "  sch.reorder(l4, l3, l5)"]
    check_replay(func, sch)


def test_uneven_split_adds_predicate():
    func = matmul()
    sch = Schedule(func)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors=[None, 5])
    assert "T.where(i_0 * 5 + i_1 < 16)" in sch.mod.script()
    check_same(func, sch)
    check_replay(func, sch)


def test_fuse_text():
    func = matmul()
    sch = Schedule(func)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.fuse(i, j)
    text = sch.mod.script()
    assert "for i_j_fused, k in T.grid(256, 16):" in text
    assert "v_i = T.axis.spatial(16, i_j_fused // 16)" in text
    assert "v_j = T.axis.spatial(16, i_j_fused % 16)" in text
    check_same(func, sch)


def test_invalid_loop_transformations():
    sch = Schedule(matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    check_fails(sch, lambda: sch.split(i, factors=[None, None]), "at most one factor")
    check_fails(sch, lambda: sch.split(i, factors=[2, 2]), "cover only 4")
    check_fails(sch, lambda: sch.split(i, factors=[0, None]), "positive")
    check_fails(sch, lambda: sch.fuse(i, k), "not the only statement")
    check_fails(sch, lambda: sch.reorder(i, i), "given twice")
    sch.split(j, factors=[4, 4])
    check_fails(sch, lambda: sch.split(j, factors=[4, 4]), "not in the function")
    check_fails(sch, lambda: sch.parallel(k), "reduction iter v_k of block C")
    check_fails(sch, lambda: sch.vectorize(k), "reduction")
    check_fails(sch, lambda: sch.bind(k, "threadIdx.x"), "reduction")


def test_reorder_needs_a_chain():
    func = mm_relu()
    sch = Schedule(func)
    iy = sch.get_loops(sch.get_block("Y"))[0]
    ic = sch.get_loops(sch.get_block("C"))[0]
    check_fails(sch, lambda: sch.reorder(iy, ic), "not")


def test_annotations():
    func = conv2d()
    sch = Schedule(func)
    block = sch.get_block("conv")
    n, f, y, x, rc, ry, rx = sch.get_loops(block)
    sch.parallel(f)
    sch.vectorize(x)
    sch.unroll(rx)
    sch.bind(y, "threadIdx.x")
    sch.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
    sch.annotate(ry, "pragma_auto_unroll_max_step", 16)
    text = sch.mod.script()
    assert "T.parallel(3)" in text and "T.vectorized(6)" in text and "T.unroll(3)" in text
    assert 'T.thread_binding(6, thread="threadIdx.x")' in text
    assert '"meta_schedule.tiling_structure": "SSRSRS"' in text
    check_same(func, sch)
    check_replay(func, sch)
    lines = str(sch.trace).splitlines()
    assert '  sch.bind(loop=l3, thread_axis="threadIdx.x")' in lines
    assert ('  sch.annotate(block_or_loop=b0, ann_key="meta_schedule.tiling_structure", '
            'ann_val="SSRSRS")') in lines
    sch.unannotate(ry, "pragma_auto_unroll_max_step")
    check_fails(sch, lambda: sch.unannotate(ry, "nope"), "no annotation")


def test_copy_is_independent():
    sch = Schedule(matmul())
    i, _, _ = sch.get_loops(sch.get_block("C"))
    other = sch.copy()
    other.split(i, factors=[4, 4])
    assert len(sch.trace.insts) == 2 and len(other.trace.insts) == 3
    assert not structural_equal(sch.mod["main"], other.mod["main"])
    sch.split(i, factors=[2, 8])  # the handle still resolves in the original


def test_random_split_fuse_reorder_sequences():
    rng = np.random.default_rng(7)
    func = matmul()
    for _ in range(6):
        sch = Schedule(func)
        loops = sch.get_loops(sch.get_block("C"))
        for _ in range(4):
            op = rng.integers(3)
            if op == 0:
                lp = loops.pop(rng.integers(len(loops)))
                extent = int(sch.get(lp).extent.value)
                factor = int(rng.integers(1, extent + 1))
                loops += sch.split(lp, factors=[None, factor])
            elif op == 1:
                order = [loops[p] for p in rng.permutation(len(loops))]
                sch.reorder(*order)
            elif len(loops) > 1:
                chain = sch.get_loops(sch.get_block("C"))
                pos = int(rng.integers(len(chain) - 1))
                fused = sch.fuse(chain[pos], chain[pos + 1])
                loops = [lp for lp in loops if lp.var not in (chain[pos].var,
                                                             chain[pos + 1].var)]
                loops.append(fused)
            loops = sch.get_loops(sch.get_block("C"))
        check_same(func, sch)
        check_replay(func, sch)


def test_get_sref_wraps_the_statement():
    from irlab.tir.schedule import StmtSRef

    sch = Schedule(mm_relu())
    sref = sch.get_sref(sch.get_block("Y"))
    assert isinstance(sref, StmtSRef) and sref.stmt.name_hint == "Y"
    assert isinstance(sch.get_sref(sch.get_loops(sch.get_block("Y"))[0]).stmt, tir.For)
    assert "Y" in repr(sref)


def test_fuse_three_loops_writes_tvm_bindings():
    """The middle of three fused loops is bound as (fused % (16 * 16)) // 16, TVM's form."""
    func = matmul()
    sch = Schedule(func)
    sch.fuse(*sch.get_loops(sch.get_block("C")))
    text = sch.mod.script()
    assert "T.axis.remap" not in text
    assert "i_j_k_fused // 256" in text and "i_j_k_fused % 256 // 16" in text
    assert "i_j_k_fused % 16" in text
    check_same(func, sch)
    check_replay(func, sch)


def test_split_guard_keeps_tvm_nesting():
    """A split that overshoots guards its block with the new vars nested as written
    (``(i_0 * 3 + i_1) * 2 + i_2 < 16``) while the binding is simplified."""
    func = matmul()
    sch = Schedule(func)
    sch.split(sch.get_loops(sch.get_block("C"))[0], [3, 3, 2])
    text = sch.mod.script()
    assert "T.where((i_0 * 3 + i_1) * 2 + i_2 < 16)" in text
    assert "i_0 * 6 + i_1 * 2 + i_2" in text
    check_same(func, sch)
    check_replay(func, sch)
