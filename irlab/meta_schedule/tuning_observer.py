"""``TuningObserver``: how a display follows a tuning run (the hook the notebook's
``irlab.widgets.TuningMonitor`` implements; the core never imports a display).

``tune_tir`` / ``tune_relay`` / ``tune_tasks`` take ``monitor=`` (one observer or a list).
The task scheduler calls ``on_tuning_start`` once the tasks are prepared, ``on_batch`` with a
``TuningEvent`` after each measured batch (records already committed, cost model updated) and
``on_tuning_end`` when the loop stops, ``interrupted=True`` after Ctrl-C. An observer that
raises is logged and dropped: a broken display never stops the tuning.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

logger = logging.getLogger("irlab.meta_schedule")


@dataclass(frozen=True)
class TaskSummary:
    """One task as a display shows it: name, weight, FLOPs, trials, best seconds so far."""

    task_id: int
    name: str
    weight: float
    flop: float
    trials: int
    best_secs: float
    error: str | None = None

    @property
    def best_gflops(self) -> float:
        return self.flop / self.best_secs / 1e9 if math.isfinite(self.best_secs) else 0.0

    @staticmethod
    def of(task_id, record) -> "TaskSummary":
        return TaskSummary(task_id, record.name, record.task_weight, float(record.flop),
                           record.trials, record.best_secs, record.error)


@dataclass(frozen=True)
class TuningEvent:
    """One measured batch of one task.

    ``run_secs[i]`` is candidate i's mean time (None: it failed to build or run);
    ``predicted[i]`` the score the cost model gave it before it was measured (higher is
    better; None when the strategy used no model). ``network_secs`` is the weighted sum of
    the tasks' best times, None while some live task has no successful record.
    """

    task_id: int
    round_index: int
    total_trials: int
    run_secs: tuple
    predicted: tuple
    tasks: tuple = field(repr=False)  # TaskSummary of every task after the batch
    network_secs: float | None = None

    @property
    def task(self) -> TaskSummary:
        return self.tasks[self.task_id]

    def rank_correlation(self) -> float | None:
        """Spearman's rho between the predicted scores and the measured throughputs (1/s)
        of the batch's successful candidates; None with fewer than 3, no prediction,
        constant values, or without scipy (the ``tune`` extra has it)."""
        pairs = [(p, 1.0 / s) for p, s in zip(self.predicted, self.run_secs)
                 if p is not None and s is not None and s > 0]
        if len(pairs) < 3:
            return None
        predicted, measured = zip(*pairs)
        if len(set(predicted)) < 2 or len(set(measured)) < 2:
            return None
        try:
            from scipy.stats import spearmanr
        except ImportError:
            return None

        rho = float(spearmanr(predicted, measured).statistic)
        return rho if math.isfinite(rho) else None


class TuningObserver:
    """Base class: override what you need (each default does nothing).

    ``shows_progress = True`` says the observer displays the progress itself (a notebook
    monitor): the task scheduler then leaves out its tqdm bar, which would be a second,
    picture-less widget in the notebook. Without such an observer tqdm shows as before.
    """

    shows_progress = False

    def on_tuning_start(self, tasks) -> None:
        """``tasks``: a ``TaskSummary`` per task, before any trial."""

    def on_batch(self, event: TuningEvent) -> None:
        """After each measured batch."""

    def on_tuning_end(self, tasks, total_trials: int, interrupted: bool) -> None:
        """When tuning stops (budget spent, every task done, or interrupted)."""


def as_observers(monitor) -> list:
    """``monitor=`` as a list of observers (None: none)."""
    from irlab.errors import IrlabError

    if monitor is None:
        return []
    observers = list(monitor) if isinstance(monitor, (list, tuple)) else [monitor]
    for obs in observers:
        if not all(callable(getattr(obs, name, None))
                   for name in ("on_tuning_start", "on_batch", "on_tuning_end")):
            raise IrlabError(f"monitor: {obs!r} is not a TuningObserver (it needs "
                             f"on_tuning_start, on_batch and on_tuning_end)")
    return observers


def notify(observers, method, *args) -> None:
    """Call ``method`` on each observer; one that raises is logged and removed."""
    for obs in list(observers):
        try:
            getattr(obs, method)(*args)
        except Exception as err:  # noqa: BLE001 - a display must never stop the tuning
            logger.warning("tuning monitor %r failed in %s (%s: %s); it is detached",
                           obs, method, type(err).__name__, err)
            observers.remove(obs)


def network_secs(records) -> float | None:
    """Weighted sum of the live tasks' best times (None while one has none)."""
    live = [r for r in records if not r.error]
    if not live or any(not math.isfinite(r.best_secs) for r in live):
        return None
    return sum(r.task_weight * r.best_secs for r in live)


def replay_records(database, tasks=None):
    """A finished run as observer calls: yields the tuple of ``TaskSummary`` (the start),
    then a ``TuningEvent`` per run of consecutive records of one workload (a round), from
    ``database.records_in_measured_order()``. ``tasks``: ``[(name, mod, weight)]`` naming
    workloads (matched structurally; others are ``workload <i>`` of weight 1). Predictions
    are not stored in a database, so the events carry none; TOPI's baselines and the
    final verification's re-timings are left out (only candidates are trials)."""
    from types import SimpleNamespace

    from irlab.ir import structural_equal
    from irlab.meta_schedule.database.workload import normalize_mod
    from irlab.meta_schedule.feature_extractor import estimate_flops

    records = [r for r in database.records_in_measured_order() if r.origin is None]
    workloads = []
    for record in records:
        if not any(w is record.workload for w in workloads):
            workloads.append(record.workload)
    states = []
    for i, workload in enumerate(workloads):
        name, weight = f"workload {i}", 1.0
        for task_name, mod, task_weight in tasks or ():
            if structural_equal(normalize_mod(mod), workload.mod):
                name, weight = task_name, float(task_weight)
                break
        states.append(SimpleNamespace(name=name, task_weight=weight, error=None,
                                      flop=estimate_flops(workload.mod), trials=0,
                                      best_secs=math.inf, rounds=0))
    yield tuple(TaskSummary.of(i, s) for i, s in enumerate(states))
    total, start = 0, 0
    while start < len(records):
        task_id = next(i for i, w in enumerate(workloads) if w is records[start].workload)
        end = start
        while end < len(records) and records[end].workload is workloads[task_id]:
            end += 1
        state, secs = states[task_id], []
        for record in records[start:end]:
            ok = record.is_valid
            secs.append(record.mean_secs if ok else None)
            if ok:
                state.best_secs = min(state.best_secs, record.mean_secs)
        state.trials += end - start
        total += end - start
        yield TuningEvent(task_id, state.rounds, total, tuple(secs), (None,) * len(secs),
                          tuple(TaskSummary.of(i, s) for i, s in enumerate(states)),
                          network_secs(states))
        state.rounds += 1
        start = end
