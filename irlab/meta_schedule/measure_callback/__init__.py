"""Measure callbacks (TVM's ``ms.measure_callback``)."""

from irlab.meta_schedule.measure_callback.measure_callback import (AddToDatabase,
                                                                   MeasureCallback,
                                                                   RemoveBuildArtifact,
                                                                   UpdateCostModel)

__all__ = ["AddToDatabase", "MeasureCallback", "RemoveBuildArtifact", "UpdateCostModel"]
