"""Generic strategies, and the CPU overrides registered on them."""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relay.op.op_strategy import (OpStrategy, generic_func, register_compute,
                                        register_strategy)


def wrap_topi_schedule(topi_schedule):
    """``fschedule(attrs, sch, outs, target)`` from a TOPI ``schedule(sch, outs, target)``."""
    def fschedule(attrs, sch, outs, target):
        return topi_schedule(sch, outs, target)

    fschedule.__name__ = getattr(topi_schedule, "__name__", "schedule")
    return fschedule


def _no_schedule(attrs, sch, outs, target):
    """The generic schedule: the loops as the compute wrote them."""


@generic_func
def injective_strategy(attrs, inputs, out_type, target, op=None):
    strategy = OpStrategy()
    strategy.add_implementation(op.get_attr("FTVMCompute"), _no_schedule, "injective.generic")
    return strategy


@injective_strategy.register("cpu")
def _injective_strategy_cpu(attrs, inputs, out_type, target, op=None):
    from irlab.topi.x86 import schedule_injective

    strategy = OpStrategy()
    strategy.add_implementation(op.get_attr("FTVMCompute"), wrap_topi_schedule(
        schedule_injective), "injective.cpu")
    return strategy


def register_injective(op_name, compute, level=10):
    """Give an injective op its compute and the injective strategy (TVM's
    ``register_injective_schedule`` + ``register_compute``)."""
    op = Op.get(op_name)
    register_compute(op_name, compute, level)

    def strategy(attrs, inputs, out_type, target):
        return _dispatch(injective_strategy, attrs, inputs, out_type, target, op)

    register_strategy(op_name, strategy, level)


def _dispatch(gfunc, attrs, inputs, out_type, target, op):
    for key in getattr(target, "keys", ()):
        if key in gfunc.overrides:
            return gfunc.overrides[key](attrs, inputs, out_type, target, op)
    return gfunc.default(attrs, inputs, out_type, target, op)
