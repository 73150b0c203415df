"""Builders (TVM's ``ms.builder``): compile scheduled candidates into loadable artifacts."""

from irlab.meta_schedule.builder.builder import Builder, BuilderInput, BuilderResult
from irlab.meta_schedule.builder.local_builder import LocalBuilder, default_build, default_export



def __getattr__(name):
    if name == "DaskBuilder":  # distributed is an optional dependency: loaded on first use
        from irlab.meta_schedule.builder.dask_builder import DaskBuilder

        return DaskBuilder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Builder", "BuilderInput", "BuilderResult", "LocalBuilder", "default_build",
           "default_export", "DaskBuilder"]
