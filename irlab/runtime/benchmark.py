"""Timing: ``BenchmarkResult`` and ``time_evaluator``, with TVM's semantics and printed form.

``time_evaluator`` follows TVM's C++ timer loop (src/runtime/profiling.cc): one warm-up call, then
``repeat`` measurements, each the average over ``number`` calls. When ``min_repeat_ms > 0``,
``number`` grows (to ``max(min_repeat_ms / per_call_ms + 1, number * 1.618)``) until one repeat
lasts that long; the grown ``number`` is kept for later repeats and later calls of the same
evaluator, as TVM's mutable closure does.
"""

from __future__ import annotations

import time

import numpy as np

from irlab.errors import IrlabError

# Read at call time so tests can substitute a fake clock.
_clock = time.perf_counter
_sleep = time.sleep
_GROWTH = 1.618


class BenchmarkResult:
    """Runtimes in seconds (``results``) and their ``mean``/``median``/``max``/``min``/``std``.

    With ``number > 1`` each result is already a mean over ``number`` calls.
    """

    def __init__(self, results):
        self.results = results
        self.mean = np.mean(self.results)
        self.std = np.std(self.results)
        self.median = np.median(self.results)
        self.min = np.min(self.results)
        self.max = np.max(self.results)

    def __repr__(self):
        return (f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, "
                f"max={self.max}, std={self.std}, results={self.results})")

    def __str__(self):
        ms = [v * 1000 for v in (self.mean, self.median, self.max, self.min, self.std)]
        header = " ".join(f"{h:^12}" for h in
                          ("mean (ms)", "median (ms)", "max (ms)", "min (ms)", "std (ms)"))
        # TVM's string ends with 15 spaces; kept so printed output compares equal.
        return ("Execution time summary:\n" + header + "\n"
                + " ".join(f"{v:^12.4f}" for v in ms) + " " * 15)


def _resolve_preproc(f_preproc):
    if f_preproc is None or f_preproc == "":
        return None
    if isinstance(f_preproc, str):
        from irlab.runtime.registry import get_global_func

        return get_global_func(f_preproc)
    if not callable(f_preproc):
        raise IrlabError(f"time_evaluator: f_preproc must be a callable or a global function "
                         f"name, got {type(f_preproc).__name__}")
    return f_preproc


def _bound(fn, args):
    """``fn(*args)`` as a callable of no arguments: a compiled function bound to ``args``
    (its argument checks done once, as TVM's evaluator packs the arguments once, so a
    kernel of a few us is timed without ~2 us of checks per array), else a plain call."""
    bind = getattr(fn, "bind", None)
    bound = bind(args) if bind is not None else None
    return bound if bound is not None else (lambda: fn(*args))


def time_evaluator(fn, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                   cooldown_interval_ms=0, repeats_to_cooldown=1, f_preproc=None, dev=None):
    """Return ``evaluator(*args) -> BenchmarkResult`` timing ``fn(*args)``.

    ``f_preproc`` (callable or registered name) runs with the same arguments before each repeat,
    untimed. ``cooldown_interval_ms`` sleeps after repeat ``i`` when ``i % repeats_to_cooldown ==
    0``. ``limit_zero_time_iterations`` bounds the growth loop when the clock measures 0.
    ``dev.sync()`` (if a device is given) is called around each timed block.
    """
    if not callable(fn):
        raise IrlabError(f"time_evaluator: expected a callable, got {type(fn).__name__}")
    for label, value in (("number", number), ("repeat", repeat),
                         ("repeats_to_cooldown", repeats_to_cooldown)):
        if int(value) < 1:
            raise IrlabError(f"time_evaluator: {label} must be >= 1, got {value}")
    preproc = _resolve_preproc(f_preproc)
    sync = dev.sync if dev is not None else (lambda: None)
    state = {"number": int(number)}

    def timed_block(call, n):
        sync()
        start = _clock()
        for _ in range(n):
            call()
        sync()
        return _clock() - start

    def evaluator(*args):
        fn(*args)  # warm-up: lazy initialisation must not be timed
        sync()
        call = _bound(fn, args)
        results = []
        for i in range(repeat):
            if preproc is not None:
                preproc(*args)
            elapsed, zero_times = 0.0, 0
            while True:
                if elapsed > 0.0:
                    n = state["number"]
                    state["number"] = int(max(min_repeat_ms / (elapsed * 1e3 / n) + 1,
                                              n * _GROWTH))
                elapsed = timed_block(call, state["number"])
                zero_times += elapsed == 0.0
                if not (elapsed * 1e3 < min_repeat_ms and zero_times < limit_zero_time_iterations):
                    break
            results.append(elapsed / state["number"])
            if cooldown_interval_ms > 0 and i % repeats_to_cooldown == 0:
                _sleep(cooldown_interval_ms / 1e3)
        return BenchmarkResult(tuple(results))

    evaluator.__name__ = f"time_evaluator[{getattr(fn, '__name__', 'fn')}]"
    return evaluator
