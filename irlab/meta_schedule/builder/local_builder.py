"""``LocalBuilder``: compile candidates in worker processes, export each to a file.

A candidate whose compilation raises, hangs past ``timeout_sec`` or kills its process yields a
``BuilderResult`` with ``error_msg``; the tuner goes on with the others.
"""

from __future__ import annotations

import os
import tempfile

from irlab.meta_schedule.builder.builder import Builder, BuilderResult
from irlab.meta_schedule.worker_pool import WorkerError, WorkerPool

ARTIFACT_NAME = "tvm_tmp_mod.irlab"


def default_build(mod, target, params=None):
    """Compile ``mod`` for ``target`` with ``irlab.build`` (TVM's default_build)."""
    from irlab.build_module import build

    return build(mod, target=target)


def default_export(rt_mod, folder=None):
    """Write ``rt_mod`` to a fresh folder (an ``.irlab`` archive, no compiler needed to load)."""
    folder = tempfile.mkdtemp(prefix="irlab-ms-build-", dir=folder)
    return rt_mod.export_library(os.path.join(folder, ARTIFACT_NAME))


def build_and_export(mod, target, params, f_build, f_export):
    """What a worker runs for one candidate: the exported artifact's path."""
    rt_mod = (f_build or default_build)(mod, str(target), params)
    return (f_export or default_export)(rt_mod)


class LocalBuilder(Builder):
    """Builds on this machine in ``max_workers`` processes (default: the CPU count).

    ``f_build(mod, target, params)`` and ``f_export(rt_mod) -> path`` replace the defaults;
    they must be module-level functions (workers receive them pickled by name).
    """

    def __init__(self, max_workers=None, timeout_sec=30.0, f_build=None, f_export=None):
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = float(timeout_sec)
        self.f_build = f_build
        self.f_export = f_export
        self._pool = None

    @property
    def pool(self):
        if self._pool is None:
            self._pool = WorkerPool(self.max_workers)
        return self._pool

    def build(self, builder_inputs) -> list:
        calls = [(inp.mod, str(inp.target), inp.params, self.f_build, self.f_export)
                 for inp in builder_inputs]
        outs = self.pool.map(build_and_export, calls, self.timeout_sec)
        return [_result(out) for out in outs]

    def __repr__(self):
        return f"LocalBuilder(max_workers={self.max_workers}, timeout_sec={self.timeout_sec})"


def _result(out):
    if isinstance(out, WorkerError):
        return BuilderResult(None, f"build {out.kind}: {out.message}")
    return BuilderResult(out, None)
