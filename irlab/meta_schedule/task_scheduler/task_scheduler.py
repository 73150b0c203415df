"""``TaskScheduler``: spends a trial budget over tuning tasks (TVM's ``ms.task_scheduler``).

``tune`` prepares every task (design spaces, the untuned reference build), then repeats:
pick a task (``next_task_id``; the subclass decides), ask its search strategy for a batch,
build it, run it (checked against the reference), notify the strategy and apply the measure
callbacks (database, cost model), until every task is done or the global budget is spent.
A task whose design space cannot be generated is reported and skipped (its workload keeps
the default schedule). Ctrl-C (KeyboardInterrupt) stops the loop between two batches or
inside one: every record measured before it is in the database already (each is flushed
as it is committed), the strategies are closed, and the interrupt goes on to the caller. Observers
(``tuning_observer.TuningObserver``, e.g. the notebook's monitor) hear of the start, each
batch and the end, interrupted or not.
"""

from __future__ import annotations

import logging
import math
import os
import shutil

from irlab.errors import IrlabError
from irlab.meta_schedule.builder import BuilderInput
from irlab.meta_schedule.database.workload import MAX_RUN_SECS
from irlab.meta_schedule.default_schedule import default_record
from irlab.meta_schedule.runner import RunnerInput, RunnerResult
from irlab.meta_schedule.tuning_observer import (TaskSummary, TuningEvent, network_secs,
                                                 notify)

logger = logging.getLogger("irlab.meta_schedule")


class TaskRecord:
    """A task's state: context, weight, trials, errors, best latency and its history."""

    def __init__(self, ctx, weight):
        from irlab.meta_schedule.feature_extractor import estimate_flops

        self.ctx = ctx
        self.task_weight = float(weight)
        self.flop = estimate_flops(ctx.mod)
        self.is_terminated = False
        self.trials = 0
        self.build_error_count = 0
        self.run_error_count = 0
        self.best_secs = math.inf
        self.best_history = []    # (global trial number, best seconds so far)
        self.rounds = []          # best seconds after each of this task's rounds
        self.reference_path = None
        self.error = None         # why the task was skipped

    @property
    def name(self):
        return self.ctx.task_name

    @property
    def best_gflops(self):
        return self.flop / self.best_secs / 1e9 if math.isfinite(self.best_secs) else 0.0

    def __repr__(self):
        best = f"{self.best_secs * 1e3:.4f} ms" if math.isfinite(self.best_secs) else "-"
        return f"TaskRecord({self.name}, weight={self.task_weight:g}, trials={self.trials}, " \
               f"best={best})"


