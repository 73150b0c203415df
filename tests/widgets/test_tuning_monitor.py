"""TuningMonitor: follows a tuning run's events (table, best-so-far curves, cost-model rank
correlation), shows an interruption, replays a database, and has an escaped static picture."""

import math

import pytest

pytest.importorskip("anywidget")

from irlab.meta_schedule.tuning_observer import TaskSummary, TuningEvent  # noqa: E402
from irlab.widgets import TuningMonitor  # noqa: E402

EVIL = "<img src=x onerror=alert(1)>"
GFLOP = 2e9  # each task: 2 GFLOP, so GFLOPS = 2 / seconds


def summaries(best, trials, names=("dense", EVIL)):
    return tuple(TaskSummary(i, name, 1.0 + i, GFLOP, trials[i], best[i])
                 for i, name in enumerate(names))


def event(task_id, round_index, total, secs, predicted, best, trials, network=None):
    return TuningEvent(task_id, round_index, total, tuple(secs), tuple(predicted),
                       summaries(best, trials), network)


def run_two_rounds(monitor):
    inf = math.inf
    monitor.on_tuning_start(summaries([inf, inf], [0, 0]))
    # task 0: 4 candidates, one failed; the model ranks them perfectly (rho = 1)
    monitor.on_batch(event(0, 0, 4, [2.0, 1.0, None, 0.5], [1, 2, 3, 4], [0.5, inf], [4, 0]))
    # task 1: predictions inverted (rho = -1); now every task has a best: a network time
    monitor.on_batch(event(1, 0, 8, [1.0, 2.0, 4.0, 8.0], [1, 2, 3, 4], [0.5, 1.0], [4, 4],
                           network=0.5 + 2 * 1.0))


def test_the_monitor_follows_the_events():
    monitor = TuningMonitor("gemm", max_trials=8)
    assert monitor.status.startswith("waiting")
    run_two_rounds(monitor)
    rows = {r["name"]: r for r in monitor.tasks}
    assert rows["dense"]["trials"] == 4 and rows["dense"]["failed"] == 1
    assert rows["dense"]["best_ms"] == pytest.approx(500.0)
    assert rows["dense"]["gflops"] == pytest.approx(4.0)
    assert rows[EVIL]["weight"] == 2.0 and rows[EVIL]["best_ms"] == pytest.approx(1000.0)
    # best GFLOPS so far per trial (global trial numbers), never decreasing
    assert monitor.curves["dense"] == [[1, 1.0], [2, 2.0], [3, 2.0], [4, 4.0]]
    assert monitor.curves[EVIL] == [[5, 2.0], [6, 2.0], [7, 2.0], [8, 2.0]]
    assert monitor.network == [[8, pytest.approx(2500.0)]]
    assert [round(a["rho"], 6) for a in monitor.accuracy] == [1.0, -1.0]
    assert monitor.total_trials == 8 and "8 trials" in monitor.status
    seen = []
    monitor.observe(lambda change: seen.append(change["name"]), names=["curves"])
    monitor.on_batch(event(0, 1, 10, [0.25, None], [1, 2], [0.25, 1.0], [6, 4], 2.25))
    assert seen == ["curves"] and monitor.curves["dense"][-1] == [10, 8.0]
    monitor.on_tuning_end(monitor.events[-1].tasks, 10, True)
    assert monitor.status.startswith("interrupted after 10 trials")
    assert "interrupted" in str(monitor) and "dense" in str(monitor)


def test_static_picture_is_escaped_and_has_the_charts():
    monitor = TuningMonitor(EVIL)
    run_two_rounds(monitor)
    page = monitor.to_html()
    assert EVIL not in page and "&lt;img src=x" in page
    assert page.count("<svg") == 3  # task curves, network curve, accuracy
    assert "<script" not in page
    bundle = monitor._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/html"] == page
    assert "application/vnd.jupyter.widget-view+json" in data
    empty = TuningMonitor().to_html()
    assert "TuningMonitor" in empty and "<svg" not in empty


def test_replays_a_database_in_measured_order():
    from irlab import meta_schedule as ms
    from irlab.meta_schedule.arg_info import ArgInfo
    import irlab as tvm
    from irlab import te, tir

    a, b = te.placeholder((16, 16), name="A"), te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    c = te.compute((16, 16), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    mod = tvm.IRModule({"main": te.create_prim_func([a, b, c])})
    db = ms.database.MemoryDatabase()
    workload = db.commit_workload(mod)
    sch = tir.Schedule(mod)
    for secs in ([3e-6], [1e10], [1e-6], [2e-6]):
        db.commit_tuning_record(ms.database.TuningRecord(
            sch.trace, workload, secs, "llvm", ArgInfo.from_entry_func(mod)))
    monitor = TuningMonitor.from_database(db, [("gemm16", mod, 3)])
    (row,) = monitor.tasks
    assert row["name"] == "gemm16" and row["trials"] == 4 and row["failed"] == 1
    assert row["best_ms"] == pytest.approx(1e-3)
    flop = 2 * 16 ** 3
    assert [p[0] for p in monitor.curves["gemm16"]] == [1, 2, 3, 4]
    assert monitor.curves["gemm16"][-1][1] == pytest.approx(flop / 1e-6 / 1e9)
    assert monitor.network == [[4, pytest.approx(3e-3)]]
    assert monitor.status.startswith("done after 4 trials")


def test_ctrl_c_leaves_the_monitor_showing_what_was_reached(tmp_path):
    """A real tune_tir run interrupted after its second batch: the monitor shows the two
    batches and says so; the database on disk holds exactly those records."""
    import irlab as tvm
    from irlab import meta_schedule as ms
    from irlab import te
    from irlab.meta_schedule.tuning_observer import TuningObserver

    class CtrlC(TuningObserver):
        batches = 0

        def on_batch(self, event):
            CtrlC.batches += 1
            if CtrlC.batches == 2:
                raise KeyboardInterrupt

    a, b = te.placeholder((16, 16), name="A"), te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    c = te.compute((16, 16), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    mod = tvm.IRModule({"main": te.create_prim_func([a, b, c])})
    monitor = TuningMonitor("gemm 16")
    strategy = ms.search_strategy.EvolutionarySearch(population_size=8, init_min_unmeasured=4,
                                                     genetic_num_iters=1)
    runner = ms.runner.LocalRunner(evaluator_config=ms.runner.EvaluatorConfig(1, 1, 1))
    with pytest.raises(KeyboardInterrupt):
        ms.tune_tir(mod, "llvm -num-cores=1", str(tmp_path), 8, num_trials_per_iter=2, seed=0,
                    strategy=strategy, runner=runner, monitor=[monitor, CtrlC()])
    assert monitor.status.startswith("interrupted after 4 trials")
    assert monitor.tasks[0]["trials"] == 4 and len(monitor.events) == 2
    assert len(ms.database.JSONDatabase(work_dir=str(tmp_path))) == 4
    assert "<svg" in monitor.to_html()
