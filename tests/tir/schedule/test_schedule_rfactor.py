"""rfactor."""

from irlab.tir import Schedule

from test_schedule_compute import softmax_like
from test_schedule_loops import check_fails, check_replay, check_same, conv2d, matmul, mm_relu


def test_rfactor_matmul():
    func = matmul()
    sch = Schedule(func)
    c = sch.get_block("C")
    _, _, k = sch.get_loops(c)
    _, k1 = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(k1, 0)
    assert rf.name == "C_rf"
    text = sch.mod.script()
    assert "C_rf = T.alloc_buffer((4, 16, 16))" in text
    assert 'vk_1, v_i, v_j, vk_0 = T.axis.remap("SSSR", [k_1, i, j, k_0])' in text
    assert "C[v_i, v_j] = C[v_i, v_j] + C_rf[vk_1, v_i, v_j]" in text
    check_same(func, sch)
    check_replay(func, sch)
    assert str(sch.trace).splitlines()[-1] == "  b6 = sch.rfactor(loop=l5, factor_axis=0)"


def test_rfactor_conv_last_axis_and_softmax_max():
    func = conv2d()
    sch = Schedule(func)
    loops = sch.get_loops(sch.get_block("conv"))
    sch.rfactor(loops[5], -1)
    check_same(func, sch)
    check_replay(func, sch)
    func = softmax_like()
    sch = Schedule(func)
    _, k = sch.get_loops(sch.get_block("mx"))
    sch.rfactor(k, 1)
    check_same(func, sch)
    check_replay(func, sch)


def test_rfactor_errors():
    sch = Schedule(mm_relu())
    i, j, k = sch.get_loops(sch.get_block("Y"))
    check_fails(sch, lambda: sch.rfactor(i, 0), "does not drive a reduction")
    check_fails(sch, lambda: sch.rfactor(k, 3), "out of range")
    ic = sch.get_loops(sch.get_block("C"))[0]
    check_fails(sch, lambda: sch.rfactor(ic, 0), "not a reduction")
    sch.reverse_compute_at(sch.get_block("C"), j)
    check_fails(sch, lambda: sch.rfactor(k, 0), None)
