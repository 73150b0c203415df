"""Code generation of deep expressions without deep recursion.

A code generator translates an expression recursively. Past a depth, it first translates
what is below the current node, children before parents, remembering the results, so that
the recursion that follows stops at them (``evaluation_order``). Only pure nodes are
translated ahead: a Let (a scope) and calls that are not plain math (``if_then_else`` guards
its operands, packed and extern calls have effects) are left to the recursion, and nothing
inside them is translated ahead.
"""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir.functor import expr_children
from irlab.tir.intrinsics import INTRINSICS

DEEP = 100  # translation depth past which what is below is translated first


def _is_pure(e) -> bool:
    if isinstance(e, E.Let):
        return False
    if isinstance(e, E.Call):  # a pure intrinsic that evaluates all its arguments
        record = INTRINSICS.get(e.op)
        return record is not None and record.pure and not record.conditional
    return True


def evaluation_order(root, done):
    """The pure sub-expressions strictly below ``root`` that may be translated ahead, each
    once, children before parents, without those whose ``id`` is in ``done``."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen or id(node) in done:
            continue
        seen.add(id(node))
        if node is not root and not _is_pure(node):
            continue
        stack.append((node, True))
        for child in reversed(expr_children(node)):
            if isinstance(child, E.PrimExpr) and not isinstance(child, _LEAVES):
                stack.append((child, False))
    return order[:-1] if order and order[-1] is root else order


_LEAVES = (E.Var, E.IntImm, E.FloatImm, E.StringImm)

