"""Random variables of a schedule (TVM's BlockRV, LoopRV, ExprRV): handles the trace records
and replays; the schedule resolves them against its current IR."""

from __future__ import annotations


class BlockRV:
    """A handle to a block: resolved by name in function ``func_name``."""

    __slots__ = ("name", "func_name")

    def __init__(self, name=None, func_name=None):  # no arguments: a handle for a trace
        self.name, self.func_name = name, func_name  # built by hand, as TVM's BlockRV()

    def __repr__(self):
        return f"BlockRV({self.name!r})"


class LoopRV:
    """A handle to a loop: resolved by its loop variable in function ``func_name``. A
    sampled compute location may instead be one of the marks ``ROOT`` (stay at the root) or
    ``INLINE`` (inline the block), as TVM's ``LoopRV.RootMark``/``InlineMark``."""

    __slots__ = ("var", "func_name")

    def __init__(self, var=None, func_name=None):
        self.var, self.func_name = var, func_name

    @property
    def mark(self):
        """"root", "inline", or None for a handle to a real loop."""
        return self.var if isinstance(self.var, str) else None

    def __repr__(self):
        return f"LoopRV({getattr(self.var, 'name_hint', self.var)})"


ROOT_MARK = "root"
INLINE_MARK = "inline"


class ExprRV:
    """A sampled integer (TVM's ``ExprRV``): ``sch.get(rv)`` gives its value. Usable as a
    ``split`` factor or an ``annotate`` value; the trace keeps the link, so replaying with
    another decision changes what uses it."""

    __slots__ = ("name",)

    def __init__(self, name="v"):
        self.name = name

    def __repr__(self):
        return f"ExprRV({self.name})"


class Decision(int):
    """An integer decision (a categorical index, a compute location): a plain int that
    also answers ``.value``, as the IntImm TVM keeps in ``trace.decisions`` does."""

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)


RV_TYPES = (BlockRV, LoopRV, ExprRV)


def rv_prefix(rv) -> str:
    """The letter TVM names a random variable with in traces: b, l or v (an ExprRV, or a
    ``tir.Var`` standing for one in a trace built by hand, as TVM's tests do)."""
    return {BlockRV: "b", LoopRV: "l"}.get(type(rv), "v")
