"""``irlab.tir.schedule``: TVM's TensorIR schedule (``Schedule``, handles, ``Trace``)."""

from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.handles import BlockRV, ExprRV, LoopRV, StmtSRef
from irlab.tir.schedule.instruction import InstructionKind
from irlab.tir.schedule.random_engine import RandomEngine
from irlab.tir.schedule.schedule import Schedule
from irlab.tir.schedule.trace import Instruction, Trace

__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV", "ExprRV", "StmtSRef", "Trace",
           "Instruction", "InstructionKind", "RandomEngine"]
