"""Default-schedule records: TOPI's schedule of each task is timed and stored before tuning,
and compile_relay keeps TOPI's kernel unless a tuned one measured faster."""

import numpy as np

from irlab import meta_schedule as ms
from irlab.meta_schedule.arg_info import ArgInfo
from irlab.meta_schedule.default_schedule import (default_record, is_default_schedule,
                                                  measure_default_schedules)
from ms_workloads import interpret, mlp, quick_runner, run_graph
from test_relay_integration import hand_tuned

TARGET = "llvm -num-cores=2"


def _last_layer(tasks):
    return next(t for t in tasks if "relu" not in t.task_name)


def _commit(db, task, sch, secs, origin=None):
    db.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, db.commit_workload(task.mod), [secs], TARGET,
        ArgInfo.from_entry_func(task.mod), origin=origin))


def _tuned_flags(lib):
    return sorted(bool(lf.tuned) for lf in lib.lowered)


def test_extracted_tasks_carry_topi_schedules_that_replay_on_the_workload():
    mod, params = mlp()
    for task in ms.relay_integration.extract_tasks(mod, TARGET, params):
        sch = task.default_schedule
        assert sch is not None and not sch.trace.as_json()[1]  # TOPI samples nothing
        replayed = ms.database.workload.replay_trace_json(sch.trace.as_json(), task.mod)
        assert replayed.mod["main"].body is not None


def test_compile_relay_keeps_topi_when_it_measured_faster():
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, TARGET, params)
    last = _last_layer(tasks)
    x = np.random.default_rng(3).uniform(-1, 1, (4, 32)).astype("float32")
    want = interpret(mod, params, x)

    slow_tuned = ms.database.MemoryDatabase()
    _commit(slow_tuned, last, last.default_schedule, 1e-6, "default")
    _commit(slow_tuned, last, hand_tuned(last), 1e-3)
    assert is_default_schedule(slow_tuned.query_tuning_record(last.mod, TARGET))
    lib = ms.relay_integration.compile_relay(slow_tuned, mod, TARGET, params)
    assert _tuned_flags(lib) == [False, False]  # TOPI's own schedule, not its replay
    np.testing.assert_allclose(run_graph(lib, {"x": x}), want, rtol=1e-5, atol=1e-5)

    fast_tuned = ms.database.MemoryDatabase()
    _commit(fast_tuned, last, last.default_schedule, 1e-3, "default")
    _commit(fast_tuned, last, hand_tuned(last), 1e-6)
    lib = ms.relay_integration.compile_relay(fast_tuned, mod, TARGET, params)
    assert _tuned_flags(lib) == [False, True]
    np.testing.assert_allclose(run_graph(lib, {"x": x}), want, rtol=1e-5, atol=1e-5)


def test_default_schedules_are_measured_once_per_workload(tmp_path):
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, TARGET, params)
    db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    builder, runner = ms.builder.LocalBuilder(), quick_runner()
    times = measure_default_schedules(tasks, builder, runner, db)
    assert sorted(times) == sorted(t.task_name for t in tasks)
    assert all(0 < secs < 1 for secs in times.values())
    assert len(db) == len(tasks)
    for task in tasks:
        record = default_record(db, db.commit_workload(task.mod), TARGET)
        assert record is not None and record.is_valid
    reloaded = ms.database.JSONDatabase(work_dir=str(tmp_path))  # the marker is kept
    again = measure_default_schedules(tasks, builder, runner, reloaded)  # resumed: not again
    assert again == times and len(reloaded) == len(tasks)
