"""EliminateCommonSubexpr: merge calls (and tuple projections) that compute the same value.

Two calls are the same when they call the same operator with structurally equal attrs on the
same arguments: the same objects once their own arguments have been merged, or equal scalar
constants. The later call is replaced by the first one::

    %0 = nn.relu(%x);                          %0 = nn.relu(%x);
    %1 = nn.relu(%x);                  =>      %1 = add(%0, 1f);
    %2 = add(%0, 1f);                          add(%1, %1)
    %3 = add(%1, 1f);
    add(%2, %3)

``fskip(expr)`` returning True keeps ``expr`` out of the merging (relay.build skips casts to
int32). Calls of functions and of stateful operators (``TOpIsStateful``, e.g. dropout) are
never merged, nor are calls without arguments.
"""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.relay.expr import Constant
from irlab.relay.expr_functor import ExprMutator


def _scalar_key(expr):
    """A hashable value for a rank-0 constant (TVM's IsEqualScalar compares those by value)."""
    if not isinstance(expr, Constant):
        return None
    if expr.data.ndim != 0:  # a weight: not copied to find out
        return None
    array = np.asarray(expr.data)
    return ("scalar", array.dtype.str, array.tobytes())


def _arg_key(expr):
    # Arguments are compared by identity (the mutator already merged them), except scalar
    # constants, which are often rebuilt (relay.const(1.0) twice) but mean the same value.
    return _scalar_key(expr) or ("node", id(expr))


def _attrs_key(attrs):
    # Attrs compare by value; hashing them keeps the lookup O(1) per call.
    try:
        hash(attrs)
    except TypeError:
        return ("unhashable", id(attrs))
    return attrs


class _CommonSubexprEliminator(ExprMutator):
    def __init__(self, fskip):
        super().__init__()
        self.fskip = fskip
        self.seen_calls: dict = {}
        self.seen_items: dict = {}
        self.seen_tuples: dict = {}
        # Keys hold ids of argument nodes: keep the nodes alive so an id is never reused.
        self.keep_alive: list = []

    def _skip(self, expr) -> bool:
        return self.fskip is not None and bool(self.fskip(expr))

    def visit_call(self, call):
        new = super().visit_call(call)
        op = new.op
        if not isinstance(op, Op) or not new.args or op.get_attr("TOpIsStateful", False):
            return new
        if self._skip(new):
            return new
        key = (op.name, _attrs_key(new.attrs), tuple(_arg_key(a) for a in new.args))
        first = self.seen_calls.get(key)
        if first is not None:
            return first
        self.seen_calls[key] = new
        self.keep_alive.append(new)
        return new

    def visit_tuple(self, tup):
        # Two tuples of the same fields are one (``concatenate([y, c])`` built twice).
        new = super().visit_tuple(tup)
        if not new.fields or self._skip(new):
            return new
        key = tuple(_arg_key(f) for f in new.fields)
        first = self.seen_tuples.get(key)
        if first is not None:
            return first
        self.seen_tuples[key] = new
        self.keep_alive.append(new)
        return new

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        if self._skip(new):
            return new
        key = (id(new.tuple_value), new.index)
        first = self.seen_items.get(key)
        if first is not None:
            return first
        self.seen_items[key] = new
        self.keep_alive.append(new)
        return new


def eliminate_common_subexpr(expr, fskip=None):
    """``expr`` with common sub-expressions merged (the function behind the pass)."""
    if fskip is not None and not callable(fskip):
        raise IrlabError(f"EliminateCommonSubexpr: fskip must be callable, got "
                         f"{type(fskip).__name__}")
    return _CommonSubexprEliminator(fskip).visit(expr)


def EliminateCommonSubexpr(fskip=None):
    """Merge identical calls and tuple projections (function pass, opt level 3).

    ``fskip(expr) -> bool`` marks expressions that must stay separate.
    """
    from irlab.relay.transform import function_pass

    if fskip is not None and not callable(fskip):
        raise IrlabError(f"EliminateCommonSubexpr: fskip must be callable, got "
                         f"{type(fskip).__name__}")

    def transform(func, mod, ctx):
        return eliminate_common_subexpr(func, fskip)

    return function_pass(transform, opt_level=3, name="EliminateCommonSubexpr",
                         required=["InferType"])


__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]
