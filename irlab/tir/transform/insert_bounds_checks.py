"""``tir.InsertBoundsChecks``: a run-time check before each access the verifier could not prove
in bounds (``tir.analysis.memory_safety_checks``), so that compiled code raises instead of
reading or writing outside a buffer. ``tvm.build`` runs it on every PrimFunc.

Before (``n`` is only known at run time)::

    for i in range(n):
        G[i] = A[i]                      # G: T.Buffer((70000,), "float32")

After::

    for i in range(n):
        assert 0 <= i and i < 70000, "PrimFunc f: store to G[i]: index out of bounds"
        G[i] = A[i]

Accesses proven in bounds -- all of them in what TOPI and the schedules produce -- get no
check, so the compiled code of a verified program is unchanged.
"""

from __future__ import annotations

from irlab.tir import stmt as S
from irlab.tir.analysis.well_formed import memory_safety_checks
from irlab.tir.functor import StmtExprMutator


class _Guard(StmtExprMutator):
    def __init__(self, checks):
        super().__init__()
        self.checks = {}
        for check in checks:
            self.checks.setdefault(id(check.stmt), []).append(check)

    def visit_stmt(self, s):
        new = super().visit_stmt(s)
        for check in reversed(self.checks.get(id(s), ())):
            new = S.AssertStmt(check.condition, check.message, new)
        return new


def insert_bounds_checks(func, mod=None, ctx=None, name=None):
    """``func`` verified (``WellFormedError`` if it is not well formed), with a run-time check
    before each access not proven in bounds."""
    checks = memory_safety_checks(func, name)
    if not checks:
        return func
    return func.with_fields(body=_Guard(checks).visit_stmt(func.body))


__all__ = ["insert_bounds_checks"]
