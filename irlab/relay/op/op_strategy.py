"""Operator strategies: how a Relay op becomes TE compute + a TIR schedule for a target.

As TVM (python/tvm/relay/op/op.py): an op has an ``FTVMStrategy`` attribute, a function
``fstrategy(attrs, inputs, out_type, target) -> OpStrategy``. An ``OpStrategy`` holds
``OpImplementation``s, each a ``compute`` and a ``schedule`` with a priority level
(``plevel``), grouped in ``OpSpecialization``s whose condition decides whether they apply.
LowerTE picks the valid implementation with the highest plevel.

irlab's schedules work on TIR, not on TE schedules: ``fcompute(attrs, inputs, out_type)``
returns TE tensors (``inputs`` are TE tensors); ``fschedule(attrs, sch, outs, target)`` gets
the ``tir.Schedule`` of the PrimFunc made from those tensors (``te.create_prim_func``) and the
op's output tensors -- their blocks are named after ``tensor.op.name`` -- and transforms it in
place.

A strategy is target-dispatched through ``generic_func``: the default applies everywhere,
``@fstrategy.register("cpu")`` overrides it for targets with that key. A user overrides an op's
strategy from a notebook with a higher level::

    @relay.op.register_strategy("nn.dense", level=11)
    def my_dense_strategy(attrs, inputs, out_type, target):
        strategy = OpStrategy()
        strategy.add_implementation(wrap_topi_compute(topi.nn.dense), my_schedule, "mine")
        return strategy
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.op import Op


class OpImplementation:
    """One way to run an op: a TE compute and a TIR schedule."""

    def __init__(self, fcompute, fschedule, name="default", plevel=10):
        self.fcompute = fcompute
        self.fschedule = fschedule
        self.name = name
        self.plevel = plevel

    def compute(self, attrs, inputs, out_type) -> list:
        outs = self.fcompute(attrs, list(inputs), out_type)
        return list(outs) if isinstance(outs, (list, tuple)) else [outs]

    def schedule(self, attrs, sch, outs, target) -> None:
        if self.fschedule is not None:
            self.fschedule(attrs, sch, list(outs), target)

    def __repr__(self):
        return f"OpImplementation({self.name!r}, plevel={self.plevel})"


class OpSpecialization:
    """Implementations valid when ``condition(attrs, inputs, out_type)`` holds (None: always)."""

    def __init__(self, condition=None):
        self.condition = condition
        self.implementations: list[OpImplementation] = []

    def applies(self, attrs, inputs, out_type) -> bool:
        return self.condition is None or bool(self.condition(attrs, inputs, out_type))


class OpStrategy:
    """The implementations of an op for one call, grouped by specialization."""

    def __init__(self):
        self.specializations: list[OpSpecialization] = []

    def add_implementation(self, compute, schedule, name="default", plevel=10,
                           condition=None):
        spec = next((s for s in self.specializations if s.condition is condition), None)
        if spec is None:
            spec = OpSpecialization(condition)
            self.specializations.append(spec)
        spec.implementations.append(OpImplementation(compute, schedule, name, plevel))

    def implementations(self, attrs=None, inputs=None, out_type=None) -> list:
        out = []
        for spec in self.specializations:
            if spec.applies(attrs, inputs, out_type):
                out.extend(spec.implementations)
        return out


class generic_func:  # noqa: N801 (TVM's name)
    """A function dispatched on the target's keys (``"cpu"``...), with a default."""

    def __init__(self, default):
        self.default = default
        self.overrides: dict = {}
        self.__name__ = getattr(default, "__name__", "generic_func")
        self.__doc__ = getattr(default, "__doc__", None)

    def register(self, keys, func=None, override=False):
        keys = [keys] if isinstance(keys, str) else list(keys)

        def add(f):
            for key in keys:
                if key in self.overrides and not override:
                    raise IrlabError(f"{self.__name__} already has an override for {key!r}")
                self.overrides[key] = f
            return f

        return add(func) if func is not None else add

    def __call__(self, *args):
        target = args[-1]
        for key in getattr(target, "keys", ()):
            if key in self.overrides:
                return self.overrides[key](*args)
        return self.default(*args)


def register_compute(op_name, compute=None, level=10):
    """Set an op's TE compute ``compute(attrs, inputs, out_type) -> [te.Tensor]``."""

    def add(f):
        Op.get(op_name).set_attr("FTVMCompute", f, level)
        return f

    return add(compute) if compute is not None else add


def register_strategy(op_name, fstrategy=None, level=10):
    """Set an op's strategy; a registration with a higher level replaces a lower one."""

    def add(f):
        Op.get(op_name).set_attr("FTVMStrategy", f, level)
        return f

    return add(fstrategy) if fstrategy is not None else add


def wrap_compute(fcompute):
    """An ``fcompute(attrs, inputs, out_type)`` from the op's registered ``FTVMCompute``."""
    return fcompute


def select_implementation(op, attrs, inputs, out_type, target) -> OpImplementation:
    """The valid implementation with the highest plevel (ties: the first added)."""
    op = Op.get(op) if isinstance(op, str) else op
    fstrategy = op.get_attr("FTVMStrategy")
    if fstrategy is None:
        raise IrlabError(f"operator {op.name} has no strategy (FTVMStrategy): irlab cannot "
                         f"compile it yet")
    strategy = fstrategy(attrs, inputs, out_type, target)
    impls = strategy.implementations(attrs, inputs, out_type)
    if not impls:
        raise IrlabError(f"operator {op.name}: no implementation applies to {out_type} on "
                         f"{target}")
    best = impls[0]
    for impl in impls[1:]:
        if impl.plevel > best.plevel:
            best = impl
    return best


__all__ = ["OpImplementation", "OpSpecialization", "OpStrategy", "generic_func",
           "register_compute", "register_strategy", "select_implementation", "wrap_compute"]
