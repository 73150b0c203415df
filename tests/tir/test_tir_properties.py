"""Property tests for TIR: TVMScript round trips of random loop nests (block form, scheduled,
lowered) and random schedules that must keep results, leave the schedule unchanged on
errors, and replay from their trace."""

import numpy as np

from hypothesis import given, settings
from hypothesis import strategies as st

import irlab
from irlab.ir.structural import assert_structural_equal, structural_equal
from irlab.script import from_source
from irlab.testing.tir_strategies import (loop_nests, lowered_loop_nests, schedules,
                                          ScheduledFunc)
from irlab.tir import Schedule
from irlab.tir.interpreter import run

FAST = settings(max_examples=40, deadline=None)


def _func(x):
    return x["main"] if isinstance(x, irlab.ir.IRModule) else x


def check_roundtrip(node):
    text = node.script()
    parsed = from_source(text)
    assert_structural_equal(_func(parsed), _func(node))
    assert parsed.script() == text


def run_outputs(func, seed=0):
    """Run ``func`` on random float32 inputs; returns the output (the last parameter)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        shape = tuple(int(s.value) for s in func.buffer_map[param].shape)
        arrays.append(rng.standard_normal(shape).astype("float32"))
    arrays[-1][...] = 0
    run(func, *arrays)
    return arrays[-1]


def describe(case: ScheduledFunc):
    return "\n".join(f"  {d}" + ("" if e is None else f"  -> ScheduleError: {e}")
                     for d, e, _ in case.log)


def check_schedule_contract(case: ScheduledFunc):
    for desc, err, unchanged in case.log:
        assert unchanged, f"failed step changed the schedule: {desc}: {err}\n{describe(case)}"
    replay = Schedule(case.func)
    case.sch.trace.apply_to_schedule(replay, remove_postproc=False)
    assert structural_equal(replay.mod["main"], case.sch.mod["main"]), describe(case)


@st.composite
def scheduled(draw):
    func = draw(loop_nests())
    return draw(schedules(func))


# -- (1) print -> parse -> print -------------------------------------------------------------

@FAST
@given(loop_nests())
def test_roundtrip_block_form(func):
    check_roundtrip(func)


@FAST
@given(lowered_loop_nests())
def test_roundtrip_lowered(mod):
    check_roundtrip(mod)


@FAST
@given(scheduled())
def test_roundtrip_scheduled(case):
    check_roundtrip(case.sch.mod)


@FAST
@given(scheduled())
def test_roundtrip_scheduled_lowered(case):
    check_roundtrip(irlab.lower(case.sch.mod))


@FAST
@given(scheduled())
def test_roundtrip_scheduled_lowered_text(case):
    """Printing is stable for lowered scheduled functions."""
    text = irlab.lower(case.sch.mod).script()
    assert from_source(text).script() == text


# -- (2) random schedules keep results -------------------------------------------------------

@FAST
@given(scheduled())
def test_random_schedules_preserve_results(case):
    check_schedule_contract(case)
    expected = run_outputs(case.func)
    np.testing.assert_allclose(run_outputs(case.sch.mod["main"]), expected, rtol=1e-5,
                               err_msg=describe(case))


# -- (3) lowering scheduled functions keeps results ------------------------------------------

@FAST
@given(scheduled())
def test_lowered_schedules_preserve_results(case):
    expected = run_outputs(case.func)
    lowered = irlab.lower(case.sch.mod)
    np.testing.assert_allclose(run_outputs(lowered["main"]), expected, rtol=1e-5,
                               err_msg=describe(case))


def test_strategies_cover_steps():
    """The schedule strategy does succeed at every kind of step on a fixed seed of draws."""
    seen = set()

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(scheduled())
    def collect(case):
        for desc, err, _ in case.log:
            if err is None:
                seen.add(desc.split("(")[0])

    collect()
    # decompose_reduction and compute_at succeed too rarely in random draws to be pinned to a
    # hypothesis version's sequence; test_schedule_matrix.py covers them deterministically.
    assert {"split", "fuse", "reorder", "parallel"} <= seen, seen
