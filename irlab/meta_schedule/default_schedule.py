"""Default-schedule records: TOPI's schedule of a task, measured like a candidate.

A tuned network must never be slower than the untuned build. So before tuning a Relay model
each task's TOPI schedule is built and timed by the same builder and runner as the
candidates, and stored as an ordinary tuning record of the task's workload (TOPI schedules
the same unscheduled PrimFunc the tuner starts from, so its trace replays on the workload).
Such a record has ``origin="default"`` (``is_default_schedule``). After tuning, the final
verification (verification.py) re-times TOPI's schedule interleaved with the best tuned
records (``origin="verified-default"``); when the query's choice is TOPI's record, TOPI's
own schedule is what gets built.
"""

from __future__ import annotations

import logging
import os
import shutil

from irlab.meta_schedule.arg_info import ArgInfo
from irlab.meta_schedule.builder import BuilderInput
from irlab.meta_schedule.database.workload import MAX_RUN_SECS, TuningRecord
from irlab.meta_schedule.runner import RunnerInput

logger = logging.getLogger("irlab.meta_schedule")


def is_default_schedule(record) -> bool:
    """Whether ``record`` times the default (TOPI) schedule, not a candidate: its baseline
    (``"default"``) or its re-timing in a verification (``"verified-default"``)."""
    return record.origin in ("default", "verified-default")


def default_record(database, workload, target):
    """The default-schedule record of ``workload`` for ``target`` already in ``database``."""
    from irlab.target import as_target

    target = as_target(target)
    for record in database.get_top_k(workload, 1 << 30):
        if record.origin == "default" and str(record.target) == str(target):
            return record
    return None


def measure_default_schedules(tasks, builder, runner, database, again=False) -> dict:
    """Build and time each task's default schedule (``ExtractedTask.default_schedule``) and
    commit it to ``database``; a task measured before (same target) is not measured again
    unless ``again`` (a second sample: the fastest counts, as the tuned side is the fastest
    of many). Returns ``{task_name: seconds}`` (a failed build or run: no entry, no record)."""
    todo, times = [], {}
    for task in tasks:
        sch = getattr(task, "default_schedule", None)
        if sch is None:
            continue
        workload = database.commit_workload(task.mod)
        known = default_record(database, workload, task.target)
        if known is not None and not again:
            times[task.task_name] = known.mean_secs
            continue
        todo.append((task, sch, workload))
    if not todo:
        return times
    built = builder.build([BuilderInput(sch.mod, task.target) for task, sch, _ in todo])
    for (task, sch, workload), result in zip(todo, built):
        if result.error_msg is not None:
            logger.warning("task %s: TOPI's schedule failed to build (%s)", task.task_name,
                           result.error_msg.splitlines()[0])
            continue
        args_info = ArgInfo.from_entry_func(task.mod)
        ran = runner.run([RunnerInput(result.artifact_path, "cpu", args_info,
                                      num_threads=task.target.num_cores)])[0].result()
        shutil.rmtree(os.path.dirname(result.artifact_path), ignore_errors=True)
        if not ran.run_secs or any(s >= MAX_RUN_SECS for s in ran.run_secs):
            logger.warning("task %s: TOPI's schedule failed to run (%s)", task.task_name,
                           ran.error_msg)
            continue
        database.commit_tuning_record(TuningRecord(sch.trace, workload, ran.run_secs,
                                                   task.target, args_info, origin="default"))
        times[task.task_name] = sum(ran.run_secs) / len(ran.run_secs)
    return times
