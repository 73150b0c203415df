"""Schedule primitives take a block's name and a buffer's name, as TVM's do."""

import pytest

from irlab import tir
from irlab.ir import assert_structural_equal
from irlab.script import tir as T
from irlab.tir.schedule.errors import ScheduleError


@T.prim_func
def two_stage(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


def test_block_and_buffer_names_equal_handles_and_indices():
    by_name = tir.Schedule(two_stage)
    by_name.cache_read("C", "B", "local")
    by_name.compute_inline("B")
    by_handle = tir.Schedule(two_stage)
    by_handle.cache_read(by_handle.get_block("C"), 0, "local")
    by_handle.compute_inline(by_handle.get_block("B"))
    assert_structural_equal(by_name.mod["main"], by_handle.mod["main"])
    assert len(by_name.get_loops("C")) == 2


def test_unknown_buffer_name_is_a_schedule_error_and_changes_nothing():
    sch = tir.Schedule(two_stage)
    before = sch.mod
    with pytest.raises(ScheduleError, match="does not read a buffer 'X'"):
        sch.cache_read("C", "X", "local")
    assert sch.mod is before


def test_compute_at_errors_name_tvm_conditions():
    """The messages keep TVM's key phrases, so code matching TVM's errors still matches."""
    sch = tir.Schedule(two_stage)
    i, _ = sch.get_loops("B")
    with pytest.raises(ScheduleError, match="ancestor of block"):
        sch.compute_at("B", i)
    with pytest.raises(ScheduleError, match="output block"):
        sch.compute_at("C", i)


@T.prim_func
def annotated(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in T.serial(8, annotations={"keep": 1}):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]


def test_split_and_fuse_refuse_annotated_loops_and_leave_the_schedule():
    sch = tir.Schedule(annotated)
    before = sch.mod
    i, j = sch.get_loops("B")
    with pytest.raises(ScheduleError, match="annotations"):
        sch.split(j, factors=[None, 2])
    with pytest.raises(ScheduleError, match="annotations"):
        sch.fuse(i, j)
    assert sch.mod is before


@T.prim_func
def scalar_add(A: T.Buffer((), "int32"), C: T.Buffer((), "int32")):
    with T.block("C"):
        vi = T.axis.spatial(1, 0)
        C[()] = A[()] + 1


def test_add_unit_loop_above_block_then_loop_keeps_values_and_replays():
    import numpy as np

    from irlab.tir.interpreter import run

    sch = tir.Schedule(scalar_add)
    first = sch.add_unit_loop("C")
    second = sch.add_unit_loop(first)
    loops = sch.get_loops("C")
    assert len(loops) == 2 and all(sch.get(lp).extent.value == 1 for lp in loops)
    assert sch.get(second).body is sch.get(loops[1])
    a, c = np.array(41, "int32"), np.zeros((), "int32")
    run(sch.mod["main"], a, c)
    assert int(c) == 42
    replayed = tir.Schedule(scalar_add)
    sch.trace.apply_to_schedule(replayed)
    assert_structural_equal(replayed.mod["main"], sch.mod["main"])
