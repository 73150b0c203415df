"""TE: tensor expressions (``placeholder``, ``compute``, reductions) and ``create_prim_func``,
which turns them into block-form TIR (TVM's ``tvm.te``)."""

from irlab.te.tensor import Tensor, TensorSlice, Operation, PlaceholderOp, ComputeOp, ProducerLoad
from irlab.te.operation import (placeholder, compute, reduce_axis, var, size_var, thread_axis,
                                make_compute_op)
from irlab.te.reduction import CommReducer, Reduce, comm_reducer, sum, min, max
from irlab.te.create_prim_func import create_prim_func

# TVM's te namespace re-exports the scalar TIR ops used inside fcompute; the intrinsics'
# builders (te.exp, te.fabs, te.atan2...) come from their records (tir.op.intrinsic_builders)
from irlab.tir import op as _op
from irlab.tir.op import (const, abs, power, if_then_else, all, any, max_value, min_value,
                          floordiv, floormod, indexdiv, indexmod, truncdiv, truncmod, div,
                          infinity)
from irlab.tir.expr import Var, SizeVar
from irlab.tir.stmt import IterVar

__all__ = ["Tensor", "TensorSlice", "Operation", "PlaceholderOp", "ComputeOp", "ProducerLoad",
           "placeholder", "compute", "reduce_axis", "var", "size_var", "thread_axis",
           "make_compute_op", "CommReducer", "Reduce", "comm_reducer", "sum", "min", "max",
           "create_prim_func", "const", "abs", "power", "if_then_else", "all", "any",
           "max_value", "min_value", "floordiv", "floormod", "indexdiv", "indexmod", "truncdiv",
           "truncmod", "div", "infinity", "Var", "SizeVar", "IterVar"]
_INTRINSIC_BUILDERS = _op.intrinsic_builders()
globals().update(_INTRINSIC_BUILDERS)
__all__ += sorted(_INTRINSIC_BUILDERS)


def __getattr__(name):
    """``te.<name>`` of an intrinsic registered after ``irlab.te`` was imported."""
    return _op.__getattr__(name)
