"""Reduction strategies: the generic one (the loops as the compute wrote them) and the CPU
override with ``topi.x86.schedule_reduce``."""

from __future__ import annotations

from irlab.relay.op.op_strategy import OpStrategy, generic_func
from irlab.relay.op.strategy.generic import _dispatch, _no_schedule, wrap_topi_schedule


@generic_func
def reduce_strategy(attrs, inputs, out_type, target, op=None):
    strategy = OpStrategy()
    strategy.add_implementation(op.get_attr("FTVMCompute"), _no_schedule, "reduce.generic")
    return strategy


@reduce_strategy.register("cpu")
def _reduce_strategy_cpu(attrs, inputs, out_type, target, op=None):
    from irlab.topi.x86.reduction import schedule_reduce

    strategy = OpStrategy()
    strategy.add_implementation(op.get_attr("FTVMCompute"), wrap_topi_schedule(schedule_reduce),
                                "reduce.cpu")
    return strategy


def register_reduce(op_name, compute, level=10):
    """Give a reduction op its compute and the reduce strategy (TVM's
    ``register_reduce_schedule`` + ``register_compute``)."""
    from irlab.ir.op import Op
    from irlab.relay.op.op_strategy import register_compute, register_strategy

    op = Op.get(op_name)
    register_compute(op_name, compute, level)

    def strategy(attrs, inputs, out_type, target):
        return _dispatch(reduce_strategy, attrs, inputs, out_type, target, op)

    register_strategy(op_name, strategy, level)


__all__ = ["reduce_strategy", "register_reduce"]
