"""``irlab.tir.schedule``: TVM's TensorIR schedule (``Schedule``, handles, ``Trace``)."""

from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.schedule import BlockRV, LoopRV, Schedule
from irlab.tir.schedule.trace import Instruction, Trace

__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV", "Trace", "Instruction"]
