"""The final verification of a tuned network: best tuned kernels re-timed against TOPI's.

Records are timed alone, minutes apart, while the host's speed drifts by 10-30%: a tuned
record 4% "faster" than TOPI's may be noise, and a network built from such records came out
slower than TOPI's build. So, per task, ``verify_best`` builds TOPI's schedule and the
``top_k`` fastest distinct tuned records and times them in turns in one runner worker
(``Runner.run_interleaved``: A B C D, D C B A, ..., ``rounds`` rounds), then commits them as a
verification group (TOPI's as ``origin="verified-default"``, the tuned as ``"verified"``,
each with its time per round). The database's query then builds with a tuned record only when
it beat TOPI's by more than ``VERIFY_MARGIN``, round by round (``database/verified.py``). A
task whose first session a tuned record wins is timed in a second session, and the rule
decides on both sessions' rounds together. A task whose tuned record wins on several threads
is verified on one thread as well, as a group for ``-num-cores=1`` (a build reads the group
of its own thread count).

Each round times each artifact as a candidate's measurement does (a warm-up call, then
calls for at least ``VERIFY_ROUND_MS``); the rule compares the *median* over rounds of
per-round ratios: a round's two times are milliseconds apart, so slow drift cancels in the
ratio, and the median drops the rounds in which a burst of other load hit one artifact and
not the other (a minimum over rounds would keep each side's luckiest round, from different
moments, which is what interleaving avoids).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from typing import NamedTuple

from irlab.meta_schedule.arg_info import ArgInfo
from irlab.meta_schedule.builder import BuilderInput
from irlab.meta_schedule.database.verified import VERIFY_MARGIN, choose_verified, paired_ratio
from irlab.meta_schedule.database.workload import MAX_RUN_SECS, TuningRecord
from irlab.meta_schedule.runner import RunnerInput, RunnerResult

logger = logging.getLogger("irlab.meta_schedule")

# Rounds of the interleaved timing, and how long each artifact is timed per round. Measured
# on this 2-core VM with other agents' jobs running (load 3.3-6), for two builds of the same
# dense kernel at 2 threads (the paired median should be 1.0): 40 rounds of 20 ms spread
# 0.977-1.052 over 14 runs, 20 of 40 ms 0.959-1.035 (6 runs), 10 of 40 ms 0.963-1.046 (6),
# 40 of 5 ms 0.897-1.056 (6). Short rounds see a burst of others' load whole; few rounds
# give a wide median. At load 5.8-6.4, 8 more runs of 40 x 20 ms spread 0.912-1.058: hence
# a second session for a win (``_time_and_commit``). About 1.6 s per pair of artifacts, 3.2 s
# for a task's 4 (twice that when a tuned one wins). (The minimum over rounds was far worse:
# the ratio of the two minima ranged 0.61-1.71.)
VERIFY_ROUNDS = 40
VERIFY_ROUND_MS = 20.0

__all__ = ["verify_best", "best_tuned_records", "VERIFY_MARGIN", "VERIFY_ROUNDS",
           "VERIFY_ROUND_MS"]


def best_tuned_records(database, workload, target, top_k) -> list:
    """The ``top_k`` fastest successful tuner candidates of ``workload`` for ``target``,
    distinct by trace (a schedule met twice counts once), fastest first."""
    seen, best = set(), []
    for record in database.get_top_k(workload, 1 << 30):
        if record.origin is not None or str(record.target) != str(target):
            continue
        key = json.dumps(record.trace_json, sort_keys=True)
        if key not in seen:
            seen.add(key)
            best.append(record)
        if len(best) == top_k:
            break
    return best


def verify_best(tasks, database, builder="local", runner="local", *, top_k=3,
                rounds=VERIFY_ROUNDS, round_ms=VERIFY_ROUND_MS, progress=True,
                single_thread=True) -> dict:
    """Re-time each task's TOPI schedule and its ``top_k`` best tuned records interleaved
    (``rounds`` rounds, each artifact timed for ``round_ms`` per round) and commit them as a
    verification group (module docstring). ``tasks``: ``ExtractedTask``s
    (a task without ``default_schedule`` or without tuned records is skipped). Returns
    ``{task_name: the record the database now builds it with}`` for the verified tasks.

    ``single_thread``: when a tuned record wins at the target's ``num_cores`` (> 1), the
    same artifacts are timed again on one thread and committed as a group of their own, for
    ``target -num-cores=1``: a build for one thread takes a tuned kernel only when it won
    there too (the database's query reads the group of the build's thread count). A kernel
    tuned on two threads can be slower on one: on ResNet-18, two such kernels made the
    1-thread build 7% slower than TOPI's while the 2-thread build was 3% faster."""
    from tqdm.auto import tqdm

    from irlab.meta_schedule.tune import make_builder, make_runner

    builder, runner = make_builder(builder), make_runner(runner)
    plans = [p for p in (_plan(task, database, top_k) for task in tasks) if p is not None]
    built = builder.build([BuilderInput(sch.mod, plan.task.target)
                           for plan in plans for sch in plan.schedules])
    chosen, start = {}, 0
    try:
        for plan in tqdm(plans, desc="verifying", unit="task",
                         disable=not progress or not plans):
            results = built[start:start + len(plan.schedules)]
            start += len(plan.schedules)
            group = _time_and_commit(plan, results, database, runner, rounds, round_ms,
                                     single_thread)
            task = plan.task
            chosen[task.task_name] = database.query_tuning_record(task.mod, task.target)
            _log(task, group, chosen[task.task_name])
    finally:  # also when interrupted: no build left behind
        for result in built:
            if result.artifact_path:
                shutil.rmtree(os.path.dirname(result.artifact_path), ignore_errors=True)
    return chosen


