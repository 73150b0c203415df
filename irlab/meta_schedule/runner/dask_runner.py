"""``DaskRunner``: time candidates on a Dask ``distributed`` cluster.

Dask rather than Ray: ``distributed`` is a pure-Python wheel of a few MB (Ray's is hundreds),
a ``LocalCluster`` starts in about a second inside a test, and a real cluster is one
``dask scheduler`` plus ``dask worker ADDRESS`` per machine.

Each candidate travels as bytes (the artifact and its reference), so workers need no shared
file system. On the worker, the measurement runs in a worker process of its own (as
``LocalRunner`` does), so a candidate that crashes or hangs fails alone and the Dask worker
lives on. Give each Dask worker one thread (``--nthreads 1``) so measurements do not overlap.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading

from irlab.errors import IrlabError
from irlab.meta_schedule.runner.config import EvaluatorConfig
from irlab.meta_schedule.runner.interleaved import interleave_in_pool, round_config
from irlab.meta_schedule.runner.local_runner import result_of
from irlab.meta_schedule.runner.measure import measure, warm_up
from irlab.meta_schedule.runner.runner import Runner, RunnerFuture, RunnerResult
from irlab.meta_schedule.worker_pool import WorkerPool

_worker_state = {}
_worker_lock = threading.Lock()


class DaskRunner(Runner):
    """Measures on the Dask cluster at ``scheduler_address`` (or through ``client``).

    A scheduler that cannot be reached within ``connect_timeout_sec`` raises at once.
    """

    def __init__(self, scheduler_address=None, *, client=None, timeout_sec=30.0,
                 evaluator_config=None, connect_timeout_sec=5.0):
        self.timeout_sec = float(timeout_sec)
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.client = client if client is not None else connect(scheduler_address,
                                                                 connect_timeout_sec)

    def run(self, runner_inputs) -> list:
        return [self._submit(inp) for inp in runner_inputs]

    def _submit(self, inp):
        try:
            artifact = _read(inp.artifact_path)
            reference = None if inp.reference_path is None else _read(inp.reference_path)
        except OSError as err:
            return RunnerFuture.ready(RunnerResult(None, f"artifact unreadable: {err}"))
        future = self.client.submit(measure_remote, artifact, reference, inp.args_info,
                                    self.evaluator_config, inp.num_threads, self.timeout_sec,
                                    pure=False)
        return RunnerFuture(future.done, lambda: _result(future))

    def run_interleaved(self, runner_inputs, rounds=10, round_ms=None) -> list:
        """As ``LocalRunner.run_interleaved``, on one Dask worker: the artifacts travel
        together and are checked, then timed in turns, in that worker's measuring process."""
        try:
            artifacts = [_read(inp.artifact_path) for inp in runner_inputs]
            references = [None if inp.reference_path is None else _read(inp.reference_path)
                          for inp in runner_inputs]
        except OSError as err:
            return [RunnerResult(None, f"artifact unreadable: {err}") for _ in runner_inputs]
        future = self.client.submit(
            interleave_remote, artifacts, references, [inp.args_info for inp in runner_inputs],
            [inp.num_threads for inp in runner_inputs],
            round_config(self.evaluator_config, round_ms), rounds, self.timeout_sec,
            pure=False)
        try:
            return future.result()
        except Exception as err:  # a lost worker fails the whole group, not the tuner
            return [RunnerResult(None, f"dask task failed: {type(err).__name__}: {err}")
                    for _ in runner_inputs]

    def __repr__(self):
        return f"DaskRunner({self.client.scheduler.address}, timeout_sec={self.timeout_sec})"


def connect(address, timeout):
    """A ``distributed.Client`` of the scheduler at ``address``; IrlabError if unreachable."""
    from distributed import Client

    if address is None:
        raise IrlabError("DaskRunner: give scheduler_address= (e.g. 'tcp://host:8786') or "
                         "client=")
    try:
        return Client(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError) as err:
        raise IrlabError(f"DaskRunner: cannot reach the Dask scheduler at {address} within "
                         f"{timeout:g} s ({type(err).__name__}: {err})") from None


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _result(future):
    try:
        return future.result()
    except Exception as err:  # a lost worker or a cancelled task fails this candidate only
        return RunnerResult(None, f"dask task failed: {type(err).__name__}: {err}")


def _stage(data, folder):
    """Write ``data`` once per content into ``folder``; return its path."""
    path = os.path.join(folder, hashlib.sha1(data).hexdigest() + ".irlab")
    if not os.path.exists(path):
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


def _worker_pool_and_dir():
    with _worker_lock:
        if "pool" not in _worker_state:
            _worker_state["pool"] = WorkerPool(1, initializer=warm_up)
            _worker_state["dir"] = tempfile.mkdtemp(prefix="irlab-ms-dask-")
    return _worker_state["pool"], _worker_state["dir"]


def interleave_remote(artifacts, references, args_infos, threads, config, rounds,
                      timeout_sec):
    """What a Dask worker runs for ``run_interleaved``: stage the bytes, then check and time
    them in turns in its isolated measuring process; one ``RunnerResult`` per artifact."""
    pool, folder = _worker_pool_and_dir()
    jobs = [(_stage(data, folder), args_info, None if ref is None else _stage(ref, folder), n)
            for data, ref, args_info, n in zip(artifacts, references, args_infos, threads)]
    return [result_of(out) for out in interleave_in_pool(pool, jobs, config, rounds,
                                                          timeout_sec)]


def measure_remote(artifact, reference, args_info, config, num_threads, timeout_sec):
    """What a Dask worker runs: stage the bytes, measure in an isolated process."""
    pool, folder = _worker_pool_and_dir()
    path = _stage(artifact, folder)
    ref_path = None if reference is None else _stage(reference, folder)
    out = pool.call(measure, (path, args_info, config or EvaluatorConfig(),
                                               ref_path, num_threads), timeout_sec)
    return result_of(out)
