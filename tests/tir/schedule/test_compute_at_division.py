"""compute_at where the consumer reads the producer at a floor-divided index: the producer's
region under the target loop is bounded through the division (monotone) and simplified with
the loop ranges, so a tiled repeat computes one element per tile and a channel group the
elements its tile needs."""

import numpy as np

from irlab.script import tir as T
from irlab.tir import Schedule
from irlab.tir import stmt as S
from irlab.tir.functor import post_order_visit
from irlab.tir.interpreter import run


@T.prim_func
def repeat(x: T.Buffer((4,), "float32"), y: T.Buffer((64,), "float32")):
    t = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("add"):
            v = T.axis.spatial(4, i)
            t[v] = x[v] + T.float32(1)
    for o, i in T.grid(8, 8):
        with T.block("rep"):
            v = T.axis.spatial(64, o * 8 + i)
            y[v] = t[v // 16]


@T.prim_func
def groups(x: T.Buffer((45,), "float32"), y: T.Buffer((720,), "float32")):
    t = T.alloc_buffer((45,), "float32")
    for i in range(45):
        with T.block("add"):
            v = T.axis.spatial(45, i)
            t[v] = x[v] * T.float32(2)
    for o, i in T.grid(2, 360):
        with T.block("use"):
            v = T.axis.spatial(720, o * 360 + i)
            y[v] = t[v // 16] + T.float32(v % 16)


def _producer_extent(func):
    """The trip count of the loops around the moved block ``add``."""
    found = []

    def visit(n):
        if isinstance(n, S.For) and isinstance(n.body, S.BlockRealize) and \
                n.body.block.name_hint == "add":
            found.append(n.extent.value)

    post_order_visit(func.body, visit)
    return found


def _check(func, n_in, n_out, loop, extent):
    sch = Schedule(func)
    sch.compute_at(sch.get_block("add"), sch.get_loops(sch.get_block(loop))[0])
    assert _producer_extent(sch.mod["main"]) == extent
    x = np.random.default_rng(0).standard_normal(n_in).astype("float32")
    want, got = np.zeros(n_out, "float32"), np.zeros(n_out, "float32")
    run(func, x, want)
    run(sch.mod["main"], x, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_tiled_repeat_computes_one_element_per_tile():
    _check(repeat, 4, 64, "rep", [])  # a single point: no loop around the moved block


def test_channel_group_computes_the_elements_its_tile_reads():
    _check(groups, 45, 720, "use", [23])


@T.prim_func
def div_mod_read(x: T.Buffer((16, 16), "float32"), y: T.Buffer((256,), "float32")):
    t = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("prod"):
            vi, vj = T.axis.remap("SS", [i, j])
            t[vi, vj] = x[vj, vi] + T.float32(1)
    for i in range(256):
        with T.block("cons"):
            v = T.axis.spatial(256, i)
            y[v] = t[v // 16, v % 16] * T.float32(3)


def test_reverse_compute_at_inverts_a_div_mod_read():
    sch = Schedule(div_mod_read)
    sch.reverse_compute_at(sch.get_block("cons"), sch.get_loops(sch.get_block("prod"))[0])
    outer = sch.get_loops(sch.get_block("cons"))
    assert len(outer) == 2 and sch.get(outer[1]).extent.value == 16  # one row per i
    x = np.random.default_rng(1).standard_normal((16, 16)).astype("float32")
    want, got = np.zeros(256, "float32"), np.zeros(256, "float32")
    run(div_mod_read, x, want)
    run(sch.mod["main"], x, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, ((x.T + 1) * 3).reshape(-1), rtol=1e-6)