class _Plan(NamedTuple):
    """What to verify for a task: its workload, its best tuned records, and the schedules to
    build (TOPI's first, then the tuned records')."""

    task: object
    workload: object
    tuned: list
    schedules: list


def _plan(task, database, top_k):
    """The ``_Plan`` of ``task``; None without TOPI's schedule or without tuned records."""
    if getattr(task, "default_schedule", None) is None:
        return None
    workload = database.commit_workload(task.mod)
    tuned = best_tuned_records(database, workload, task.target, top_k)
    if not tuned:
        return None
    return _Plan(task, workload, tuned, [task.default_schedule] + [r.schedule() for r in tuned])


def _time_and_commit(plan, results, database, runner, rounds, round_ms, single_thread):
    """The verification group at the task's target, then (``single_thread``, a tuned record
    winning on several threads) the group of one thread (see ``verify_best``); returns the
    first."""
    target = plan.task.target
    group = _verify_at(plan, results, database, runner, rounds, round_ms, target)
    if single_thread and target.num_cores > 1 and _tuned_wins(group):
        _verify_at(plan, results, database, runner, rounds, round_ms, with_cores(target, 1))
    return group


def _tuned_wins(group) -> bool:
    """Whether the margin rule picks a tuned record of ``group`` over TOPI's (which ran)."""
    return group[0].is_valid and choose_verified(group) not in (None, group[0])


def with_cores(target, cores):
    """``target`` with ``-num-cores=cores``."""
    from irlab.target import Target

    out = Target(target)
    out.options["num-cores"] = int(cores)
    return out


def _verify_at(plan, results, database, runner, rounds, round_ms, target):
    """Run the built artifacts interleaved on ``target.num_cores`` threads (the tuned checked
    against TOPI's outputs) and commit the group for ``target``, TOPI's record first; a
    failed build or run is a failed record.

    When a tuned record wins, a second session of ``rounds`` rounds confirms it: every
    artifact's times of both sessions are joined and the rule decides on all of them (the
    median of twice as many ratios), so a win that was a streak of noise is unlikely to
    survive, while a losing task costs one session only."""
    task = plan.task
    args_info = ArgInfo.from_entry_func(task.mod)
    reference = results[0].artifact_path if results[0].error_msg is None else None
    live = [i for i, r in enumerate(results) if r.error_msg is None]
    inputs = [RunnerInput(results[i].artifact_path, "cpu", args_info,
                          reference_path=reference if i else None,
                          num_threads=target.num_cores) for i in live]

    def session():
        return dict(zip(live, runner.run_interleaved(inputs, rounds, round_ms)
                        if inputs else []))

    ran = session()
    group = _group(plan, ran, args_info, target)
    if _tuned_wins(group):
        ran = _joined(ran, session())
        group = _group(plan, ran, args_info, target)
    for index, record in enumerate(group):
        if not record.is_valid:
            result = ran.get(index)
            why = results[index].error_msg or (result.error_msg if result else "no result")
            logger.warning("task %s: verification of %s on %d threads failed (%s)",
                           task.task_name,
                           "TOPI's schedule" if index == 0 else f"tuned record {index}",
                           target.num_cores, (why or "no time").splitlines()[0])
        database.commit_tuning_record(record)
    return group


def _group(plan, ran, args_info, target):
    """The verification group's records for ``target`` (not committed): TOPI's, then the
    tuned ones, each with its times per round, or the failure marker."""
    traces = [plan.schedules[0].trace] + [None] * len(plan.tuned)
    trace_jsons = [None] + [r.trace_json for r in plan.tuned]
    group = []
    for index, (trace, trace_json) in enumerate(zip(traces, trace_jsons)):
        result = ran.get(index)
        secs = result.run_secs if result is not None and result.run_secs else [MAX_RUN_SECS]
        group.append(TuningRecord(trace, plan.workload, secs, target, args_info,
                                  trace_json=trace_json,
                                  origin="verified" if index else "verified-default"))
    return group


def _joined(first, second):
    """Two sessions' results per artifact, their times joined (a failure in either fails)."""
    joined = {}
    for index, result in first.items():
        again = second.get(index)
        if result.run_secs and again is not None and again.run_secs:
            joined[index] = RunnerResult(result.run_secs + again.run_secs)
        else:
            joined[index] = result if not result.run_secs else again
    return joined


def _log(task, group, chosen):
    baseline, tuned = group[0], [r for r in group[1:] if r.is_valid]
    if not (baseline.is_valid and tuned):
        return
    best = min(paired_ratio(r, baseline) for r in tuned)
    logger.info("task %s: best tuned / TOPI = %.3f (median of %d paired rounds): %s",
                task.task_name, best, len(baseline.run_secs),
                "TOPI's" if chosen is baseline else "tuned")
