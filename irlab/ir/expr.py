"""Expression bases shared by the IR dialects: ``BaseExpr``, ``RelayExpr`` and ``GlobalVar``."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.node import Node
from irlab.runtime.registry import get_global_func


class BaseExpr(Node):
    """Base of all expressions (Relay expressions and TIR PrimExprs)."""

    _non_structural = ("span",)



class ArithmeticSugar:
    """``a + b``, ``a - b``, ``a * b``, ``a / b`` (and the reflected forms) on graph-level
    expressions, as TVM's ``ExprWithOp``: each builds a call of the IR's own op through
    ``self._binary(op_name, other, swap)``, which Relay and Relax define."""

    __slots__ = ()

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, swap=True)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __rsub__(self, other):
        return self._binary("subtract", other, swap=True)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __rmul__(self, other):
        return self._binary("multiply", other, swap=True)

    def __truediv__(self, other):
        return self._binary("divide", other)

    def __rtruediv__(self, other):
        return self._binary("divide", other, swap=True)

class RelayExpr(BaseExpr):
    """Base of Relay-level expressions. ``checked_type`` is filled by type inference.

    The inferred type is the one mutable part of a node: a cache written by ``InferType``
    (TVM's ``checked_type_``), ignored by structural equality.
    """

    __slots__ = ("_checked_type", "_virtual_device")
    span: object

    @property
    def virtual_device_(self):
        """The device this expression's value lives on, when a user or a pass said so
        (TVM's ``virtual_device_``); like ``checked_type``, a note beside the node that
        structural equality ignores, and the one field a user may set on a built node."""
        return getattr(self, "_virtual_device", None)

    def __setattr__(self, name, value):
        if name == "virtual_device_":
            object.__setattr__(self, "_virtual_device", value)
            return
        super().__setattr__(name, value)

    @property
    def checked_type(self):
        ty = getattr(self, "_checked_type", None)
        if ty is None:
            raise IrlabError(
                "the type checker has not populated checked_type for this node; "
                "run irlab.relay.transform.InferType() first")
        return ty

    def has_checked_type(self) -> bool:
        return getattr(self, "_checked_type", None) is not None

    def _set_checked_type(self, ty):
        object.__setattr__(self, "_checked_type", ty)


class GlobalVar(RelayExpr):
    """The name of a function in an ``IRModule`` (printed ``@name``)."""

    name_hint: str
    type_annot: object

    def __init__(self, name_hint, type_annot=None, span=None):
        super().__init__(span, str(name_hint), type_annot)

    def __call__(self, *args):
        return get_global_func("relay.ir.Call")(self, args)

    def astext(self, show_meta_data=True, annotate=None) -> str:
        """The Relay text of this reference (``@name``), as any Relay expression prints."""
        return get_global_func("relay.ir.astext")(self, show_meta_data)
