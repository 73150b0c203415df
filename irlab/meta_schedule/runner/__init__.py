"""Runners (TVM's ``ms.runner``): time compiled candidates, locally or on a Dask cluster."""

from irlab.meta_schedule.runner.config import EvaluatorConfig
from irlab.meta_schedule.runner.local_runner import LocalRunner
from irlab.meta_schedule.runner.runner import Runner, RunnerFuture, RunnerInput, RunnerResult


def __getattr__(name):
    if name == "DaskRunner":  # distributed is an optional dependency: loaded on first use
        from irlab.meta_schedule.runner.dask_runner import DaskRunner

        return DaskRunner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EvaluatorConfig", "LocalRunner", "Runner", "RunnerFuture", "RunnerInput",
           "RunnerResult", "DaskRunner"]
