"""blockize."""

from irlab.tir import Schedule

from test_schedule_loops import check_fails, check_replay, check_same, conv2d, matmul, mm_relu


def test_blockize_matmul_tile():
    func = matmul()
    sch = Schedule(func)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1)
    outer = sch.blockize(i1)
    assert outer.name == "C_o"
    text = sch.mod.script()
    assert 'v_i_o, v_j_o = T.axis.remap("SS", [i_0, j_0])' in text
    assert "T.writes(C[v_i_o * 4:v_i_o * 4 + 4, v_j_o * 4:v_j_o * 4 + 4])" in text
    assert "v_i = T.axis.spatial(16, v_i_o * 4 + i_1)" in text
    check_same(func, sch)
    check_replay(func, sch)
    assert [b.name for b in sch.get_child_blocks(outer)] == ["C"]


def test_blockize_conv_reduction_loops():
    func = conv2d()
    sch = Schedule(func)
    loops = sch.get_loops(sch.get_block("conv"))
    sch.blockize(loops[4], preserve_unit_iters=False)
    text = sch.mod.script()
    assert 'with T.block("conv_o"):' in text and "v_rc_o" not in text
    check_same(func, sch)
    check_replay(func, sch)


def test_blockize_errors():
    sch = Schedule(mm_relu())
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    sch.reverse_compute_at(sch.get_block("C"), j)
    check_fails(sch, lambda: sch.blockize(j), "exactly one block")
    sch = Schedule(matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(i, j)
    _, f1 = sch.split(f, factors=[None, 12])
    check_fails(sch, lambda: sch.blockize(f1), "predicate")
    sch = Schedule(matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(i, j)
    _, f1 = sch.split(f, factors=[None, 8])
    check_fails(sch, lambda: sch.blockize(f1), "cannot be divided")


def test_blockize_fused_split():
    """f_1 covers two rows of 16: v_i = v_i_o * 2 + f_1 // 16 divides evenly."""
    func = matmul()
    sch = Schedule(func)
    i, j, k = sch.get_loops(sch.get_block("C"))
    _, f1 = sch.split(sch.fuse(i, j), factors=[None, 32])
    sch.blockize(f1)
    check_same(func, sch)
    check_replay(func, sch)
