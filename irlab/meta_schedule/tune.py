"""``tune_tasks``: tune a list of TuneContexts with one task scheduler, builder, runner,
database and cost model (TVM's ``ms.tune_tasks``); components are given by name or object."""

from __future__ import annotations

import os

from irlab.errors import IrlabError


def fresh_copy(component):
    """Each task gets its own space generator / search strategy: a name stays a name (the
    context makes one), an object is cloned (it keeps per-task state)."""
    return component if isinstance(component, str) or component is None else component.clone()


def make_builder(builder):
    from irlab.meta_schedule.builder import Builder, LocalBuilder

    if isinstance(builder, Builder):
        return builder
    if builder == "local":
        return LocalBuilder()
    raise IrlabError(f"unknown builder {builder!r}; give 'local' or a Builder")


def make_runner(runner):
    from irlab.meta_schedule.runner import LocalRunner, Runner

    if isinstance(runner, Runner):
        return runner
    if runner == "local":
        return LocalRunner()
    raise IrlabError(f"unknown runner {runner!r}; give 'local' or a Runner (DaskRunner for a "
                     f"cluster)")


def make_database(database, work_dir):
    from irlab.meta_schedule.database import Database, JSONDatabase, MemoryDatabase

    if isinstance(database, Database):
        return database
    if database == "json":
        if work_dir is None:
            raise IrlabError("database='json' needs a work_dir")
        return JSONDatabase(work_dir=work_dir)
    if database == "memory":
        return MemoryDatabase()
    raise IrlabError(f"unknown database {database!r}; give 'json', 'memory' or a Database")


def make_cost_model(cost_model, seed=None):
    from irlab.meta_schedule.cost_model import CostModel, RandomModel, XGBModel

    if isinstance(cost_model, CostModel):
        return cost_model
    if cost_model == "xgb":
        return XGBModel(seed=seed or 0)
    if cost_model == "random":
        return RandomModel(seed=seed)
    raise IrlabError(f"unknown cost model {cost_model!r}; give 'xgb', 'random' or a CostModel")


def make_callbacks(measure_callbacks):
    from irlab.meta_schedule.measure_callback import MeasureCallback

    if isinstance(measure_callbacks, str):
        return MeasureCallback.create(measure_callbacks)
    return list(measure_callbacks)


def tune_tasks(*, tasks, task_weights, work_dir, max_trials_global, max_trials_per_task=None,
               num_trials_per_iter=64, builder="local", runner="local", database="json",
               cost_model="xgb", measure_callbacks="default", task_scheduler="gradient",
               module_equality="structural", monitor=None):
    """Tune ``tasks`` (TuneContexts) within ``max_trials_global`` trials; returns the database.

    ``monitor``: a ``TuningObserver`` (or a list of them) told of every measured batch, e.g.
    the notebook's ``irlab.widgets.TuningMonitor``; tqdm shows progress either way.

    The cost model is saved beside the database (``cost_model.npz``) when it can be, and
    reloaded by the next call with the same ``work_dir``.
    """
    from irlab.meta_schedule.task_scheduler import TaskScheduler
    from irlab.meta_schedule.tuning_observer import as_observers

    if module_equality != "structural":
        raise IrlabError(f"tune_tasks: only module_equality='structural' is supported, "
                         f"got {module_equality!r}")
    if not tasks:
        raise IrlabError("tune_tasks: no tasks to tune")
    observers = as_observers(monitor)
    if work_dir is not None:
        os.makedirs(work_dir, exist_ok=True)
    database = make_database(database, work_dir)
    model = make_cost_model(cost_model)
    model_path = None if work_dir is None else os.path.join(work_dir, "cost_model.npz")
    if model_path and os.path.exists(model_path) and hasattr(model, "features"):
        try:
            model.load(model_path)
        except IrlabError:
            pass  # a stale or foreign file: start the model afresh
    scheduler = TaskScheduler.create(task_scheduler)
    database.task_scheduler = scheduler  # tuning statistics stay reachable from the result
    try:
        scheduler.tune(tasks, task_weights, max_trials_global, max_trials_per_task,
                       num_trials_per_iter, make_builder(builder), make_runner(runner),
                       make_callbacks(measure_callbacks), database, model, observers)
    finally:  # also when interrupted: what the model learned is kept for the next call
        if model_path and hasattr(model, "features"):
            model.save(model_path)
    return database


class TuneConfig:
    """TVM v0.10's tuning configuration (``ms.TuneConfig``), still accepted by ``tune_tir``
    as ``tune_tir(mod, target, config, work_dir)``; newer code passes these as keywords."""

    def __init__(self, max_trials_global, num_trials_per_iter=64, max_trials_per_task=None,
                 task_scheduler="gradient", strategy="evolutionary",
                 search_strategy_config=None):
        self.max_trials_global = int(max_trials_global)
        self.num_trials_per_iter = int(num_trials_per_iter)
        self.max_trials_per_task = max_trials_per_task
        self.task_scheduler = task_scheduler
        self.strategy = strategy
        self.search_strategy_config = dict(search_strategy_config or {})

    def search_strategy(self):
        """The strategy, made from its name and ``search_strategy_config`` when needed."""
        from irlab.meta_schedule.search_strategy import SearchStrategy

        if not isinstance(self.strategy, str):
            return self.strategy
        return SearchStrategy.create(self.strategy, **self.search_strategy_config)

    def __repr__(self):
        return (f"TuneConfig(max_trials_global={self.max_trials_global}, "
                f"num_trials_per_iter={self.num_trials_per_iter}, strategy={self.strategy!r})")
