"""compute_inline, reverse_compute_inline, compute_at, reverse_compute_at,
decompose_reduction, and the MLC-course mm_relu schedule."""

import numpy as np
import pytest

from irlab import te, tir
from irlab.script import tir as T
from irlab.tir import Schedule
from irlab.tir.interpreter import run

from test_schedule_loops import (N, check_fails, check_replay, check_same, conv2d, matmul,
                                 mm_relu, outputs)


def softmax_like():
    """Row max, exp(x - max), row sum, divide: four blocks with reductions."""
    A = te.placeholder((N, N), name="A")
    k = te.reduce_axis((0, N), name="k")
    mx = te.compute((N,), lambda i: te.max(A[i, k], axis=k), name="mx")
    ex = te.compute((N, N), lambda i, j: te.exp(A[i, j] - mx[i]), name="ex")
    k2 = te.reduce_axis((0, N), name="k2")
    sm = te.compute((N,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    out = te.compute((N, N), lambda i, j: ex[i, j] / sm[i], name="out")
    return te.create_prim_func([A, out])


def padded_conv():
    """conv2d reading a padded copy and followed by a bias add (inlinable blocks)."""
    data = te.placeholder((1, 2, 6, 6), name="data")
    weight = te.placeholder((3, 2, 3, 3), name="weight")
    pad = te.compute((1, 2, 8, 8), lambda n, c, y, x: tir.if_then_else(
        tir.all(y >= 1, y < 7, x >= 1, x < 7), data[n, c, y - 1, x - 1],
        tir.const(0, "float32")), name="pad")
    rc = te.reduce_axis((0, 2), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    conv = te.compute((1, 3, 6, 6), lambda n, f, y, x: te.sum(
        pad[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx], axis=[rc, ry, rx]), name="conv")
    bias = te.compute((1, 3, 6, 6), lambda n, f, y, x: conv[n, f, y, x] + 1.0, name="bias")
    relu = te.compute((1, 3, 6, 6), lambda n, f, y, x: te.max(bias[n, f, y, x], 0.0),
                      name="relu")
    return te.create_prim_func([data, weight, relu])


def test_softmax_reference():
    a = np.random.default_rng(0).standard_normal((N, N)).astype("float32")
    out = np.zeros_like(a)
    run(softmax_like(), a, out)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_compute_inline_and_reverse():
    func = padded_conv()
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("pad"))
    text = sch.mod.script()
    assert 'T.block("pad")' not in text and "pad = T.alloc_buffer" not in text
    assert "data[v_n, v_rc, v_y + v_ry - 1, v_x + v_rx - 1])" in text
    check_same(func, sch)
    check_replay(func, sch)
    sch2 = Schedule(func)
    check_fails(sch2, lambda: sch2.reverse_compute_inline(sch2.get_block("bias")),
                "conv is a reduction block")
    sch2.reverse_compute_inline(sch2.get_block("relu"))
    text = sch2.mod.script()
    assert 'T.block("relu")' not in text and "bias = T.alloc_buffer" not in text
    assert "relu[v_n, v_f, v_y, v_x] = T.max(conv[v_n, v_f, v_y, v_x] + T.float32(1)" in text
    check_same(func, sch2)
    check_replay(func, sch2)
    check_fails(sch2, lambda: sch2.compute_inline(sch2.get_block("bias")), "output buffer")


def test_softmax_inline():
    func = softmax_like()
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("ex"))
    check_same(func, sch)
    check_replay(func, sch)
    sch = Schedule(func)
    check_fails(sch, lambda: sch.reverse_compute_inline(sch.get_block("out")), "producers")


def test_inline_errors():
    sch = Schedule(mm_relu())
    check_fails(sch, lambda: sch.compute_inline(sch.get_block("Y")), "reduction block")
    check_fails(sch, lambda: sch.compute_inline(sch.get_block("C")), "output buffer")
    check_fails(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")), "reduction")
    check_fails(sch, lambda: sch.reverse_compute_inline(sch.get_block("Y")), "reduction")


def test_compute_at_matmul_relu():
    func = mm_relu()
    sch = Schedule(func)
    i, j = sch.get_loops(sch.get_block("C"))
    j0, _ = sch.split(j, factors=[None, 4])
    sch.compute_at(sch.get_block("Y"), j0)
    text = sch.mod.script()
    assert "for ax0, ax1 in T.grid(4, 16):" in text
    assert "v_j = T.axis.spatial(16, j_0 * 4 + ax0)" in text
    check_same(func, sch)
    check_replay(func, sch)


def test_compute_at_softmax():
    func = softmax_like()
    sch = Schedule(func)
    i = sch.get_loops(sch.get_block("out"))[0]
    sch.compute_at(sch.get_block("sm"), i)
    sch.compute_at(sch.get_block("ex"), i)
    sch.compute_at(sch.get_block("mx"), i, preserve_unit_loops=True)
    check_same(func, sch)
    check_replay(func, sch)
    assert len(sch.mod.script().split("for i in range(16):")) == 2  # one outer loop left


def test_reverse_compute_at_conv():
    func = padded_conv()
    sch = Schedule(func)
    loops = sch.get_loops(sch.get_block("conv"))
    sch.reverse_compute_at(sch.get_block("bias"), loops[2])
    check_same(func, sch)
    check_replay(func, sch)


def test_compute_at_errors():
    sch = Schedule(mm_relu())
    y, c = sch.get_block("Y"), sch.get_block("C")
    iy, jy, ky = sch.get_loops(y)
    ic, jc = sch.get_loops(c)
    check_fails(sch, lambda: sch.compute_at(y, iy), "already under loop")
    check_fails(sch, lambda: sch.compute_at(c, iy), "no consumer")
    check_fails(sch, lambda: sch.reverse_compute_at(y, ic), "no producer")
    check_fails(sch, lambda: sch.compute_at(y, jc, index=5), "past the")
    sch2 = Schedule(softmax_like())
    i = sch2.get_loops(sch2.get_block("sm"))[0]
    check_fails(sch2, lambda: sch2.compute_at(sch2.get_block("ex"), i),
                "consumer out of block ex is not under loop i")


def test_decompose_reduction():
    func = conv2d()
    sch = Schedule(func)
    block = sch.get_block("conv")
    loops = sch.get_loops(block)
    init = sch.decompose_reduction(block, loops[2])
    assert init.name == "conv_init"
    text = sch.mod.script()
    assert 'T.block("conv_init")' in text and "with T.init()" not in text
    check_same(func, sch)
    check_replay(func, sch)
    sch = Schedule(func)
    block = sch.get_block("conv")
    loops = sch.get_loops(block)
    check_fails(sch, lambda: sch.decompose_reduction(block, loops[5]), "drives the reduction")
    sch2 = Schedule(mm_relu())
    c = sch2.get_block("C")
    check_fails(sch2, lambda: sch2.decompose_reduction(c, sch2.get_loops(c)[0]), "no init")
    y = sch2.get_block("Y")
    check_fails(sch2, lambda: sch2.decompose_reduction(y, sch2.get_loops(c)[0]),
                "not an ancestor")


def test_mlc_course_mm_relu():
    """The schedule from the MLC course (seed 001), in TVM's output form."""
    func = mm_relu().with_attr("global_symbol", "mm_relu")
    mod = tir.Schedule(func).mod
    from irlab.ir.module import IRModule

    mod = IRModule({"mm_relu": func})
    sch = Schedule(mod)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    sch.decompose_reduction(block_Y, k)
    text = sch.mod.script()
    for line in ["for i, j_0 in T.grid(16, 4):", "for j_1_init in range(4):",
                 'with T.block("Y_init"):', "for k, j_1 in T.grid(16, 4):",
                 "for ax0 in range(4):", "v_j = T.axis.spatial(16, j_0 * 4 + ax0)"]:
        assert line in text
    rng = np.random.default_rng(1)
    a = rng.standard_normal((N, N)).astype("float32")
    b = rng.standard_normal((N, N)).astype("float32")
    c = np.zeros((N, N), "float32")
    run(sch.mod["mm_relu"], a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    replay = Schedule(mod)
    sch.trace.apply_to_schedule(replay, remove_postproc=True)
    from irlab.ir.structural import structural_equal

    assert structural_equal(replay.mod["mm_relu"], sch.mod["mm_relu"])
    assert str(sch.trace).splitlines()[-1] == "  b7 = sch.decompose_reduction(block=b0, loop=l3)"


def test_outputs_helper_on_matmul():
    func = matmul()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype("float32")
    b = rng.standard_normal((N, N)).astype("float32")
    assert outputs(func).shape == (N, N)
    c = np.zeros((N, N), "float32")
    run(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make", [matmul, conv2d])
def test_decompose_after_split(make):
    func = make()
    sch = Schedule(func)
    block = sch.get_block("C" if make is matmul else "conv")
    loops = sch.get_loops(block)
    sch.split(loops[1], factors=[None, 2])
    loops = sch.get_loops(block)
    sch.decompose_reduction(block, loops[1])
    check_same(func, sch)
    check_replay(func, sch)


# -- decompose_reduction's update block and the moves after it -------------------------------

@T.prim_func
def doubled_sum(A: T.Buffer((2,), "float32"), out: T.Buffer((2,), "float32")):
    T0 = T.alloc_buffer((2,))
    for j in range(2):
        for ir in range(2):
            with T.block("T0"):
                v_j, v_ir = T.axis.remap("SR", [j, ir])
                T.reads(A[v_ir])
                T.writes(T0[v_j])
                with T.init():
                    T0[v_j] = T.float32(0)
                T0[v_j] = T0[v_j] + (A[v_ir] + A[v_ir])
    for j in range(2):
        with T.block("out"):
            v_j = T.axis.spatial(2, j)
            out[v_j] = T0[v_j] + T0[v_j]


def test_decompose_reduction_update_reads_its_output():
    """As in TVM, the update block reads the region it writes (first), then its own reads."""
    sch = Schedule(doubled_sum)
    block = sch.get_block("T0")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    text = sch.mod.script()
    assert "T.reads(T0[v_j], A[v_ir])" in text
    assert "T.reads(A[v_ir])" not in text
    check_same(doubled_sum, sch)
    check_replay(doubled_sum, sch)
    sch = Schedule(mm_relu())
    block_Y = sch.get_block("Y")
    sch.decompose_reduction(block_Y, sch.get_loops(block_Y)[2])
    assert "T.reads(Y[v_i, v_j], A[v_i, v_k], B[v_k, v_j])" in sch.mod.script()
    check_same(mm_relu(), sch)


def test_init_cannot_move_past_its_update():
    """The init block's consumers include its update block (which reads the init's output):
    moving the init under a loop the update is not under is refused (found by Hypothesis in
    test_lowered_schedules_preserve_results: the init ended up after the update)."""
    sch = Schedule(doubled_sum)
    block = sch.get_block("T0")
    init = sch.decompose_reduction(block, sch.get_loops(block)[0])
    text = sch.mod.script()
    loop = sch.get_loops(sch.get_block("out"))[0]
    check_fails(sch, lambda: sch.compute_at(init, loop, preserve_unit_loops=False),
                "consumer T0 of block T0_init is not under loop j")
    assert sch.mod.script() == text
    check_same(doubled_sum, sch)


def test_update_is_a_consumer_of_its_init():
    from irlab.tir.schedule.primitives_getters import consumers, find_block, producers

    sch = Schedule(doubled_sum)
    block = sch.get_block("T0")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    func = sch.mod["main"]
    init, update = find_block(func, "T0_init"), find_block(func, "T0")
    assert [r.block.name_hint for r in consumers(func, init)] == ["T0", "out"]
    assert [r.block.name_hint for r in producers(func, update)] == ["T0_init"]


@T.prim_func
def overwritten(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("X"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(4):
        with T.block("W"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] * T.float32(2)
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + T.float32(1)


def test_a_block_with_another_writer_is_not_moved():
    """X's output is overwritten by W (write after write, W reads nothing of B): moving X
    under C's loop would run it after W."""
    sch = Schedule(overwritten)
    loop = sch.get_loops(sch.get_block("C"))[0]
    check_fails(sch, lambda: sch.compute_at(sch.get_block("X"), loop),
                "block W also writes B: block X is not its only writer")


@T.prim_func
def sum_then_broadcast(A: T.Buffer((2, 3), "float32"), out: T.Buffer((2, 2), "float32")):
    T0 = T.alloc_buffer((2,))
    for i, ir in T.grid(2, 3):
        with T.block("T0"):
            v_i, v_ir = T.axis.remap("SR", [i, ir])
            with T.init():
                T0[v_i] = T.float32(0)
            T0[v_i] = T0[v_i] + A[v_i, v_ir]
    for j, i in T.grid(2, 2):
        with T.block("out"):
            v_j, v_i = T.axis.remap("SS", [j, i])
            out[v_j, v_i] = T0[v_i] * T.Cast("float32", v_j + 1)


def test_decomposed_reduction_blocks_are_not_recomputed():
    """Neither half of a decomposed reduction can be moved: each iteration of the target
    loop would reset (init) or accumulate once more (update)."""
    sch = Schedule(sum_then_broadcast)
    block = sch.get_block("T0")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    j = sch.get_loops(sch.get_block("out"))[0]
    check_fails(sch, lambda: sch.compute_at(block, j), "T0_init also writes T0")
    # an output reduction: C_init moved under the reduction loop of its update (its only
    # consumer) would reset C in every iteration of k
    sch = Schedule(matmul())
    block = sch.get_block("C")
    init = sch.decompose_reduction(block, sch.get_loops(block)[0])
    k = sch.get_loops(block)[2]
    check_fails(sch, lambda: sch.compute_at(init, k), "block C also writes C")
    # an undecomposed reduction is moved (its init runs in every copy) and stays right
    sch = Schedule(sum_then_broadcast)
    sch.compute_at(sch.get_block("T0"), sch.get_loops(sch.get_block("out"))[0])
    check_same(sum_then_broadcast, sch)


@T.prim_func
def two_reductions(A: T.Buffer((2,), "float32"), out: T.Buffer((2,), "float32")):
    T0 = T.alloc_buffer((2, 2))
    for j, k, ir in T.grid(2, 2, 2):
        with T.block("T0"):
            v_j, v_k, v_ir = T.axis.remap("SSR", [j, k, ir])
            with T.init():
                T0[v_j, v_k] = T.float32(0)
            T0[v_j, v_k] = T0[v_j, v_k] + (A[v_ir] + A[v_ir])
    for k, jr in T.grid(2, 2):
        with T.block("out"):
            v_k, v_jr = T.axis.remap("SR", [k, jr])
            with T.init():
                out[v_k] = T.float32(0)
            out[v_k] = out[v_k] + (T0[v_jr, v_k] + T0[v_jr, v_k])


def test_reverse_compute_at_not_under_a_reduction_loop_of_the_producer():
    """Found by Hypothesis: out moved under T0's reduction loop read partial sums."""
    sch = Schedule(two_reductions)
    j, k, ir = sch.get_loops(sch.get_block("T0"))
    check_fails(sch, lambda: sch.reverse_compute_at(sch.get_block("out"), ir),
                "loop ir drives the reduction iter v_ir of the producer T0")
    sch.reverse_compute_at(sch.get_block("out"), j)  # above the reduction loop: fine
    check_same(two_reductions, sch)


@T.prim_func
def two_in_a_loop(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32"),
                  D: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("X"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(4):
        with T.block("D"):
            vi = T.axis.spatial(4, i)
            D[vi] = A[vi] + T.float32(1)
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + T.float32(1)


def test_compute_at_index_stays_before_the_consumers():
    sch = Schedule(two_in_a_loop)
    i = sch.get_loops(sch.get_block("C"))[0]
    check_fails(sch, lambda: sch.compute_at(sch.get_block("X"), i, index=2),
                r"after a consumer under loop i \(valid: 0..1\)")
    sch.compute_at(sch.get_block("X"), i, index=1)
    text = sch.mod.script()
    assert text.index('T.block("D")') < text.index('T.block("X")') < text.index('T.block("C")')
    check_same(two_in_a_loop, sch)


@T.prim_func
def output_read_in_part(A: T.Buffer((4,), "float32"), out1: T.Buffer((4,), "float32"),
                        C: T.Buffer((2,), "float32")):
    for i in range(4):
        with T.block("X"):
            vi = T.axis.spatial(4, i)
            out1[vi] = A[vi] * T.float32(3)
    for i in range(2):
        with T.block("C"):
            vi = T.axis.spatial(2, i)
            C[vi] = out1[vi] + T.float32(1)


def test_an_output_block_is_not_computed_at():
    """Only out1[0:2] would be computed under C's loop."""
    sch = Schedule(output_read_in_part)
    i = sch.get_loops(sch.get_block("C"))[0]
    check_fails(sch, lambda: sch.compute_at(sch.get_block("X"), i), "writes the output out1")


def test_decomposed_init_is_not_inlined():
    """Found by Hypothesis: compute_inline(T0_init) put 0 into the update (and T0's
    allocation went away while the update still wrote it)."""
    sch = Schedule(doubled_sum)
    block = sch.get_block("T0")
    init = sch.decompose_reduction(block, sch.get_loops(block)[0])
    check_fails(sch, lambda: sch.compute_inline(init), "block T0 also writes T0")


@T.prim_func
def overwrite_then_update(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("X"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(4):
        with T.block("W"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi]
    for i in range(4):
        with T.block("Y"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + T.float32(1)


def test_a_block_with_another_writer_is_not_reverse_inlined():
    """Y inlined into X would write C before W overwrites it."""
    sch = Schedule(overwrite_then_update)
    check_fails(sch, lambda: sch.reverse_compute_inline(sch.get_block("Y")),
                "block W also writes C: block Y is not its only writer")


def test_decompose_reduction_of_a_recomputed_block():
    """Found by Hypothesis: after compute_at under a loop that does not drive it, T0 runs (with
    its init) once per iteration of j; decomposing at j would init once and accumulate twice."""
    sch = Schedule(sum_then_broadcast)
    block = sch.get_block("T0")
    sch.compute_at(block, sch.get_loops(sch.get_block("out"))[0])
    j, ax0, ir = sch.get_loops(block)
    check_fails(sch, lambda: sch.decompose_reduction(block, j),
                "block T0 runs 12 times under loop j for 6 distinct iter values")
    sch.decompose_reduction(block, ax0)  # the init runs again in every iteration of j
    check_same(sum_then_broadcast, sch)


@T.prim_func
def _read_in_an_inner_scope(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    with T.block("outer"):
        T.reads(A[0:8])
        T.writes(C[0:8])
        for j in range(8):
            with T.block("C"):
                vj = T.axis.spatial(8, j)
                C[vj] = B[vj] * T.float32(2)


def test_compute_inline_refuses_a_reader_in_another_scope():
    sch = Schedule(_read_in_an_inner_scope)
    before = sch.mod.script()
    check_fails(sch, lambda: sch.compute_inline(sch.get_block("B")),
                "read by block C outside the scope")
    assert sch.mod.script() == before


def test_compute_inline_of_a_long_chain_stage_by_stage():
    """Inlining 120 stages one by one into the last (what LowerTE does to a fused chain)."""
    def stage(prev, k):
        return te.compute((4, 5), lambda i, j: te.max(prev[i, j] + float(k % 5), 0.0),
                          name=f"s{k}")

    A = te.placeholder((4, 5), name="A")
    stages = [A]
    for k in range(121):
        stages.append(stage(stages[-1], k))
    func = te.create_prim_func([A, stages[-1]])
    sch = Schedule(func)
    for k in reversed(range(120)):
        sch.compute_inline(sch.get_block(f"s{k}"))
    assert sch.mod.script().count("T.block(") == 2  # root and the last stage
    check_same(func, sch)


@T.prim_func
def _shifted_window(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * 2.0
    for j in range(16):
        with T.block("C"):
            vj = T.axis.spatial(16, j)
            T.reads(B[vj - 1:vj + 2])
            C[vj] = T.if_then_else(1 <= vj and vj < 15, B[vj - 1] + B[vj + 1], B[vj])


def test_compute_at_predicate_has_tvms_form():
    """The clipped window is predicated as TVM writes it: ``lo <= v`` and ``v < hi + 1``, the
    iter value left as ``min + ax``; the program computes the same."""
    sch = Schedule(_shifted_window)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    text = sch.mod["main"].script()
    assert "vi = T.axis.spatial(16, j - 1 + ax0)" in text, text
    assert "T.where(1 <= j + ax0 and j + ax0 < 17)" in text, text
    check_same(_shifted_window, sch)


@T.prim_func
def _reversed_and_tiled(A: T.Buffer((4, 8), "float32"), C: T.Buffer((1, 4, 8), "float32")):
    B = T.alloc_buffer((1, 4, 8), "float32")
    for i, j in T.grid(4, 2):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[3 - vi, vj * 4:vj * 4 + 4])
            T.writes(B[0, 3 - vi, vj * 4:vj * 4 + 4])
            for k in range(4):
                B[0, 3 - vi, vj * 4 + k] = A[3 - vi, vj * 4 + k] + 1.0
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[0, vi, vj] = B[0, vi, vj] * 2.0


def test_compute_at_inverts_reversed_tiled_and_constant_indices():
    """The moved block writes ``B[0, 3 - vi, vj*4 : vj*4 + 4]``: a constant dimension, a
    reversed index and a tile; each is inverted to the iter var range the consumer needs."""
    sch = Schedule(_reversed_and_tiled)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    text = sch.mod["main"].script()
    assert "for ax0 in range(2)" in text and "vj = T.axis.spatial(2, ax0)" in text, text
    check_same(_reversed_and_tiled, sch)


@T.prim_func
def _int64_chain(A: T.Buffer((T.int64(8),), "float32"), C: T.Buffer((T.int64(8),), "float32")):
    B = T.alloc_buffer((T.int64(8),), "float32")
    for i in range(T.int64(8)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(8), i)
            B[vi] = A[vi] + 1.0
    for i in range(T.int64(8)):
        with T.block("C"):
            vi = T.axis.spatial(T.int64(8), i)
            C[vi] = B[vi] * 2.0


def test_compute_at_under_int64_loops():
    """Loops and iter vars of int64 (the loop min an int32 0): bounds are taken in the
    variable's own dtype, so nothing mixes int32 and int64."""
    sch = Schedule(_int64_chain)
    i0, i1 = sch.split(sch.get_loops(sch.get_block("C"))[0], factors=[None, 4])
    sch.compute_at(sch.get_block("B"), i0)
    check_same(_int64_chain, sch)


@T.prim_func
def _shared_tile(A: T.Buffer((64, 8), "float32"), C: T.Buffer((64, 8), "float32")):
    A_shared = T.alloc_buffer((64, 8), scope="shared")
    A_local = T.alloc_buffer((64, 8), scope="local")
    for i, j in T.grid(64, 8):
        with T.block("A_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_shared[vi, vj] = A[vi, vj]
    for i, j in T.grid(64, 8):
        with T.block("A_local"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_local[vi, vj] = A[vi, vj] * 2.0
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for k in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(64, bx * 16 + tx)
                    vk = T.axis.spatial(8, k)
                    C[vi, vk] = A_shared[vi, vk] + A_local[vi, vk]


def test_compute_at_shared_buffer_covers_every_thread_of_the_block():
    """Under a loop inside threadIdx bindings, a shared buffer is filled for all the threads
    of the block (one copy is shared), a local one for its own thread only (TVM's rule)."""
    sch = Schedule(_shared_tile)
    k = sch.get_loops(sch.get_block("C"))[2]
    sch.compute_at(sch.get_block("A_shared"), k)
    sch.compute_at(sch.get_block("A_local"), k)
    text = sch.mod.script()
    shared = text.split('T.block("A_shared")')[0].rsplit("for ax0", 1)[1]
    assert shared.startswith(" in range(16)")  # all 16 threads' rows
    assert "T.axis.spatial(64, bx * 16 + tx)" in text.split('T.block("A_local")')[1]


@T.prim_func
def _reversed_and_narrow(X: T.Buffer((10, 1), "float32"), Z: T.Buffer((10, 4), "float32")):
    Y = T.alloc_buffer((10, 1))
    for i, j in T.grid(10, 1):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[9 - vi, vj] = X[vi, vj] + 1.0
    for i, j in T.grid(10, 4):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, 0] * 2.0


def test_compute_at_writes_tvm_forms_for_reversed_and_clipped_ranges():
    """A reversed index inverts to ``9 - i`` (not ``i * -1 + 9``), and a range the consumer
    needs beyond the producer's domain is cut to the domain instead of guarded."""
    sch = Schedule(_reversed_and_narrow)
    sch.compute_at(sch.get_block("Y"), sch.get_loops(sch.get_block("Z"))[0])
    text = sch.mod.script()
    assert "T.axis.spatial(10, 9 - i)" in text
    assert "T.where" not in text
    check_same(_reversed_and_narrow, sch)
    check_replay(_reversed_and_narrow, sch)


def _symbolic_int64():
    n, m = te.var("n", dtype="int64"), te.var("m", dtype="int64")
    A = te.placeholder((n, m), name="A")
    C = te.compute((n, m), lambda i, j: A[i, j] + 1.0, name="C")
    D = te.compute((n, m), lambda i, j: C[i, j] * 2.0, name="D")
    return te.create_prim_func([A, D])


def test_compute_at_with_symbolic_int64_extents():
    """Shapes (n, m) of int64 vars: the loops start at T.int64(0), and compute_at makes a
    loop of symbolic extent m under D's row loop."""
    func = _symbolic_int64()
    loop = func.body.block.body.seq[0]
    assert loop.min.dtype == loop.extent.dtype == loop.loop_var.dtype == "int64"
    sch = Schedule(func)
    sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("D"))[0])
    assert "for ax0 in range(m):" in sch.mod.script()
    check_replay(func, sch)
