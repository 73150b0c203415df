"""Interleaved timing: several artifacts of one workload timed in turns in one worker.

A host's speed drifts (a VM's neighbours, frequency scaling) by 10-30% between time windows,
so two kernels timed a minute apart are compared through that drift. Timed in rounds (A B C,
then C B A, ...), each round's times are milliseconds apart and drift hits them alike: the
ratio of two artifacts' times in the same round cancels it (``database/verified.py``
compares records that way).

Each artifact is first checked alone (``check_artifact``, one worker call each), so a candidate
that crashes, hangs or computes wrong values fails alone; the rest are then timed together
(``time_interleaved``, one worker call).
"""

from __future__ import annotations

from irlab.meta_schedule.runner.measure import (check_against_reference, load_entry,
                                                random_arguments)
from irlab.meta_schedule.worker_pool import WorkerError


def round_config(config, round_ms):
    """``config`` with each round lasting at least ``round_ms`` (None: as it is)."""
    from irlab.meta_schedule.runner.config import EvaluatorConfig

    return config if round_ms is None else EvaluatorConfig(
        config.number, 1, round_ms, enable_cpu_cache_flush=config.enable_cpu_cache_flush)


def interleave_in_pool(pool, jobs, config, rounds, timeout_sec) -> list:
    """Check each job alone, then time the good ones in turns, all on ``pool``'s worker.

    ``jobs``: ``(artifact path, args_info, reference path or None, threads)`` each. Returns,
    per job in order, its list of seconds per round or the ``WorkerError`` that failed it (a
    crash, hang or wrong result in the check fails that job only; a failure of the
    interleaved call, which the checks make unlikely, fails every job that reached it)."""
    outs, one_call = [None] * len(jobs), {}
    for index, (path, args_info, reference_path, threads) in enumerate(jobs):
        out = pool.call(check_artifact, (path, args_info, reference_path, threads),
                        timeout_sec)
        if isinstance(out, WorkerError):
            outs[index] = out
        else:
            one_call[index] = out
    if not one_call:
        return outs
    live = sorted(one_call)
    timed = pool.call(time_interleaved, (
        [jobs[i][0] for i in live], [jobs[i][1] for i in live], config, rounds,
        jobs[live[0]][3]), timeout_sec + interleaved_seconds(one_call.values(), rounds, config))
    for position, index in enumerate(live):
        outs[index] = timed if isinstance(timed, WorkerError) else timed[position]
    return outs


def interleaved_seconds(call_secs, rounds, config) -> float:
    """A generous bound on ``time_interleaved``'s duration (its timeout, beyond loading):
    each round times each artifact for ``min_repeat_ms`` or ``number`` calls after a
    warm-up call, plus one sizing call each; four times that."""
    per_round = sum(max(config.min_repeat_ms / 1e3, config.number * secs) + secs
                    for secs in call_secs)
    return 4 * per_round * (int(rounds) + 2)


def check_artifact(path, args_info, reference_path=None, num_threads=None) -> float:
    """Load the artifact at ``path``, check it against the reference (when given) and return
    the seconds of one call (the caller sizes the interleaved call's timeout from it)."""
    import time

    from irlab.runtime.ndarray import array
    from irlab.runtime.threading import num_threads_override

    with num_threads_override(num_threads):
        func = load_entry(path)
        if reference_path is not None:
            return check_against_reference(func, reference_path, args_info)
        nds = [array(a) for a in random_arguments(args_info, seed=1)]
        start = time.perf_counter()
        func(*nds)
        return time.perf_counter() - start


def time_interleaved(paths, args_infos, config, rounds, num_threads=None) -> list:
    """Seconds per call of each artifact in each round: ``[[round 0, round 1, ...], ...]``,
    one list per path, in order (all on the first job's ``num_threads``).

    Each artifact gets a TVM-style evaluator (``config``'s ``number`` and ``min_repeat_ms``);
    one untimed call of each first sizes its ``number``, so every round measures the same
    number of calls. Within a round each artifact's measurement starts with a warm-up call,
    as an isolated measurement does, so the one timed before it does not leave it cold; odd
    rounds go in reverse order, so no artifact always follows the same one."""
    from irlab.runtime.benchmark import time_evaluator
    from irlab.runtime.ndarray import array
    from irlab.runtime.threading import num_threads_override

    with num_threads_override(num_threads):
        timers = []
        for path, args_info in zip(paths, args_infos):
            nds = [array(a) for a in random_arguments(args_info, seed=1)]
            evaluator = time_evaluator(load_entry(path), number=config.number, repeat=1,
                                       min_repeat_ms=config.min_repeat_ms,
                                       f_preproc=config.f_preproc)
            evaluator(*nds)  # sizes ``number``; not counted
            timers.append((evaluator, nds))
        times = [[] for _ in timers]
        order = list(range(len(timers)))
        for round_index in range(int(rounds)):  # A B C, C B A, ...: each follows each
            for i in order if round_index % 2 == 0 else order[::-1]:
                evaluator, nds = timers[i]
                times[i].append(evaluator(*nds).results[0])
        return times
