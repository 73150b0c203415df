"""``tir.RemoveNoOp``: statements with no effect are dropped.

No-ops: ``evaluate(<constant>)``, loops of extent 0 or with an empty body, branches and scopes
(Let, Attr, Allocate, DeclBuffer) around nothing, ``x[i] = x[i]``.

Before::

    for i in range(4):
        T.evaluate(0)
    B[0] = B[0]
    A[0] = 1.0

After::

    A[0] = 1.0
"""

from __future__ import annotations

from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import StmtMutator, post_order_visit
from irlab.tir.transform.common import const_int, is_no_op, no_op


def _has_side_effect(e):
    """Calls may have effects (printing, externs); conditions without calls do not."""
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.Call) else None)
    return bool(found)


class _NoOpRemover(StmtMutator):
    def visit_seq_stmt(self, s):
        seq = [self.visit_stmt(x) for x in s.seq]
        kept = [x for x in seq if not is_no_op(x)]
        if not kept:
            return no_op()
        if len(kept) == 1:
            return kept[0]
        if len(kept) == len(s.seq) and all(a is b for a, b in zip(kept, s.seq)):
            return s
        return S.SeqStmt(kept)

    def visit_for(self, s):
        body = self.visit_stmt(s.body)
        if is_no_op(body) or const_int(s.extent) == 0:
            return no_op()
        return s.with_fields(body=body)

    def visit_if_then_else(self, s):
        then_case = self.visit_stmt(s.then_case)
        else_case = self.visit_stmt(s.else_case) if s.else_case is not None else None
        if else_case is not None and is_no_op(else_case):
            else_case = None
        if is_no_op(then_case) and else_case is None:
            return S.Evaluate(s.condition) if _has_side_effect(s.condition) else no_op()
        if is_no_op(then_case):  # `if c: pass else: X` is `if not c: X`
            return S.IfThenElse(E.Not(s.condition), else_case)
        return s.with_fields(then_case=then_case, else_case=else_case)

    def _scope(self, s):
        body = self.visit_stmt(s.body)
        return no_op() if is_no_op(body) else s.with_fields(body=body)

    visit_allocate = visit_decl_buffer = visit_attr_stmt = _scope

    def visit_let_stmt(self, s):
        body = self.visit_stmt(s.body)
        if is_no_op(body) and not _has_side_effect(s.value):
            return no_op()
        return s.with_fields(body=body)

    def visit_evaluate(self, s):
        return no_op() if is_no_op(s) else s

    def visit_buffer_store(self, s):
        value = s.value
        if (isinstance(value, E.BufferLoad) and value.buffer is s.buffer
                and structural_equal(tuple(value.indices), tuple(s.indices))):
            return no_op()
        return s


def remove_no_op(func, mod=None, ctx=None):
    """The function without statements that have no effect."""
    return func.with_body(_NoOpRemover().visit_stmt(func.body))