class TaskScheduler:
    """Base class; ``create("gradient" | "round-robin")`` makes one by name."""

    def __init__(self):
        self.tasks = []
        self.database = None
        self.cost_model = None
        self.builder = None
        self.runner = None
        self.measure_callbacks = []
        self.total_trials = 0
        self.interrupted = False
        self.listeners = []   # f(scheduler, task_id) after each batch (progress displays)
        self.observers = []   # TuningObservers (tune's ``observers=``)

    @staticmethod
    def create(kind="gradient", *args, **kwargs) -> "TaskScheduler":
        from irlab.meta_schedule.task_scheduler.gradient_based import GradientBased
        from irlab.meta_schedule.task_scheduler.round_robin import RoundRobin

        if isinstance(kind, TaskScheduler):
            return kind
        kinds = {"gradient": GradientBased, "round-robin": RoundRobin}
        if kind not in kinds:
            raise IrlabError(f"TaskScheduler.create: unknown kind {kind!r}; expected one of "
                             f"{sorted(kinds)}")
        return kinds[kind](*args, **kwargs)

    # -- the loop --------------------------------------------------------------------------
    def tune(self, tasks, task_weights, max_trials_global, max_trials_per_task,
             num_trials_per_iter, builder, runner, measure_callbacks, database, cost_model,
             observers=()):
        from tqdm.auto import tqdm

        if len(tasks) != len(task_weights):
            raise IrlabError(f"TaskScheduler.tune: {len(tasks)} tasks but "
                             f"{len(task_weights)} weights")
        self.tasks = [TaskRecord(ctx, w) for ctx, w in zip(tasks, task_weights)]
        self.builder, self.runner, self.database = builder, runner, database
        self.cost_model, self.measure_callbacks = cost_model, list(measure_callbacks)
        self.max_trials_global = int(max_trials_global)
        self.max_trials_per_task = int(max_trials_per_task or max_trials_global)
        self.num_trials_per_iter = int(num_trials_per_iter)
        self.observers = list(observers)
        self._prepare()
        notify(self.observers, "on_tuning_start", self.summaries())
        shown = any(getattr(obs, "shows_progress", False) for obs in self.observers)
        progress = tqdm(total=self.max_trials_global, desc="tuning", unit="trial",
                        leave=False, disable=shown)
        try:
            while self.total_trials < self.max_trials_global:
                task_id = self.next_task_id()
                if task_id < 0:
                    break
                done = self._one_batch(task_id)
                progress.update(done)
                progress.set_postfix_str(self._postfix(task_id))
        except KeyboardInterrupt:
            self.interrupted = True
            logger.warning("tuning interrupted after %d trials: the database holds every "
                           "record measured", self.total_trials)
            raise
        finally:
            progress.close()
            self._cleanup()
            notify(self.observers, "on_tuning_end", self.summaries(), self.total_trials,
                   self.interrupted)
        return self

    def _cleanup(self):
        """Close the strategies, delete the reference builds."""
        for record in self.tasks:
            if record.reference_path:
                shutil.rmtree(os.path.dirname(record.reference_path), ignore_errors=True)
            if record.ctx.search_strategy is not None and not record.error:
                try:
                    record.ctx.post_tuning()
                except IrlabError:
                    pass

    def _prepare(self):
        for record in self.tasks:
            try:
                record.ctx.pre_tuning(self.max_trials_per_task, self.num_trials_per_iter,
                                      record.ctx.generate_design_space(), self.database,
                                      self.cost_model)
            except Exception as err:  # a workload the rules cannot schedule: report, skip
                record.error = f"{type(err).__name__}: {err}"
                record.is_terminated = True
                logger.warning("task %s: no design space (%s); it keeps its default "
                               "schedule", record.name, record.error)
        live = [r for r in self.tasks if not r.is_terminated]
        built = self.builder.build([BuilderInput(r.ctx.mod, r.ctx.target) for r in live])
        for record, result in zip(live, built):
            record.reference_path = result.artifact_path
            if result.error_msg is not None:
                logger.warning("task %s: the untuned build failed, results are not checked "
                               "(%s)", record.name, result.error_msg.splitlines()[0])

    def _one_batch(self, task_id):
        record = self.tasks[task_id]
        ctx = record.ctx
        budget = min(self.max_trials_global - self.total_trials,
                     self.max_trials_per_task - record.trials)
        try:
            candidates = ctx.generate_measure_candidates() if budget > 0 else None
        except (IrlabError, ValueError, TypeError) as err:  # one task's search failing
            record.error = f"search failed: {type(err).__name__}: {err}"  # stops that task only
            logger.warning("task %s: %s", record.name, record.error)
            candidates = None
        if not candidates:
            record.is_terminated = True
            return 0
        candidates = candidates[:budget]
        built = self.builder.build([BuilderInput(c.sch.mod, ctx.target) for c in candidates])
        try:
            results = self._run(record, candidates, built)
        except BaseException:  # interrupted mid-batch: RemoveBuildArtifact will not run
            for b in built:
                if b.artifact_path:
                    shutil.rmtree(os.path.dirname(b.artifact_path), ignore_errors=True)
            raise
        ctx.notify_runner_results(candidates, results)
        for callback in self.measure_callbacks:
            callback.apply(self, task_id, candidates, built, results)
        self._account(record, built, results)
        for listener in self.listeners:
            listener(self, task_id)
        if self.observers:
            notify(self.observers, "on_batch", self._event(task_id, candidates, built,
                                                            results))
        return len(candidates)

    def summaries(self) -> tuple:
        """A ``TaskSummary`` of each task (what displays show)."""
        return tuple(TaskSummary.of(i, r) for i, r in enumerate(self.tasks))

    def _event(self, task_id, candidates, built, results) -> TuningEvent:
        secs = []
        for b, r in zip(built, results):
            ok = b.error_msg is None and r.run_secs and all(s < MAX_RUN_SECS
                                                              for s in r.run_secs)
            secs.append(sum(r.run_secs) / len(r.run_secs) if ok else None)
        return TuningEvent(task_id, len(self.tasks[task_id].rounds) - 1, self.total_trials,
                           tuple(secs),
                           tuple(getattr(c, "predicted_score", None) for c in candidates),
                           self.summaries(), network_secs(self.tasks))

    def _run(self, record, candidates, built):
        threads = record.ctx.target.num_cores if record.ctx.target is not None else None
        futures = []
        for cand, b in zip(candidates, built):
            if b.error_msg is not None:
                futures.append(None)
                continue
            futures.append(self.runner.run([RunnerInput(
                b.artifact_path, "cpu", cand.args_info, reference_path=record.reference_path,
                num_threads=threads)])[0])
        return [RunnerResult(None, b.error_msg) if f is None else f.result()
                for f, b in zip(futures, built)]

    def _account(self, record, built, results):
        for b, r in zip(built, results):
            self.total_trials += 1
            record.trials += 1
            if b.error_msg is not None:
                record.build_error_count += 1
            elif not r.run_secs or any(s >= MAX_RUN_SECS for s in r.run_secs):
                record.run_error_count += 1
            else:
                record.best_secs = min(record.best_secs, sum(r.run_secs) / len(r.run_secs))
            record.best_history.append((self.total_trials, record.best_secs))
        record.rounds.append(record.best_secs)
        if record.trials >= self.max_trials_per_task:
            record.is_terminated = True

    def _postfix(self, task_id):
        record = self.tasks[task_id]
        best = f"{record.best_secs * 1e3:.3f} ms" if math.isfinite(record.best_secs) else "-"
        return f"{record.name}: best {best}, {record.best_gflops:.1f} GFLOPS"

    # -- choosing ---------------------------------------------------------------------------
    def next_task_id(self) -> int:
        """The task to tune next, -1 when none is left."""
        raise NotImplementedError

    def _live(self):
        return [i for i, r in enumerate(self.tasks) if not r.is_terminated]

    # -- reporting --------------------------------------------------------------------------
    def tuning_statistics(self) -> str:
        """A table of the tasks: weight, trials, errors, best latency and GFLOPS, and the
        latency of TOPI's schedule when it was measured (``tune_relay`` does); the weighted
        latency counts the faster of the two per task, as ``compile_relay`` builds."""
        lines = [f"{'ID':>3} | {'Name':<32} | {'Weight':>6} | {'Trials':>6} | "
                 f"{'Failed':>6} | {'Best (ms)':>10} | {'GFLOPS':>8} | {'TOPI (ms)':>10}"]
        total = 0.0
        for i, r in enumerate(self.tasks):
            best = f"{r.best_secs * 1e3:.4f}" if math.isfinite(r.best_secs) else "N/A"
            topi_secs = self._default_secs(r)
            topi = f"{topi_secs * 1e3:.4f}" if math.isfinite(topi_secs) else "-"
            fails = r.build_error_count + r.run_error_count
            lines.append(f"{i:>3} | {r.name[:32]:<32} | {r.task_weight:>6g} | {r.trials:>6} | "
                         f"{fails:>6} | {best:>10} | {r.best_gflops:>8.2f} | {topi:>10}"
                         + (f"  (skipped: {r.error[:60]})" if r.error else ""))
            if math.isfinite(min(r.best_secs, topi_secs)):
                total += min(r.best_secs, topi_secs) * r.task_weight
        lines.append(f"Total trials: {self.total_trials}; weighted latency: "
                     f"{total * 1e3:.4f} ms")
        return "\n".join(lines)

    def _default_secs(self, record) -> float:
        """Seconds of the task's default-schedule record in the database (inf: none)."""
        database = getattr(self, "database", None)
        if database is None or record.ctx.mod is None or not database.has_workload(
                record.ctx.mod):
            return math.inf
        known = default_record(database, database.commit_workload(record.ctx.mod),
                               record.ctx.target)
        return math.inf if known is None else known.mean_secs

    def print_tuning_statistics(self) -> None:
        print(self.tuning_statistics())

    def __repr__(self):
        return f"{type(self).__name__}({len(self.tasks)} tasks, {self.total_trials} trials)"
