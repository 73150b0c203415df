"""tir.PlanAndUpdateBufferAllocationLocation: allocations move to the LCA of their uses,
never inside a loop that carries a reduction through the buffer; results never change."""

import numpy as np

from irlab import te, tir
from irlab.ir.module import IRModule
from irlab.script import tir as T
from irlab.tir import stmt as S
from irlab.tir import transform as tt


def _apply(passes, func):
    mod = IRModule({"main": func})
    for p in passes:
        mod = p(mod)
    return mod["main"]


def _allocs(func):
    """(buffer name, names of the enclosing loops) for every alloc_buffer."""
    found = []

    def walk(node, loops):
        if isinstance(node, S.For):
            walk(node.body, loops + [node.loop_var.name_hint])
        elif isinstance(node, S.BlockRealize):
            found.extend((b.name, tuple(loops)) for b in node.block.alloc_buffers)
            walk(node.block.body, loops)
        elif isinstance(node, S.SeqStmt):
            for s in node.seq:
                walk(s, loops)
        elif isinstance(node, (S.IfThenElse,)):
            walk(node.then_case, loops)
            if node.else_case is not None:
                walk(node.else_case, loops)
        elif hasattr(node, "body"):
            walk(node.body, loops)

    walk(func.body, [])
    return dict(found)


def _same(before, after, seed=0):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(tuple(int(s.value) for s in before.buffer_map[p].shape))
            .astype(before.buffer_map[p].dtype) for p in before.params]
    a, b = [x.copy() for x in args], [x.copy() for x in args]
    tir.run(before, *a)
    tir.run(after, *b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def _tiled_matmul(n=16):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    io, ii = sch.split(i, [None, 4])
    sch.reorder(io, j, kk, ii)
    local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(local, io)
    return sch.mod["main"]


def test_cache_write_buffer_moves_under_the_tile_loop_and_then_compacts():
    func = _tiled_matmul()
    assert _allocs(func)["C_local"] == ()
    lowered_init = _apply([tt.LowerInitBlock()], func)
    moved = _apply([tt.PlanAndUpdateBufferAllocationLocation()], lowered_init)
    assert _allocs(moved)["C_local"] == ("i_0",)
    _same(func, moved)
    compact = _apply([tt.ConvertBlocksToOpaque(), tt.CompactBufferAllocation()], moved)
    shapes = {}
    tir.post_order_visit(compact.body, lambda n: shapes.update(
        {b.name: tuple(int(s.value) for s in b.shape) for b in n.block.alloc_buffers})
        if isinstance(n, S.BlockRealize) else None)
    assert shapes["C_local"] == (4, 16)
    _same(func, compact)


@T.prim_func
def carried(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    acc = T.alloc_buffer((1,))
    for i in range(8):
        for k in range(8):
            with T.block("acc"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    acc[0] = T.float32(0)
                acc[0] = acc[0] + A[vi, vk]
        with T.block("out"):
            vi = T.axis.spatial(8, i)
            B[vi] = acc[0]


def test_a_buffer_carrying_a_reduction_stays_outside_the_reduction_loop():
    lowered_init = _apply([tt.LowerInitBlock()], carried)
    moved = _apply([tt.PlanAndUpdateBufferAllocationLocation()], lowered_init)
    assert _allocs(moved)["acc"] == ("i",)  # under i (spatial), never under k
    _same(carried, moved)
    from irlab import lower

    full = lower(carried)["main"]
    _same(carried, full)


def test_unused_or_root_level_buffers_are_left_alone():
    @T.prim_func
    def two_loops(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        C = T.alloc_buffer((8,))
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = A[vi] * T.float32(2)
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = C[vi] + T.float32(1)

    p = tt.PlanAndUpdateBufferAllocationLocation()
    mod = IRModule({"main": two_loops})
    assert p(mod) is mod  # the LCA is the root block already: nothing to do


def test_an_allocation_moved_into_an_unrolled_loop_gets_one_variable_per_copy():
    """compute_at + unroll: the moved allocation is copied per iteration, each with its own
    variable (found by the random-schedule property test)."""
    from irlab import lower
    from irlab.script import from_source
    from irlab.ir.structural import assert_structural_equal

    n = 4
    A = te.placeholder((n, n), "float32", name="A")
    T0 = te.compute((n, n), lambda i, j: A[i, j] * 2.0, name="T0")
    out = te.compute((n, n), lambda i, j: T0[i, j] + A[i, j], name="out")
    func = te.create_prim_func([A, out])
    sch = tir.Schedule(func)
    sch.compute_at(sch.get_block("T0"), sch.get_loops(sch.get_block("out"))[0])
    sch.unroll(sch.get_loops(sch.get_block("out"))[0])
    lowered = lower(sch.mod)
    allocs = []
    tir.post_order_visit(lowered["main"].body, lambda n: allocs.append(n.buffer_var)
                         if isinstance(n, S.Allocate) else None)
    assert len(allocs) == n and len(set(allocs)) == n
    _same(func, lowered["main"])
    assert_structural_equal(from_source(lowered.script())["main"], lowered["main"])
