"""Runner interface (TVM's ``ms.runner``): ``RunnerInput`` in, ``RunnerFuture`` of a
``RunnerResult`` out."""

from __future__ import annotations


class RunnerInput:
    """An artifact to time. irlab adds ``reference_path`` (the untuned build of the same
    workload: the candidate's outputs must match its outputs on random inputs before its time
    counts) and ``num_threads`` (threads for parallel loops, from the target)."""

    def __init__(self, artifact_path, device_type="cpu", args_info=None, *,
                 reference_path=None, num_threads=None):
        self.artifact_path = artifact_path
        self.device_type = device_type
        self.args_info = list(args_info or [])
        self.reference_path = reference_path
        self.num_threads = num_threads

    def __repr__(self):
        return f"RunnerInput({self.artifact_path!r}, {self.device_type!r})"


class RunnerResult:
    """``run_secs`` (a list of seconds), or None with ``error_msg`` when the run failed."""

    def __init__(self, run_secs=None, error_msg=None):
        self.run_secs = None if run_secs is None else [float(s) for s in run_secs]
        self.error_msg = error_msg

    def __repr__(self):
        if self.error_msg is not None:
            return f"RunnerResult(error: {self.error_msg.splitlines()[0][:100]})"
        return f"RunnerResult(run_secs={self.run_secs})"


class RunnerFuture:
    """A result to come: ``done()`` and ``result()`` (which waits)."""

    def __init__(self, f_done, f_result):
        self._done = f_done
        self._result = f_result

    def done(self) -> bool:
        return self._done()

    def result(self) -> RunnerResult:
        return self._result()

    @staticmethod
    def of(future):
        """Wrap a ``concurrent.futures.Future`` (or any object with done/result)."""
        return RunnerFuture(future.done, future.result)

    @staticmethod
    def ready(result):
        return RunnerFuture(lambda: True, lambda: result)


class Runner:
    """Times artifacts: ``run(inputs) -> [RunnerFuture]``, one per input, in order;
    ``run_interleaved(inputs, rounds) -> [RunnerResult]`` times them in turns."""

    def run(self, runner_inputs) -> list:
        raise NotImplementedError

    def run_interleaved(self, runner_inputs, rounds=10, round_ms=None) -> list:
        """One ``RunnerResult`` per input, in order, each with one time per round, the
        inputs timed in turns (round-robin) so that the host's drift hits them alike;
        ``round_ms``: how long each input is timed per round (default: the evaluator's
        ``min_repeat_ms``). ``LocalRunner`` does so; this fallback, for runners without it,
        times them one after another with ``run`` and is exposed to drift between them."""
        return [future.result() for future in self.run(runner_inputs)]
