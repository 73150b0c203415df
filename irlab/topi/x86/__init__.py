"""CPU schedules: functions ``schedule_*(sch, outs, target)`` transforming a ``tir.Schedule``
whose blocks are named after the TE stages (``tensor.op.name``)."""

from irlab.topi.x86.injective import schedule_injective, vector_lanes

__all__ = ["schedule_injective", "vector_lanes"]
