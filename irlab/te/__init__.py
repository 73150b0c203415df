"""TE: tensor expressions (``placeholder``, ``compute``, reductions) and ``create_prim_func``,
which turns them into block-form TIR (TVM's ``tvm.te``)."""

from irlab.te.tensor import Tensor, TensorSlice, Operation, PlaceholderOp, ComputeOp, ProducerLoad
from irlab.te.operation import (placeholder, compute, reduce_axis, var, size_var, thread_axis,
                                make_compute_op)
from irlab.te.reduction import CommReducer, Reduce, comm_reducer, sum, min, max
from irlab.te.create_prim_func import create_prim_func

# TVM's te namespace re-exports the scalar TIR ops used inside fcompute.
from irlab.tir.op import (const, exp, exp2, exp10, log, log2, log10, log1p, sqrt, rsqrt, tanh,
                          erf, sigmoid, sin, cos, fabs, abs, pow, power, floor, ceil, round,
                          trunc, if_then_else, all, any, max_value, min_value, floordiv,
                          floormod, indexdiv, indexmod, truncdiv, truncmod, div, infinity)
from irlab.tir.expr import Var, SizeVar
from irlab.tir.stmt import IterVar

__all__ = ["Tensor", "TensorSlice", "Operation", "PlaceholderOp", "ComputeOp", "ProducerLoad",
           "placeholder", "compute", "reduce_axis", "var", "size_var", "thread_axis",
           "make_compute_op", "CommReducer", "Reduce", "comm_reducer", "sum", "min", "max",
           "create_prim_func", "const", "exp", "exp2", "exp10", "log", "log2", "log10", "log1p",
           "sqrt", "rsqrt", "tanh", "erf", "sigmoid", "sin", "cos", "fabs", "abs", "pow", "power",
           "floor", "ceil", "round", "trunc", "if_then_else", "all", "any", "max_value",
           "min_value", "floordiv", "floormod", "indexdiv", "indexmod", "truncdiv", "truncmod",
           "div", "infinity", "Var", "SizeVar", "IterVar"]
