"""Builders (TVM's ``ms.builder``): compile scheduled candidates into loadable artifacts."""

from irlab.meta_schedule.builder.builder import Builder, BuilderInput, BuilderResult
from irlab.meta_schedule.builder.local_builder import LocalBuilder, default_build, default_export

__all__ = ["Builder", "BuilderInput", "BuilderResult", "LocalBuilder", "default_build",
           "default_export"]
