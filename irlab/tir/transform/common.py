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
