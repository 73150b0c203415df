"""ms.tuning_observer: a tuning run tells its monitors of the start, each measured batch
(times, the cost model's predictions, every task's best) and the end, interrupted or not;
a monitor that breaks is detached and tuning goes on."""

import math

import pytest

from irlab import meta_schedule as ms
from irlab.errors import IrlabError
from irlab.meta_schedule.tuning_observer import TaskSummary, TuningEvent, TuningObserver
from ms_workloads import gemm_mod, quick_runner, small_search, small_space

TARGET = "llvm -num-cores=2"
BUILDER = ms.builder.LocalBuilder(max_workers=2)
RUNNER = quick_runner()


class Recorder(TuningObserver):
    def __init__(self, stop_after=None):
        self.calls, self.events, self.stop_after = [], [], stop_after

    def on_tuning_start(self, tasks):
        self.calls.append(("start", tasks))

    def on_batch(self, event):
        self.calls.append(("batch", event))
        self.events.append(event)
        if self.stop_after is not None and len(self.events) >= self.stop_after:
            raise KeyboardInterrupt  # Ctrl-C while a display updates

    def on_tuning_end(self, tasks, total_trials, interrupted):
        self.calls.append(("end", (tasks, total_trials, interrupted)))


class Broken(TuningObserver):
    def on_batch(self, event):
        raise RuntimeError("display gone")


def tune(tmp_path, monitor, trials=6):
    return ms.tune_tir(gemm_mod(16), TARGET, str(tmp_path), trials, num_trials_per_iter=2,
                       seed=0, space=small_space(), strategy=small_search(), builder=BUILDER,
                       runner=RUNNER, monitor=monitor)


def test_a_run_is_reported_batch_by_batch(tmp_path):
    rec = Recorder()
    db = tune(tmp_path, [rec, Broken()])  # the broken monitor is dropped, tuning goes on
    kinds = [k for k, _ in rec.calls]
    assert kinds == ["start", "batch", "batch", "batch", "end"]
    (start,) = rec.calls[0][1]
    assert start.name == "main" and start.trials == 0 and math.isinf(start.best_secs)
    assert start.flop == 2 * 16 ** 3
    assert [e.total_trials for e in rec.events] == [2, 4, 6]
    assert [e.round_index for e in rec.events] == [0, 1, 2]
    for e in rec.events:
        assert len(e.run_secs) == len(e.predicted) == 2
        assert all(p is not None for p in e.predicted)  # evolutionary search scored them
    best = min(s for e in rec.events for s in e.run_secs if s is not None)
    assert rec.events[-1].task.best_secs == pytest.approx(best)
    assert rec.events[-1].network_secs == pytest.approx(best)  # one task of weight 1
    tasks, total, interrupted = rec.calls[-1][1]
    assert total == 6 and not interrupted and tasks[0].trials == 6
    assert len(db) == 6


def test_interrupt_reaches_the_end_hook_and_keeps_the_records(tmp_path):
    rec = Recorder(stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        tune(tmp_path, rec)
    tasks, total, interrupted = rec.calls[-1][1]
    assert interrupted and total == 4 and tasks[0].trials == 4
    assert len(ms.database.JSONDatabase(work_dir=str(tmp_path))) == 4


def test_rank_correlation_and_bad_monitors():
    tasks = (TaskSummary(0, "t", 1.0, 1e9, 4, 0.5),)
    perfect = TuningEvent(0, 0, 4, (2.0, 1.0, 0.5, None), (1.0, 2.0, 3.0, 9.0), tasks)
    assert perfect.rank_correlation() == pytest.approx(1.0)
    assert TuningEvent(0, 0, 2, (1.0, 2.0), (1.0, 2.0), tasks).rank_correlation() is None
    unscored = TuningEvent(0, 0, 3, (1.0, 2.0, 3.0), (None,) * 3, tasks)
    assert unscored.rank_correlation() is None
    with pytest.raises(IrlabError, match="not a TuningObserver"):
        ms.tune_tir(gemm_mod(16), TARGET, None, 2, database="memory", monitor=object())
