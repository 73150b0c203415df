"""Interleaved timing: several artifacts of one workload timed in turns in one worker.

A host's speed drifts (a VM's neighbours, frequency scaling) by 10-30% between time windows,
so two kernels timed a minute apart are compared through that drift. Timed in rounds, A B C
A B C ..., each round's times are milliseconds apart and drift hits them alike: the ratio of
two artifacts' times in the same round cancels it (``database/verified.py`` compares records
that way).

Each artifact is first checked alone (``check_artifact``, one worker call each), so a candidate
that crashes, hangs or computes wrong values fails alone; the rest are then timed together
(``time_interleaved``, one worker call).
"""

from __future__ import annotations

from irlab.meta_schedule.runner.measure import (check_against_reference, load_entry,
                                                random_arguments)


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
    one list per path, in order.

    Each artifact gets a TVM-style evaluator (``config``'s ``number`` and ``min_repeat_ms``);
    one untimed call of each first sizes its ``number``, so every round measures the same
    number of calls. Within a round each artifact's measurement starts with a warm-up call,
    as an isolated measurement does, so the one timed before it does not leave it cold."""
    from irlab.runtime.benchmark import time_evaluator
    from irlab.runtime.ndarray import array
    from irlab.runtime.threading import num_threads_override

    with num_threads_override(num_threads):
        timers = []
        for path, args_info in zip(paths, args_infos):
            nds = [array(a) for a in random_arguments(args_info, seed=1)]
            evaluator = time_evaluator(load_entry(path), number=config.number, repeat=1,
                                       min_repeat_ms=config.min_repeat_ms)
            evaluator(*nds)  # sizes ``number``; not counted
            timers.append((evaluator, nds))
        times = [[] for _ in timers]
        for _ in range(int(rounds)):
            for series, (evaluator, nds) in zip(times, timers):
                series.append(evaluator(*nds).results[0])
        return times
