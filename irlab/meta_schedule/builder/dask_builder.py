"""``DaskBuilder``: compile candidates on a Dask ``distributed`` cluster.

Each candidate is pickled to a Dask worker, compiled there in a worker process of its own
(so a compiler crash or hang fails that candidate only) and comes back as the bytes of its
artifact, written to a local temporary folder: the runner, local or ``DaskRunner``, takes
it from there. Use with ``DaskRunner`` to fan both builds and measurements out.
"""

from __future__ import annotations

import os
import tempfile
import threading

from irlab.meta_schedule.builder.builder import Builder, BuilderResult
from irlab.meta_schedule.builder.local_builder import (ARTIFACT_NAME, build_and_export,
                                                       warm_up)
from irlab.meta_schedule.worker_pool import WorkerError, WorkerPool

_worker_state = {}
_worker_lock = threading.Lock()


class DaskBuilder(Builder):
    """Builds on the Dask cluster at ``scheduler_address`` (or through ``client``)."""

    def __init__(self, scheduler_address=None, *, client=None, timeout_sec=30.0,
                 connect_timeout_sec=5.0):
        from irlab.meta_schedule.runner.dask_runner import connect

        self.timeout_sec = float(timeout_sec)
        self.client = client if client is not None else connect(scheduler_address,
                                                                connect_timeout_sec)

    def build(self, builder_inputs) -> list:
        futures = [self.client.submit(build_remote, inp.mod, str(inp.target), inp.params,
                                      self.timeout_sec, pure=False)
                   for inp in builder_inputs]
        return [_result(f) for f in futures]

    def __repr__(self):
        return f"DaskBuilder({self.client.scheduler.address}, timeout_sec={self.timeout_sec})"


def _result(future):
    try:
        out = future.result()
    except Exception as err:  # a lost worker fails this candidate only
        return BuilderResult(None, f"dask task failed: {type(err).__name__}: {err}")
    if isinstance(out, str):
        return BuilderResult(None, out)
    folder = tempfile.mkdtemp(prefix="irlab-ms-build-")
    path = os.path.join(folder, ARTIFACT_NAME)
    with open(path, "wb") as f:
        f.write(out)
    return BuilderResult(path, None)


def build_remote(mod, target, params, timeout_sec):
    """What a Dask worker runs: the artifact's bytes, or an error message (a str)."""
    with _worker_lock:
        if "pool" not in _worker_state:
            _worker_state["pool"] = WorkerPool(1, initializer=warm_up)
    out = _worker_state["pool"].call(build_and_export, (mod, target, params, None, None),
                                     timeout_sec)
    if isinstance(out, WorkerError):
        return f"build {out.kind}: {out.message}"
    try:
        with open(out, "rb") as f:
            return f.read()
    finally:
        import shutil

        shutil.rmtree(os.path.dirname(out), ignore_errors=True)
