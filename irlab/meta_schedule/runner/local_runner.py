"""``LocalRunner``: time candidates one at a time in a worker process on this machine.

Measurements run serially (two at once would share the cores and time each other). A
candidate that computes a wrong result, raises, hangs past ``timeout_sec`` or crashes its
process yields ``RunnerResult(run_secs=None, error_msg=...)``; the worker is replaced when
needed and the tuner goes on.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

from irlab.meta_schedule.runner.config import EvaluatorConfig
from irlab.meta_schedule.runner.interleaved import interleave_in_pool, round_config
from irlab.meta_schedule.runner.measure import (measure, prepare_reference,
                                                reference_outputs_path, warm_up)
from irlab.meta_schedule.runner.runner import Runner, RunnerFuture, RunnerResult
from irlab.meta_schedule.worker_pool import WorkerError, WorkerPool


class LocalRunner(Runner):
    """Runs each ``RunnerInput`` in a worker process; ``run`` returns futures at once."""

    def __init__(self, timeout_sec=30.0, evaluator_config=None, cooldown_sec=0.0,
                 alloc_repeat=1):
        self.timeout_sec = float(timeout_sec)
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.cooldown_sec = float(cooldown_sec)
        self.alloc_repeat = int(alloc_repeat)
        self._pool = None
        self._serial = ThreadPoolExecutor(1, thread_name_prefix="irlab-ms-runner")

    @property
    def pool(self):
        if self._pool is None:
            self._pool = WorkerPool(1, initializer=warm_up)
        return self._pool

    def run(self, runner_inputs) -> list:
        return [RunnerFuture.of(self._serial.submit(self.run_one, inp))
                for inp in runner_inputs]

    def run_one(self, runner_input) -> RunnerResult:
        """Measure one input in the worker (blocking)."""
        error = self._prepare_reference(runner_input)
        if error is not None:
            return error
        out = self.pool.call(measure, (runner_input.artifact_path, runner_input.args_info,
                                       self.evaluator_config, runner_input.reference_path,
                                       runner_input.num_threads), self.timeout_sec)
        if self.cooldown_sec > 0:
            time.sleep(self.cooldown_sec)
        return result_of(out)

    def run_interleaved(self, runner_inputs, rounds=10, round_ms=None) -> list:
        """One ``RunnerResult`` per input, in order: ``rounds`` times each (seconds per call,
        each timed for at least ``round_ms``, default the evaluator's ``min_repeat_ms``), the
        inputs timed in turns in one worker call (``runner/interleaved.py``). Each input is
        checked alone first; one that crashes, hangs or is wrong gets a failed result and the
        others are timed without it. Waits for earlier ``run`` measurements."""
        config = round_config(self.evaluator_config, round_ms)
        return self._serial.submit(self._interleave, list(runner_inputs), rounds,
                                   config).result()

    def _interleave(self, inputs, rounds, config):
        failed = [self._prepare_reference(inp) for inp in inputs]
        jobs = [(inp.artifact_path, inp.args_info, inp.reference_path, inp.num_threads)
                for inp, error in zip(inputs, failed) if error is None]
        outs = iter(interleave_in_pool(self.pool, jobs, config, rounds, self.timeout_sec))
        return [error if error is not None else result_of(next(outs)) for error in failed]

    def _prepare_reference(self, runner_input):
        """Run the task's reference once (its outputs saved beside it) under a timeout of its
        own, ``REFERENCE_TIMEOUT_FACTOR`` times a candidate's: the unscheduled reference may
        be far slower than any candidate. None, or the failed result of the candidate."""
        path = runner_input.reference_path
        if path is None or os.path.exists(reference_outputs_path(path)):
            return None
        out = self.pool.call(prepare_reference, (path, runner_input.args_info),
                             self.timeout_sec * REFERENCE_TIMEOUT_FACTOR)
        if isinstance(out, WorkerError):
            return RunnerResult(None, f"reference run {out.kind}: {out.message}")
        return None

    def __repr__(self):
        return f"LocalRunner(timeout_sec={self.timeout_sec}, {self.evaluator_config})"


REFERENCE_TIMEOUT_FACTOR = 10


def result_of(out) -> RunnerResult:
    """A ``RunnerResult`` from a worker's return value or ``WorkerError``."""
    if isinstance(out, WorkerError):
        return RunnerResult(None, f"run {out.kind}: {out.message}")
    return RunnerResult(out, None)
