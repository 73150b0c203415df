"""TVM's ``relay.op.op``: define an operator from Python in one block -- register it, give it
inputs, a type relation, a fusion pattern, a TE compute and a schedule -- and ``relay.build``
compiles calls to it (TVM's "Adding an Operator to Relay", seed 002 part 1)::

    from irlab.relay.op import op as _op

    _op.register("my.square", "x * x")
    op = _op.get("my.square")
    op.set_num_inputs(1).add_argument("data", "Tensor", "the input")
    op.add_type_rel("Identity")                 # or add_type_rel("Rel", lambda args, attrs: ...)
    _op.register_pattern("my.square", _op.OpPattern.ELEMWISE)
    _op.register_compute("my.square", lambda attrs, inputs, out_type:
                         [te.compute(inputs[0].shape, lambda *i: inputs[0](*i) * inputs[0](*i))])
    _op.register_injective_schedule("my.square")
    y = relay.Call(op, [x])

The schedule functions are irlab's: ``fschedule(attrs, sch, outs, target)`` transforms the
``tir.Schedule`` of the compute's PrimFunc (TVM's Relay era scheduled TE instead).
"""

from __future__ import annotations

import sys

from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern, register_op
from irlab.relay.op.op_strategy import OpStrategy, register_compute, register_strategy
from irlab.relay.op.strategy.generic import wrap_topi_schedule


def register(op_name: str, describe: str = "") -> Op:
    """Register a new operator with nothing known about it yet; set its facts on the returned
    op (also ``get(op_name)``): ``set_num_inputs``, ``add_argument``, ``add_type_rel``..."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    return register_op(op_name, num_inputs=-1, description=describe, defined_in=caller)


def get(op_name: str) -> Op:
    return Op.get(op_name)


def register_pattern(op_name: str, pattern, level: int = 10) -> Op:
    """The op's fusion pattern (``OpPattern.ELEMWISE``, ``INJECTIVE``, ``OPAQUE``...)."""
    return Op.get(op_name).set_attr("TOpPattern", OpPattern(pattern), level)


def register_stateful(op_name: str, stateful: bool, level: int = 10) -> Op:
    """Whether calls of the op have side effects (``TOpIsStateful``; stateful calls are
    neither folded nor eliminated)."""
    return Op.get(op_name).set_attr("TOpIsStateful", bool(stateful), level)


def register_schedule(op_name: str, schedule, level: int = 10):
    """A strategy from the op's registered compute (``register_compute``) and ``schedule``:
    ``fschedule(attrs, sch, outs, target)``, applied on every target."""
    op = Op.get(op_name)

    def fstrategy(attrs, inputs, out_type, target):
        compute = op.get_attr("FTVMCompute")
        if compute is None:
            raise IrlabError(f"operator {op_name} has a schedule but no compute: "
                             f"register_compute({op_name!r}, ...) first")
        strategy = OpStrategy()
        strategy.add_implementation(compute, schedule, f"{op_name}.{schedule.__name__}")
        return strategy

    return register_strategy(op_name, fstrategy, level)


def _schedule_injective(attrs, sch, outs, target):
    """CPU targets: the x86 injective schedule (vectorized, parallel); others: the loops as
    written."""
    if "cpu" in getattr(target, "keys", ()):
        from irlab.topi.x86 import schedule_injective

        wrap_topi_schedule(schedule_injective)(attrs, sch, outs, target)


def _schedule_reduce(attrs, sch, outs, target):
    if "cpu" in getattr(target, "keys", ()):
        from irlab.topi.x86 import schedule_reduce

        wrap_topi_schedule(schedule_reduce)(attrs, sch, outs, target)


def register_injective_schedule(op_name: str, level: int = 10):
    return register_schedule(op_name, _schedule_injective, level)


def register_broadcast_schedule(op_name: str, level: int = 10):
    return register_schedule(op_name, _schedule_injective, level)


def register_reduce_schedule(op_name: str, level: int = 10):
    return register_schedule(op_name, _schedule_reduce, level)


def _loops_as_written(attrs, sch, outs, target):
    """No schedule: the loops as the compute wrote them."""


def register_opaque_schedule(op_name: str, level: int = 10):
    return register_schedule(op_name, _loops_as_written, level)


# ---------------------------------------------------------------------------------------------
# pass hooks: op attributes read by Legalize / AlterOpLayout / ConvertLayout, per target
def _current_target_keys() -> list:
    """Keys of the current target (kind name first), or [] when there is none: the generic
    hooks (registered with ``target=None``) serve the generic CPU."""
    try:
        from irlab.target import Target  # not every build of irlab has targets yet
    except ImportError:
        return []
    current = getattr(Target, "current", None)
    target = current(allow_none=True) if current is not None else None
    if target is None:
        return []
    kind = getattr(target, "kind", None)
    keys = [str(getattr(kind, "name", kind))] if kind is not None else []
    return keys + [str(k) for k in getattr(target, "keys", ())]


class TargetHooks:
    """The hooks of one op for one pass, by target key; ``None`` holds the generic hook.
    Calling it runs the hook for the current target (or returns None when there is none)."""

    def __init__(self):
        self.by_target = {}  # key -> (hook, level)

    def add(self, target, hook, level):
        current = self.by_target.get(target)
        if current is None or current[1] <= level:  # a lower level never overrides
            self.by_target[target] = (hook, level)

    def resolve(self, keys=None):
        for key in list(keys if keys is not None else _current_target_keys()) + [None]:
            if key in self.by_target:
                return self.by_target[key][0]
        return None

    def __call__(self, *args):
        hook = self.resolve()
        return None if hook is None else hook(*args)


def _register_hook(attr_key, op_name, hook, level, target):
    def register(fn):
        op = Op.get(op_name)
        table = op.get_attr(attr_key)
        if not isinstance(table, TargetHooks):
            new_table = TargetHooks()
            if table is not None:  # a plain hook set with set_attr stays the generic one
                new_table.add(None, table, level)
            op.reset_attr(attr_key)
            op.set_attr(attr_key, new_table, 0)
            table = new_table
        table.add(target, fn, level)
        return fn

    return register(hook) if hook is not None else register


def register_legalize(op_name, legal_op=None, level=10, target=None):
    """Register ``legal_op(attrs, inputs, types) -> Expr | None`` for ``op_name`` (usable as a
    decorator). ``types`` are the argument types then the output type."""
    return _register_hook("FTVMLegalize", op_name, legal_op, level, target)


def register_alter_op_layout(op_name, alter_layout=None, level=10, target=None):
    """Register ``alter_layout(attrs, inputs, tinfos, out_type) -> Call | None``."""
    return _register_hook("FTVMAlterOpLayout", op_name, alter_layout, level, target)


def register_convert_op_layout(op_name, convert_layout=None, level=10):
    """Register ``convert_layout(attrs, inputs, tinfos, desired_layouts) -> Call | None``."""
    return _register_hook("FTVMConvertOpLayout", op_name, convert_layout, level, None)


__all__ = ["register_legalize", "register_alter_op_layout", "register_convert_op_layout",
           "TargetHooks", "register", "get", "register_stateful", "register_pattern", "register_compute",
           "register_strategy",
           "register_schedule", "register_injective_schedule", "register_broadcast_schedule",
           "register_reduce_schedule", "register_opaque_schedule", "OpPattern", "OpStrategy"]
