"""Measure callbacks (TVM's ``ms.measure_callback``): what happens after each batch is run.

``MeasureCallback.create("default")`` gives TVM's three: records into the database, build
artifacts removed, the cost model updated.
"""

from __future__ import annotations

import os
import shutil

from irlab.errors import IrlabError
from irlab.meta_schedule.database.workload import MAX_RUN_SECS, TuningRecord


class MeasureCallback:
    """``apply(task_scheduler, task_id, measure_candidates, builder_results,
    runner_results)`` after a batch of a task is measured."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results) -> None:
        raise NotImplementedError

    @staticmethod
    def create(kind="default") -> list:
        if kind != "default":
            raise IrlabError(f"MeasureCallback.create: unknown kind {kind!r} (only 'default')")
        return [AddToDatabase(), RemoveBuildArtifact(), UpdateCostModel()]

    def __repr__(self):
        return f"{type(self).__name__}()"


class AddToDatabase(MeasureCallback):
    """Commit one record per candidate; a failed build or run is stored as ``[1e10]``."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results) -> None:
        database = task_scheduler.database
        if database is None:
            return
        context = task_scheduler.tasks[task_id].ctx
        workload = database.commit_workload(context.mod)
        for cand, built, ran in zip(measure_candidates, builder_results, runner_results):
            ok = built.error_msg is None and ran.run_secs
            database.commit_tuning_record(TuningRecord(
                cand.sch.trace, workload, ran.run_secs if ok else [MAX_RUN_SECS],
                context.target, cand.args_info))


class RemoveBuildArtifact(MeasureCallback):
    """Delete each candidate's compiled artifact (and its folder) once it has been run."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results) -> None:
        for built in builder_results:
            if built.artifact_path:
                shutil.rmtree(os.path.dirname(built.artifact_path), ignore_errors=True)


class UpdateCostModel(MeasureCallback):
    """Teach the task scheduler's cost model the measured times."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results) -> None:
        model = task_scheduler.cost_model
        if model is None:
            return
        context = task_scheduler.tasks[task_id].ctx
        model.update(context, measure_candidates, runner_results)
