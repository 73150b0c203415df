"""Tuning TIR directly (TVM's ``ms.tune_tir`` and ``ms.tir_integration.compile_tir``)."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir import IRModule


def _tasks_of(mod, task_name="main"):
    from irlab.tir import PrimFunc

    if isinstance(mod, PrimFunc):
        return [(task_name, mod)]
    if not isinstance(mod, IRModule):
        raise IrlabError(f"tune_tir: expected an IRModule or a PrimFunc, got "
                         f"{type(mod).__name__}")
    named = sorted((gv.name_hint, f) for gv, f in mod.functions.items()
                   if isinstance(f, PrimFunc))
    if not named:
        raise IrlabError("tune_tir: the module has no PrimFunc to tune")
    return named


def tune_tir(mod, target, work_dir, max_trials_global, *, max_trials_per_task=None,
             num_trials_per_iter=64, builder="local", runner="local", database="json",
             cost_model="xgb", measure_callbacks="default", task_scheduler="gradient",
             space="post-order-apply", strategy="evolutionary", num_tuning_cores="physical",
             seed=None, module_equality="structural", special_space=None, task_name="main",
             monitor=None):
    """Tune each PrimFunc of ``mod`` for ``target``; returns the database of records.

    ``task_name`` names the task of a lone PrimFunc; the tasks of a module are named after its
    functions (as TVM, which accepts ``task_name`` and names module tasks the same way).

    A second call with the same ``work_dir`` resumes: the database (and the cost model)
    already hold what the first call measured. ``monitor``: a ``TuningObserver`` (e.g.
    ``irlab.widgets.TuningMonitor()``) that follows the run.
    """
    from irlab.meta_schedule.tune import tune_tasks
    from irlab.meta_schedule.tune import TuneConfig, fresh_copy
    from irlab.meta_schedule.tune_context import TuneContext
    from irlab.target import as_target
    from irlab.tir.schedule import RandomEngine

    if isinstance(work_dir, TuneConfig):  # TVM v0.10: tune_tir(mod, target, config, work_dir)
        config, work_dir = work_dir, max_trials_global
        max_trials_global, num_trials_per_iter = (config.max_trials_global,
                                                  config.num_trials_per_iter)
        max_trials_per_task = config.max_trials_per_task
        task_scheduler, strategy = config.task_scheduler, config.search_strategy()
    target = as_target(target)
    rand = RandomEngine(seed if seed is not None else -1)
    tasks = []
    for name, func in _tasks_of(mod, task_name):
        tasks.append(TuneContext(func, target=target,
                                 space_generator=fresh_copy((special_space or {}).get(
                                     name, space)),
                                 search_strategy=fresh_copy(strategy), task_name=name,
                                 rand_state=rand.fork_seed(), num_threads=num_tuning_cores))
    return tune_tasks(tasks=tasks, task_weights=[1.0] * len(tasks), work_dir=work_dir,
                      max_trials_global=max_trials_global,
                      max_trials_per_task=max_trials_per_task,
                      num_trials_per_iter=num_trials_per_iter, builder=builder, runner=runner,
                      database=database, cost_model=cost_model,
                      measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
                      module_equality=module_equality, monitor=monitor)


def compile_tir(database, mod, target):
    """The best ``tir.Schedule`` of ``mod`` for ``target`` in ``database`` (None if it has no
    successful record)."""
    from irlab.meta_schedule.database.workload import normalize_mod
    from irlab.tir import PrimFunc

    if isinstance(mod, IRModule) and len(_tasks_of(mod)) != 1:
        raise IrlabError("compile_tir: give one PrimFunc (or a module of one)")
    if not isinstance(mod, (IRModule, PrimFunc)):
        raise IrlabError(f"compile_tir: expected an IRModule or a PrimFunc, got "
                         f"{type(mod).__name__}")
    return database.query_schedule(normalize_mod(mod), target, workload_name="main")
