"""Helpers shared by the TIR passes: the no-op statement, constant tests, loop extents."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S


def no_op() -> S.Stmt:
    """TVM's no-op statement: ``T.evaluate(0)``."""
    return S.Evaluate(E.IntImm("int32", 0))


def is_no_op(s) -> bool:
    """An empty statement: ``None``, ``evaluate(<constant>)`` or an empty sequence."""
    if s is None:
        return True
    if isinstance(s, S.Evaluate):
        return isinstance(s.value, (E.IntImm, E.FloatImm))
    if isinstance(s, S.SeqStmt):
        return all(is_no_op(x) for x in s.seq)
    return False


def const_int(e):
    """The Python int of an IntImm, else None."""
    return e.value if isinstance(e, E.IntImm) else None


def and_all(conds):
    """``c0 and c1 and ...`` (None for no conditions)."""
    out = None
    for c in conds:
        out = c if out is None else E.And(out, c)
    return out


_COMPARE = {E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b,
            E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b}


def known_condition(cond):
    """The value of a condition made of comparisons of integer constants with ``and`` /
    ``or`` / ``not`` (or a constant, or a vector of one), else None."""
    if isinstance(cond, E.Broadcast):
        cond = cond.value
    if isinstance(cond, E.IntImm):
        return bool(cond.value)
    if isinstance(cond, E.Not):
        inner = known_condition(cond.a)
        return None if inner is None else not inner
    if isinstance(cond, (E.And, E.Or)):  # (E.Or is a subclass of E.And)
        a, b = known_condition(cond.a), known_condition(cond.b)
        if isinstance(cond, E.Or):
            return True if True in (a, b) else (False if a is b is False else None)
        return False if False in (a, b) else (True if a is b is True else None)
    compare = _COMPARE.get(type(cond))
    if compare is not None and isinstance(cond.a, E.IntImm) and isinstance(cond.b, E.IntImm):
        return compare(cond.a.value, cond.b.value)
    return None


def fold_select(e, visit):
    """``e`` (a Select) rebuilt with ``visit`` applied to its parts, except that a condition
    ``known_condition`` can decide keeps only its branch, the other never visited (a pass
    copying or simplifying a Select chain pays for the branch taken alone)."""
    cond = visit(e.condition)
    known = known_condition(cond)
    if known is not None:
        return visit(e.true_value if known else e.false_value)
    true_value, false_value = visit(e.true_value), visit(e.false_value)
    if cond is e.condition and true_value is e.true_value and false_value is e.false_value:
        return e
    return E.Select(cond, true_value, false_value)
